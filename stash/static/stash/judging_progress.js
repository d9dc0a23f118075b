// The judging page's counts, kept live: every 1.5 s it asks the page's counts (data-counts-url) and
// shows them, in the status line and the progress bar, until nothing is waiting. Without script the
// page shows the counts of its load.
(function () {
  "use strict";
  var EVERY_MS = 1500;
  function start() {
    var box = document.getElementById("judging");
    if (!box) { return; }
    var bar = document.getElementById("judging-bar");
    var line = document.getElementById("judging-counts");
    function show(counts) {
      bar.max = Math.max(counts.sent, 1);
      bar.value = counts.judged;
      bar.textContent = counts.judged + " / " + counts.sent;
      if (line.textContent !== counts.text) { line.textContent = counts.text; }
    }
    function ask() {
      fetch(box.dataset.countsUrl, { credentials: "same-origin", headers: { Accept: "application/json" } })
        .then(function (response) { return response.ok ? response.json() : null; })
        .then(function (counts) {
          if (!counts) { return; }  // a bad query or a lost session: the page keeps its last counts
          show(counts);
          if (!counts.done) { window.setTimeout(ask, EVERY_MS); }
        })
        .catch(function () { window.setTimeout(ask, EVERY_MS * 2); });
    }
    window.setTimeout(ask, EVERY_MS);
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", start); } else { start(); }
})();
