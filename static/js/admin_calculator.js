// htmx in the admin (lessons.admin.CalculatorFieldsMedia): no injected indicator styles (the CSP allows
// only this site's stylesheets), and each inline row the admin adds later (walkthrough steps) is read too.
if (window.htmx) window.htmx.config.includeIndicatorStyles = false;
document.addEventListener("formset:added", (event) => {
  if (window.htmx) window.htmx.process(event.target);
});
