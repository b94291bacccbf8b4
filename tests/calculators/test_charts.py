"""SVG charts: well-formed, accessible, escaped, and carrying the figures they show."""

import xml.etree.ElementTree as ET

import pytest

from calculators import charts
from calculators.registry import CALCULATORS, get_calculator

SVG = "{http://www.w3.org/2000/svg}"


def _chart(slug, raw=None):
    calculator = get_calculator(slug)
    return calculator.draw(calculator.evaluate(raw or {}))


@pytest.mark.parametrize("slug", [s for s in CALCULATORS if s != "pool"])
def test_chart_is_accessible_svg(slug):
    chart = _chart(slug)
    root = ET.fromstring(chart.svg)
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img"
    assert root.get("width") == "100%" and root.get("viewBox").startswith("0 0 420 ")
    title, desc = root.find(f"{SVG}title"), root.find(f"{SVG}desc")
    assert title.text == chart.title and desc.text == chart.description
    assert root.get("aria-labelledby") == f"{title.get('id')} {desc.get('id')}"
    assert chart.table.columns and all(len(row) == len(chart.table.columns) for row in chart.table.rows)


def test_pool_has_no_chart():
    assert _chart("pool") is None


def test_charts_use_classes_not_fixed_colours():
    svg = _chart("routing").svg
    assert 'fill="#' not in svg and 'stroke="#' not in svg and "style=" not in svg


def test_chart_text_is_escaped():
    svg = charts.Svg("x", "<script>&", "a < b", 100)
    svg.text(0, 0, "<b>")
    rendered = svg.render()
    assert "<script>" not in rendered and "&lt;script&gt;&amp;" in rendered and "&lt;b&gt;" in rendered
    ET.fromstring(rendered)


def test_routing_chart_compares_round_robin_hash_and_sharding():
    chart = _chart("routing")
    rows = {row[0]: row[1] for row in chart.table.rows}
    assert rows["Round robin, every replica"] == "1.6%"
    assert rows["Hash: busiest replica (your setting)"] == "80.3%"
    assert rows["Hash, hot key over 2 replicas: busiest"] == "40.3%"
    assert "80.3%" in chart.description


def test_queue_wait_chart_marks_before_and_after():
    chart = _chart("queue-wait")
    assert "before 97.1 ms" in chart.svg and "after 1,179 ms (71.4 ms service)" in chart.svg
    assert chart.svg.count("<polyline") == 2  # the curve before, and the slowed servers' curve after
    # Each row: the wait at the old service time, then at the slowed one (825 ms was the old reading).
    assert chart.table.rows[-2:] == (
        ("66% (before)", "97.06 ms", "138.7 ms"),
        ("94.3% (after)", "825 ms", "1,179 ms"),
    )


def test_queue_wait_chart_says_when_the_queue_is_unstable():
    chart = _chart("queue-wait", {"utilization": "0.8"})
    assert "unstable" in chart.svg and "never drains" in chart.description
    assert chart.table.rows[-1][1] == "unstable: grows without bound"


def test_cost_chart_compares_owned_rented_and_api():
    rows = {row[0]: row[1:] for row in _chart("token-cost").table.rows}
    assert rows["Your cards"] == ("$1.14", "45.7%")
    assert rows["Same cards rented (1.35×)"] == ("$1.54", "61.6%")
    assert rows["API"] == ("$2.50", "100%")


def test_fleet_chart_shows_what_idle_cards_cost():
    rows = {row[0]: row[1] for row in _chart("fleet", {"owned_cards": "8000"}).table.rows}
    assert rows["Owned card, fully busy"] == "$1.14"
    assert rows["Owned, 32.1% idle"] == "$1.68"
    assert rows["Blended, this month"] == "$1.68"


def test_spec_decode_chart_marks_the_best_length():
    chart = _chart("spec-decode")
    assert "best γ = 8" in chart.svg
    assert ("8 (best)", "3.092×") in chart.table.rows
    assert ("4 (yours)", "2.801×") in chart.table.rows


def test_token_bucket_chart_counts_admissions():
    chart = _chart("token-bucket", {"rate_per_s": "5", "burst": "10", "arrivals": "100", "window_s": "10"})
    assert chart.table.rows[-1] == ("100", "9.9 s", "59", "41")


def test_token_bucket_chart_with_a_billion_arrivals_stays_small():
    chart = _chart("token-bucket", {"arrivals": "1000000000", "window_s": "100"})
    assert len(chart.svg) < 20_000


def test_text_alternative_lists_every_row():
    chart = _chart("shed")
    text = charts.text_alternative(chart)
    assert chart.description in text
    assert "Part: Free, shed; Requests per second: 250" in text


