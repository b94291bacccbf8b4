// htmx in the admin (lessons.admin.CalculatorFieldsMedia): no injected indicator styles (the CSP allows
// only this site's stylesheets; settling no style attribute, which htmx would set inline; no settle delay,
// so what a swap brings in answers at once, not 20 ms later), and each inline row the admin adds later
// (walkthrough steps) is read too. The same settings as base.html's htmx-config.
if (window.htmx) {
  window.htmx.config.includeIndicatorStyles = false;
  window.htmx.config.attributesToSettle = ["class", "width", "height"];
  window.htmx.config.defaultSettleDelay = 0;
}
document.addEventListener("formset:added", (event) => {
  if (window.htmx) window.htmx.process(event.target);
});
