"""The routing calculator: round robin against hash affinity, and sharding the hot key."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Bar, Chart, DataTable, bar_chart
from calculators.definitions import kv_cache
from calculators.definitions.assumptions import LLAMA_3_70B
from calculators.formatting import number, percent, plural

# The source's case: 64 replicas; the hot key carries 80% of a family that is 30% of the fleet.
REPLICAS = 64
HOT_SHARE = 0.8
FAMILY_FLEET_SHARE = 0.3


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    cards, hot, shards = i["cards"], i["hot_share"], i["shards"]
    hot_part = hot / shards
    rest = (1 - hot) / cards
    fair_points = 100 / cards
    steps = [
        step(
            "Round robin: share of the family on each replica",
            f"1 ÷ {number(cards)} {plural(cards, 'replica')}",
            o["round_robin_share"],
            "fraction",
        ),
        step(
            "Hash: the hot key's share on each replica that holds it",
            f"{number(hot)} ÷ {number(shards)} {plural(shards, 'shard')}",
            hot_part,
            "fraction",
        ),
        step(
            "Other keys, hashed evenly over all replicas",
            f"(1 − {number(hot)}) ÷ {number(cards)} {plural(cards, 'replica')}",
            rest,
            "fraction",
        ),
        step(
            "Hash: busiest replica's share of the family",
            f"{number(hot_part)} + {number(rest)}",
            o["hash_busiest_share"],
            "fraction",
        ),
        step(
            "Busiest replica's load from this family, in fleet points",
            f"100 × {number(i['family_fleet_share'])} (family's share of the fleet) × {number(o['hash_busiest_share'])}",
            o["fleet_points"],
            "percentage points",
        ),
        step(
            "A replica's fair share of the fleet",
            f"100 ÷ {number(cards)} {plural(cards, 'replica')}",
            fair_points,
            "percentage points",
        ),
    ]
    if fair_points > 0:
        steps.append(
            step(
                "Busiest replica's load against its fair share",
                f"{number(o['fleet_points'])} ÷ {number(fair_points)}",
                o["fleet_points"] / fair_points,
                "×",
            )
        )
    steps.append(
        step(
            "Duplicate copies of the hot prefix",
            f"{number(shards)} {plural(shards, 'shard')} − 1",
            o["duplicate_copies"],
            "copies",
        )
    )
    return steps


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
    cards, hot = i["cards"], i["hot_share"]
    shard_counts = sorted({k for k in (1, 2, 4, 8, i["shards"]) if k <= cards})
    bars = [Bar("Round robin: every replica", o["round_robin_share"], percent(o["round_robin_share"], 4))]
    rows = [
        (
            "Round robin, every replica",
            percent(o["round_robin_share"]),
            number(100 * i["family_fleet_share"] * o["round_robin_share"], 4),
        )
    ]
    for k in shard_counts:
        share = maths.routing(cards, hot, i["family_fleet_share"], k).hash_busiest_share
        name = "Hash: busiest replica" if k == 1 else f"Hash, hot key over {k} replicas: busiest"
        yours = k == i["shards"]
        bars.append(
            Bar(
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
    bars.append(Bar("Hash: any replica without the hot key", quiet, percent(quiet, 4), "chart-bar chart-bar-muted"))
    rows.append(
        ("Hash, a replica without the hot key", percent(quiet), number(100 * i["family_fleet_share"] * quiet, 4))
    )
    title = "Share of one family's traffic on a single replica"
    description = (
        f"With {cards} replicas, round robin gives every replica {percent(o['round_robin_share'])} of the family; "
        f"hashing puts {percent(o['hash_busiest_share'])} on the busiest replica"
        + (f" with the hot key over {i['shards']} replicas." if i["shards"] > 1 else ".")
    )
    svg = bar_chart(
        "routing",
        title,
        description,
        bars,
        max(b.value for b in bars),
        "Share of the family's traffic on that replica",
        lambda t: percent(t, 3),
    )
    table = DataTable(
        "Per-replica load by routing policy",
        ("Policy", "Share of the family", "Fleet points"),
        tuple(rows),
    )
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.routing(REPLICAS, HOT_SHARE, FAMILY_FLEET_SHARE, 1)
    hot, rest = 100 * HOT_SHARE, 100 * (1 - HOT_SHARE)
    source = hot + rest / (REPLICAS - 1)  # the source divides the rest by N − 1
    fair = 100 / REPLICAS
    whole_family = 100 * FAMILY_FLEET_SHARE + 100 * (1 - FAMILY_FLEET_SHARE) / REPLICAS
    copy = maths.kv_cache(**LLAMA_3_70B, tokens=kv_cache.PREFIX_TOKENS, cache_gb=kv_cache.CACHE_GB).copy_bytes
    return (
        "**The model.** Shares are of one prompt family's traffic. Round robin spreads "
        "every request evenly, so each replica sees 1/N of the family and its cached prefix "
        "is needed everywhere. Hash affinity sends a key to one replica: the hot key's "
        "traffic is split over `shards` replicas and the other keys hash evenly over all "
        "N replicas, so the busiest replica carries h/k + (1 − h)/N.",
        "**Where the course notes' figure slips.** The course notes give the busiest replica "
        f"{number(hot)} + {number(rest)}/{REPLICAS - 1} = {number(source, 4)}%. That mixes two models: "
        f"if the other {number(rest)}% hashes over all {REPLICAS} replicas, the busiest replica gets "
        f"{number(hot)} + {number(rest)}/{REPLICAS} = **{percent(case.hash_busiest_share)}**; if it avoids "
        f"the hot replica, it stays at {hot:.2f}%. Dividing by {REPLICAS - 1} matches neither. The gap is under a "
        f"third of a point, and the fleet figure rounds to {number(case.fleet_points, 3)} points either way.",
        "**Fleet points** multiply the busiest replica's share of the family by the "
        f"family's share of the fleet: {number(FAMILY_FLEET_SHARE)} × {number(100 * case.hash_busiest_share)} = "
        f"{number(case.fleet_points, 4)} points, against a fair share of 100/{REPLICAS} = {number(fair)} points "
        f"per replica ({number(case.fleet_points / fair, 3)}×). Reading the {number(hot)}% as a share of "
        f"the whole fleet instead would give {number(whole_family, 4)} points, not the course notes' "
        f"{number(case.fleet_points, 3)}.",
        "**Sharding** the hot key over k replicas divides its load by k at the cost of "
        f"k − 1 duplicate copies of its prefix ({number(copy / 1e6, 4)} MB each for a "
        f"{number(kv_cache.PREFIX_TOKENS)}-token 70B "
        "preamble; see the KV-cache calculator). Consistent hashing with bounded loads "
        "(Mirrokni, Thorup and Zadimoghaddam) caps each replica at ⌈(1 + ε) × average⌉ "
        "instead and spills the rest clockwise round the ring.",
    )


CALCULATOR = Calculator(
    slug="routing",
    title="Routing: round robin against hash affinity",
    purpose=(
        "How much of one prompt family's traffic the busiest replica takes under round "
        "robin, under hash affinity, and with the hot key sharded."
    ),
    parameters=(
        Parameter(
            name="cards",
            type="int",
            default=REPLICAS,
            min=1,
            max=100_000,
            unit="replicas",
            help="Replicas the router chooses between (a replica may span several GPUs).",
            label="Replicas",
        ),
        Parameter(
            name="hot_share",
            type="float",
            default=HOT_SHARE,
            min=0.0,
            max=1.0,
            unit="fraction",
            help="Share of the family's traffic carried by its hottest key (0.8 = 80%); "
            "hashing sends all of it to the same replica.",
            label="Hot key's share of the family",
        ),
        Parameter(
            name="family_fleet_share",
            type="float",
            default=FAMILY_FLEET_SHARE,
            min=0.0,
            max=1.0,
            unit="fraction",
            help="The family's share of all fleet traffic (0.3 = 30%).",
            label="Family's share of the fleet",
        ),
        Parameter(
            name="shards",
            type="int",
            default=1,
            min=1,
            max=100_000,
            unit="replicas",
            help="Replicas the hot key is split over evenly (1 = no sharding); at most the number of replicas.",
            label="Shards for the hot key",
        ),
    ),
    outputs=(
        Output(name="round_robin_share", unit="fraction", label="Round robin: share of the family per replica"),
        Output(name="hash_busiest_share", unit="fraction", label="Hash: busiest replica's share of the family"),
        Output(name="fleet_points", unit="percentage points", label="Busiest replica's load from the family"),
        Output(name="duplicate_copies", unit="copies", label="Duplicate copies of the hot prefix"),
    ),
    compute=maths.routing,
    derive=derive,
    headline="hash_busiest_share",
    presets=(
        Preset(
            label=f"Course notes' case: {REPLICAS} replicas, hot key {percent(HOT_SHARE)}, family {percent(FAMILY_FLEET_SHARE)}",
            values={"cards": REPLICAS, "hot_share": HOT_SHARE, "family_fleet_share": FAMILY_FLEET_SHARE, "shards": 1},
        ),
        Preset(label="Shard the hot key over 2 replicas", values={"shards": 2}),
        Preset(label="Shard the hot key over 4 replicas", values={"shards": 4}),
        Preset(label="Shard the hot key over 8 replicas", values={"shards": 8}),
    ),
    chart=chart,
    notes=notes(),
)
