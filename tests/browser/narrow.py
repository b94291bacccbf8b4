"""Layout checks for a phone-width page (375 px): nothing wider than the screen, no word broken across lines
(a hyphenated word may break after its hyphen)."""

# Returns, for the elements `selector` matches, those sticking out of the viewport or of their scroll box,
# and the words split over two lines ("Re/sul/t"), as readable strings.
_PROBLEMS = """
(selector) => {
  const problems = [];
  const width = document.documentElement.clientWidth;
  for (const root of document.querySelectorAll(selector)) {
    const box = root.closest('.table-scroll');
    if (box && box.scrollWidth > box.clientWidth) problems.push(`scrolls sideways: ${box.scrollWidth} > ${box.clientWidth}`);
    for (const el of [root, ...root.querySelectorAll('*')]) {
      const r = el.getBoundingClientRect();
      if (r.width && (r.left < 0 || r.right > width + 0.5)) problems.push(`${el.tagName} ${Math.round(r.left)}-${Math.round(r.right)} px`);
    }
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let node; (node = walker.nextNode()); ) {
      for (const m of node.data.matchAll(/[^\\s-]+-?/g)) {  // "Cache-aware" may break after its hyphen
        const range = document.createRange();
        range.setStart(node, m.index);
        range.setEnd(node, m.index + m[0].length);
        const lines = new Set([...range.getClientRects()].filter((q) => q.width).map((q) => Math.round(q.bottom)));
        if (lines.size > 1) problems.push(`word broken: ${m[0]}`);
      }
    }
  }
  return problems;
}
"""


def layout_problems(page, selector: str) -> list[str]:
    """Return what does not fit the phone in the elements `selector` matches (an empty list when all fits)."""
    assert page.locator(selector).count(), f"nothing matches {selector}"
    return page.evaluate(_PROBLEMS, selector)
