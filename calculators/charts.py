"""Shared SVG drawing for calculator charts: bars, stacked bars, line plots, a text alternative (no Django).

Each calculator draws its own chart in its module under
`calculators/definitions/` with these helpers.

Every chart is an SVG string (all text escaped, `role="img"` with `<title>`
and `<desc>`), plus a small data table with the same facts for screen readers
and for anyone who prefers numbers. Colours come from CSS classes and
`currentColor`, so charts follow the site's light and dark themes; the
viewBox scales to the container. On a phone its text is PHONE_FONT_PX units
(site.css), 12 px or more in the 302 px column of a 360 px screen: the layout
leaves room for text that size, the largest any screen gets.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

import numpy as np

from calculators import maths
from calculators.formatting import money, percent

__all__ = [
    "Bar",
    "Chart",
    "DataTable",
    "Plot",
    "Segment",
    "Svg",
    "bar_chart",
    "cost_chart",
    "line_svg",
    "nice_ticks",
    "stacked_chart",
    "text_alternative",
]

WIDTH = 420
FONT_PX = 13
PHONE_FONT_PX = 17  # every chart text on a phone (site.css: `.calc-chart .chart text`)
ASCENT = 16  # user units a phone's text reaches above its baseline (its box, 0.93 em)
LINE = 20  # user units from one line of a phone's text to the next
DESK_CHAR = 8  # user units a desktop's bold 12.5 px character takes, erring wide
DESK_AXIS_CHAR = 6.5  # user units a desktop's 11.5 px character (.chart-axis-label) takes


def text_width(text: str, bold: bool = False) -> float:
    """Return the width of ``text`` at the phone's size, erring wide (a wide font's: digits 0.64 em, "%" 0.95 em)."""
    ems = sum(0.64 if c.isdigit() else 0.95 if c == "%" else 0.72 if c.isupper() else 0.56 for c in text)
    return ems * PHONE_FONT_PX * (1.08 if bold else 1)


def wrap(text: str, width: float, bold: bool = False) -> list[str]:
    """Return ``text`` broken between words into lines no wider than ``width`` (at the phone's size) where it can."""
    lines = [""]
    for word in text.split(" "):
        joined = f"{lines[-1]} {word}" if lines[-1] else word
        if lines[-1] and text_width(joined, bold) > width:
            lines.append(word)
        else:
            lines[-1] = joined
    return lines


@dataclass(frozen=True)
class DataTable:
    """The chart's facts as a table: a caption, column headings and rows of text."""

    caption: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Chart:
    """A rendered chart: the SVG markup, its title and description, and a data table."""

    svg: str
    title: str
    description: str
    table: DataTable


def text_alternative(chart: Chart) -> str:
    """Return the chart as plain text: description, then the table row by row."""
    lines = [chart.title, chart.description, chart.table.caption]
    for row in chart.table.rows:
        lines.append("; ".join(f"{column}: {cell}" for column, cell in zip(chart.table.columns, row)))
    return "\n".join(lines)


def _f(x: float) -> str:
    """Return an SVG coordinate with at most one decimal."""
    text = f"{x:.1f}"
    return text[:-2] if text.endswith(".0") else text


class Svg:
    """A tiny SVG writer: every piece of text goes through `escape`."""

    def __init__(self, slug: str, title: str, description: str, height: float) -> None:
        self.slug = slug
        self.title = title
        self.description = description
        self.height = height
        self.parts: list[str] = []

    def text(
        self, x: float, y: float, content: str | Sequence[str], cls: str = "chart-label", anchor: str = "start"
    ) -> None:
        """Write ``content`` with its baseline at ``y``; a list of lines (``wrap``'s) goes one a LINE below another."""
        lines = [content] if isinstance(content, str) else content
        body = escape(lines[0]) + "".join(
            f'<tspan x="{_f(x)}" dy="{LINE}">{escape(line)}</tspan>' for line in lines[1:]
        )
        self.parts.append(f'<text x="{_f(x)}" y="{_f(y)}" class="{cls}" text-anchor="{anchor}">{body}</text>')

    def rect(self, x: float, y: float, w: float, h: float, cls: str, label: str = "") -> None:
        title = f"<title>{escape(label)}</title>" if label else ""
        self.parts.append(
            f'<rect x="{_f(x)}" y="{_f(y)}" width="{_f(max(w, 0))}" height="{_f(h)}" class="{cls}">{title}</rect>'
        )

    def line(self, x1: float, y1: float, x2: float, y2: float, cls: str) -> None:
        self.parts.append(f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" class="{cls}"/>')

    def polyline(self, points: Sequence[tuple[float, float]], cls: str) -> None:
        coords = " ".join(f"{_f(x)},{_f(y)}" for x, y in points)
        self.parts.append(f'<polyline points="{coords}" class="{cls}"/>')

    def circle(self, x: float, y: float, r: float, cls: str, label: str = "") -> None:
        title = f"<title>{escape(label)}</title>" if label else ""
        self.parts.append(f'<circle cx="{_f(x)}" cy="{_f(y)}" r="{_f(r)}" class="{cls}">{title}</circle>')

    def render(self) -> str:
        title_id = f"chart-{self.slug}-title"
        desc_id = f"chart-{self.slug}-desc"
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {_f(self.height)}" '
            f'width="100%" role="img" aria-labelledby="{title_id} {desc_id}" class="chart" '
            f'font-size="{FONT_PX}">'
            f'<title id="{title_id}">{escape(self.title)}</title>'
            f'<desc id="{desc_id}">{escape(self.description)}</desc>' + "".join(self.parts) + "</svg>"
        )


def nice_ticks(top: float, count: int = 5) -> list[float]:
    """Return round tick values from 0 to at least `top` (1, 2 or 5 times a power of ten)."""
    if top <= 0 or not math.isfinite(top):
        return [0.0, 1.0]
    if top < 1e-200:  # too small for round steps: one span is enough
        return [0.0, top]
    raw = top / count
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    ticks = [0.0]
    while ticks[-1] < top - 1e-12 * top:
        ticks.append(ticks[-1] + step)
    return ticks


# --- Horizontal bars with the label above each bar --------------------------


@dataclass(frozen=True)
class Bar:
    """One bar: its label, value, the value as text, and its CSS class."""

    label: str
    value: float
    text: str
    cls: str = "chart-bar"


def bar_chart(
    slug: str,
    title: str,
    description: str,
    bars: Sequence[Bar],
    top: float,
    axis_label: str,
    tick_text: Callable[[float], str],
    marker: tuple[float, str] | None = None,
) -> str:
    """Return horizontal bars, each labelled above, on a shared axis with an optional marker line."""
    left, right = 8.0, WIDTH - 12.0
    row = 44.0
    top_pad = 8.0 + (LINE if marker is not None else 0)  # the marker's label has a line of its own
    height = top_pad + row * len(bars) + 46
    svg = Svg(slug, title, description, height)
    ticks = nice_ticks(top)
    scale_top = ticks[-1]
    span = right - left

    def x_of(v: float) -> float:
        return left + span * min(max(v, 0.0), scale_top) / scale_top

    axis_y = top_pad + row * len(bars)
    for tick in ticks:
        x = x_of(tick)
        svg.line(x, top_pad, x, axis_y, "chart-grid")
        svg.text(
            x,
            axis_y + 18,
            tick_text(tick),
            "chart-tick",
            "middle" if 0 < tick < scale_top else ("start" if tick == 0 else "end"),
        )
    svg.text(left + span / 2, axis_y + 40, axis_label, "chart-axis-label", "middle")
    for index, bar in enumerate(bars):
        y = top_pad + row * index
        svg.text(left, y + 14, bar.label, "chart-label")
        width = x_of(bar.value) - left
        svg.rect(left, y + 19, max(width, 1.5), 16, bar.cls, f"{bar.label}: {bar.text}")
        inside = width > span * 0.72 or left + width + 4 + text_width(bar.text, bold=True) > WIDTH - 2
        svg.text(
            left + width + (-4 if inside else 4),
            y + 31.5,
            bar.text,
            "chart-value chart-value-inside" if inside and "muted" not in bar.cls else "chart-value",
            "end" if inside else "start",
        )
    if marker is not None:
        value, label = marker
        x = x_of(value)
        svg.line(x, top_pad - 4, x, axis_y, "chart-marker")
        x, anchor = _beside(x, left, WIDTH - 2, label)
        svg.text(x, top_pad - 6, label, "chart-marker-label", anchor)
    svg.line(left, axis_y, right, axis_y, "chart-axis")
    return svg.render()


# --- Line charts ------------------------------------------------------------


class Plot:
    """Axes for a line chart: maps data to SVG coordinates and draws grid and labels."""

    def __init__(
        self,
        svg: Svg,
        x_ticks: Sequence[float],
        y_ticks: Sequence[float],
        x_text: Callable[[float], str],
        y_text: Callable[[float], str],
        x_label: str,
        y_label: str,
        x_span: tuple[float, float] | None = None,
    ) -> None:
        """``x_span``: the x range drawn, when it is not the first to the last tick (one tick, centred)."""
        self.svg = svg
        y_labels = [y_text(tick) for tick in y_ticks]
        x_labels = [x_text(tick) for tick in x_ticks]
        self.left = max(52.0, 16 + max(text_width(t, bold=True) for t in y_labels))  # room for the widest tick label
        self.right, self.top, self.bottom = WIDTH - 28.0, 14.0, svg.height - 52.0  # "100%" centred fits
        self.x0, self.x1 = x_span or (x_ticks[0], x_ticks[-1])
        self.taken: list[tuple[float, float, float, float]] = []  # labels' boxes, kept clear by label_point
        self.taken_desk: list[tuple[float, float, float, float]] = []  # the same on a desktop (smaller text)
        self.y0, self.y1 = y_ticks[0], y_ticks[-1]
        for tick, label in zip(y_ticks, y_labels):
            y = self.y(tick)
            svg.line(self.left, y, self.right, y, "chart-grid")
            svg.text(self.left - 6, y + 4, label, "chart-tick", "end")
        for tick, label in zip(x_ticks, x_labels):
            x = self.x(tick)
            svg.line(x, self.top, x, self.bottom, "chart-grid")
            if label:  # a tick may go unlabelled (one whose label would run off the edge): no empty <text>
                # Low enough that a phone's text clears the "0" of the y axis beside the first; centred under its
                # tick, or ending there when it would run off the right edge.
                anchor = "end" if x + text_width(label) / 2 > WIDTH - 2 else "middle"
                svg.text(x, self.bottom + 24, label, "chart-tick", anchor)
        svg.line(self.left, self.bottom, self.right, self.bottom, "chart-axis")
        svg.line(self.left, self.top, self.left, self.bottom, "chart-axis")
        svg.text((self.left + self.right) / 2, self.bottom + 46, x_label, "chart-axis-label", "middle")

    def x(self, value: float) -> float:
        return self.left + (self.right - self.left) * (value - self.x0) / (self.x1 - self.x0)

    def y(self, value: float) -> float:
        return self.bottom - (self.bottom - self.top) * (value - self.y0) / (self.y1 - self.y0)

    def label_point(self, x: float, y: float, text: str, near: np.ndarray) -> None:
        """Write ``text`` beside the point (x, y), kept inside the plot, where no line and no other label runs
        through it: above to the left, level to the left, higher to the left, below to the right, level to the
        right, higher still to the left, above to the right or below to the left, the first of those that is
        clear for a phone's text, else the one crossed least on a desktop (then on a phone).
        ``near``: the pixels of the lines drawn (``pixels_of``); labels are those written here and those
        ``reserve``d."""
        width = text_width(text, bold=True)
        desk = DESK_CHAR * len(text)  # its width on a desktop
        spots = [(x - 8, y - 10, "end"), (x - 10, y + 6, "end"), (x - 8, y - 28, "end"), (x + 8, y + 24, "start")]
        spots += [(x + 10, y + 6, "start"), (x - 8, y - 46, "end"), (x + 8, y - 10, "start"), (x - 8, y + 24, "end")]

        def box(spot: tuple[float, float, str]) -> tuple[float, float, float, float]:
            tx, base, anchor = spot
            return (tx - width if anchor == "end" else tx, base - ASCENT, width, LINE)

        def desk_box(spot: tuple[float, float, str]) -> tuple[float, float, float, float]:
            tx, base, anchor = spot
            return (tx - desk if anchor == "end" else tx, base - 13, desk, 15)

        def inside(spot: tuple[float, float, str]) -> tuple[float, float, str]:
            """Return the spot moved back inside the plot, if it is past an edge (then it may cross something)."""
            tx, base, anchor = spot
            left = box(spot)[0]
            shift = max(self.left + 2 - left, 0) or min(self.right - 2 - (left + width), 0)
            return tx + shift, min(max(base, self.top + ASCENT), self.bottom - 4), anchor

        def crossings(spot: tuple[float, float, str]) -> tuple[int, int]:
            """Crossed on a desktop first: where a phone's larger text has no clear spot, a desktop's still does."""
            return self.crossings(desk_box(spot), near, desk=True), self.crossings(box(spot), near)

        best, fewest = None, None
        for spot in map(inside, spots):  # the first clear spot, else the first of the least crossed
            count = crossings(spot)
            if fewest is None or count < fewest:
                best, fewest = spot, count
            if count == (0, 0):
                break
        spot = best
        self.taken.append(box(spot))
        self.taken_desk.append(desk_box(spot))
        self.svg.text(spot[0], spot[1], text, "chart-point-label", spot[2])

    def crossings(self, box: tuple[float, float, float, float], near: np.ndarray, desk: bool = False) -> int:
        """Return how many of ``near``'s pixels fall in ``box`` (left, top, width, height), and 100 for each
        label already there (on a desktop when ``desk``)."""
        left, top, w, h = box
        px, py = near[:, 0], near[:, 1]
        hits = int(np.count_nonzero((px >= left) & (px <= left + w) & (py >= top) & (py <= top + h)))
        return hits + 100 * sum(_overlap(box, other) for other in (self.taken_desk if desk else self.taken))

    def legend(self, lines: Sequence[str], near: np.ndarray) -> None:
        """Write a legend of ``lines`` (.chart-axis-label) at the top left of the plot, or at its bottom right
        (aligned right) when a line or a point drawn (``near``) runs through the top left and not through the
        bottom right: for a desktop's text, then for a phone's larger text."""
        width, desk, height = max(map(text_width, lines)), DESK_AXIS_CHAR * max(map(len, lines)), LINE * len(lines)
        top_left, bottom_right = (
            (self.left + 4, self.top + 62, "start"),
            (self.right - 4, self.bottom - 4 - height, "end"),
        )

        def crossed(spot: tuple[float, float, str]) -> tuple[bool, int, int]:
            x, top, anchor = spot
            desk_count = self.crossings((x - desk if anchor == "end" else x, top, desk, height), near, desk=True)
            count = self.crossings((x - width if anchor == "end" else x, top, width, height), near)
            return desk_count + count > 0, desk_count, count

        x, top, anchor = min((top_left, bottom_right), key=crossed)
        for number, text in enumerate(lines):
            self.svg.text(x, top + ASCENT + LINE * number, text, "chart-axis-label", anchor)
            self.reserve(x, top + ASCENT + LINE * number, text, anchor=anchor)

    def reserve(self, x: float, y: float, text: str, bold: bool = False, anchor: str = "start") -> None:
        """Keep the labels label_point writes off a text written at (x, y)."""
        width, desk = text_width(text, bold), (DESK_CHAR if bold else DESK_AXIS_CHAR) * len(text)
        self.taken.append((x - width if anchor == "end" else x, y - ASCENT, width, LINE))
        self.taken_desk.append((x - desk if anchor == "end" else x, y - 11, desk, 13))


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    """Return whether two (left, top, width, height) boxes overlap."""
    return a[0] < b[0] + b[2] and b[0] < a[0] + a[2] and a[1] < b[1] + b[3] and b[1] < a[1] + a[3]


def pixels_of(lines: Sequence[Sequence[tuple[float, float]]]) -> np.ndarray:
    """Return the points of ``lines`` (each a line's SVG points) a pixel apart, for Plot.label_point to keep
    labels off: a box between two of a line's points is not missed."""
    return np.concatenate([_every_pixel(line) for line in lines]) if lines else np.empty((0, 2))


def _every_pixel(points: Sequence[tuple[float, float]]) -> np.ndarray:
    """Return a point every pixel along a line through ``points``, as an array of (x, y) rows."""
    ends = np.asarray(points, dtype=float).reshape(-1, 2)
    if len(ends) < 2:
        return ends
    starts, deltas = ends[:-1], np.diff(ends, axis=0)
    steps = np.maximum(np.ceil(np.abs(deltas).max(axis=1)), 1).astype(int)
    segment = np.repeat(np.arange(len(steps)), steps)
    fraction = (np.arange(steps.sum()) - np.repeat(np.cumsum(steps) - steps, steps)) / np.repeat(steps, steps)
    return np.vstack([starts[segment] + deltas[segment] * fraction[:, None], ends[-1:]])


def line_svg(slug: str, title: str, description: str, height: float = 280.0) -> Svg:
    """Return an empty SVG of a line chart's size, for a Plot to draw on."""
    return Svg(slug, title, description, height)


# --- Cost bars: token-cost and fleet --------------------------------------


def cost_chart(
    slug: str, bars: list[Bar], api_price: float, summary: str, extra_rows: Sequence[tuple[str, str, str]] = ()
) -> Chart:
    """Return bars of cost per million tokens against the API price, marking the margin check."""
    title = "Cost per million tokens: owned, rented and API"
    limit = maths.MARGIN_LIMIT * api_price
    svg = bar_chart(
        slug,
        title,
        summary,
        bars,
        max([b.value for b in bars] + [api_price]) * 1.05,
        "US dollars per million tokens",
        lambda t: money(t),
        (limit, f"{percent(maths.MARGIN_LIMIT)} of API: {money(limit)}"),
    )
    rows = tuple(
        (bar.label, bar.text, percent(bar.value / api_price, 4) if api_price > 0 else "—") for bar in bars
    ) + tuple(extra_rows)
    table = DataTable("Cost per million tokens", ("Option", "Per 1M tokens", "Share of API price"), rows)
    return Chart(svg, title, summary, table)


# --- Stacked bars: kv-cache, replica, shed ----------------------------------


@dataclass(frozen=True)
class Segment:
    """One part of a stacked bar: its label, value, the value as text, and its CSS class."""

    label: str
    value: float
    text: str
    cls: str


def stacked_chart(
    slug: str,
    title: str,
    description: str,
    segments: Sequence[Segment],
    total: float,
    marker: tuple[float, str] | None = None,
) -> str:
    """Return one bar split into segments of a total, with a legend and an optional marker."""
    left, right = 8.0, WIDTH - 12.0
    span = right - left
    legend_top = 78.0
    svg = Svg(slug, title, description, 0.0)
    x = left
    for segment in segments:
        width = span * segment.value / total if total > 0 else 0
        svg.rect(x, 28, width, 28, segment.cls, f"{segment.label}: {segment.text}")
        x += width
    svg.rect(left, 28, span, 28, "chart-frame")
    if marker is not None:
        value, label = marker
        mx = left + span * min(value / total, 1.0) if total > 0 else left
        svg.line(mx, 20, mx, 64, "chart-marker")
        x, anchor = _beside(mx, left, WIDTH - 2, label)
        svg.text(x, ASCENT + 2, label, "chart-marker-label", anchor)
    y = legend_top
    for segment in segments:
        svg.rect(left, y - 11, 14, 14, segment.cls)
        lines = wrap(f"{segment.label}: {segment.text}", WIDTH - 4 - (left + 22))
        svg.text(left + 22, y, lines, "chart-label")
        y += 22.0 + LINE * (len(lines) - 1)
    svg.height = y - 12
    return svg.render()


def _beside(x: float, left: float, right: float, label: str) -> tuple[float, str]:
    """Return where a marker's (bold) label at ``x`` starts and its anchor: after the line, or before it when
    it would run past ``right`` there."""
    width = text_width(label, bold=True)
    if x + 4 + width <= right:
        return x + 4, "start"
    return max(x - 4, left + width), "end"
