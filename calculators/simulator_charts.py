"""SVG charts of the fleet simulator, each with a data table as its text alternative (no Django).

Policies are told apart by dash pattern and marker shape as well as colour
(`chart-series-N` in static/calculators/simulator.css), and a legend below each
line chart shows every line's pattern beside its name, so no chart relies on
colour alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from calculators.charts import LINE, WIDTH, Chart, DataTable, Plot, Svg, line_svg, nice_ticks, wrap
from calculators.formatting import milliseconds, number, percent

__all__ = ["POLICY_LABELS", "day_chart", "hit_rate_chart", "load_chart", "ttft_chart"]

POLICY_LABELS = {
    "round_robin": "Round robin",
    "least_loaded": "Least loaded (two choices)",
    "hash": "Hash affinity",
    "bounded_load": "Consistent hashing with bounded loads",
    "prefix_aware": "Prefix-aware",
    "queue_depth": "Queue depth",
    "kv_use": "KV use",
    "ttft": "TTFT",
}


def _series(svg: Svg, plot: Plot, index: int, label: str, points: Sequence[tuple[float, float]]) -> tuple:
    """Draw one policy's line (with markers when the points are few); return its legend entry."""
    coords = [(plot.x(x), plot.y(y)) for x, y in points]
    svg.polyline(coords, f"chart-line chart-series chart-series-{index}")
    marked = len(coords) <= 12
    if marked:
        for (x, y), (_, value) in zip(coords, points):
            svg.circle(x, y, 3.5, f"chart-point chart-series chart-series-{index}", f"{label}: {number(value, 3)}")
    return label, f"chart-series chart-series-{index}", f"chart-point-label chart-series-text-{index}", marked


LEGEND_ROW = 24.0  # user units per legend line: room for the 16 px text a phone gets (site.css)


def _legend(svg: Svg, entries: Sequence[tuple]) -> None:
    """List each line below the chart, one a row: a sample of its dash pattern (and marker), then its name.

    Names sit in a legend rather than at the lines' ends, where they covered the lines on a narrow screen.
    """
    top = svg.height - 4
    for label, line_cls, text_cls, marked in entries:
        y = top + LEGEND_ROW / 2
        svg.line(8, y, 38, y, f"chart-line {line_cls}")
        if marked:
            svg.circle(23, y, 3.5, f"chart-point {line_cls}")
        lines = wrap(label, WIDTH - 4 - 46, bold=True)  # a long name takes two lines rather than run off the edge
        svg.text(46, y + 5, lines, text_cls)
        top += LEGEND_ROW + LINE * (len(lines) - 1)
    svg.height = top + 4


def hit_rate_chart(curves: Mapping[str, Sequence[tuple[int, float]]], current: int, replayed: int) -> Chart:
    """Return prefix-cache hit rate against cache size (copies), one line per policy, on the same arrivals."""
    title = "Prefix-cache hit rate against cache size"
    sizes = [size for size, _ in next(iter(curves.values()))]
    description = (
        f"Hit rate of each policy as each replica's cache holds {', '.join(str(s) for s in sizes)} preamble "
        f"copies; yours is {current}. Each point plays the first {replayed:,} arrivals. "
        "The table below gives every point."
    )
    svg = line_svg("sim-hits", title, description, 300.0)
    positions = {size: index for index, size in enumerate(sizes)}
    plot = Plot(
        svg,
        list(range(len(sizes))),
        [0.0, 0.25, 0.5, 0.75, 1.0],
        # Yours is named under its tick: written beside the marker, inside the plot, the word sat on the lines.
        lambda t: f"{sizes[int(t)]} (yours)" if sizes[int(t)] == current else str(sizes[int(t)]),
        lambda t: percent(t),
        "Cache size per replica (preamble copies)",
        "Hit rate",
    )
    mark = plot.x(positions[current])
    svg.line(mark, plot.top, mark, plot.bottom, "chart-marker")
    _legend(
        svg,
        [
            _series(svg, plot, index, POLICY_LABELS[policy], [(positions[s], rate) for s, rate in points])
            for index, (policy, points) in enumerate(curves.items())
        ],
    )
    rows = tuple((str(size), *(percent(dict(points)[size], 3) for points in curves.values())) for size in sizes)
    table = DataTable(title, ("Copies per cache", *(POLICY_LABELS[p] for p in curves)), rows)
    return Chart(svg.render(), title, description, table)


def load_chart(results: Mapping[str, Mapping[str, Any]]) -> Chart:
    """Return each policy's per-replica share of requests as a row of columns, against the fair share."""
    title = "Requests per replica"
    policies = list(results)
    shares = {policy: results[policy]["replica_share"] for policy in policies}
    replicas = len(next(iter(shares.values())))
    fair = 1.0 / replicas
    description = (
        f"For each policy, one column per replica (replica 0 on the left), its height the replica's share "
        f"of requests; the dashed line is the fair share 1/{replicas} = {percent(fair, 3)}. Each policy has "
        "its own scale, from 0 to twice the fair share or its busiest replica, whichever is higher."
    )
    panel, gap, left, right = 62.0, 26.0, 8.0, WIDTH - 12.0
    svg = Svg("sim-load", title, description, 0.0)
    width = (right - left) / replicas
    base = 8.0
    for policy in policies:
        top = max(max(shares[policy]), 2 * fair) * 1.05
        lines = wrap(f"{POLICY_LABELS[policy]}: busiest {percent(max(shares[policy]), 3)}", WIDTH - 4 - left)
        base += gap + LINE * (len(lines) - 1) + panel  # a long name's label takes two lines
        svg.text(left, base - panel - 8 - LINE * (len(lines) - 1), lines, "chart-label")
        for index, share in enumerate(shares[policy]):
            height = panel * share / top
            svg.rect(left + index * width + 0.5, base - height, max(width - 1, 0.8), height, "chart-bar-accent",
                     f"Replica {index}: {percent(share, 3)}")  # fmt: skip
        y = base - panel * fair / top
        svg.line(left, y, right, y, "chart-marker")
        svg.line(left, base, right, base, "chart-axis")
    svg.height = base + 8
    rows = tuple(
        (
            POLICY_LABELS[policy],
            percent(max(shares[policy]), 3),
            str(max(range(replicas), key=shares[policy].__getitem__)),
            percent(min(shares[policy]), 3),
            f"{number(max(shares[policy]) / fair, 3)}×",
        )
        for policy in policies
    )
    columns = (
        "Policy",
        "Busiest replica's share",
        "Busiest replica",
        "Quietest replica's share",
        "Busiest ÷ fair share",
    )
    table = DataTable(title, columns, rows)
    return Chart(svg.render(), title, description, table)


