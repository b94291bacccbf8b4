"""The bounded-load calculator: consistent hashing with a cap per replica, and how far a hot family spills."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Bar, Chart, DataTable, bar_chart
from calculators.formatting import number, percent, plural

REPLICAS = 48
IN_FLIGHT = 1200
EPSILON = 0.2
FAMILY_IN_FLIGHT = 600
# The paper's worked case in reference/serving-math.md F5: 64 cards, 1,000 in flight, an 800-request family.
F5_CASE = {"replicas": 64, "in_flight": 1000, "epsilon": 0.25, "family_in_flight": 800}
HAPROXY_BALANCE_FACTOR = 125  # HAProxy's hash-balance-factor is a percentage of the average load
TABLE_EPSILONS = (0.05, 0.1, 0.2, 0.25, 0.5, 1.0)


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    average = i["in_flight"] / i["replicas"]
    return [
        step("Average load per replica", f"{number(i['in_flight'])} ÷ {number(i['replicas'])}", average, "requests"),
        step(
            "Cap per replica: (1 + ε) × average, rounded up",
            f"⌈{number(1 + i['epsilon'])} × {number(average)}⌉",
            o["cap_per_replica"],
            "requests",
        ),
        step(
            "Replicas the family fills before it fits",
            f"⌈{number(i['family_in_flight'])} ÷ {number(o['cap_per_replica'])}⌉",
            o["replicas_for_family"],
            "replicas",
        ),
        step(
            "If the other keys keep their share of those replicas: room left for the family, "
            "and the replicas it then needs",
            f"⌈{number(i['family_in_flight'])} ÷ ({number(o['cap_per_replica'])} − "
            f"({number(i['in_flight'])} − {number(i['family_in_flight'])}) ÷ {number(i['replicas'])})⌉",
            o["replicas_if_others_first"],
            "replicas",
        ),
        step(
            "Share of the fleet holding a copy of the family's prefix",
            f"{number(o['replicas_for_family'])} ÷ {number(i['replicas'])}",
            o["replicas_for_family"] / i["replicas"],
            "fraction",
        ),
        step(
            "Plain consistent hashing: the family's replica would carry",
            f"{number(i['family_in_flight'])} + ({number(i['in_flight'])} − {number(i['family_in_flight'])}) "
            f"÷ {number(i['replicas'])}",
            _unbounded(i),
            "requests",
        ),
    ]


def _unbounded(i: Mapping[str, Any]) -> float:
    """Return the load of the family's own replica when nothing caps it (maths.bounded_load_unbounded)."""
    return maths.bounded_load_unbounded(i["replicas"], i["in_flight"], i["family_in_flight"])


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table: the busiest replica with and without the bound."""
    average = i["in_flight"] / i["replicas"]
    unbounded = _unbounded(i)
    bars = [
        Bar("Plain hashing: the family's replica", unbounded, f"{number(unbounded, 4)} requests"),
        Bar(f"Bounded loads: at most (ε = {number(i['epsilon'])})", o["cap_per_replica"],
            f"{number(o['cap_per_replica'])} requests", "chart-bar chart-bar-accent"),
        Bar("Average replica", average, f"{number(average, 4)} requests", "chart-bar chart-bar-muted"),
    ]  # fmt: skip
    title = "Busiest replica with and without a load bound"
    description = (
        f"Without a bound the family's {number(i['family_in_flight'])} requests pile onto one replica "
        f"({number(unbounded, 4)} in flight); capped at {number(o['cap_per_replica'])} they spill over "
        f"{number(o['replicas_for_family'])} {plural(o['replicas_for_family'], 'replica')}."
    )
    svg = bar_chart("bounded-load", title, description, bars, max(b.value for b in bars), "Requests in flight",
                    lambda t: number(t, 3))  # fmt: skip
    rows = []
    for epsilon in sorted(set(TABLE_EPSILONS) | {i["epsilon"]}):
        r = maths.bounded_load(i["replicas"], i["in_flight"], epsilon, i["family_in_flight"])
        rows.append(
            (
                number(epsilon) + (" (yours)" if epsilon == i["epsilon"] else ""),
                number(r.cap_per_replica),
                number(r.replicas_for_family),
            )
        )
    table = DataTable("Cap and spill by ε", ("ε", "Cap per replica", "Replicas for the family"), tuple(rows))
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.bounded_load(**F5_CASE)
    tighter = maths.bounded_load_cap(F5_CASE["replicas"], F5_CASE["in_flight"], 0.1)
    default = maths.bounded_load(REPLICAS, IN_FLIGHT, EPSILON, FAMILY_IN_FLIGHT)
    default_most = maths.bounded_load_spill_most(REPLICAS, IN_FLIGHT, EPSILON, FAMILY_IN_FLIGHT)
    case_most = maths.bounded_load_spill_most(**F5_CASE)
    others = maths.others_per_replica(REPLICAS, IN_FLIGHT, FAMILY_IN_FLIGHT)
    return (
        "**The rule.** Consistent hashing with bounded loads (Mirrokni, Thorup and Zadimoghaddam) "
        "gives every replica a capacity of ⌈(1 + ε) × average load⌉. A request whose ring position "
        "lands on a full replica walks clockwise to the next replica with room, so no replica ever holds "
        "more than the cap and keys still mostly stay where they hash.",
        f"**Worked case.** {F5_CASE['replicas']} replicas with {number(F5_CASE['in_flight'])} requests in "
        f"flight and ε = {number(F5_CASE['epsilon'])}: the cap is {case.cap_per_replica}, and a family of "
        f"{number(F5_CASE['family_in_flight'])} requests fills {case.replicas_for_family} replicas. With "
        f"ε = {number(0.1)} the cap drops to {tighter}. At the defaults a "
        f"{number(FAMILY_IN_FLIGHT)}-request family covers {default.replicas_for_family} of {REPLICAS} "
        f"replicas ({percent(default.replicas_for_family / REPLICAS, 3)}).",
        "**The trade.** A small ε balances load tightly but spreads a hot family (and its cached prefix) "
        "over more replicas: one more copy of the prefix and one cold prefill on each. A large ε keeps "
        "affinity and lets the busiest replica run hotter. HAProxy exposes the same knob as "
        f"`hash-balance-factor`, a percentage of the average ({HAPROXY_BALANCE_FACTOR} means "
        f"ε = {number(HAPROXY_BALANCE_FACTOR / 100 - 1)}).",
        "**The spill is a floor.** ⌈family ÷ cap⌉ assumes the family fills each replica it reaches to "
        "the cap. Those replicas also carry their own share of the other keys, "
        f"{number(others, 3)} requests each at the defaults; where those got there first the family finds "
        f"only the room left and reaches {default_most} replicas instead of {default.replicas_for_family} "
        f"({case_most} instead of {case.replicas_for_family} in the worked case). The floor holds only if "
        "the family's requests arrive before the rest; mixed in at random, they land near the higher "
        "figure, so price the extra prefix copies from that one.",
        "**What the formula leaves out.** Requests are counted, not weighed: a long prompt or a long "
        "answer is heavier than a short one, so real routers also look at queue depth or free KV memory.",
    )


CALCULATOR = Calculator(
    slug="bounded-load",
    title="Consistent hashing with bounded loads",
    purpose=(
        "How many requests each replica may hold when consistent hashing caps every replica near the "
        "average, and how many replicas a hot prompt family then spills over."
    ),
    parameters=(
        Parameter(
            name="replicas",
            type="int",
            default=REPLICAS,
            min=1,
            max=100_000,
            unit="replicas",
            help="Replicas on the hash ring.",
            label="Replicas",
        ),
        Parameter(
            name="in_flight",
            type="int",
            default=IN_FLIGHT,
            min=1,
            max=100_000_000,
            unit="requests",
            help="Requests in flight across the fleet.",
            label="Requests in flight",
        ),
        Parameter(
            name="epsilon",
            type="float",
            default=EPSILON,
            min=0.0,
            max=100.0,
            unit="fraction of the average",
            help="Slack above the average load (0.2: a replica may hold 1.2 × the average).",
            label="Balance slack ε",
        ),
        Parameter(
            name="family_in_flight",
            type="int",
            default=FAMILY_IN_FLIGHT,
            min=0,
            max=100_000_000,
            unit="requests",
            help="In-flight requests of one prompt family that all hash to the same point "
            "(part of the requests in flight).",
            label="The family's requests in flight",
        ),
    ),  # fmt: skip
    outputs=(
        Output(name="cap_per_replica", unit="requests", label="Cap per replica"),
        Output(name="replicas_for_family", unit="replicas", label="Replicas the family spreads over, at least"),
        Output(
            name="replicas_if_others_first",
            unit="replicas",
            label="Replicas it spreads over if other keys got there first",
        ),
    ),
    compute=maths.bounded_load_spread,
    derive=derive,
    headline="replicas_for_family",
    presets=(
        Preset(
            label=f"{REPLICAS} replicas, {number(IN_FLIGHT)} in flight, ε = {number(EPSILON)}",
            values={
                "replicas": REPLICAS,
                "in_flight": IN_FLIGHT,
                "epsilon": EPSILON,
                "family_in_flight": FAMILY_IN_FLIGHT,
            },
        ),
        Preset(
            label=f"Paper-style case: {F5_CASE['replicas']} replicas, ε = {number(F5_CASE['epsilon'])}", values=F5_CASE
        ),
        Preset(label="Tight: ε = 0.1", values={"epsilon": 0.1}),
        Preset(label="Loose: ε = 1 (twice the average)", values={"epsilon": 1.0}),
    ),  # fmt: skip
    chart=chart,
    notes=notes(),
)
