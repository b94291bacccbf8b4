"""Draw a walkthrough's components and connections as an accessible, server-rendered SVG."""

from __future__ import annotations

from html import escape

BOX_W, BOX_H, GAP_X, GAP_Y, PAD = 150, 52, 60, 44, 16


def wrap_label(label: str, width: int = 20) -> list[str]:
    """Split a label over at most two lines of about ``width`` characters."""
    words, lines, line = label.split(), [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    lines.append(line)
    if len(lines) > 2:
        lines = [lines[0], " ".join(lines[1:])[: width - 1] + "…"]
    return lines


def edge_points(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float, float, float]:
    """Return a line from the edge of box ``a`` to the edge of box ``b`` (centres given)."""
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    if dx == 0 and dy == 0:
        return ax, ay, bx, by

    def clip(dx: float, dy: float) -> float:
        sx = (BOX_W / 2 + 4) / abs(dx) if dx else float("inf")
        sy = (BOX_H / 2 + 4) / abs(dy) if dy else float("inf")
        return min(sx, sy)

    s = clip(dx, dy)
    return ax + dx * s, ay + dy * s, bx - dx * s, by - dy * s


def render_svg(components: list[dict], connections: list[dict], title: str, uid: str) -> str:
    """Return SVG markup; new components and connections carry the class "new"."""
    if not components:
        return ""
    cols = max(c["col"] for c in components) + 1
    rows = max(c["row"] for c in components) + 1
    width = PAD * 2 + cols * BOX_W + (cols - 1) * GAP_X
    height = PAD * 2 + rows * BOX_H + (rows - 1) * GAP_Y
    centre = {
        c["key"]: (PAD + c["col"] * (BOX_W + GAP_X) + BOX_W / 2, PAD + c["row"] * (BOX_H + GAP_Y) + BOX_H / 2)
        for c in components
    }
    parts = [
        f'<svg viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" aria-labelledby="{uid}-title" '
        f'xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{uid}-title">{escape(title)}</title>',
        "<defs>",
        f'<marker id="{uid}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path class="arrowhead" d="M0,0 L10,5 L0,10 z"/></marker>',
        f'<marker id="{uid}-arrow-new" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path class="arrowhead new" d="M0,0 L10,5 L0,10 z"/></marker>',
        "</defs>",
    ]
    for conn in connections:
        if conn["from"] not in centre or conn["to"] not in centre:
            continue
        x1, y1, x2, y2 = edge_points(centre[conn["from"]], centre[conn["to"]])
        new = conn.get("new")
        marker = f"{uid}-arrow-new" if new else f"{uid}-arrow"
        parts.append(f'<g class="edge{" new" if new else ""}">')
        parts.append(f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" marker-end="url(#{marker})"/>')
        if conn.get("label"):
            mx, my = (x1 + x2) / 2, (y1 + y2) / 2 - 6
            parts.append(f'<text x="{mx:.1f}" y="{my:.1f}" text-anchor="middle">{escape(conn["label"])}</text>')
        parts.append("</g>")
    for comp in components:
        x, y = centre[comp["key"]]
        lines = wrap_label(comp["label"])
        parts.append(f'<g class="box{" new" if comp.get("new") else ""}">')
        parts.append(f'<rect x="{x - BOX_W / 2:.1f}" y="{y - BOX_H / 2:.1f}" width="{BOX_W}" height="{BOX_H}" rx="8"/>')
        first = y - (len(lines) - 1) * 8 + 4
        for i, line in enumerate(lines):
            parts.append(f'<text x="{x:.1f}" y="{first + i * 16:.1f}" text-anchor="middle">{escape(line)}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def normalize(components: list, connections: list) -> tuple[list[dict], list[dict]]:
    """Return components and connections with every field present (rows saved before validation may lack some)."""
    tidy = []
    for c in components:
        if isinstance(c, dict) and c.get("key"):
            col, row = c.get("col"), c.get("row")
            tidy.append({**c, "col": col if isinstance(col, int) else 0, "row": row if isinstance(row, int) else 0,
                         "label": str(c.get("label") or c["key"])})  # fmt: skip
    links = [
        {**c, "label": str(c.get("label") or "")}
        for c in connections
        if isinstance(c, dict) and c.get("from") and c.get("to")
    ]
    return tidy, links


def describe(components: list[dict], connections: list[dict]) -> dict:
    """Return the text equivalent of the diagram: what is there and what this step added."""
    labels = {c["key"]: c["label"] for c in components}

    def edge(c: dict) -> str:
        text = f"{labels.get(c['from'], c['from'])} → {labels.get(c['to'], c['to'])}"
        return f"{text} ({c['label']})" if c.get("label") else text

    return {
        "new_components": [c["label"] for c in components if c.get("new")],
        "old_components": [c["label"] for c in components if not c.get("new")],
        "new_connections": [edge(c) for c in connections if c.get("new")],
        "old_connections": [edge(c) for c in connections if not c.get("new")],
    }
