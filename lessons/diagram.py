"""A walkthrough's diagram: laid out by Graphviz's dot when steps are saved, drawn as SVG per step.

``lay_out`` runs dot (through the ``graphviz`` binding) on every component and connection
of a walkthrough, top to bottom, and returns plain positions (boxes, text lines, edge
paths, arrowheads) that the Walkthrough row stores. A page then draws step N from the
stored layout with no layout work: the parts of steps 1..N, cropped to what they cover,
the step's new parts dashed, thicker and bold (more than colour). Positions stay put
from step to step, so the diagram grows in place.
"""

from __future__ import annotations

import json
import math
from html import escape

FONT_PX = 14  # the text's size at 1:1 (site.css draws it at 14 px)
# Labels wrap at about this many characters: narrow boxes keep a whole design within about 800 px
# (the case study's widest step is 786 px), so a desktop column can show it whole, scaled down.
LABEL_CHARS = 14
PAD = 8
# A column at least SCALE_FROM_PX wide shows a wider diagram scaled down to fit (site.css, a container
# query); narrower (a phone) it scrolls sideways at 1:1. Only a diagram whose text then stays at least
# MIN_FONT_PX is marked "scalable": a wider one scrolls at every width rather than shrink past reading.
SCALE_FROM_PX = 640
MIN_FONT_PX = 11
MAX_SCALABLE_PX = SCALE_FROM_PX * FONT_PX // MIN_FONT_PX


def wrap(label: str, width: int = LABEL_CHARS) -> str:
    """Return ``label`` with line breaks at about ``width`` characters (dot sizes each line)."""
    lines, line = [], ""
    for word in label.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    if line:
        lines.append(line)
    return "\n".join(lines)


def edge_key(conn: dict) -> str:
    return f"{conn['from']}>{conn['to']}>{conn.get('label') or ''}"


def lay_out(components: list[dict], connections: list[dict]) -> dict:
    """Return the layout of every component and connection, from Graphviz's dot (top to bottom)."""
    import graphviz  # imported here: only saving content lays out, pages only read the result

    graph = graphviz.Digraph(
        graph_attr={"rankdir": "TB", "nodesep": "0.35", "ranksep": "0.45", "pad": "0", "splines": "true"},
        node_attr={"shape": "box", "fontname": "Helvetica", "fontsize": str(FONT_PX), "margin": "0.14,0.08"},
        edge_attr={"fontname": "Helvetica", "fontsize": str(FONT_PX), "arrowsize": "0.8"},
    )
    keys = set()
    for comp in sorted(components, key=lambda c: (c.get("row", 0), c.get("col", 0))):
        keys.add(comp["key"])
        graph.node(comp["key"], wrap(comp["label"]), id=comp["key"])
    seen = set()
    for conn in connections:
        key = edge_key(conn)
        if conn["from"] in keys and conn["to"] in keys and key not in seen:
            seen.add(key)
            graph.edge(conn["from"], conn["to"], label=wrap(conn.get("label") or ""), id=key)
    out = json.loads(graph.pipe(format="json", encoding="utf-8"))
    height = float(out["bb"].split(",")[3])

    def point(p: list[float]) -> list[float]:
        return [round(p[0], 1), round(height - p[1], 1)]

    def texts(ops: list[dict]) -> list[list]:
        return [[*point(op["pt"]), round(op["width"], 1), op["text"]] for op in ops if op["op"] == "T"]

    nodes = {}
    for obj in out.get("objects", []):
        x, y = (float(v) for v in obj["pos"].split(","))
        w, h = float(obj["width"]) * 72, float(obj["height"]) * 72
        cx, cy = point([x, y])
        nodes[obj["id"]] = {
            "box": [round(cx - w / 2, 1), round(cy - h / 2, 1), round(w, 1), round(h, 1)],
            "text": texts(obj.get("_ldraw_", [])),
        }
    edges = {}
    for edge in out.get("edges", []):
        curve = next(op["points"] for op in edge["_draw_"] if op["op"] == "b")
        head = next((op["points"] for op in edge.get("_hdraw_", []) if op["op"] in ("P", "p")), [])
        start, *rest = (point(p) for p in curve)
        path = f"M{start[0]},{start[1]} C" + " ".join(f"{x},{y}" for x, y in rest)
        edges[edge["id"]] = {"path": path, "points": [start, *rest], "head": [point(p) for p in head],
                             "text": texts(edge.get("_ldraw_", []))}  # fmt: skip
    return {"engine": "dot", "nodes": nodes, "edges": edges}


