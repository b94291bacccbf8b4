"""Shared SVG drawing for calculator charts: bars, stacked bars, line plots, a text alternative (no Django).

Each calculator draws its own chart in its module under
`calculators/definitions/` with these helpers.

Every chart is an SVG string (all text escaped, `role="img"` with `<title>`
and `<desc>`), plus a small data table with the same facts for screen readers
and for anyone who prefers numbers. Colours come from CSS classes and
`currentColor`, so charts follow the site's light and dark themes; the
viewBox scales to the container (readable at 360 px wide).
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

    def text(self, x: float, y: float, content: str, cls: str = "chart-label", anchor: str = "start") -> None:
        self.parts.append(
            f'<text x="{_f(x)}" y="{_f(y)}" class="{cls}" text-anchor="{anchor}">{escape(content)}</text>'
        )

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
    top_pad = 8.0
    height = top_pad + row * len(bars) + 44
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
            axis_y + 16,
            tick_text(tick),
            "chart-tick",
            "middle" if 0 < tick < scale_top else ("start" if tick == 0 else "end"),
        )
    svg.text(left + span / 2, axis_y + 36, axis_label, "chart-axis-label", "middle")
    for index, bar in enumerate(bars):
        y = top_pad + row * index
        svg.text(left, y + 14, bar.label, "chart-label")
        width = x_of(bar.value) - left
        svg.rect(left, y + 19, max(width, 1.5), 16, bar.cls, f"{bar.label}: {bar.text}")
        inside = width > span * 0.72
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
        svg.text(min(x + 4, right), top_pad + 4, label, "chart-marker-label", "end" if x > span * 0.6 else "start")
    svg.line(left, axis_y, right, axis_y, "chart-axis")
    return svg.render()


# --- Line charts ------------------------------------------------------------


LABEL_CHAR_PX = 8  # a bold 12.5 px character (.chart-point-label) is narrower: a label's box errs wide
AXIS_CHAR_PX = 6.5  # about an 11.5 px character (.chart-axis-label)


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
        self.left, self.right, self.top, self.bottom = 52.0, WIDTH - 14.0, 14.0, svg.height - 46.0
        self.x0, self.x1 = x_span or (x_ticks[0], x_ticks[-1])
        self.taken: list[tuple[float, float, float, float]] = []  # labels' boxes, kept clear by label_point
        self.y0, self.y1 = y_ticks[0], y_ticks[-1]
        for tick in y_ticks:
            y = self.y(tick)
            svg.line(self.left, y, self.right, y, "chart-grid")
            svg.text(self.left - 6, y + 4, y_text(tick), "chart-tick", "end")
        for tick in x_ticks:
            x = self.x(tick)
            svg.line(x, self.top, x, self.bottom, "chart-grid")
            label = x_text(tick)
            if label:  # a tick may go unlabelled (one whose label would run off the edge): no empty <text>
                svg.text(x, self.bottom + 16, label, "chart-tick", "middle")
        svg.line(self.left, self.bottom, self.right, self.bottom, "chart-axis")
        svg.line(self.left, self.top, self.left, self.bottom, "chart-axis")
        svg.text((self.left + self.right) / 2, self.bottom + 36, x_label, "chart-axis-label", "middle")

    def x(self, value: float) -> float:
        return self.left + (self.right - self.left) * (value - self.x0) / (self.x1 - self.x0)

    def y(self, value: float) -> float:
        return self.bottom - (self.bottom - self.top) * (value - self.y0) / (self.y1 - self.y0)

    def label_point(self, x: float, y: float, text: str, near: np.ndarray) -> None:
        """Write ``text`` beside the point (x, y), kept inside the plot, where no line and no other label runs
        through it: above to the left, level to the left, higher to the left, below to the right, level to the
        right, higher still to the left, above to the right or below to the left, the first of those that is
        clear, else the one crossed least.
        ``near``: the pixels of the lines drawn (``pixels_of``); labels are those written here and those
        ``reserve``d."""
        width = LABEL_CHAR_PX * len(text)
        spots = [(x - 8, y - 10, "end"), (x - 10, y + 4, "end"), (x - 8, y - 24, "end"), (x + 8, y + 20, "start")]
        spots += [(x + 10, y + 4, "start"), (x - 8, y - 38, "end"), (x + 8, y - 10, "start"), (x - 8, y + 20, "end")]

        def box(spot: tuple[float, float, str]) -> tuple[float, float, float, float]:
            tx, base, anchor = spot
            return (tx - width if anchor == "end" else tx, base - 13, width, 15)

        def inside(spot: tuple[float, float, str]) -> tuple[float, float, str]:
            """Return the spot moved back inside the plot, if it is past an edge (then it may cross something)."""
            tx, base, anchor = spot
            left = box(spot)[0]
            shift = max(self.left + 2 - left, 0) or min(self.right - 2 - (left + width), 0)
            return tx + shift, min(max(base, self.top + 13), self.bottom - 2), anchor

        def crossings(spot: tuple[float, float, str]) -> int:
            return self.crossings(box(spot), near)

        best, fewest = None, None
        for spot in map(inside, spots):  # the first clear spot, else the first of the least crossed
            count = crossings(spot)
            if fewest is None or count < fewest:
                best, fewest = spot, count
            if count == 0:
                break
        spot = best
        self.taken.append(box(spot))
        self.svg.text(spot[0], spot[1], text, "chart-point-label", spot[2])

    def crossings(self, box: tuple[float, float, float, float], near: np.ndarray) -> int:
        """Return how many of ``near``'s pixels fall in ``box`` (left, top, width, height), and 100 for each
        label already there."""
        left, top, w, h = box
        px, py = near[:, 0], near[:, 1]
        hits = int(np.count_nonzero((px >= left) & (px <= left + w) & (py >= top) & (py <= top + h)))
        return hits + 100 * sum(_overlap(box, other) for other in self.taken)

    def legend(self, lines: Sequence[str], near: np.ndarray) -> None:
        """Write a legend of ``lines`` (11.5 px text) at the top left of the plot, or at its bottom right when
        a line or a point drawn (``near``) runs through the top left and not through the bottom right."""
        width, height = AXIS_CHAR_PX * max(map(len, lines)), 16 * len(lines)
        top_left = (self.left + 4, self.top + 62, width, height)
        bottom_right = (self.right - 4 - width, self.bottom - 4 - height, width, height)
        left, top, *_ = min((top_left, bottom_right), key=lambda box: self.crossings(box, near) > 0)
        for number, text in enumerate(lines):
            self.svg.text(left, top + 11 + 16 * number, text, "chart-axis-label")
            self.reserve(left, top + 11 + 16 * number, text)

    def reserve(self, x: float, y: float, text: str, char_px: float = AXIS_CHAR_PX) -> None:
        """Keep the labels label_point writes off a text written at (x, y) (start-anchored, 11.5 px by default)."""
        self.taken.append((x, y - 11, char_px * len(text), 13))


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
    legend_top = 74.0
    height = legend_top + 22.0 * len(segments) + 6
    svg = Svg(slug, title, description, height)
    x = left
    for segment in segments:
        width = span * segment.value / total if total > 0 else 0
        svg.rect(x, 26, width, 28, segment.cls, f"{segment.label}: {segment.text}")
        x += width
    svg.rect(left, 26, span, 28, "chart-frame")
    if marker is not None:
        value, label = marker
        mx = left + span * min(value / total, 1.0) if total > 0 else left
        svg.line(mx, 18, mx, 62, "chart-marker")
        svg.text(mx, 13, label, "chart-marker-label", "end" if mx > left + span * 0.6 else "start")
    for index, segment in enumerate(segments):
        y = legend_top + 22.0 * index
        svg.rect(left, y - 11, 14, 14, segment.cls)
        svg.text(left + 22, y, f"{segment.label}: {segment.text}", "chart-label")
    return svg.render()
