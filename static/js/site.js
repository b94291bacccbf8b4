// Small progressive enhancements; every page works without this file.
(function () {
  "use strict";
  // Move focus to content htmx swapped in when it asks for it (data-focus), so
  // keyboard and screen-reader users land on the feedback they just caused.
  document.addEventListener("htmx:afterSettle", function (event) {
    var target = event.detail.elt && event.detail.elt.querySelector
      ? event.detail.elt.querySelector("[data-focus]")
      : null;
    if (!target) {
      target = document.querySelector("[data-focus]");
    }
    if (target && !target.contains(document.activeElement)) {
      target.focus({ preventScroll: false });
      target.removeAttribute("data-focus");
    }
  });
  // Confirm before destructive actions marked with data-confirm.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var message = form.getAttribute && form.getAttribute("data-confirm");
    if (message && !window.confirm(message)) {
      event.preventDefault();
    }
  });
})();