def text_box(line: list) -> tuple[float, float, float, float]:
    """Return the box a text line covers: [x, y, w, h] from its centre baseline and width."""
    x, y, width, _ = line
    return x - width / 2, y - FONT_PX * 0.8, width, FONT_PX


def covers(layout: dict, components: list[dict], connections: list[dict]) -> bool:
    """Return whether ``layout`` has a place for every component and connection."""
    return all(c["key"] in layout.get("nodes", {}) for c in components) and all(
        edge_key(c) in layout.get("edges", {}) for c in connections
    )


def boxes(layout: dict, components: list[dict], connections: list[dict]) -> list[tuple[str, tuple]]:
    """Return the named boxes drawn for these parts: component boxes and connection label lines."""
    found = [(f"box {c['key']}", tuple(layout["nodes"][c["key"]]["box"])) for c in components]
    for conn in connections:
        edge = layout["edges"].get(edge_key(conn))
        if edge:
            found += [(f"label {line[3]!r}", text_box(line)) for line in edge["text"]]
    return found


def render_svg(layout: dict, components: list[dict], connections: list[dict], title: str, uid: str) -> str:
    """Return the SVG of these parts from the stored layout; new parts carry the class "new"."""
    if not components:
        return ""
    shown = [c for c in connections if edge_key(c) in layout["edges"]]
    xs, ys = [], []
    for _, (x, y, w, h) in boxes(layout, components, shown):
        xs += [x, x + w]
        ys += [y, y + h]
    for conn in shown:
        for x, y in layout["edges"][edge_key(conn)]["points"]:
            xs.append(x)
            ys.append(y)
    left, top = math.floor(min(xs)) - PAD, math.floor(min(ys)) - PAD
    width, height = math.ceil(max(xs)) + PAD - left, math.ceil(max(ys)) + PAD - top
    scalable = ' class="scalable"' if width <= MAX_SCALABLE_PX else ""
    parts = [
        f'<svg viewBox="{left} {top} {width} {height}" width="{width}" height="{height}"{scalable} role="img" '
        f'aria-labelledby="{uid}-title" xmlns="http://www.w3.org/2000/svg">',
        f'<title id="{uid}-title">{escape(title)}</title>',
    ]
    for conn in shown:
        edge = layout["edges"][edge_key(conn)]
        new = " new" if conn.get("new") else ""
        head = " ".join(f"{x},{y}" for x, y in edge["head"])
        parts.append(f'<g class="edge{new}"><path d="{edge["path"]}"/>')
        if head:
            parts.append(f'<polygon class="arrowhead" points="{head}"/>')
        parts += [_text(line) for line in edge["text"]]
        parts.append("</g>")
    for comp in components:
        node = layout["nodes"][comp["key"]]
        x, y, w, h = node["box"]
        parts.append(f'<g class="box{" new" if comp.get("new") else ""}">')
        parts.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6"/>')
        parts += [_text(line) for line in node["text"]]
        parts.append("</g>")
    parts.append("</svg>")
    return "".join(parts)


def _text(line: list) -> str:
    x, y, width, text = line
    # textLength holds the text to the width dot measured, so no font can push it over a neighbour.
    return (
        f'<text x="{x}" y="{y}" text-anchor="middle" textLength="{width}" '
        f'lengthAdjust="spacingAndGlyphs">{escape(text)}</text>'
    )


def normalize(components: list, connections: list) -> tuple[list[dict], list[dict]]:
    """Return components and connections with every field present (rows saved before validation may lack some)."""
    tidy = []
    for c in components:
        if isinstance(c, dict) and c.get("key"):
            col, row = c.get("col"), c.get("row")
            tidy.append({**c, "col": col if isinstance(col, int) else 0, "row": row if isinstance(row, int) else 0,
                         "label": str(c.get("label") or c["key"])})  # fmt: skip
    keys = {c["key"] for c in tidy}
    links = [
        {**c, "label": str(c.get("label") or "")}
        for c in connections
        if isinstance(c, dict) and c.get("from") in keys and c.get("to") in keys
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
