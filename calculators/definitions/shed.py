"""The shed calculator: how much free traffic a shared pool admits while paid traffic keeps priority."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Segment, stacked_chart
from calculators.formatting import number, percent

# A normal day on the shared pool, and the incident that takes 30% of its capacity.
NORMAL_DAY = {"capacity_rps": 1000.0, "paid_rps": 600.0, "free_rps": 500.0, "target_utilization": 0.85}
INCIDENT_LOSS = 0.3


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    allowed = i["target_utilization"] * i["capacity_rps"]
    room = allowed - i["paid_rps"]
    return [
        step(
            "Load the pool may carry at the target",
            f"{number(i['target_utilization'])} × {number(i['capacity_rps'])} requests/s",
            allowed,
            "requests/s",
        ),
        step(
            "Room left after paid traffic (paid goes first)",
            f"{number(allowed)} − {number(i['paid_rps'])}",
            room,
            "requests/s",
        ),
        step(
            "Free traffic admitted",
            f"min({number(i['free_rps'])} free demand, max(0, {number(room)}))",
            o["free_admitted_rps"],
            "requests/s",
        ),
        step(
            "Free traffic shed at the gateway",
            f"{number(i['free_rps'])} − {number(o['free_admitted_rps'])}",
            o["free_shed_rps"],
            "requests/s",
        ),
        step(
            "Pool utilisation",
            f"({number(i['paid_rps'])} + {number(o['free_admitted_rps'])}) ÷ {number(i['capacity_rps'])}",
            o["utilization"],
            "ratio",
        ),
    ]


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
    capacity, paid, free = i["capacity_rps"], i["paid_rps"], i["free_rps"]
    total = max(capacity, paid + free)
    target = i["target_utilization"] * capacity
    title = "Demand against the pool's capacity"
    description = (
        f"Paid traffic ({number(paid)} requests/s) goes first; {number(o['free_admitted_rps'])} requests/s of "
        f"free traffic fit below the target of {number(target)}, and {number(o['free_shed_rps'])} are shed."
    )
    segments = [
        Segment("Paid", paid, f"{number(paid)} requests/s", "chart-bar"),
        Segment(
            "Free, admitted",
            o["free_admitted_rps"],
            f"{number(o['free_admitted_rps'])} requests/s",
            "chart-bar chart-bar-accent",
        ),
        Segment(
            "Free, shed", o["free_shed_rps"], f"{number(o['free_shed_rps'])} requests/s", "chart-bar chart-bar-muted"
        ),
    ]
    svg = stacked_chart("shed", title, description, segments, total, (target, f"target {number(target)}/s"))
    table = DataTable(
        "Traffic and capacity (requests per second)",
        ("Part", "Requests per second"),
        tuple((s.label, number(s.value)) for s in segments)
        + (("Target load", number(target)), ("Capacity", number(capacity))),
    )
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each (they carry no figures)."""
    return (
        "**Priority.** Paid requests are admitted first; free requests fill whatever "
        "is left below target × capacity, never below zero and never above their demand.",
        "**Why shed at the gateway.** Turning a request away there with a 429 is almost free. "
        "Letting it into a pool that is already full ties up costly GPU memory and adds to the "
        "queue every later request must sit through, and waits grow non-linearly with "
        "utilisation (see the queue-wait calculator).",
        "**Overload.** When paid traffic alone exceeds the target, all free traffic is "
        "shed and the utilisation shown is the paid load alone, which can exceed 1: the "
        "pool needs more capacity, not more shedding.",
    )


CALCULATOR = Calculator(
    slug="shed",
    title="Shedding free traffic",
    purpose=(
        "How much free-tier traffic a shared pool can admit at a target utilisation "
        "while paid traffic keeps priority, and how much the gateway sheds."
    ),
    parameters=(
        Parameter(
            name="capacity_rps",
            type="float",
            default=NORMAL_DAY["capacity_rps"],
            min=0.001,
            max=1_000_000_000.0,
            unit="requests/s",
            help="Requests per second the shared pool can serve at full utilisation.",
            label="Pool capacity",
        ),
        Parameter(
            name="paid_rps",
            type="float",
            default=NORMAL_DAY["paid_rps"],
            min=0.0,
            max=1_000_000_000.0,
            unit="requests/s",
            help="Paid demand; always admitted first.",
            label="Paid demand",
        ),
        Parameter(
            name="free_rps",
            type="float",
            default=NORMAL_DAY["free_rps"],
            min=0.0,
            max=1_000_000_000.0,
            unit="requests/s",
            help="Free-tier demand.",
            label="Free demand",
        ),
        Parameter(
            name="target_utilization",
            type="float",
            default=NORMAL_DAY["target_utilization"],
            min=0.0,
            max=1.0,
            unit="fraction",
            help="Utilisation the pool should not exceed, keeping the queue short.",
            label="Target utilisation",
        ),
    ),
    outputs=(
        Output(name="free_admitted_rps", unit="requests/s", label="Free traffic admitted"),
        Output(name="free_shed_rps", unit="requests/s", label="Free traffic shed"),
        Output(name="utilization", unit="ratio", label="Pool utilisation"),
    ),
    compute=maths.shed,
    derive=derive,
    headline="free_admitted_rps",
    presets=(
        Preset(
            label=(
                f"Normal day: {number(NORMAL_DAY['capacity_rps'])} requests/s pool, "
                f"{number(NORMAL_DAY['paid_rps'])} paid, {number(NORMAL_DAY['free_rps'])} free"
            ),
            values=NORMAL_DAY,
        ),
        Preset(
            label=f"Incident: the pool loses {percent(INCIDENT_LOSS)} of capacity",
            values={**NORMAL_DAY, "capacity_rps": round(NORMAL_DAY["capacity_rps"] * (1 - INCIDENT_LOSS), 9)},
        ),
    ),
    chart=chart,
    notes=notes(),
)
