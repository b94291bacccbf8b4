// htmx in the admin (lessons.admin.CalculatorFieldsMedia): no injected indicator styles (the CSP allows
// only this site's stylesheets; settling no style attribute, which htmx would set inline), and each inline
// row the admin adds later (walkthrough steps) is read too. The same settings as base.html's htmx-config.
if (window.htmx) {
  window.htmx.config.includeIndicatorStyles = false;
  window.htmx.config.attributesToSettle = ["class", "width", "height"];
}
document.addEventListener("formset:added", (event) => {
  if (window.htmx) window.htmx.process(event.target);
});
