// Calculator pages: keep aria-invalid in step with the error messages htmx swaps in.
// Without JavaScript the server renders aria-invalid itself; this only matters after a live update.
(function () {
  "use strict";
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
})();
