/* stash: putting hooks in order, by mouse or by keyboard.
 *
 * On the hooks list (one stash's hooks), sortable2 posts each drag to the server. When the server
 * takes it, the "#" column shows the new positions and a message says where the dragged hook went
 * ("Order saved: No spam is now 2 of 4"). When it refuses a drag (it breaks a golden example of a
 * stash that refuses such changes, or the rows were stale), the list is loaded again: it shows the
 * order that holds, and the message that says why.
 *
 * On a stash's page, the filters and transforms are numbered in run order and the sinks listed
 * apart. Each hook's ▲ ▼ buttons move it one step within its group; the focus stays on the button
 * and a live region says "No spam moved to position 3 of 5". The numbers follow every move and
 * drag, and a notice says the order is not saved until the form is.
 */
"use strict";
(function () {
  function say(region, text) {
    // Emptied first, so the same words said twice are announced twice.
    region.textContent = "";
    window.setTimeout(function () { region.textContent = text; }, 50);
  }

  /* --- The hooks list: a drag saves at once. --- */

  function listDrags(config) {
    var updateUrl = JSON.parse(config.textContent).update_url;
    var dragged = null;
    document.addEventListener("pointerdown", function (event) {
      var handle = event.target.closest && event.target.closest("#result_list .handle");
      dragged = handle ? handle.closest("tr") : null;
    }, true);

    // Announced when filled: there from the start, empty until a drag is saved.
    var region = document.createElement("div");
    region.className = "stash-order-message";
    region.setAttribute("role", "status");
    var content = document.getElementById("content");
    if (content) {
      content.before(region);
    }

    function saved(answer) {
      var positions = answer.positions || {};
      var rows = document.querySelectorAll("#result_list tbody tr");
      rows.forEach(function (row) {
        var handle = row.querySelector(".handle[pk]");
        var position = handle && positions[handle.getAttribute("pk")];
        if (position === undefined) {
          return;
        }
        handle.setAttribute("order", String(position));
        var cell = row.querySelector(".field-order");
        if (cell) {
          cell.textContent = String(position);
        }
      });
      var handle = dragged && dragged.querySelector(".handle[pk]");
      var title = dragged && dragged.querySelector(".field-title");
      if (title) {
        title = title.cloneNode(true);  // its words, without the "disabled" badge
        title.querySelectorAll(".stash-badge").forEach(function (badge) { badge.remove(); });
      }
      var position = handle && positions[handle.getAttribute("pk")];
      var text = position === undefined || !title
        ? interpolate(gettext("Order saved."), [])
        : interpolate(gettext("Order saved: %(title)s is now %(position)s of %(count)s."),
                      {title: title.textContent.trim(), position: position, count: answer.count}, true);
      var list = document.createElement("ul");
      list.className = "messagelist";
      var item = document.createElement("li");
      item.className = "success";
      item.textContent = text;
      list.append(item);
      // The page's messages were about what came before.
      document.querySelectorAll(".messagelist").forEach(function (old) { old.remove(); });
      region.replaceChildren(list);
    }

    var fetch = window.fetch;
    window.fetch = function (resource) {
      var answer = fetch.apply(this, arguments);
      if (String(resource) !== updateUrl) {
        return answer;
      }
      return answer.then(function (response) {
        if (response.status !== 200) {
          window.location.reload();
          return response;
        }
        response.clone().json().then(saved, function () { saved({}); });
        return response;
      });
    };
  }

  /* --- A stash's page: the table of hooks, ordered on the page, saved with the form. --- */

  function inlineOrder(fieldset) {
    var ordered = fieldset.querySelector("tbody.stash-ordered");
    var sinks = fieldset.querySelector("tbody.stash-sinks");
    var status = fieldset.querySelector(".stash-order-status");
    var unsaved = fieldset.querySelector(".stash-order-unsaved");
    if (!ordered) {
      return;
    }

    function rows(group) {
      return group ? Array.prototype.slice.call(group.querySelectorAll(":scope > tr.has_original")) : [];
    }
    function all() {
      return rows(ordered).concat(rows(sinks));
    }
    function position(row) {
      return row.querySelector("input[name$='-position']");
    }

    var saved = all().map(function (row) { return row.id; });
    var savedPositions = {};
    all().forEach(function (row) {
      savedPositions[row.id] = row.dataset.position;
    });
    // A page shown again with errors holds the order that was posted: show it (still unsaved).
    [ordered, sinks].forEach(function (group) {
      var posted = rows(group).map(function (row, index) {
        var input = position(row);
        return {row: row, index: index, at: input && input.value !== "" ? Number(input.value) : Infinity};
      });
      posted.sort(function (a, b) { return a.at - b.at || a.index - b.index; });
      if (posted.some(function (entry, index) { return entry.index !== index; })) {
        var place = document.createComment("");
        rows(group)[0].before(place);
        posted.forEach(function (entry) { place.before(entry.row); });
        place.remove();
      }
    });

    function changed() {
      var now = all().map(function (row) { return row.id; });
      return now.join(" ") !== saved.join(" ");
    }

    // The posted positions: as loaded while the order is the saved one (a save then moves
    // nothing); else the filters and transforms 1..n as shown, then the sinks.
    function writePositions() {
      var moved = changed();
      all().forEach(function (row, index) {
        var input = position(row);
        if (input) {
          input.value = moved ? String(index + 1) : savedPositions[row.id];
        }
      });
      return moved;
    }

    // Each input of a row is named after it ("Hook 2 (No spam): Enabled", "Sink 1 (Notify): Label"):
    // the number follows too.
    function rename(row, number) {
      var before = row.dataset.rowName;
      var after = before && before.replace(/\d+/, String(number));
      if (!before || after === before) {
        return;
      }
      row.querySelectorAll("[aria-label]").forEach(function (input) {
        var label = input.getAttribute("aria-label");
        if (label.indexOf(before + ":") === 0) {
          input.setAttribute("aria-label", after + label.slice(before.length));
        }
      });
      row.dataset.rowName = after;
    }

    function refresh() {
      rows(ordered).forEach(function (row, index) {
        var number = row.querySelector(".stash-hook-number");
        if (number) {
          number.textContent = (index + 1) + ".";
        }
        rename(row, index + 1);
      });
      rows(sinks).forEach(function (row, index) { rename(row, index + 1); });
      var moved = writePositions();
      if (unsaved) {
        unsaved.hidden = !moved;
      }
    }

    function announce(row, group) {
      var words = group === sinks
        ? gettext("%(title)s moved to position %(position)s of %(count)s among the sinks.")
        : gettext("%(title)s moved to position %(position)s of %(count)s.");
      var list = rows(group);
      say(status, interpolate(words, {title: row.dataset.title, position: list.indexOf(row) + 1, count: list.length},
                              true));
    }

    function move(button) {
      var row = button.closest("tr");
      var group = row.parentElement;
      var list = rows(group);
      var index = list.indexOf(row);
      var step = Number(button.dataset.step);
      var title = row.dataset.title;
      var target = index + step;
      if (target < 0 || target >= list.length) {
        say(status, interpolate(step < 0 ? gettext("%(title)s is already first.") : gettext("%(title)s is already last."),
                                {title: title}, true));
        return;
      }
      if (step < 0) {
        list[target].before(row);
      } else {
        list[target].after(row);
      }
      button.focus();  // moving the row took the focus away
      refresh();
      announce(row, group);
    }

    fieldset.addEventListener("click", function (event) {
      var button = event.target.closest("button[data-step]");
      if (button && fieldset.contains(button)) {
        event.preventDefault();
        move(button);
      }
    });
    // A drag (sortable2) moves the rows; "Add another" adds one.
    new MutationObserver(refresh).observe(ordered, {childList: true});
    // After a drag, where the row went is said too. The drag ends with a drop or a pointer let go,
    // depending on how the browser drags; the first of them says it, once.
    var dragging = null;
    ordered.addEventListener("pointerdown", function (event) {
      var row = event.target.closest("td.original p") && !event.target.closest("button, a")
        ? event.target.closest("tr.has_original") : null;
      dragging = row ? {row: row, from: rows(ordered).indexOf(row)} : null;
    });
    ["pointerup", "dragend", "drop", "mouseup"].forEach(function (type) {
      document.addEventListener(type, function () {
        window.setTimeout(function () {
          if (dragging && rows(ordered).indexOf(dragging.row) !== dragging.from) {
            announce(dragging.row, ordered);
          }
          dragging = null;
        }, 0);
      }, true);
    });
    refresh();
    var form = fieldset.closest("form");
    if (form) {
      // sortable2 numbers the rows it dragged after the move; the positions posted are these.
      form.addEventListener("submit", writePositions, true);
    }
  }

  if (!window.gettext) {
    window.gettext = function (text) { return text; };
  }
  if (!window.interpolate) {
    window.interpolate = function (text, values) {
      return text.replace(/%\((\w+)\)s/g, function (match, key) { return values[key]; });
    };
  }

  var config = document.getElementById("admin_sortable2_config");
  if (config && window.fetch) {
    listDrags(config);
  }
  function start() {
    document.querySelectorAll("fieldset[data-hook-order]").forEach(inlineOrder);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
