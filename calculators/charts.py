"""Server-rendered SVG charts for calculator results, each with a text alternative (no Django).

Every chart is an SVG string (all text escaped, `role="img"` with `<title>`
and `<desc>`), plus a small data table with the same facts for screen readers
and for anyone who prefers numbers. Colours come from CSS classes and
`currentColor`, so charts follow the site's light and dark themes; the
viewBox scales to the container (readable at 360 px wide).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any

import numpy as np

from calculators import maths
from calculators.formatting import bytes_text, money, number, percent, short_bytes

__all__ = ["Chart", "DataTable", "chart_for", "text_alternative"]

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
    return f"{x:.1f}".rstrip("0").rstrip(".")


class _Svg:
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
class _Bar:
    label: str
    value: float
    text: str
    cls: str = "chart-bar"


def _bar_chart(
    slug: str,
    title: str,
    description: str,
    bars: Sequence[_Bar],
    top: float,
    axis_label: str,
    tick_text: Callable[[float], str],
    marker: tuple[float, str] | None = None,
) -> str:
    left, right = 8.0, WIDTH - 12.0
    row = 44.0
    top_pad = 8.0
    height = top_pad + row * len(bars) + 44
    svg = _Svg(slug, title, description, height)
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


# --- routing ----------------------------------------------------------------


def _routing_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    cards, hot = i["cards"], i["hot_share"]
    shard_counts = sorted({k for k in (1, 2, 4, 8, i["shards"]) if k <= cards})
    bars = [_Bar("Round robin: every card", o["round_robin_share"], percent(o["round_robin_share"], 4))]
    rows = [
        (
            "Round robin, every card",
            percent(o["round_robin_share"]),
            number(100 * i["family_fleet_share"] * o["round_robin_share"], 4),
        )
    ]
    for k in shard_counts:
        share = maths.routing(cards, hot, i["family_fleet_share"], k).hash_busiest_share
        name = "Hash: busiest card" if k == 1 else f"Hash, hot key over {k} cards: busiest"
        yours = k == i["shards"]
        bars.append(
            _Bar(
                name + (" (yours)" if yours else ""),
                share,
                percent(share, 4),
                "chart-bar chart-bar-accent" if yours else "chart-bar",
            )
        )
        rows.append(
            (
                name + (" (your setting)" if yours else ""),
                percent(share),
                number(100 * i["family_fleet_share"] * share, 4),
            )
        )
    quiet = (1 - hot) / cards
    bars.append(_Bar("Hash: any card without the hot key", quiet, percent(quiet, 4), "chart-bar chart-bar-muted"))
    rows.append(("Hash, a card without the hot key", percent(quiet), number(100 * i["family_fleet_share"] * quiet, 4)))
    title = "Share of one family's traffic on a single card"
    description = (
        f"With {cards} cards, round robin gives every card {percent(o['round_robin_share'])} of the family; "
        f"hashing puts {percent(o['hash_busiest_share'])} on the busiest card"
        + (f" with the hot key over {i['shards']} cards." if i["shards"] > 1 else ".")
    )
    svg = _bar_chart(
        "routing",
        title,
        description,
        bars,
        max(b.value for b in bars),
        "Share of the family's traffic on that card",
        lambda t: percent(t, 3),
    )
    table = DataTable(
        "Per-card load by routing policy",
        ("Policy", "Share of the family", "Fleet points"),
        tuple(rows),
    )
    return Chart(svg, title, description, table)


# --- Line charts ------------------------------------------------------------


class _Plot:
    """Axes for a line chart: maps data to SVG coordinates and draws grid and labels."""

    def __init__(
        self,
        svg: _Svg,
        x_ticks: Sequence[float],
        y_ticks: Sequence[float],
        x_text: Callable[[float], str],
        y_text: Callable[[float], str],
        x_label: str,
        y_label: str,
    ) -> None:
        self.svg = svg
        self.left, self.right, self.top, self.bottom = 52.0, WIDTH - 14.0, 14.0, svg.height - 46.0
        self.x0, self.x1 = x_ticks[0], x_ticks[-1]
        self.y0, self.y1 = y_ticks[0], y_ticks[-1]
        for tick in y_ticks:
            y = self.y(tick)
            svg.line(self.left, y, self.right, y, "chart-grid")
            svg.text(self.left - 6, y + 4, y_text(tick), "chart-tick", "end")
        for tick in x_ticks:
            x = self.x(tick)
            svg.line(x, self.top, x, self.bottom, "chart-grid")
            svg.text(x, self.bottom + 16, x_text(tick), "chart-tick", "middle")
        svg.line(self.left, self.bottom, self.right, self.bottom, "chart-axis")
        svg.line(self.left, self.top, self.left, self.bottom, "chart-axis")
        svg.text((self.left + self.right) / 2, self.bottom + 36, x_label, "chart-axis-label", "middle")

    def x(self, value: float) -> float:
        return self.left + (self.right - self.left) * (value - self.x0) / (self.x1 - self.x0)

    def y(self, value: float) -> float:
        return self.bottom - (self.bottom - self.top) * (value - self.y0) / (self.y1 - self.y0)


def _line_svg(slug: str, title: str, description: str, height: float = 280.0) -> _Svg:
    return _Svg(slug, title, description, height)


# --- queue-wait -------------------------------------------------------------


def _waits(service_ms: float, servers: int, rhos: np.ndarray) -> np.ndarray:
    """Return M/M/c mean queue waits for a vector of per-server utilisations (< 1)."""
    loads = servers * rhos
    blocking = np.ones_like(loads)
    for k in range(1, servers + 1):
        blocking = loads * blocking / (k + loads * blocking)
    erlang_c = blocking / (1 - rhos * (1 - blocking))
    return erlang_c * service_ms / (servers * (1 - rhos))


def _queue_wait_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    service, rho, servers = i["service_ms"], i["utilization"], i["servers"]
    before, after, rho_after = o["wait_ms"], o["wait_after_ms"], o["utilization_after"]
    reference = after if after is not None else float(_waits(service, servers, np.array([0.95]))[0])
    top = max(before * 1.6, reference * 1.15, service * 0.5)
    y_ticks = nice_ticks(top, 5)
    rhos = np.linspace(0.0, 0.995, 200)
    waits = _waits(service, servers, rhos)
    model = "M/M/1" if servers == 1 else f"M/M/{servers}"
    title = f"Mean queue wait against utilisation ({model}, {number(service)} ms service)"
    if after is not None:
        change = f"losing capacity moves it to {percent(rho_after, 4)} and {number(after, 4)} ms"
    else:
        change = f"losing capacity pushes utilisation to {percent(rho_after, 4)}, past 100%: the queue never drains"
    description = (
        f"The wait stays low at moderate utilisation and climbs steeply towards 100%. "
        f"Before the loss: {percent(rho, 4)} utilisation, {number(before, 4)} ms; {change}."
    )
    svg = _line_svg("queue-wait", title, description)
    plot = _Plot(
        svg,
        [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
        y_ticks,
        lambda t: percent(t, 2),
        lambda t: number(t, 3),
        "Utilisation of each server",
        "ms",
    )
    svg.text(plot.left + 4, plot.top + 10, "wait (ms)", "chart-axis-label")
    points = [(plot.x(r), plot.y(w)) for r, w in zip(rhos, waits) if w <= y_ticks[-1]]
    svg.polyline(points, "chart-line")
    svg.line(plot.x(1.0), plot.top, plot.x(1.0), plot.bottom, "chart-marker")
    svg.circle(plot.x(rho), plot.y(min(before, y_ticks[-1])), 5, "chart-point", f"Before: {number(before, 4)} ms")
    svg.text(
        plot.x(rho) + 8, plot.y(min(before, y_ticks[-1])) - 8, f"before {number(before, 3)} ms", "chart-point-label"
    )
    if after is not None:
        x, y = plot.x(rho_after), plot.y(min(after, y_ticks[-1]))
        svg.circle(x, y, 5, "chart-point chart-point-accent", f"After: {number(after, 4)} ms")
        anchor = "end" if x > plot.left + (plot.right - plot.left) * 0.6 else "start"
        svg.text(x + (-8 if anchor == "end" else 8), y + 4, f"after {number(after, 3)} ms", "chart-point-label", anchor)
    else:
        svg.text(
            plot.x(1.0) - 6, plot.top + 26, f"after: {percent(rho_after, 3)}, unstable", "chart-point-label", "end"
        )
    rows = [
        (percent(r, 3), f"{number(float(_waits(service, servers, np.array([r]))[0]), 4)} ms")
        for r in (0.2, 0.4, 0.6, 0.8, 0.9, 0.95)
    ]
    rows.append((f"{percent(rho, 4)} (before)", f"{number(before, 4)} ms"))
    rows.append(
        (
            f"{percent(rho_after, 4)} (after)",
            f"{number(after, 4)} ms" if after is not None else "unstable: grows without bound",
        )
    )
    table = DataTable(f"Mean queue wait, {model}", ("Utilisation", "Mean wait"), tuple(rows))
    return Chart(svg.render(), title, description, table)


# --- spec-decode ------------------------------------------------------------


def _spec_decode_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    alpha, gamma, cost = i["acceptance"], i["draft_tokens"], i["draft_cost"]
    best, best_speedup = maths.best_draft_tokens(alpha, cost)
    last = min(64, max(12, gamma + 4, best + 4))
    speedups = maths.spec_decode_speedups(alpha, cost, last)
    top = max(float(speedups[1:].max()), 1.0) * 1.12
    title = "Speedup against draft length"
    description = (
        f"At acceptance {number(alpha)} and draft cost {number(cost)}, {gamma} drafted tokens give "
        f"{number(o['speedup'], 4)}×; the best length is {best} ({number(best_speedup, 4)}×). "
        "Below 1× speculation slows decoding down."
    )
    svg = _line_svg("spec-decode", title, description)
    x_ticks = [float(t) for t in nice_ticks(last, 6)]
    plot = _Plot(
        svg,
        x_ticks,
        nice_ticks(top, 5),
        lambda t: number(t),
        lambda t: f"{number(t, 3)}×",
        "Draft length γ (tokens per round)",
        "×",
    )
    svg.text(plot.left + 4, plot.top + 10, "speedup", "chart-axis-label")
    svg.line(plot.left, plot.y(1.0), plot.right, plot.y(1.0), "chart-marker")
    svg.text(plot.right - 2, plot.y(1.0) - 5, "no gain (1×)", "chart-marker-label", "end")
    svg.polyline(
        [(plot.x(g), plot.y(float(s))) for g, s in enumerate(speedups) if g >= 1 and g <= x_ticks[-1]], "chart-line"
    )
    svg.circle(
        plot.x(gamma),
        plot.y(o["speedup"]),
        5,
        "chart-point chart-point-accent",
        f"Yours: γ = {gamma}, {number(o['speedup'], 4)}×",
    )
    svg.text(plot.x(gamma) + 8, plot.y(o["speedup"]) + 16, f"yours {number(o['speedup'], 3)}×", "chart-point-label")
    if best != gamma:
        svg.circle(
            plot.x(best), plot.y(best_speedup), 5, "chart-point", f"Best: γ = {best}, {number(best_speedup, 4)}×"
        )
        svg.text(plot.x(best), plot.y(best_speedup) - 9, f"best γ = {best}", "chart-point-label", "middle")
    shown = sorted({1, 2, 3, 4, 6, 8, 12, 16, gamma, best} & set(range(1, last + 1)))
    rows = tuple(
        (
            f"{g}" + (" (yours)" if g == gamma else "") + (" (best)" if g == best else ""),
            number(float(speedups[g]), 4) + "×",
        )
        for g in shown
    )
    table = DataTable("Speedup by draft length (theorem 3.8)", ("Draft length γ", "Speedup"), rows)
    return Chart(svg.render(), title, description, table)


# --- token-cost and fleet ---------------------------------------------------


def _cost_chart(
    slug: str, bars: list[_Bar], api_price: float, summary: str, extra_rows: Sequence[tuple[str, str, str]] = ()
) -> Chart:
    title = "Cost per million tokens: owned, rented and API"
    limit = 0.75 * api_price
    svg = _bar_chart(
        slug,
        title,
        summary,
        bars,
        max([b.value for b in bars] + [api_price]) * 1.05,
        "US dollars per million tokens",
        lambda t: money(t),
        (limit, f"75% of API: {money(limit)}"),
    )
    rows = tuple(
        (bar.label, bar.text, percent(bar.value / api_price, 4) if api_price > 0 else "—") for bar in bars
    ) + tuple(extra_rows)
    table = DataTable("Cost per million tokens", ("Option", "Per 1M tokens", "Share of API price"), rows)
    return Chart(svg, title, summary, table)


def _token_cost_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    owned = o["usd_per_million_tokens"]
    rented = owned * 1.35
    api = i["api_usd_per_million"]
    bars = [
        _Bar("Your cards", owned, money(owned), "chart-bar chart-bar-accent"),
        _Bar("Same cards rented (1.35×)", rented, money(rented)),
        _Bar("API", api, money(api), "chart-bar chart-bar-muted"),
    ]
    summary = (
        f"Your cards cost {money(owned)} per million tokens, {percent(o['share_of_api'], 4)} of the API's "
        f"{money(api)}; rented at the source's 1.35× they would cost {money(rented)}. "
        "The line marks 75% of the API price, the margin check."
    )
    return _cost_chart("token-cost", bars, api, summary)


def _fleet_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    per_card = o["tokens_per_card_month"]
    owned_full = i["card_month_usd"] / per_card * 1e6
    rented = owned_full * i["rent_multiplier"]
    api = i["api_usd_per_million"]
    parts = maths.fleet_breakdown(
        i["monthly_tokens"],
        i["tokens_per_s_per_card"],
        i["owned_cards"],
        i["rented_cards"],
        i["card_month_usd"],
        i["rent_multiplier"],
    )
    bars = [_Bar("Owned card, fully busy", owned_full, money(owned_full))]
    if parts.served_by_owned > 0 and o["idle_share"] > 0:
        effective = parts.owned_usd / (parts.served_by_owned / 1e6)
        bars.append(_Bar(f"Owned, {percent(o['idle_share'], 3)} idle", effective, money(effective)))
    bars += [
        _Bar(f"Rented card ({number(i['rent_multiplier'])}×)", rented, money(rented)),
        _Bar("API", api, money(api), "chart-bar chart-bar-muted"),
        _Bar(
            "Blended, this month",
            o["blended_usd_per_million"],
            money(o["blended_usd_per_million"]),
            "chart-bar chart-bar-accent",
        ),
    ]
    summary = (
        f"An owned card costs {money(owned_full)} per million tokens when fully busy, a rented one "
        f"{money(rented)}, the API {money(api)}. This month blends to {money(o['blended_usd_per_million'])}, "
        f"{'within' if o['margin_ok'] else 'above'} the 75% margin line."
    )
    return _cost_chart("fleet", bars, api, summary)


# --- token-bucket -----------------------------------------------------------


def _token_bucket_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    rate, burst, arrivals, window = i["rate_per_s"], i["burst"], i["arrivals"], i["window_s"]
    count = min(arrivals, 240)
    picks = np.unique(np.linspace(1, arrivals, count).round().astype(np.int64))
    curve = maths.token_bucket_curve(rate, burst, arrivals, window) if arrivals <= 2_000_000 else None
    if curve is not None:
        admitted = curve[picks - 1]
    else:  # too many arrivals to hold in memory: evaluate the closed form at the picks
        admitted = np.array([maths.token_bucket(rate, burst, int(k), window * (k / arrivals)).admitted for k in picks])
    title = "Requests admitted as they arrive"
    description = (
        f"{number(arrivals)} requests arrive "
        + (f"evenly over {number(window)} s" if window > 0 else "all at once")
        + f"; the bucket of {number(burst)} tokens refilling at {number(rate)} per second admits "
        f"{number(o['admitted'])} and rejects {number(o['rejected'])}."
    )
    svg = _line_svg("token-bucket", title, description)
    x_ticks = nice_ticks(arrivals, 5)
    y_ticks = nice_ticks(arrivals, 5)
    plot = _Plot(
        svg,
        x_ticks,
        y_ticks,
        lambda t: number(t, 3),
        lambda t: number(t, 3),
        "Arrivals so far (in arrival order)",
        "requests",
    )
    svg.polyline([(plot.x(0), plot.y(0)), (plot.x(arrivals), plot.y(arrivals))], "chart-line chart-line-muted")
    svg.text(plot.x(arrivals * 0.55) - 6, plot.y(arrivals * 0.55) - 6, "arrived", "chart-point-label", "end")
    svg.polyline(
        [(plot.x(0), plot.y(0))] + [(plot.x(float(k)), plot.y(float(a))) for k, a in zip(picks, admitted)], "chart-line"
    )
    svg.text(
        plot.x(arrivals) - 4,
        plot.y(o["admitted"]) + 16,
        f"admitted {number(o['admitted'])}",
        "chart-point-label",
        "end",
    )
    marks = np.unique(np.linspace(1, arrivals, min(arrivals, 8)).round().astype(np.int64))
    rows = []
    for k in marks:
        so_far = (
            int(admitted[np.searchsorted(picks, k)])
            if k in picks
            else maths.token_bucket(rate, burst, int(k), window * k / arrivals).admitted
        )
        t = (int(k) - 1) * window / arrivals
        rows.append((number(int(k)), f"{number(t, 4)} s", number(so_far), number(int(k) - so_far)))
    table = DataTable(
        "Admissions over the arrivals", ("Arrival", "Time", "Admitted so far", "Rejected so far"), tuple(rows)
    )
    return Chart(svg.render(), title, description, table)


# --- Stacked bars: kv-cache, replica, shed ----------------------------------


@dataclass(frozen=True)
class _Segment:
    label: str
    value: float
    text: str
    cls: str


def _stacked_chart(
    slug: str,
    title: str,
    description: str,
    segments: Sequence[_Segment],
    total: float,
    marker: tuple[float, str] | None = None,
) -> str:
    left, right = 8.0, WIDTH - 12.0
    span = right - left
    legend_top = 74.0
    height = legend_top + 22.0 * len(segments) + 6
    svg = _Svg(slug, title, description, height)
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


def _kv_cache_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    cache = round(i["cache_gb"] * maths.BYTES_PER_GB)
    used = min(cache, o["copies_per_cache"] * o["copy_bytes"])
    title = "How the prefix cache fills with copies"
    description = (
        f"The {number(i['cache_gb'])} GB cache holds {number(o['copies_per_cache'])} whole copies of "
        f"{bytes_text(o['copy_bytes'])}; {bytes_text(cache - used)} is left over."
    )
    segments = [
        _Segment(f"{number(o['copies_per_cache'])} copies", used, short_bytes(used), "chart-bar chart-bar-accent"),
        _Segment("Left over", cache - used, short_bytes(cache - used), "chart-bar chart-bar-muted"),
    ]
    svg = _stacked_chart("kv-cache", title, description, segments, cache)
    table = DataTable(
        "Prefix cache use",
        ("Part", "Bytes"),
        (
            ("One copy", bytes_text(o["copy_bytes"])),
            (f"{number(o['copies_per_cache'])} whole copies", bytes_text(used)),
            ("Left over", bytes_text(cache - used)),
            ("Cache", bytes_text(cache)),
        ),
    )
    return Chart(svg, title, description, table)


def _replica_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    total = round(i["gpus"] * i["gpu_memory_gb"] * maths.BYTES_PER_GB)
    weights = round(i["weights_gb"] * maths.BYTES_PER_GB)
    budget = o["kv_budget_bytes"]
    in_use = o["requests_per_replica"] * o["kv_bytes_per_request"]
    reserved = max(0, total - weights - budget)
    title = "Where the replica's GPU memory goes"
    description = (
        f"Of {bytes_text(total)}, the weights take {bytes_text(weights)} and the KV budget is "
        f"{bytes_text(budget)}: {number(o['requests_per_replica'])} requests at full context."
    )
    segments = [
        _Segment("Weights", weights, short_bytes(weights), "chart-bar"),
        _Segment(
            f"KV for {number(o['requests_per_replica'])} requests",
            in_use,
            short_bytes(in_use),
            "chart-bar chart-bar-accent",
        ),
        _Segment("KV unused (< 1 request)", budget - in_use, short_bytes(budget - in_use), "chart-bar chart-bar-light"),
        _Segment("Held back (1 − utilisation)", reserved, short_bytes(reserved), "chart-bar chart-bar-muted"),
    ]
    svg = _stacked_chart("replica", title, description, segments, total)
    table = DataTable(
        "Replica memory",
        ("Part", "Bytes"),
        tuple((s.label, bytes_text(s.value)) for s in segments) + (("Total", bytes_text(total)),),
    )
    return Chart(svg, title, description, table)


def _shed_chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    capacity, paid, free = i["capacity_rps"], i["paid_rps"], i["free_rps"]
    total = max(capacity, paid + free)
    target = i["target_utilization"] * capacity
    title = "Demand against the pool's capacity"
    description = (
        f"Paid traffic ({number(paid)} requests/s) goes first; {number(o['free_admitted_rps'])} requests/s of "
        f"free traffic fit below the target of {number(target)}, and {number(o['free_shed_rps'])} are shed."
    )
    segments = [
        _Segment("Paid", paid, f"{number(paid)} requests/s", "chart-bar"),
        _Segment(
            "Free, admitted",
            o["free_admitted_rps"],
            f"{number(o['free_admitted_rps'])} requests/s",
            "chart-bar chart-bar-accent",
        ),
        _Segment(
            "Free, shed", o["free_shed_rps"], f"{number(o['free_shed_rps'])} requests/s", "chart-bar chart-bar-muted"
        ),
    ]
    svg = _stacked_chart("shed", title, description, segments, total, (target, f"target {number(target)}/s"))
    table = DataTable(
        "Traffic and capacity (requests per second)",
        ("Part", "Requests per second"),
        tuple((s.label, number(s.value)) for s in segments)
        + (("Target load", number(target)), ("Capacity", number(capacity))),
    )
    return Chart(svg, title, description, table)


_CHARTS: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], Chart]] = {
    "kv-cache": _kv_cache_chart,
    "routing": _routing_chart,
    "replica": _replica_chart,
    "token-cost": _token_cost_chart,
    "fleet": _fleet_chart,
    "token-bucket": _token_bucket_chart,
    "queue-wait": _queue_wait_chart,
    "shed": _shed_chart,
    "spec-decode": _spec_decode_chart,
}


def chart_for(slug: str, inputs: Mapping[str, Any], outputs: Mapping[str, Any]) -> Chart | None:
    """Return the chart for a calculator's result, or None when it has none (pool)."""
    render = _CHARTS.get(slug)
    return render(inputs, outputs) if render else None
