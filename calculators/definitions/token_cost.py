"""The token-cost calculator: what a token costs on cards paid by the month, against an API."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Bar, Chart, cost_chart
from calculators.definitions.assumptions import (
    API_8B_USD_PER_MILLION,
    API_70B_USD_PER_MILLION,
    B200_OVER_H100,
    CARD_MONTH_USD,
    CARD_MONTH_USD_HIGH,
    H100_8B_TOKENS_PER_S,
    H100_70B_TOKENS_PER_S,
    MONTHS_PER_YEAR,
    RENT_MULTIPLIER,
    USED_A100_OVER_H100,
    assumptions_note,
)
from calculators.formatting import money, number, percent, plural, power_of_ten


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    return [
        step(
            "Cost of an hour of the cards",
            f"{money(i['card_month_usd'])} per card-month × {number(i['cards'])} {plural(i['cards'], 'card')} ÷ {number(maths.HOURS_PER_MONTH)} hours",
            o["usd_per_hour"],
            "USD/h",
        ),
        step(
            "Tokens in an hour",
            f"{number(i['tokens_per_s'])} tokens/s × {number(maths.SECONDS_PER_HOUR)} s",
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
    """Return the chart of a result, with its table."""
    owned = o["usd_per_million_tokens"]
    rented = owned * RENT_MULTIPLIER
    api = i["api_usd_per_million"]
    bars = [
        Bar("Your cards", owned, money(owned), "chart-bar chart-bar-accent"),
        Bar(f"Same cards rented ({number(RENT_MULTIPLIER)}×)", rented, money(rented)),
        Bar("API", api, money(api), "chart-bar chart-bar-muted"),
    ]
    summary = (
        f"Your cards cost {money(owned)} per million tokens, {percent(o['share_of_api'], 4)} of the API's "
        f"{money(api)}; rented at the course notes' {number(RENT_MULTIPLIER)}× they would cost {money(rented)}. "
        f"The line marks {percent(maths.MARGIN_LIMIT)} of the API price, the margin check."
    )
    return cost_chart("token-cost", bars, api, summary)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.token_cost(CARD_MONTH_USD, 1, H100_70B_TOKENS_PER_S, API_70B_USD_PER_MILLION)
    return (
        f"**A month is {number(maths.HOURS_PER_MONTH)} hours** ({number(maths.HOURS_PER_MONTH * MONTHS_PER_YEAR)} ÷ {MONTHS_PER_YEAR}), so an "
        f"hour of a {money(CARD_MONTH_USD)} card costs {money(case.usd_per_hour, 4)}.",
        "**Reading the ratio.** “Against the API price” is the cost per token as a share "
        f"of the API's: {number(case.share_of_api, 3)} means {percent(case.share_of_api, 3)} of the API price; "
        "above 1, self-hosting costs "
        "more. Owning beats renting on rate everywhere (renting adds the cloud's margin); "
        "whether owning pays depends on keeping the cards busy: see the fleet calculator.",
        "**Chip presets** change only the token rate; B200 and used-A100 prices are not "
        "in the course notes, so set your own.",
        assumptions_note(),
    )


def _h100_70b(card_month_usd: float) -> dict[str, float]:
    return {
        "card_month_usd": card_month_usd,
        "cards": 1,
        "tokens_per_s": H100_70B_TOKENS_PER_S,
        "api_usd_per_million": API_70B_USD_PER_MILLION,
    }


CALCULATOR = Calculator(
    slug="token-cost",
    title="Cost per million tokens",
    purpose="What a token costs on cards you pay for by the month, against an API's price.",
    parameters=(
        Parameter(
            name="card_month_usd",
            type="float",
            default=float(CARD_MONTH_USD),
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
            default=float(H100_70B_TOKENS_PER_S),
            min=0.001,
            max=1_000_000_000.0,
            unit="tokens/s",
            help="Output tokens per second of all the cards together (H100 on a 70B model: about 700 per card).",
            label="Combined token rate",
        ),
        Parameter(
            name="api_usd_per_million",
            type="float",
            default=API_70B_USD_PER_MILLION,
            min=0.0001,
            max=10_000.0,
            unit="USD per 1M tokens",
            help="The API's price per million tokens (70B: $2.50 in the course notes, unconfirmed).",
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
            label=f"H100 on a 70B model, owned at {money(CARD_MONTH_USD)}",
            values=_h100_70b(CARD_MONTH_USD),
        ),
        Preset(
            label=f"H100 on a 70B model, owned at {money(CARD_MONTH_USD_HIGH)}",
            values=_h100_70b(CARD_MONTH_USD_HIGH),
        ),
        Preset(
            label=f"H100 on a 70B model, rented ({number(RENT_MULTIPLIER)} × {money(CARD_MONTH_USD)})",
            values=_h100_70b(RENT_MULTIPLIER * CARD_MONTH_USD),
        ),
        Preset(
            label=f"H100 on an 8B model, owned at {money(CARD_MONTH_USD)}",
            values={
                "card_month_usd": CARD_MONTH_USD,
                "cards": 1,
                "tokens_per_s": H100_8B_TOKENS_PER_S,
                "api_usd_per_million": API_8B_USD_PER_MILLION,
            },
        ),
        Preset(
            label=f"B200 rate, 70B ({number(B200_OVER_H100)} × H100, assumed; price unchanged)",
            values={"cards": 1, "tokens_per_s": B200_OVER_H100 * H100_70B_TOKENS_PER_S},
        ),
        Preset(
            label=f"Used A100 rate, 70B ({number(USED_A100_OVER_H100)} × H100, assumed; price unchanged)",
            values={"cards": 1, "tokens_per_s": USED_A100_OVER_H100 * H100_70B_TOKENS_PER_S},
        ),
    ),
    chart=chart,
    notes=notes(),
)
