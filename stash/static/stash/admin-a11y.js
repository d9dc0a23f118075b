/* stash, on every admin page: accessible names that Django's own admin widgets leave out.
 *
 * - The filter boxes of a many-to-many selector (a user's groups and permissions) are labelled
 *   by an icon that carries aria-label on a plain span, which no screen reader reads: it is
 *   given role="img" so the label reads "Type into this box to filter down the list of ...".
 * - A changelist's search box whose help text is its only visible words is named "Search".
 * - The date and time boxes of a date-and-time field are named after the field: "Last login: Date".
 *
 * Django's SelectFilter builds its boxes when the page has loaded, so this runs on every change
 * to the page, not once; each fix skips what it has already named.
 */
"use strict";
(function () {
  function text(node) {
    return (node && node.textContent || "").replace(/\s+/g, " ").replace(/:\s*$/, "").trim();
  }

  function nameFilterIcons(root) {
    root.querySelectorAll(".search-label-icon[aria-label]:not([role])").forEach(function (icon) {
      icon.setAttribute("role", "img");
    });
  }

  function nameSearchBox(root) {
    var box = root.querySelector("#searchbar:not([aria-label])");
    var icon = root.querySelector("label[for='searchbar'] img[alt]");
    if (box && icon) {
      box.setAttribute("aria-label", icon.getAttribute("alt"));
    }
  }

  function nameDateTimeParts(root) {
    root.querySelectorAll("p.datetime input:not([type=hidden]):not([aria-label])").forEach(function (input) {
      var row = input.closest(".flex-container, .form-row");
      var field = text(row && row.querySelector("label"));
      var part = input.previousSibling;
      while (part && part.nodeType === Node.TEXT_NODE && !part.textContent.trim()) {
        part = part.previousSibling;
      }
      part = part && part.nodeType === Node.TEXT_NODE ? text(part) : "";
      input.setAttribute("aria-label", [field, part].filter(Boolean).join(": "));
    });
  }

  function nameAll() {
    nameFilterIcons(document);
    nameSearchBox(document);
    nameDateTimeParts(document);
  }

  nameAll();
  new MutationObserver(nameAll).observe(document.documentElement, {childList: true, subtree: true});
})();
