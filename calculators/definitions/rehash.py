"""The rehash calculator: the share of keys that move when a fleet resizes, consistent hashing against hash mod N."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Bar, Chart, DataTable, bar_chart
from calculators.formatting import number, percent

BEFORE = 40
AFTER = 50
ONE_MORE = BEFORE + 1
DOUBLED = 2 * BEFORE


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    a, b = i["replicas_before"], i["replicas_after"]
    lcm = math.lcm(a, b)
    return [
        step(
            "Consistent hashing: only the added (or removed) replicas' keys move",
            f"|{number(b)} − {number(a)}| ÷ {number(max(a, b))}",
            o["consistent_moved"],
            "fraction",
        ),
        step("Hash mod N: the pattern of homes repeats every lcm(before, after) hashes",
             f"lcm({number(a)}, {number(b)})", lcm, "hashes"),
        step("Hashes in each repeat that keep their replica", f"min({number(a)}, {number(b)})", min(a, b), "hashes"),
        step("Hash mod N: share of keys that move", f"1 − {number(min(a, b))} ÷ {number(lcm)}", o["modulo_moved"],
             "fraction"),
    ]  # fmt: skip


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
    a, b = i["replicas_before"], i["replicas_after"]
    bars = [
        Bar(
            "Consistent hashing", o["consistent_moved"], percent(o["consistent_moved"], 4), "chart-bar chart-bar-accent"
        ),
        Bar("Hash mod N", o["modulo_moved"], percent(o["modulo_moved"], 4)),
    ]
    title = "Share of keys (and cached prefixes) that move to another replica"
    description = (
        f"Going from {number(a)} to {number(b)} replicas moves {percent(o['consistent_moved'], 4)} of keys under "
        f"consistent hashing and {percent(o['modulo_moved'], 4)} under hash mod N."
    )
    svg = bar_chart("rehash", title, description, bars, 1.0, "Share of keys that move", lambda t: percent(t, 3))
    rows = []
    for after in sorted({a + 1, a + a // 4 or 1, 2 * a, max(1, a - 1), b}):
        r = maths.rehash(a, after)
        rows.append(
            (
                f"{number(a)} → {number(after)}" + (" (yours)" if after == b else ""),
                percent(r.consistent_moved, 4),
                percent(r.modulo_moved, 4),
            )
        )
    table = DataTable("Keys moved by a resize", ("Resize", "Consistent hashing", "Hash mod N"), tuple(rows))
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.rehash(BEFORE, AFTER)
    one = maths.rehash(BEFORE, ONE_MORE)
    doubled = maths.rehash(BEFORE, DOUBLED)
    return (
        "**Consistent hashing** (Karger et al.). Replicas own arcs of a ring; a new replica takes over only the arcs it "
        "lands on, so with evenly spread points the moved share is the change over the larger fleet: "
        f"{number(BEFORE)} → {number(AFTER)} moves {percent(case.consistent_moved)} of keys. Virtual nodes "
        "(many points per replica) keep the arcs even; with few points the real share varies around this.",
        "**Hash mod N.** A key stays only if its hash leaves the same remainder under both sizes, which "
        "happens for min(a, b) of every lcm(a, b) hashes. "
        f"{number(BEFORE)} → {number(AFTER)} moves {percent(case.modulo_moved)}; adding a single replica "
        f"({number(BEFORE)} → {number(ONE_MORE)}) moves {percent(one.modulo_moved, 4)} against "
        f"{percent(one.consistent_moved, 4)}. Only when one size divides the other, as in doubling "
        f"({number(BEFORE)} → {number(DOUBLED)}: {percent(doubled.modulo_moved)} against "
        f"{percent(doubled.consistent_moved)}), does it move no more than consistent hashing.",
        "**Why it matters for serving.** Every moved key is a prompt family whose cached prefix is now on "
        "the wrong replica: one cold prefill, and for a while a duplicate copy. Autoscaling resizes the "
        "fleet often, so hash mod N turns each scale-up into a burst of cache misses.",
    )


CALCULATOR = Calculator(
    slug="rehash",
    title="Keys moved when the fleet resizes",
    purpose=(
        "What share of keys, and so of cached prompt prefixes, land on a different replica when the fleet "
        "grows or shrinks: consistent hashing against hash mod N."
    ),
    parameters=(
        Parameter(
            name="replicas_before",
            type="int",
            default=BEFORE,
            min=1,
            max=1_000_000,
            unit="replicas",
            help="Replicas before the resize.",
            label="Replicas before",
        ),
        Parameter(
            name="replicas_after",
            type="int",
            default=AFTER,
            min=1,
            max=1_000_000,
            unit="replicas",
            help="Replicas after the resize (fewer for a scale-down).",
            label="Replicas after",
        ),
    ),  # fmt: skip
    outputs=(
        Output(name="consistent_moved", unit="fraction", label="Keys moved under consistent hashing"),
        Output(name="modulo_moved", unit="fraction", label="Keys moved under hash mod N"),
    ),
    compute=maths.rehash,
    derive=derive,
    headline="modulo_moved",
    presets=(
        Preset(
            label=f"{number(BEFORE)} → {number(AFTER)} replicas",
            values={"replicas_before": BEFORE, "replicas_after": AFTER},
        ),
        Preset(label="Add one replica", values={"replicas_before": BEFORE, "replicas_after": ONE_MORE}),
        Preset(label="Double the fleet", values={"replicas_before": BEFORE, "replicas_after": DOUBLED}),
        Preset(label="Lose one replica", values={"replicas_before": BEFORE, "replicas_after": BEFORE - 1}),
    ),
    chart=chart,
    notes=notes(),
)
