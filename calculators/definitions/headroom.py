"""The headroom calculator: replicas for a concurrency with slots kept below full, plus spares for failures."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Segment, stacked_chart
from calculators.definitions import pool
from calculators.definitions.assumptions import H100_CUDA_GB, H100_CUDA_GIB, H100_GB
from calculators.formatting import number, percent, plural

CONCURRENCY = 2000.0
SLOTS = pool.REQUESTS_PER_REPLICA  # the pool's 70B replica on four H100s sized with 80 decimal GB each: 110
MAX_OCCUPANCY = 0.9
SPARES = 2
GPUS_PER_REPLICA = pool.GPUS_PER_REPLICA
GPUS_PER_NODE = 8  # an HGX/DGX H100 server: the unit that fails, reboots and is upgraded together
SLOTS_H100 = pool.REQUESTS_H100  # the same replica with the memory the engine counts: 123


def _parts(i: Mapping[str, Any]) -> tuple[int, int]:
    """Return the replicas a concurrency needs at full slots, and at the occupancy cap (no spares)."""
    full = maths.headroom(i["concurrency"], i["slots_per_replica"], 1.0, 0, 1).replicas
    capped = maths.headroom(i["concurrency"], i["slots_per_replica"], i["max_occupancy"], 0, 1).replicas
    return full, capped


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    usable = i["slots_per_replica"] * i["max_occupancy"]
    _, capped = _parts(i)
    return [
        step("Slots each replica may fill", f"{number(i['slots_per_replica'])} × {number(i['max_occupancy'])}",
             usable, "requests"),
        step("Replicas to carry the load, rounded up", f"⌈{number(i['concurrency'])} ÷ {number(usable)}⌉ = "
             f"⌈{number(i['concurrency'] / usable, 4)}⌉", capped, "replicas"),
        step("Plus spares for losing replicas", f"{number(capped)} + {number(i['spare_replicas'])}", o["replicas"],
             "replicas"),
        step("GPUs", f"{number(o['replicas'])} × {number(i['gpus_per_replica'])}", o["gpus"], "GPUs"),
        step("Occupancy with every replica up", f"{number(i['concurrency'])} ÷ ({number(o['replicas'])} × "
             f"{number(i['slots_per_replica'])})", i["concurrency"] / (o["replicas"] * i["slots_per_replica"])
             if o["replicas"] else 0.0, "fraction"),
    ]  # fmt: skip


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table: where the replicas come from."""
    full, capped = _parts(i)
    spares = i["spare_replicas"]
    segments = [
        Segment("Carry the load with every slot full", full, f"{number(full)} {plural(full, 'replica')}",
                "chart-bar chart-bar-accent"),
        Segment(f"Keep occupancy at or below {percent(i['max_occupancy'])}", capped - full,
                f"{number(capped - full)} {plural(capped - full, 'replica')}", "chart-bar"),
        Segment("Spares for failures", spares, f"{number(spares)} {plural(spares, 'replica')}",
                "chart-bar chart-bar-muted"),
    ]  # fmt: skip
    title = "Where the replicas come from"
    description = (
        f"{number(i['concurrency'])} requests in flight need {number(full)} replicas with every slot full, "
        f"{number(capped)} at {percent(i['max_occupancy'])} occupancy, and {number(o['replicas'])} with "
        f"{number(spares)} {plural(spares, 'spare')}: {number(o['gpus'])} GPUs."
    )
    svg = stacked_chart("headroom", title, description, segments, max(o["replicas"], 1))
    table = DataTable("Replicas by reason", ("Reason", "Replicas"),
                      tuple((s.label, s.text) for s in segments) + (("Total", number(o["replicas"])),))  # fmt: skip
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.headroom(CONCURRENCY, SLOTS, MAX_OCCUPANCY, SPARES, GPUS_PER_REPLICA)
    visible = maths.headroom(CONCURRENCY, SLOTS_H100, MAX_OCCUPANCY, SPARES, GPUS_PER_REPLICA)
    many = maths.queue_wait(1.0, MAX_OCCUPANCY, SLOTS, 0.0).wait_ms  # in service times
    one = maths.queue_wait(1.0, MAX_OCCUPANCY, 1, 0.0).wait_ms
    return (
        f"**Why spares.** N + {SPARES} means the fleet still carries its peak with {SPARES} "
        f"{plural(SPARES, 'replica')} down (a failed node, a rolling upgrade). Spares are whole replicas, "
        "so they cost the same however busy the rest are. Count them in whole failure domains: an "
        f"{GPUS_PER_NODE}-GPU H100 server holds {GPUS_PER_NODE // GPUS_PER_REPLICA} replicas of "
        f"{GPUS_PER_REPLICA} GPUs, so surviving one lost server takes "
        f"{GPUS_PER_NODE // GPUS_PER_REPLICA} spare replicas, and N + 1 replicas does not cover it.",
        "**Why not fill every slot.** A replica's KV slots behave like many servers sharing one queue, "
        f"not one: at {percent(MAX_OCCUPANCY)} busy, {SLOTS} servers (Erlang C) make a request wait "
        f"{number(many, 3)} service times on average where a single server would wait {number(one, 3)}. So "
        f"queueing alone does not justify a low cap such as {percent(pool.TARGET_UTILIZATION)}. The real reasons to stay below full are "
        "others: bursts arrive faster than a new replica loads its weights; every extra sequence in the "
        "batch lengthens each decode step, so the time per output token rises with occupancy (see the "
        "decode-step calculator); and each running request's KV grows as it generates, so a full cache "
        "forces the engine to preempt and recompute someone.",
        f"**The memory behind the slots.** {SLOTS} slots come from sizing an H100 at {H100_GB} decimal GB. "
        f"The engine counts the total CUDA reports, {number(H100_CUDA_GIB, 4)} GiB = {number(H100_CUDA_GB, 4)} GB, "
        "and the same replica holds "
        f"{SLOTS_H100} requests: {number(CONCURRENCY)} in flight then need {visible.replicas} replicas "
        f"({visible.gpus} GPUs) instead of {case.replicas} ({case.gpus}).",
    )


