// The admin adds inline rows (walkthrough steps) after htmx has read the page: let htmx read each new row.
document.addEventListener("formset:added", (event) => {
  if (window.htmx) window.htmx.process(event.target);
});
