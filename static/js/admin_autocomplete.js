// Django's autocomplete fields (select2, e.g. a choice's follow-up) name their combobox after the value shown,
// which is empty until something is picked: a screen reader then meets a combobox with no name (axe:
// aria-input-field-name). Each one is named here by its field's label and then its value, as a native select
// is. Loaded on every admin page by templates/admin/base_site.html; rows added later are named as they appear.
(() => {
  const name = (combobox) => {
    const rendered = combobox.querySelector(".select2-selection__rendered");
    const select = combobox.closest(".select2-container")?.previousElementSibling;
    const label = select?.id && document.querySelector(`label[for="${CSS.escape(select.id)}"]`);
    if (!rendered || !label) return;
    label.id ||= `${select.id}-label`;
    combobox.setAttribute("aria-labelledby", `${label.id} ${rendered.id}`);
    rendered.setAttribute("aria-labelledby", label.id);
  };
  // Open, the dropdown's search box is named by the same label, the combobox says which list it controls, and
  // the dropdown (placed at the end of the page, outside the form) is a region named after the field.
  const describeOpen = (select) => {
    const label = document.querySelector(`label[for="${CSS.escape(select.id)}"]`);
    const combobox = select.nextElementSibling?.querySelector('.select2-selection[role="combobox"]');
    const dropdown = document.querySelector(".select2-container--open .select2-dropdown");
    const list = dropdown?.querySelector(".select2-results__options");
    if (!label || !combobox || !dropdown || !list) return;
    const name = label.textContent.replace(/:\s*$/, "");
    dropdown.querySelector(".select2-search__field")?.setAttribute("aria-label", `Search: ${name}`);
    combobox.setAttribute("aria-controls", list.id);
    dropdown.parentElement.setAttribute("role", "region");
    dropdown.parentElement.setAttribute("aria-label", name);
  };
  if (window.django?.jQuery) {
    window.django.jQuery(document).on("select2:open", (event) => describeOpen(event.target));
  }
  const nameAll = (root) => root.querySelectorAll?.('.select2-selection[role="combobox"]').forEach(name);
  new MutationObserver((changes) => changes.forEach((change) => change.addedNodes.forEach(nameAll))).observe(
    document.documentElement,
    { childList: true, subtree: true },
  );
  nameAll(document);
})();