CALCULATOR = Calculator(
    slug="headroom",
    title="Headroom: replicas with an occupancy cap and spares",
    purpose=(
        "How many replicas and GPUs a concurrency needs when no replica fills more than a share of its "
        "slots and some replicas are kept spare for failures."
    ),
    parameters=(
        Parameter(
            name="concurrency",
            type="float",
            default=CONCURRENCY,
            min=0.0,
            max=1e9,
            unit="requests",
            help="Requests in flight at peak (Little's law: arrival rate × arrival-to-completion time).",
            label="Requests in flight",
        ),
        Parameter(
            name="slots_per_replica",
            type="int",
            default=SLOTS,
            min=1,
            max=1_000_000,
            unit="requests",
            help="Concurrent requests one replica holds (see the replica calculator).",
            label="Slots per replica",
        ),
        Parameter(
            name="max_occupancy",
            type="float",
            default=MAX_OCCUPANCY,
            min=0.01,
            max=1.0,
            unit="fraction",
            help="Highest share of its slots a replica should fill at peak.",
            label="Occupancy cap",
        ),
        Parameter(
            name="spare_replicas",
            type="int",
            default=SPARES,
            min=0,
            max=100_000,
            unit="replicas",
            help="Replicas kept beyond the load so losing that many still carries the peak (N + k).",
            label="Spare replicas",
        ),
        pool.REPLICA_GPUS,
    ),  # fmt: skip
    outputs=(
        Output(name="replicas", unit="replicas", label="Replicas"),
        Output(name="gpus", unit="GPUs", label="GPUs"),
    ),
    compute=maths.headroom,
    derive=derive,
    headline="gpus",
    presets=(
        Preset(
            label=f"70B on H100 sized at 80 GB: {SLOTS} slots",
            values={
                "concurrency": CONCURRENCY,
                "slots_per_replica": SLOTS,
                "max_occupancy": MAX_OCCUPANCY,
                "spare_replicas": SPARES,
                "gpus_per_replica": GPUS_PER_REPLICA,
            },
        ),
        Preset(
            label=f"H100 as the engine counts it ({number(H100_CUDA_GIB, 4)} GiB = {number(H100_CUDA_GB, 4)} GB): "
            f"{SLOTS_H100} slots",
            values={"slots_per_replica": SLOTS_H100},
        ),
        Preset(label="No spares, every slot full", values={"max_occupancy": 1.0, "spare_replicas": 0}),
        Preset(label="N + 1", values={"spare_replicas": 1}),
    ),  # fmt: skip
    chart=chart,
    notes=notes(),
)
