"""The autoscale calculator: the Kubernetes Horizontal Pod Autoscaler's replica rule, with its tolerance."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Plot, line_svg, nice_ticks
from calculators.formatting import number, percent

REPLICAS = 12
METRIC = 9.0  # e.g. requests waiting per replica (vllm:num_requests_waiting, averaged)
TARGET = 4.0
TOLERANCE = 0.1  # the controller's default --horizontal-pod-autoscaler-tolerance
F6_CASE = {"replicas": 10, "metric": 12.0, "target": 5.0}  # reference/serving-math.md F6


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    ratio = i["metric"] / i["target"]
    inside = abs(ratio - 1) <= i["tolerance"] + 1e-9
    steps = [
        step("Metric against its target", f"{number(i['metric'])} ÷ {number(i['target'])}", ratio, "×"),
        step("Distance from the target", f"|{number(ratio)} − 1|", abs(ratio - 1), "fraction"),
    ]
    if inside:
        steps.append(
            step(
                f"Within the tolerance of {number(i['tolerance'])}: no change",
                f"{number(abs(ratio - 1))} ≤ {number(i['tolerance'])}, keep {number(i['replicas'])}",
                o["desired_replicas"],
                "replicas",
            )
        )
    else:
        steps.append(
            step(
                "Desired replicas, rounded up",
                f"⌈{number(i['replicas'])} × {number(ratio)}⌉ = ⌈{number(i['replicas'] * ratio)}⌉",
                o["desired_replicas"],
                "replicas",
            )
        )
    return steps


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table: desired replicas against the metric."""
    replicas, target, tolerance = i["replicas"], i["target"], i["tolerance"]
    last = max(2 * i["metric"], 2 * target)
    x_ticks = [float(t) for t in nice_ticks(last, 5)]
    metrics = [x_ticks[-1] * k / 200 for k in range(201)]
    desired = [maths.autoscale(replicas, m, target, tolerance).desired_replicas for m in metrics]
    top = max(max(desired), o["desired_replicas"], 1) * 1.1
    title = "Desired replicas against the metric"
    description = (
        f"With {number(replicas)} replicas and a target of {number(target)}, a reading of {number(i['metric'])} "
        f"asks for {number(o['desired_replicas'])} replicas; readings within {percent(tolerance)} of the target "
        "change nothing."
    )
    svg = line_svg("autoscale", title, description)
    plot = Plot(svg, x_ticks, nice_ticks(top, 5), lambda t: number(t), lambda t: number(t), "Metric per replica",
                "replicas")  # fmt: skip
    svg.text(plot.left + 4, plot.top + 10, "desired replicas", "chart-axis-label")
    svg.polyline([(plot.x(m), plot.y(d)) for m, d in zip(metrics, desired)], "chart-line")
    x = plot.x(target)
    svg.line(x, plot.top, x, plot.bottom, "chart-marker")
    svg.text(x + 4, plot.top + 32, f"target {number(target)}", "chart-marker-label")
    svg.circle(plot.x(i["metric"]), plot.y(o["desired_replicas"]), 5, "chart-point chart-point-accent",
               f"Yours: {number(i['metric'])} → {number(o['desired_replicas'])} replicas")  # fmt: skip
    shown = sorted({0.5 * target, max(0.0, target * (1 - tolerance)), target, target * (1 + tolerance), 1.5 * target,
                    2 * target, i["metric"]})  # fmt: skip
    rows = tuple(
        (
            number(m, 4) + (" (yours)" if m == i["metric"] else ""),
            number(maths.autoscale(replicas, m, target, tolerance).desired_replicas),
        )
        for m in shown
    )
    table = DataTable("Desired replicas by metric", ("Metric", "Desired replicas"), rows)
    return Chart(svg.render(), title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.autoscale(**F6_CASE, tolerance=TOLERANCE)
    near = TARGET * (1 + TOLERANCE / 2)
    held = maths.autoscale(REPLICAS, near, TARGET, TOLERANCE)
    return (
        "**The rule.** The Kubernetes Horizontal Pod Autoscaler sets desired = ⌈current replicas × current "
        "metric ÷ target⌉, averaged over the pods, and does nothing while the ratio stays within its "
        f"tolerance (default {number(TOLERANCE)}). With {F6_CASE['replicas']} replicas, an average of "
        f"{number(F6_CASE['metric'])} requests waiting and a target of {number(F6_CASE['target'])}, it asks "
        f"for {case.desired_replicas}. At the defaults a reading of {number(near)} against {number(TARGET)} "
        f"keeps {held.desired_replicas} replicas: the tolerance stops it chasing noise.",
        "**What to scale on.** Queue depth (vLLM's `vllm:num_requests_waiting`), KV-cache use "
        "(`vllm:kv_cache_usage_perc`, called `vllm:gpu_cache_usage_perc` in older releases) or the time "
        "to first token track load. GPU utilisation does not: a batching engine keeps the GPU busy whether "
        "the batch is small or full, so the metric sits near its top and says nothing about headroom.",
        "**What the rule leaves out.** The controller then clamps to its minimum and maximum replicas and "
        "waits out a stabilisation window before scaling down. A new replica of a large model is not ready "
        "for minutes (it must load its weights), so the rule reacts late to a ramp: keep warm spares or "
        "scale on a leading signal.",
    )


CALCULATOR = Calculator(
    slug="autoscale",
    title="Autoscaler: desired replicas",
    purpose=(
        "How many replicas the Kubernetes Horizontal Pod Autoscaler asks for from a metric and its target, "
        "and when its tolerance leaves the count alone."
    ),
    parameters=(
        Parameter(
            name="replicas",
            type="int",
            default=REPLICAS,
            min=0,
            max=1_000_000,
            unit="replicas",
            help="Replicas running now.",
            label="Current replicas",
        ),
        Parameter(
            name="metric",
            type="float",
            default=METRIC,
            min=0.0,
            max=1e9,
            unit="per replica",
            help="Current value of the scaling metric, averaged over replicas (e.g. requests waiting).",
            label="Current metric",
        ),
        Parameter(
            name="target",
            type="float",
            default=TARGET,
            min=0.001,
            max=1e9,
            unit="per replica",
            help="The value the autoscaler steers the metric towards.",
            label="Target",
        ),
        Parameter(
            name="tolerance",
            type="float",
            default=TOLERANCE,
            min=0.0,
            max=10.0,
            unit="fraction",
            help="No change while |metric ÷ target − 1| is at most this (Kubernetes default 0.1).",
            label="Tolerance",
        ),
    ),  # fmt: skip
    outputs=(Output(name="desired_replicas", unit="replicas", label="Desired replicas"),),
    compute=maths.autoscale,
    derive=derive,
    headline="desired_replicas",
    presets=(
        Preset(
            label=f"{REPLICAS} replicas, metric {number(METRIC)} against {number(TARGET)}",
            values={"replicas": REPLICAS, "metric": METRIC, "target": TARGET, "tolerance": TOLERANCE},
        ),
        Preset(
            label=f"{F6_CASE['replicas']} replicas, {number(F6_CASE['metric'])} waiting against "
            f"{number(F6_CASE['target'])}",
            values={**F6_CASE, "tolerance": TOLERANCE},
        ),
        Preset(label="Just inside the tolerance", values={"metric": TARGET * (1 + TOLERANCE / 2), "target": TARGET}),
        Preset(label="Demand halves: scale down", values={"metric": TARGET / 2, "target": TARGET}),
    ),  # fmt: skip
    chart=chart,
    notes=notes(),
)
