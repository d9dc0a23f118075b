// The items list's "Copy" buttons: a click (or Enter, or Space) puts the item's full id, from the
// button's data-copy, on the clipboard, and the button says "Copied" for a moment, also to screen
// readers (a polite live region). Where the browser keeps the clipboard API from the page (a plain
// http address other than localhost), the id is copied through a selected, hidden text field.
(function () {
  "use strict";
  var status = null;

  function announce(text) {
    if (!status) {
      status = document.createElement("div");
      status.className = "visually-hidden";
      status.setAttribute("role", "status");
      status.setAttribute("aria-live", "polite");
      document.body.appendChild(status);
    }
    status.textContent = "";
    window.setTimeout(function () { status.textContent = text; }, 50);
  }

  function copyThroughField(text) {
    var field = document.createElement("textarea");
    field.value = text;
    field.setAttribute("readonly", "");
    field.style.position = "fixed";
    field.style.opacity = "0";
    document.body.appendChild(field);
    field.select();
    var done = false;
    try { done = document.execCommand("copy"); } catch (error) { done = false; }
    document.body.removeChild(field);
    return done ? Promise.resolve() : Promise.reject(new Error("copy refused"));
  }

  function copy(text) {
    if (navigator.clipboard && window.isSecureContext) {
      return navigator.clipboard.writeText(text).catch(function () { return copyThroughField(text); });
    }
    return copyThroughField(text);
  }

  document.addEventListener("click", function (event) {
    var button = event.target instanceof Element && event.target.closest("button[data-copy]");
    if (!button) { return; }
    event.preventDefault();
    var word = button.querySelector(".stash-copy-word");
    copy(button.getAttribute("data-copy")).then(function () {
      word.textContent = button.getAttribute("data-copied");
      announce(button.getAttribute("data-copied-said"));
    }, function () {
      word.textContent = button.getAttribute("data-failed");
      announce(button.getAttribute("data-failed"));
    });
    window.setTimeout(function () { word.textContent = button.getAttribute("data-word"); }, 2000);
  });
})();
