// Calculator and simulator pages: keep the result region as the learner left it across htmx swaps.
// Without JavaScript the server renders every state itself; this only matters after a live update.
(function () {
  "use strict";
  // aria-invalid follows the error messages swapped in beside each field.
  function syncInvalid() {
    document.querySelectorAll(".calc-field").forEach(function (field) {
      var input = field.querySelector("input");
      var errors = field.querySelector(".field-errors");
      if (!input || !errors) {
        return;
      }
      if (errors.textContent.trim()) {
        input.setAttribute("aria-invalid", "true");
      } else {
        input.removeAttribute("aria-invalid");
      }
    });
  }
  document.addEventListener("htmx:afterSettle", syncInvalid);

  // A recalculation swaps the whole result, which closed "The chart as a table" every time. Each chart's
  // table stays open if the learner opened it (remembered by its place among the charts, and through a
  // result with errors, which has no chart), and focus on a summary or a table goes back to the same one
  // (htmx itself only restores focus on elements with an id).
  var KEPT_FOCUS = "summary, [data-scroll-region]";
  var tablesOpen = [];
  var focusedAt = -1;
  document.addEventListener("htmx:beforeSwap", function (event) {
    var result = event.detail.target;
    if (!result || !result.querySelectorAll) {
      return;
    }
    var tables = result.querySelectorAll(".calc-chart details");
    if (tables.length) {
      tablesOpen = Array.prototype.map.call(tables, function (details) { return details.open; });
    }
    focusedAt = Array.prototype.indexOf.call(result.querySelectorAll(KEPT_FOCUS), document.activeElement);
  });
  document.addEventListener("htmx:afterSwap", function (event) {
    var result = event.target; // the new result region (an outerHTML swap)
    if (!(result instanceof Element)) {
      return;
    }
    result.querySelectorAll(".calc-chart details").forEach(function (details, index) {
      if (tablesOpen[index]) {
        details.open = true;
      }
    });
    if (focusedAt >= 0 && (document.activeElement === document.body || !document.activeElement)) {
      var again = result.querySelectorAll(KEPT_FOCUS)[focusedAt];
      if (again) {
        again.focus({ preventScroll: true });
      }
    }
    focusedAt = -1;
  });

  // A run asked for with the button (or Enter) shows its result. On a wide screen the result sits beside a
  // form taller than the window, so by the time the button is reached it is often out of view: focus moves
  // to its heading, which brings it into view. A re-run while typing leaves focus where it is.
  document.addEventListener("htmx:afterSettle", function (event) {
    var config = event.detail.requestConfig;
    var result = event.target;
    if (!config || !config.triggeringEvent || config.triggeringEvent.type !== "submit" || !(result instanceof Element)) {
      return;
    }
    var heading = result.querySelector("h2");
    var top = result.getBoundingClientRect().top;
    if (!heading || (top >= 0 && top < window.innerHeight)) {
      return;
    }
    heading.setAttribute("tabindex", "-1");
    heading.focus({ preventScroll: true });
    result.scrollIntoView({ block: "start" });
  });
})();
