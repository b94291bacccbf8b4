"""The token-cost calculator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import (
    Bar,
    Chart,
    cost_chart,
)
from calculators.definitions.assumptions import assumptions_note
from calculators.formatting import money, number, percent, plural, power_of_ten


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    return [
        step(
            "Cost of an hour of the cards",
            f"{money(i['card_month_usd'])} per card-month × {number(i['cards'])} {plural(i['cards'], 'card')} ÷ 730 hours",
            o["usd_per_hour"],
            "USD/h",
        ),
        step(
            "Tokens in an hour",
            f"{number(i['tokens_per_s'])} tokens/s × 3,600 s",
            o["tokens_per_hour"],
            "tokens/h",
        ),
        step(
            "Cost per million tokens",
            f"{money(o['usd_per_hour'])} ÷ {number(o['tokens_per_hour'])} tokens × {power_of_ten(6)}",
            o["usd_per_million_tokens"],
            "USD per 1M tokens",
        ),
        step(
            "Against the API price",
            f"{money(o['usd_per_million_tokens'])} ÷ {money(i['api_usd_per_million'])}",
            o["share_of_api"],
            "ratio",
        ),
    ]


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    owned = o["usd_per_million_tokens"]
    rented = owned * 1.35
    api = i["api_usd_per_million"]
    bars = [
        Bar("Your cards", owned, money(owned), "chart-bar chart-bar-accent"),
        Bar("Same cards rented (1.35×)", rented, money(rented)),
        Bar("API", api, money(api), "chart-bar chart-bar-muted"),
    ]
    summary = (
        f"Your cards cost {money(owned)} per million tokens, {percent(o['share_of_api'], 4)} of the API's "
        f"{money(api)}; rented at the source's 1.35× they would cost {money(rented)}. "
        "The line marks 75% of the API price, the margin check."
    )
    return cost_chart("token-cost", bars, api, summary)


def notes() -> tuple[str, ...]:
    return (
        "**A month is 730 hours** (8,760 ÷ 12), so an hour of a $2,100 card costs $2.877.",
        "**Reading the ratio.** “Against the API price” is the cost per token as a share "
        "of the API's: 0.457 means 45.7% of the API price; above 1, self-hosting costs "
        "more. Owning beats renting on rate everywhere (renting adds the cloud's margin); "
        "whether owning pays depends on keeping the cards busy: see the fleet calculator.",
        "**Chip presets** change only the token rate; B200 and used-A100 prices are not "
        "in the sources, so set your own.",
        assumptions_note(),
    )


CALCULATOR = Calculator(
    slug="token-cost",
    title="Cost per million tokens",
    purpose="What a token costs on cards you pay for by the month, against an API's price.",
    parameters=(
        Parameter(
            name="card_month_usd",
            type="float",
            default=2100.0,
            min=0.0,
            max=1_000_000.0,
            unit="USD",
            help="What one card costs per month, all in (capex over 36 months, power, hosting, staff).",
            label="Price per card-month",
        ),
        Parameter(
            name="cards",
            type="int",
            default=1,
            min=1,
            max=1_000_000,
            unit="cards",
            help="Cards serving together.",
            label="Cards",
        ),
        Parameter(
            name="tokens_per_s",
            type="float",
            default=700.0,
            min=0.001,
            max=1_000_000_000.0,
            unit="tokens/s",
            help="Output tokens per second of all the cards together (H100 on a 70B model: about 700 per card).",
            label="Combined token rate",
        ),
        Parameter(
            name="api_usd_per_million",
            type="float",
            default=2.5,
            min=0.0001,
            max=10_000.0,
            unit="USD per 1M tokens",
            help="The API's price per million tokens (70B: $2.50 in the source, unconfirmed).",
            label="API price",
        ),
    ),
    outputs=(
        Output(name="usd_per_hour", unit="USD/h", label="Cost per hour"),
        Output(name="tokens_per_hour", unit="tokens/h", label="Tokens per hour"),
        Output(name="usd_per_million_tokens", unit="USD per 1M tokens", label="Cost per million tokens"),
        Output(name="share_of_api", unit="ratio", label="Against the API price"),
    ),
    compute=maths.token_cost,
    derive=derive,
    headline="usd_per_million_tokens",
    presets=(
        Preset(
            label="H100 on a 70B model, owned at $2,100",
            values={"card_month_usd": 2100, "cards": 1, "tokens_per_s": 700, "api_usd_per_million": 2.5},
        ),
        Preset(
            label="H100 on a 70B model, owned at $2,900",
            values={"card_month_usd": 2900, "cards": 1, "tokens_per_s": 700, "api_usd_per_million": 2.5},
        ),
        Preset(
            label="H100 on a 70B model, rented (1.35 × $2,100)",
            values={"card_month_usd": 2835, "cards": 1, "tokens_per_s": 700, "api_usd_per_million": 2.5},
        ),
        Preset(
            label="H100 on an 8B model, owned at $2,100",
            values={"card_month_usd": 2100, "cards": 1, "tokens_per_s": 10_000, "api_usd_per_million": 0.2},
        ),
        Preset(
            label="B200 rate, 70B (2.4 × H100, assumed; price unchanged)",
            values={"cards": 1, "tokens_per_s": 1680},
        ),
        Preset(
            label="Used A100 rate, 70B (0.45 × H100, assumed; price unchanged)",
            values={"cards": 1, "tokens_per_s": 315},
        ),
    ),
    chart=chart,
    notes=notes(),
)
