// The review page's single-key shortcuts: a key clicks the button or link that declares it in
// data-shortcut (a approve, r reject, o overturn, j judge again, n skip). Never while typing in a
// field or with Ctrl, Alt or Meta held; Esc leaves a field, so the keys work again.
(function () {
  "use strict";
  var sent = false;
  document.addEventListener("submit", function () { sent = true; });
  document.addEventListener("keydown", function (event) {
    var target = event.target;
    var typing = target instanceof Element && target.closest("input, textarea, select, [contenteditable]");
    if (typing) {
      if (event.key === "Escape") { target.blur(); }
      return;
    }
    if (sent || event.defaultPrevented || event.repeat || event.ctrlKey || event.altKey || event.metaKey) { return; }
    var key = event.key.toLowerCase();
    if (!/^[a-z]$/.test(key)) { return; }
    var control = document.querySelector('[data-shortcut="' + key + '"]');
    if (!control) { return; }
    event.preventDefault();
    control.focus();
    control.click();
  });
})();