def test_nice_ticks():
    assert charts.nice_ticks(0.803125) == [0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
    assert charts.nice_ticks(0) == [0.0, 1.0]


def test_simulator_lines_are_named_in_a_legend_below_the_plot():
    from calculators.simulator_charts import day_chart

    # Three policies ending at the same height: their names go below the plot, one a row, not on the lines.
    timeline = [{"replicas": 20, "demand_rps": 100.0, "ttft_p99_ms": 300.0}] * 1440
    days = {policy: {"timeline": timeline} for policy in ("queue_depth", "kv_use", "ttft")}
    root = ET.fromstring(day_chart(days, [18.0] * 1440).svg)
    ns = "{http://www.w3.org/2000/svg}"
    height = float(root.get("viewBox").split()[3])
    axis_label = next(t for t in root.iter(f"{ns}text") if t.get("class") == "chart-axis-label")
    names = [t for t in root.iter(f"{ns}text") if "chart-point-label" in t.get("class", "")]
    assert [t.text for t in names] == ["Queue depth", "KV use", "TTFT", "Replicas the demand needs"]
    ys = [float(t.get("y")) for t in names]
    assert ys[0] > float(axis_label.get("y")) + 10  # below the time axis, clear of every line
    assert all(b - a >= 20 for a, b in zip(ys, ys[1:]))  # one a row, room for 16 px text
    assert ys[-1] + 4 <= height  # inside the picture
    # Each name has a sample of its line's dash pattern (its class) beside it.
    samples = [line.get("class") for line in root.iter(f"{ns}line") if "chart-series-" in line.get("class", "")]
    assert samples == [f"chart-line chart-series chart-series-{i}" for i in range(3)]


def test_queue_wait_chart_says_what_a_pools_replicas_lost_curve_means():
    """For a pool of servers the speed-kept curve is whole pools lost (M/M/10 at the new load), not 3 of its 10
    servers: the legend says so, as the output's label does."""
    assert "solid: replicas lost, speed kept" in _chart("queue-wait").svg
    pool = _chart("queue-wait", {"servers": "10"}).svg
    assert "solid: whole pools of 10 lost, speed kept" in pool and "solid: replicas lost" not in pool


@pytest.mark.parametrize("utilization", ["0.2", "0.5", "0.66", "0.8", "0.9"])
def test_queue_wait_before_label_stays_clear_of_the_curves(utilization):
    """No curve runs through "before … ms" (bold 12.5 px text, taken as 8 px a character and 13 px tall)."""
    root = ET.fromstring(_chart("queue-wait", {"utilization": utilization}).svg)
    ns = "{http://www.w3.org/2000/svg}"
    (label,) = [t for t in root.iter(f"{ns}text") if (t.text or "").startswith("before ")]
    width, x, y = 8 * len(label.text), float(label.get("x")), float(label.get("y"))
    left = x - width if label.get("text-anchor") == "end" else x
    points = []
    for line in root.iter(f"{ns}polyline"):
        pairs = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
        for (x1, y1), (x2, y2) in zip(pairs, pairs[1:]):  # every pixel of each segment, not only its ends
            steps = max(int(max(abs(x2 - x1), abs(y2 - y1))), 1)
            points += [(x1 + (x2 - x1) * i / steps, y1 + (y2 - y1) * i / steps) for i in range(steps + 1)]
    crossing = [(px, py) for px, py in points if left <= px <= left + width and y - 13 <= py <= y + 2]
    assert crossing == [], (label.text, left, y)
    marker = next(line for line in root.iter(f"{ns}line") if line.get("class") == "chart-marker")
    assert not left <= float(marker.get("x1")) <= left + width  # nor the 100% line


@pytest.mark.parametrize("utilization", ["0.2", "0.66"])
def test_queue_wait_legend_stays_clear_of_the_curves(utilization):
    """At low utilisation the curves climb through the top left: the legend moves to the bottom right."""
    root = ET.fromstring(_chart("queue-wait", {"utilization": utilization}).svg)
    ns = "{http://www.w3.org/2000/svg}"
    texts = [t for t in root.iter(f"{ns}text") if (t.text or "").startswith(("solid: ", "dashed: "))]
    assert len(texts) == 2
    width = 6.5 * max(len(t.text) for t in texts)
    left = float(texts[0].get("x")) - (width if texts[0].get("text-anchor") == "end" else 0)  # right-aligned
    right = left + width
    top, bottom = float(texts[0].get("y")) - 11, float(texts[1].get("y")) + 2
    points = []
    for line in root.iter(f"{ns}polyline"):
        pairs = [tuple(map(float, p.split(","))) for p in line.get("points").split()]
        for (x1, y1), (x2, y2) in zip(pairs, pairs[1:]):
            steps = max(int(max(abs(x2 - x1), abs(y2 - y1))), 1)
            points += [(x1 + (x2 - x1) * i / steps, y1 + (y2 - y1) * i / steps) for i in range(steps + 1)]
    assert not [(x, y) for x, y in points if left <= x <= right and top <= y <= bottom], utilization


def test_a_ttft_axis_of_five_decades_or_more_labels_every_other_one_from_the_last():
    """Six decades labelled each ran "100 s" into "1,000 s" on a phone (the last ends at its tick): every other."""
    from calculators.simulator_charts import ttft_chart

    results = {"round_robin": {"ttft_percentiles_ms": [20.0, 900.0, 40_000.0, 900_000.0], "ttft_p99_ms": 40_000.0}}
    root = ET.fromstring(ttft_chart(results, [50, 90, 99, 100]).svg)
    ticks = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "chart-tick"]
    assert [t for t in ticks if t.endswith("s")] == ["100 ms", "10 s", "1,000 s"]


def test_an_unlabelled_tick_writes_no_empty_text():
    """An unlabelled tick wrote an empty <text></text>, which a newcomer saw as a blank label. The TTFT chart's last
    decade is labelled now (Plot ends a label at its tick when centred it would run off the edge; unlabelled, an overloaded run's curve ran on to
    75 s past a last label of "10 s": the re-check)."""
    from calculators.simulator_charts import ttft_chart

    results = {"round_robin": {"ttft_percentiles_ms": [20.0, 90.0, 400.0, 2500.0], "ttft_p99_ms": 400.0}}
    root = ET.fromstring(ttft_chart(results, [50, 90, 99, 100]).svg)
    ticks = [t.text for t in root.iter("{http://www.w3.org/2000/svg}text") if t.get("class") == "chart-tick"]
    assert ticks and all(ticks), ticks
    assert ticks[-1] == "10 s" and "1 s" in ticks  # inside the picture: the browser test measures every text
