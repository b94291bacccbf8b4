// A row added with "Add another ..." (sections, choices, steps, checklist points) is numbered after the rows
// above it, so new rows read 1, 2, 3 instead of all starting at 0 and clashing on save. Without this file
// the author types the position. Loaded on every admin page by templates/admin/base_site.html.
document.addEventListener("formset:added", (event) => {
  const order = event.target.querySelector('input[name$="-order"]');
  if (!order || (order.value && order.value !== "0")) return;
  const prefix = event.detail && event.detail.formsetName;
  const others = [...document.querySelectorAll(`input[name^="${prefix}-"][name$="-order"]`)].filter(
    (input) => input !== order && !input.name.includes("__prefix__"),
  );
  const highest = Math.max(0, ...others.map((input) => parseInt(input.value, 10) || 0));
  order.value = String(highest + 1);
});
