"""The queue-wait calculator: mean queue wait against utilisation, before and after losing capacity."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Plot, line_svg, nice_ticks, pixels_of
from calculators.formatting import number, percent

# The defaults: round numbers near the source's story of one queue losing 30% of its capacity.
SERVICE_MS = 50.0
UTILIZATION = 0.66
CAPACITY_LOSS = 0.3
STORY_MS = (97, 850)  # the source's wait before and after the loss
# F8 model A: the start from which replicas lost (survivors keep their speed) gives 97 -> 851 ms.
RECONSTRUCTION = {"service_ms": 49.67, "utilization": 0.6614, "servers": 1, "capacity_loss": CAPACITY_LOSS}
# F8 model C: the start from which slowed servers give 97 -> 850 ms.
SLOWED_RECONSTRUCTION = {"service_ms": 54.19, "utilization": 0.6416, "servers": 1, "capacity_loss": CAPACITY_LOSS}
HEADROOM_CAP = 0.6  # S11: the source's policy value
POOL_SERVERS = 10  # a pool sharing one queue, against one server
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
    after, service_after = o["utilization_after"], o["service_after_ms"]
    steps += [
        step(
            f"Service time after losing {percent(loss, 4)} of capacity, if every server slows",
            f"{number(service)} ms ÷ (1 − {number(loss)})",
            service_after,
            "ms",
        ),
        step(
            "Utilisation after the loss (the same arrivals on what is left)",
            f"{number(rho)} ÷ (1 − {number(loss)})",
            after,
            "ratio",
        ),
    ]
    if o["stable_after"]:
        steps += [
            step(
                "Mean wait after the loss, every server slowed",
                _wait_expression(service_after, after, servers),
                o["wait_after_ms"],
                "ms",
            ),
            step(
                "Mean wait after the loss if whole replicas failed instead (each a queue like this one; the rest keep "
                "their speed and take the traffic)",
                _wait_expression(service, after, servers),
                o["wait_after_same_speed_ms"],
                "ms",
            ),
        ]
        if o["wait_ms"] > 0:
            steps.append(
                step(
                    "The wait grows by (every server slowed)",
                    f"{number(o['wait_after_ms'])} ms ÷ {number(o['wait_ms'])} ms",
                    o["wait_after_ms"] / o["wait_ms"],
                    "×",
                )
            )
    else:
        steps.append(
            step(
                "Mean wait in the queue after the loss (either reading)",
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
    """Return the chart of a result, with its table: one curve at the service time before, one after."""
    service, rho, servers = i["service_ms"], i["utilization"], i["servers"]
    before, after, rho_after = o["wait_ms"], o["wait_after_ms"], o["utilization_after"]
    service_after = o["service_after_ms"]
    slowdown = service_after / service  # at a given utilisation, the wait scales with the service time
    reference = after if after is not None else float(_waits(service, servers, np.array([0.95]))[0])
    top = max(before * 1.6, reference * 1.15, service * 0.5)
    y_ticks = nice_ticks(top, 5)
    rhos = np.linspace(0.0, 0.995, 200)
    waits = _waits(service, servers, rhos)
    model = "M/M/1" if servers == 1 else f"M/M/{servers}"
    title = f"Mean queue wait against utilisation ({model}, {number(service)} ms service)"
    if after is not None:
        change = (
            f"losing capacity moves utilisation to {percent(rho_after, 4)}: {number(o['wait_after_same_speed_ms'], 4)} ms "
            f"if whole replicas fail and the rest keep their speed (solid curve), {number(after, 4)} ms if every "
            f"service slows to {number(service_after, 4)} ms (dashed curve)"
        )
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
    plot.reserve(plot.left + 4, plot.top + 10, "wait (ms)")
    # Python floats: formatting 200 points is the chart's main cost, and numpy scalars format slower.
    pairs = list(zip(rhos.tolist(), waits.tolist()))
    curves = [[(plot.x(r), plot.y(w)) for r, w in pairs if w <= y_ticks[-1]]]
    svg.polyline(curves[0], "chart-line")
    if slowdown > 1:  # the slowed servers' curve, on which the point after the loss sits
        curves.append([(plot.x(r), plot.y(w * slowdown)) for r, w in pairs if w * slowdown <= y_ticks[-1]])
        svg.polyline(curves[1], "chart-line chart-line-muted")
    svg.line(plot.x(1.0), plot.top, plot.x(1.0), plot.bottom, "chart-marker")
    bx, by = plot.x(rho), plot.y(min(before, y_ticks[-1]))
    svg.circle(bx, by, 5, "chart-point", f"Before: {number(before, 4)} ms")
    near = pixels_of([*curves, [(plot.x(1.0), plot.top), (plot.x(1.0), plot.bottom)]])  # labels keep off
    if after is not None:
        x, y = plot.x(rho_after), plot.y(min(after, y_ticks[-1]))
        svg.circle(x, y, 5, "chart-point chart-point-accent", f"After: {number(after, 4)} ms")
        same = o["wait_after_same_speed_ms"]
        same_y = plot.y(min(same, y_ticks[-1]))
        svg.circle(x, same_y, 5, "chart-point", f"After, replicas lost: {number(same, 4)} ms")
        near = np.vstack([near, [(x, y), (x, same_y), (bx, by)]])  # nor over another point
    if slowdown > 1:  # which curve is which, on the chart itself, where no curve runs through it
        lost = "replicas lost" if servers == 1 else f"whole pools of {servers} lost"  # not servers within this pool
        plot.legend([f"solid: {lost}, speed kept", "dashed: every server slowed"], near)
    plot.label_point(bx, by, f"before {number(before, 3)} ms", near)
    if after is not None:
        label = f"after {number(after, 3)} ms ({number(service_after, 3)} ms service)"
        plot.label_point(x, y, label, near)
        plot.label_point(x, same_y, f"replicas lost {number(same, 3)} ms", near)
    else:
        svg.text(
            plot.x(1.0) - 6, plot.top + 26, f"after: {percent(rho_after, 3)}, unstable", "chart-point-label", "end"
        )

    def wait_text(rho_at: float, service_at: float) -> str:
        if rho_at >= 1:
            return "unstable: grows without bound"
        return f"{number(float(_waits(service_at, servers, np.array([rho_at]))[0]), 4)} ms"

    rows = [(percent(r, 3), wait_text(r, service), wait_text(r, service_after)) for r in TABLE_UTILIZATIONS]
    rows.append((f"{percent(rho, 4)} (before)", wait_text(rho, service), wait_text(rho, service_after)))
    rows.append(
        (f"{percent(rho_after, 4)} (after)", wait_text(rho_after, service), wait_text(rho_after, service_after))
    )
    columns = (
        "Utilisation",
        f"Mean wait, {number(service, 4)} ms service",
        f"Mean wait, {number(service_after, 4)} ms service (after the loss)",
    )
    table = DataTable(f"Mean queue wait, {model}", columns, tuple(rows))
    return Chart(svg.render(), title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    story = maths.queue_wait(**RECONSTRUCTION)
    slowed_story = maths.queue_wait(**SLOWED_RECONSTRUCTION)
    defaults = maths.queue_wait(SERVICE_MS, UTILIZATION, 1, CAPACITY_LOSS)
    pool = maths.queue_wait(SERVICE_MS, UTILIZATION, POOL_SERVERS, CAPACITY_LOSS)
    pool_left = round(POOL_SERVERS * (1 - CAPACITY_LOSS))
    pool_lost_servers = maths.mmc_wait(pool_left, POOL_SERVERS * UTILIZATION, SERVICE_MS)
    cap = maths.queue_wait(1.0, HEADROOM_CAP, 1, CAPACITY_LOSS)  # in service times
    before, after = STORY_MS
    return (
        "**How the loss is modelled, two ways.** Losing a share of capacity with the same arrivals raises "
        "the utilisation to ρ ÷ (1 − loss) either way. If whole replicas fail (the usual GPU incident: each "
        "replica its own queue, the survivors as fast as before), the service time stays S. If every server "
        "slows instead (throttled cards, a degraded link, or a pool modelled as one server), it becomes "
        f"S ÷ (1 − loss) too. With the defaults ({number(SERVICE_MS)} ms, ρ = {number(UTILIZATION)}, one "
        f"server) that is {number(defaults.wait_ms, 3)} → {number(defaults.wait_after_same_speed_ms, 3)} ms "
        f"with replicas lost, → {number(defaults.wait_after_ms, 4)} ms with every server slowed.",
        f"**Which reading gives the course notes' {before} ms → {after} ms.** The notes give no derivation and "
        f"do not say what was lost. The figure fits replicas lost, from a single-queue start of "
        f"S ≈ {number(RECONSTRUCTION['service_ms'], 4)} ms at ρ ≈ {number(RECONSTRUCTION['utilization'], 4)}: "
        f"ρ rises to ≈ {number(story.utilization_after, 3)} at the same speed, "
        f"{number(story.wait_ms, 2)} → {number(story.wait_after_same_speed_ms, 3)} ms. From the same start, "
        f"slowed servers give {number(story.wait_after_ms, 4)} ms; they reach the story from a lower start, "
        f"S ≈ {number(SLOWED_RECONSTRUCTION['service_ms'], 4)} ms at ρ ≈ "
        f"{number(SLOWED_RECONSTRUCTION['utilization'], 4)} ({number(slowed_story.wait_ms, 2)} → "
        f"{number(slowed_story.wait_after_ms, 3)} ms). Both starts are presets.",
        f"**Pooling.** At the same load and the same loss, {POOL_SERVERS} servers sharing one queue "
        f"(M/M/{POOL_SERVERS}, Erlang C) wait {number(pool.wait_ms, 3)} → {number(pool.wait_after_ms, 4)} ms "
        f"with every server slowed, against one server's {number(defaults.wait_ms, 3)} → "
        f"{number(defaults.wait_after_ms, 4)} ms. The pool's wait grows by a larger factor only because it starts "
        f"near zero; in milliseconds it stays far shorter. Losing {POOL_SERVERS - pool_left} of this one pool's "
        f"{POOL_SERVERS} servers instead (M/M/{pool_left} at {number(SERVICE_MS)} ms, the same arrivals) gives "
        f"{number(pool_lost_servers, 3)} ms; losing {percent(CAPACITY_LOSS)} of many such pools, the survivors "
        f"taking their traffic at the same speed (the calculator's replicas-lost reading), "
        f"{number(pool.wait_after_same_speed_ms, 3)} ms.",
        "**Assumptions.** Poisson arrivals and exponential service times. Kingman's "
        "approximation for other variability multiplies the wait by (ca² + cs²) ÷ 2: "
        "LLM requests vary far more than exponential service, so real waits can be longer.",
        f"**Headroom.** At ρ = {number(HEADROOM_CAP)} an M/M/1 queue waits {number(cap.wait_ms, 3)} service "
        f"times; after a {percent(CAPACITY_LOSS)} loss (ρ = {number(cap.utilization_after, 3)}), "
        f"{number(cap.wait_after_same_speed_ms, 3)} with replicas lost, or {number(cap.wait_after_ms, 3)} of the "
        f"original service times if each service also takes {number(cap.service_after_ms, 3)} times as long. A cap near {percent(HEADROOM_CAP)} is the course notes' policy value, with no published source.",
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
            help=(
                "Share of capacity lost (0.3 = 30%) with the same arrivals: utilisation becomes "
                "ρ ÷ (1 − loss); the wait is given with every server slowed to S ÷ (1 − loss), and with "
                "whole replicas lost (the rest keep their speed)."
            ),
            label="Capacity lost",
        ),
    ),
    outputs=(
        Output(name="wait_ms", unit="ms", label="Mean wait before the loss"),
        Output(name="utilization_after", unit="ratio", label="Utilisation after the loss"),
        Output(name="wait_after_ms", unit="ms", label="Mean wait after the loss, every server slowed"),
        Output(name="stable_after", unit="check", label="Queue stable after the loss", yes="Yes", no="No: unstable"),
        Output(name="service_after_ms", unit="ms", label="Service time after the loss, every server slowed"),
        Output(
            name="wait_after_same_speed_ms",
            unit="ms",
            label="Mean wait after the loss, whole replicas lost (each a queue like this one; the rest keep their speed)",
        ),
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
                f"The course notes' start: {number(RECONSTRUCTION['service_ms'])} ms, "
                f"ρ = {number(RECONSTRUCTION['utilization'])} (the story: replicas lost, the rest keep their speed)"
            ),
            values=RECONSTRUCTION,
        ),
        Preset(
            label=(
                f"Slowed servers reach the story: {number(SLOWED_RECONSTRUCTION['service_ms'])} ms, "
                f"ρ = {number(SLOWED_RECONSTRUCTION['utilization'])}"
            ),
            values=SLOWED_RECONSTRUCTION,
        ),
        Preset(
            label=(
                f"Pool of {POOL_SERVERS}: {number(SERVICE_MS)} ms, ρ = {number(UTILIZATION)}, "
                f"lose {percent(CAPACITY_LOSS)}"
            ),
            values={
                "service_ms": SERVICE_MS,
                "utilization": UTILIZATION,
                "servers": POOL_SERVERS,
                "capacity_loss": CAPACITY_LOSS,
            },
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
