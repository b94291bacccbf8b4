"""The queue-wait calculator: mean queue wait against utilisation, before and after losing capacity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Plot, line_svg, nice_ticks
from calculators.formatting import number, percent

# The defaults: round numbers near the source's story of one queue losing 30% of its capacity.
SERVICE_MS = 50.0
UTILIZATION = 0.66
CAPACITY_LOSS = 0.3
STORY_MS = (97, 850)  # the source's wait before and after the loss
RECONSTRUCTION = {"service_ms": 49.67, "utilization": 0.6614, "servers": 1, "capacity_loss": CAPACITY_LOSS}
HEADROOM_CAP = 0.6  # S11: the source's policy value
POOL_SERVERS = 10  # a pool that loses servers instead of speed
TABLE_UTILIZATIONS = (0.2, 0.4, 0.6, 0.8, 0.9, 0.95)  # the chart table's rows


def _wait_expression(service_ms: float, rho: float, servers: int) -> str:
    if servers == 1:
        return f"{number(service_ms)} ms × {number(rho)} ÷ (1 − {number(rho)})"
    load = servers * rho
    c = maths.erlang_c(servers, load)
    return f"C = {number(c, 4)} × {number(service_ms)} ms ÷ ({servers} − {number(load)})"


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    service, rho, servers, loss = i["service_ms"], i["utilization"], i["servers"], i["capacity_loss"]
    steps: list[DerivationStep] = []
    if servers == 1:
        steps.append(
            step(
                "Probability a request waits (M/M/1: equals the utilisation)",
                f"ρ = {number(rho)}",
                rho,
                "fraction",
            )
        )
    else:
        load = servers * rho
        steps += [
            step(
                "Offered load in Erlangs",
                f"{servers} servers × {number(rho)}",
                load,
                "Erlangs",
            ),
            step(
                "Probability a request waits (Erlang C)",
                f"C({servers}, {number(load)})",
                maths.erlang_c(servers, load),
                "fraction",
            ),
        ]
    steps.append(
        step(
            "Mean wait in the queue before the loss",
            _wait_expression(service, rho, servers),
            o["wait_ms"],
            "ms",
        )
    )
    after = o["utilization_after"]
    steps.append(
        step(
            f"Utilisation after losing {percent(loss, 4)} of capacity",
            f"{number(rho)} ÷ (1 − {number(loss)})",
            after,
            "ratio",
        )
    )
    if o["stable_after"]:
        steps.append(
            step(
                "Mean wait in the queue after the loss",
                _wait_expression(service, after, servers),
                o["wait_after_ms"],
                "ms",
            )
        )
        if o["wait_ms"] > 0:
            steps.append(
                step(
                    "The wait grows by",
                    f"{number(o['wait_after_ms'])} ms ÷ {number(o['wait_ms'])} ms",
                    o["wait_after_ms"] / o["wait_ms"],
                    "×",
                )
            )
    else:
        steps.append(
            step(
                "Mean wait in the queue after the loss",
                f"utilisation {number(after)} ≥ 1: arrivals outpace service and the queue grows without bound",
                None,
                "ms",
            )
        )
    return steps


def _waits(service_ms: float, servers: int, rhos: np.ndarray) -> np.ndarray:
    """Return M/M/c mean queue waits for a vector of per-server utilisations (< 1)."""
    loads = servers * rhos
    blocking = np.ones_like(loads)
    for k in range(1, servers + 1):
        blocking = loads * blocking / (k + loads * blocking)
    erlang_c = blocking / (1 - rhos * (1 - blocking))
    return erlang_c * service_ms / (servers * (1 - rhos))


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
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
    svg = line_svg("queue-wait", title, description)
    plot = Plot(
        svg,
        [0.0, 0.2, 0.4, 0.6, 0.8, 1.0],
        y_ticks,
        lambda t: percent(t, 2),
        lambda t: number(t, 3),
        "Utilisation of each server",
        "ms",
    )
    svg.text(plot.left + 4, plot.top + 10, "wait (ms)", "chart-axis-label")
    # Python floats: formatting 200 points is the chart's main cost, and numpy scalars format slower.
    points = [(plot.x(r), plot.y(w)) for r, w in zip(rhos.tolist(), waits.tolist()) if w <= y_ticks[-1]]
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
        (percent(r, 3), f"{number(w, 4)} ms")
        for r, w in zip(TABLE_UTILIZATIONS, _waits(service, servers, np.array(TABLE_UTILIZATIONS)).tolist())
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


def _pool_growth() -> tuple[int, float]:
    """Return the servers left when a pool loses CAPACITY_LOSS of them, and the least its wait grows by."""
    left = round(POOL_SERVERS * (1 - CAPACITY_LOSS))
    # Over every utilisation that stays stable after the loss, the smallest growth of the wait.
    rhos = np.arange(0.001, left / POOL_SERVERS, 0.001)
    growth = min(
        maths.mmc_wait(left, POOL_SERVERS * rho, 1.0) / maths.mmc_wait(POOL_SERVERS, POOL_SERVERS * rho, 1.0)
        for rho in rhos
    )
    return left, growth


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    story = maths.queue_wait(**RECONSTRUCTION)
    defaults = maths.queue_wait(SERVICE_MS, UTILIZATION, 1, CAPACITY_LOSS)
    cap = maths.queue_wait(1.0, HEADROOM_CAP, 1, CAPACITY_LOSS)  # in service times
    left, growth = _pool_growth()
    before, after = STORY_MS
    return (
        f"**The {before} ms → {after} ms story is an illustration, not a source.** It fits a single "
        f"queue with Wq = S × ρ ÷ (1 − ρ): S ≈ {number(RECONSTRUCTION['service_ms'], 3)} ms and "
        f"ρ ≈ {number(RECONSTRUCTION['utilization'], 3)} give {number(story.wait_ms, 2)} ms, and after "
        f"a {percent(CAPACITY_LOSS)} loss ρ ≈ {number(story.utilization_after, 3)} gives "
        f"{number(story.wait_after_ms, 3)} ms (try the reconstruction preset). Round numbers "
        f"({number(SERVICE_MS)} ms, {number(UTILIZATION)}, the defaults) give {number(defaults.wait_ms, 3)} → "
        f"{number(defaults.wait_after_ms, 3)} ms.",
        "**How the loss is modelled.** Losing a share of capacity divides each server's "
        "utilisation by (1 − loss), with the same servers and service time. A pool that "
        f"instead loses {percent(CAPACITY_LOSS)} of its servers (M/M/c, {POOL_SERVERS} → {left}) multiplies its "
        f"wait at least {number(growth, 3)}×, so it cannot produce the story's {number(after / before, 2)}×.",
        "**Assumptions.** Poisson arrivals and exponential service times. Kingman's "
        "approximation for other variability multiplies the wait by (ca² + cs²) ÷ 2: "
        "LLM requests vary far more than exponential service, so real waits can be longer.",
        f"**Headroom.** At ρ = {number(HEADROOM_CAP)} an M/M/1 queue waits {number(cap.wait_ms, 3)} service "
        f"times; after a {percent(CAPACITY_LOSS)} loss (ρ = {number(cap.utilization_after, 3)}), "
        f"{number(cap.wait_after_ms, 3)}. A cap near {percent(HEADROOM_CAP)} is the source's policy value "
        "(S11), unsourced.",
    )


CALCULATOR = Calculator(
    slug="queue-wait",
    title="Queue wait against utilisation",
    purpose=(
        "How the mean wait in a queue grows with utilisation, and what losing part of "
        "the capacity does to it (M/M/1, or M/M/c with Erlang C)."
    ),
    parameters=(
        Parameter(
            name="service_ms",
            type="float",
            default=SERVICE_MS,
            min=0.001,
            max=10_000_000.0,
            unit="ms",
            help="Mean service time of one request.",
            label="Mean service time",
        ),
        Parameter(
            name="utilization",
            type="float",
            default=UTILIZATION,
            min=0.0,
            max=0.999,
            unit="fraction",
            help="Busy share of each server before the loss; below 1 for the queue to be stable.",
            label="Utilisation",
        ),
        Parameter(
            name="servers",
            type="int",
            default=1,
            min=1,
            max=1000,
            unit="servers",
            help="Servers sharing one queue (1 = M/M/1).",
            label="Servers",
        ),
        Parameter(
            name="capacity_loss",
            type="float",
            default=CAPACITY_LOSS,
            min=0.0,
            max=0.99,
            unit="fraction",
            help="Share of capacity lost (0.3 = 30%); utilisation becomes ρ ÷ (1 − loss).",
            label="Capacity lost",
        ),
    ),
    outputs=(
        Output(name="wait_ms", unit="ms", label="Mean wait before the loss"),
        Output(name="utilization_after", unit="ratio", label="Utilisation after the loss"),
        Output(name="wait_after_ms", unit="ms", label="Mean wait after the loss"),
        Output(name="stable_after", unit="check", label="Queue stable after the loss", yes="Yes", no="No: unstable"),
    ),
    compute=maths.queue_wait,
    derive=derive,
    headline="wait_after_ms",
    presets=(
        Preset(
            label=f"Round numbers: {number(SERVICE_MS)} ms, ρ = {number(UTILIZATION)}, lose {percent(CAPACITY_LOSS)}",
            values={"service_ms": SERVICE_MS, "utilization": UTILIZATION, "servers": 1, "capacity_loss": CAPACITY_LOSS},
        ),
        Preset(
            label=(
                f"Source reconstruction: {number(RECONSTRUCTION['service_ms'])} ms, "
                f"ρ = {number(RECONSTRUCTION['utilization'])} ({number(maths.queue_wait(**RECONSTRUCTION).wait_ms, 2)} → "
                f"{number(maths.queue_wait(**RECONSTRUCTION).wait_after_ms, 3)} ms)"
            ),
            values=RECONSTRUCTION,
        ),
        Preset(
            label=f"Headroom cap: ρ = {number(HEADROOM_CAP)}",
            values={
                "service_ms": SERVICE_MS,
                "utilization": HEADROOM_CAP,
                "servers": 1,
                "capacity_loss": CAPACITY_LOSS,
            },
        ),
        Preset(
            label="Check: M/M/4 at 3 Erlangs, 1 s service",
            values={"service_ms": 1000, "utilization": 0.75, "servers": 4, "capacity_loss": 0},
        ),
    ),
    chart=chart,
    notes=notes(),
)