def ttft_chart(results: Mapping[str, Mapping[str, Any]], percentiles: Sequence[int]) -> Chart:
    """Return each policy's TTFT distribution (share of requests at or under a TTFT), TTFT on a log axis."""
    title = "Time to first token: distribution"
    values = [v for r in results.values() for v in r["ttft_percentiles_ms"] if v > 0]
    low = 10 ** math.floor(math.log10(min(values))) if values else 1.0
    high = 10 ** math.ceil(math.log10(max(values))) if values else 10.0
    if high <= low:
        high = low * 10
    decades = list(range(round(math.log10(low)), round(math.log10(high)) + 1))
    description = (
        "For each policy, the share of requests (up the side) whose time to first token is at most the value "
        "along the bottom, on a logarithmic scale; further right is slower. The table gives the percentiles."
    )
    svg = line_svg("sim-ttft", title, description, 300.0)
    plot = Plot(
        svg,
        decades,
        [0.0, 0.25, 0.5, 0.75, 1.0],
        # Every decade up to four, every other one past that (on a phone five or more collide: "100 s1,000 s"),
        # counted from the last, which ends at its tick (Plot), so the axis says how far it runs.
        lambda t: milliseconds(10**t) if len(decades) <= 4 or t % 2 == decades[-1] % 2 else "",
        lambda t: percent(t),
        "Time to first token (log scale)",
        "Requests at or under",
    )
    entries = []
    for index, (policy, result) in enumerate(results.items()):
        points = [(math.log10(max(v, low)), p / 100) for p, v in zip(percentiles, result["ttft_percentiles_ms"])]
        entries.append(_series(svg, plot, index, POLICY_LABELS[policy], points))
    _legend(svg, entries)
    rows = []
    for policy, result in results.items():
        by = dict(zip(percentiles, result["ttft_percentiles_ms"]))
        cells = (by[50], by[90], result["ttft_p99_ms"], by[100])
        rows.append((POLICY_LABELS[policy], *(milliseconds(v) for v in cells)))
    columns = ("Policy", "p50", "p90", "p99", "Slowest")
    table = DataTable(title, columns, tuple(rows))
    return Chart(svg.render(), title, description, table)


def day_chart(days: Mapping[str, Mapping[str, Any]], needed: Sequence[float]) -> Chart:
    """Return replicas over the day for each autoscaling policy, with the replicas the demand needs."""
    title = "Replicas and demand over the day"
    description = (
        "Replicas provisioned by each policy, minute by minute over 24 hours; the dashed line is the replicas "
        "the demand would keep fully busy. The table gives each hour."
    )
    top = max(max(max(e["replicas"] for e in d["timeline"]) for d in days.values()), max(needed))
    svg = line_svg("sim-day", title, description, 300.0)
    plot = Plot(
        svg,
        [0, 4, 8, 12, 16, 20, 24],
        nice_ticks(top * 1.05),
        lambda t: f"{int(t):02d}:00" if t < 24 else "",  # a centred "24:00" would run off the right edge
        lambda t: number(t),
        "Time of day",
        "Replicas",
    )
    every = 10  # a point every ten minutes keeps the SVG small
    demand_points = [(plot.x(m / 60), plot.y(needed[m])) for m in range(0, len(needed), every)]
    svg.polyline(demand_points, "chart-line chart-line-muted")
    entries = []
    for index, (policy, day) in enumerate(days.items()):
        timeline = day["timeline"]
        points = [(m / 60, timeline[m]["replicas"]) for m in range(0, len(timeline), every)]
        entries.append(_series(svg, plot, index, POLICY_LABELS[policy], points))
    entries.append(("Replicas the demand needs", "chart-line-muted", "chart-point-label", False))
    _legend(svg, entries)
    rows = []
    for hour in range(24):
        minute = hour * 60
        first = next(iter(days.values()))["timeline"][minute]
        cells = [f"{number(first['demand_rps'], 4)}", number(needed[minute], 3)]
        for day in days.values():
            entry = day["timeline"][minute]
            ttft = "no requests" if entry["ttft_p99_ms"] is None else milliseconds(entry["ttft_p99_ms"])
            cells.append(f"{entry['replicas']} ({ttft})")
        rows.append((f"{hour:02d}:00", *cells))
    columns = (
        "Time",
        "Demand (requests/s)",
        "Replicas needed",
        *(f"{POLICY_LABELS[p]}: replicas (p99 TTFT)" for p in days),
    )
    table = DataTable(title, columns, tuple(rows))
    return Chart(svg.render(), title, description, table)
