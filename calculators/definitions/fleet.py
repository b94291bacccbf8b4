"""The fleet calculator: a month of demand served by owned cards, rented cards, then an API."""

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
    H100_8B_TOKENS_PER_S,
    H100_70B_TOKENS_PER_S,
    MONTHS_PER_YEAR,
    RENT_MULTIPLIER,
    USED_A100_OVER_H100,
    assumptions_note,
)
from calculators.formatting import money, number, percent, plural, power_of_ten

# The source's month: 10T tokens of a 70B model; 5,000 owned H100s; the "$441M bet" owns 17,500.
MONTHLY_TOKENS = 1e13
OWNED_CARDS = 5000
BET_CARDS = 17_500
BET_IDLE_CLAIMED = 0.71  # the source's figure for the bet's idle share
# Sensitivity: per-card 70B output rates from half the assumption to about TensorRT-LLM's FP8 figure at
# 1,000/1,000 tokens (S13), and 70B API prices from half to twice the unsourced $2.50 (S17).
SENSITIVITY_TOKENS_PER_S = (350, 700, 1400, 2100)
SENSITIVITY_API_USD = (1.25, 2.5, 5.0)
PEAK_TO_MEAN = 2.0  # an illustrative daily peak against the month's average demand


def _div(x: float) -> str:
    """Return a divisor, in brackets when it is written as a power of ten."""
    text = number(x)
    return f"({text})" if "×" in text else text


def _compare(ok: bool) -> str:
    """Return the sign that makes a check's expression true: ≤ when it passes, > when it fails."""
    return "≤" if ok else ">"


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    parts = maths.fleet_breakdown(
        i["monthly_tokens"],
        i["tokens_per_s_per_card"],
        i["owned_cards"],
        i["rented_cards"],
        i["card_month_usd"],
        i["rent_multiplier"],
    )
    per_card = o["tokens_per_card_month"]
    needed = i["monthly_tokens"]
    api = i["api_usd_per_million"]
    gap = max(0.0, needed - parts.owned_capacity)
    steps = [
        step(
            "Tokens one card serves in a month",
            f"{number(i['tokens_per_s_per_card'])} tokens/s × {number(maths.SECONDS_PER_HOUR)} s × {number(maths.HOURS_PER_MONTH)} h",
            per_card,
            "tokens",
        ),
        step(
            "Cards needed, rounded up",
            f"⌈{number(needed)} ÷ {_div(per_card)}⌉ = ⌈{number(needed / per_card, 6)}⌉",
            o["cards_needed"],
            "cards",
        ),
        step(
            "Owned capacity",
            f"{number(i['owned_cards'])} owned {plural(i['owned_cards'], 'card')} × {number(per_card)} tokens",
            parts.owned_capacity,
            "tokens",
        ),
        step(
            "Served by owned cards (they go first)",
            f"min({number(needed)}, {number(parts.owned_capacity)})",
            parts.served_by_owned,
            "tokens",
        ),
        step(
            "Served by rented cards",
            f"min({number(needed)} − {number(parts.served_by_owned)}, {number(i['rented_cards'])} × {number(per_card)})",
            parts.served_by_rented,
            "tokens",
        ),
        step(
            "Overflow to the API",
            f"{number(needed)} − {number(parts.served_by_owned)} − {number(parts.served_by_rented)}",
            o["overflow_tokens"],
            "tokens",
        ),
        step(
            "Overflow share of needed tokens",
            f"{number(o['overflow_tokens'])} ÷ {_div(needed)}",
            o["overflow_share"],
            "fraction",
        ),
        step(
            "API bill",
            f"{number(o['overflow_tokens'])} ÷ {power_of_ten(6)} × {money(api)}",
            o["api_usd"],
            "USD",
        ),
        step(
            "Owned cards bill",
            f"{number(i['owned_cards'])} × {money(i['card_month_usd'])}",
            parts.owned_usd,
            "USD",
        ),
        step(
            "Rented cards bill",
            f"{number(i['rented_cards'])} × {money(i['card_month_usd'])} × {number(i['rent_multiplier'])}",
            parts.rented_usd,
            "USD",
        ),
        step(
            "Total for the month",
            f"{money(parts.owned_usd)} + {money(parts.rented_usd)} + {money(o['api_usd'])}",
            o["total_usd"],
            "USD",
        ),
        step(
            "Blended cost per million needed tokens",
            f"{money(o['total_usd'])} ÷ ({number(needed)} tokens ÷ {power_of_ten(6)})",
            o["blended_usd_per_million"],
            "USD per 1M tokens",
        ),
        step(
            "Idle share of owned capacity",
            (
                f"({number(parts.owned_capacity)} − {number(parts.served_by_owned)}) ÷ {_div(parts.owned_capacity)}"
                if parts.owned_capacity > 0
                else "no owned cards, so nothing owned sits idle"
            ),
            o["idle_share"],
            "fraction",
        ),
        step(
            "Rented cards that would close the gap left by owned cards",
            f"⌈{number(gap)} ÷ {_div(per_card)}⌉ = ⌈{number(gap / per_card, 6)}⌉",
            o["rented_cards_to_cover"],
            "cards",
        ),
        step(
            f"Idle check: at most {percent(maths.IDLE_LIMIT)} of owned capacity unused",
            f"{percent(o['idle_share'], 4)} {_compare(o['idle_ok'])} {percent(maths.IDLE_LIMIT)}",
            o["idle_ok"],
            "check",
        ),
        step(
            f"Margin check: blended cost at most {percent(maths.MARGIN_LIMIT)} of the API price",
            f"{money(o['blended_usd_per_million'])} {_compare(o['margin_ok'])} {number(maths.MARGIN_LIMIT)} × {money(api)} = {money(maths.MARGIN_LIMIT * api)}",
            o["margin_ok"],
            "check",
        ),
        step(
            f"Overflow check: at most {percent(maths.OVERFLOW_LIMIT)} of needed tokens go to the API",
            f"{percent(o['overflow_share'], 4)} {_compare(o['overflow_ok'])} {percent(maths.OVERFLOW_LIMIT)}",
            o["overflow_ok"],
            "check",
        ),
    ]
    return steps


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
    per_card = o["tokens_per_card_month"]
    owned_full = i["card_month_usd"] / per_card * 1e6
    rented = owned_full * i["rent_multiplier"]
    api = i["api_usd_per_million"]
    parts = maths.fleet_breakdown(
        i["monthly_tokens"],
        i["tokens_per_s_per_card"],
        i["owned_cards"],
        i["rented_cards"],
        i["card_month_usd"],
        i["rent_multiplier"],
    )
    bars = [Bar("Owned card, fully busy", owned_full, money(owned_full))]
    if parts.served_by_owned > 0 and o["idle_share"] > 0:
        effective = parts.owned_usd / (parts.served_by_owned / 1e6)
        bars.append(Bar(f"Owned, {percent(o['idle_share'], 3)} idle", effective, money(effective)))
    bars += [
        Bar(f"Rented card ({number(i['rent_multiplier'])}×)", rented, money(rented)),
        Bar("API", api, money(api), "chart-bar chart-bar-muted"),
        Bar(
            "Blended, this month",
            o["blended_usd_per_million"],
            money(o["blended_usd_per_million"]),
            "chart-bar chart-bar-accent",
        ),
    ]
    summary = (
        f"An owned card costs {money(owned_full)} per million tokens when fully busy, a rented one "
        f"{money(rented)}, the API {money(api)}. This month blends to {money(o['blended_usd_per_million'])}, "
        f"{'within' if o['margin_ok'] else 'above'} the {percent(maths.MARGIN_LIMIT)} margin line."
    )
    return cost_chart("fleet", bars, api, summary)


def _month(**changes: float) -> dict[str, float]:
    """Return the source's month of inputs with some changed."""
    return {
        "monthly_tokens": MONTHLY_TOKENS,
        "tokens_per_s_per_card": H100_70B_TOKENS_PER_S,
        "owned_cards": OWNED_CARDS,
        "rented_cards": 0,
        "card_month_usd": CARD_MONTH_USD,
        "rent_multiplier": RENT_MULTIPLIER,
        "api_usd_per_million": API_70B_USD_PER_MILLION,
        **changes,
    }


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.fleet(**_month())
    bet = maths.fleet(**_month(owned_cards=BET_CARDS))
    bet_usd = BET_CARDS * CARD_MONTH_USD * MONTHS_PER_YEAR
    busy_share = 1 - BET_IDLE_CLAIMED
    seconds = maths.SECONDS_PER_HOUR * maths.HOURS_PER_MONTH
    rate_for_claim = MONTHLY_TOKENS / (BET_CARDS * busy_share * seconds)
    tokens_for_claim = busy_share * BET_CARDS * H100_70B_TOKENS_PER_S * seconds
    return (
        "**Order of service.** Owned cards serve first (they bill anyway), rented cards "
        "next, and the API takes the overflow at its retail price. "
        f"A month is {number(maths.HOURS_PER_MONTH)} hours.",
        "**The checks are design thresholds** from the course notes, with no outside "
        f"source: at most {percent(maths.IDLE_LIMIT)} of owned capacity idle, a blended price at most "
        f"{percent(maths.MARGIN_LIMIT)} of the API's, and at most {percent(maths.OVERFLOW_LIMIT)} of needed "
        "tokens sent to the API. Idle share is 0 when there are no owned cards.",
        f"**The “${number(bet_usd / 1e6, 3)}M bet runs {percent(BET_IDLE_CLAIMED)} idle” does not reproduce.** "
        f"{number(BET_CARDS)} H100 × {money(CARD_MONTH_USD)} × {MONTHS_PER_YEAR} months = ${bet_usd / 1e6:.1f}M exactly. "
        f"A month of {number(MONTHLY_TOKENS / 1e12)}T 70B tokens at {number(H100_70B_TOKENS_PER_S)} tokens/s needs "
        f"{number(bet.cards_needed)} cards, so {number(BET_CARDS)} cards run **{percent(bet.idle_share, 3)} idle**, "
        f"not {percent(BET_IDLE_CLAIMED)}. Reaching {percent(BET_IDLE_CLAIMED)} would take "
        f"{number(rate_for_claim, 3)} tokens/s per card, or {number(tokens_for_claim / 1e12, 3)}T tokens a month at "
        f"{number(H100_70B_TOKENS_PER_S)}. Try the preset.",
        "**Rented cards to close the gap** counts cards for the tokens owned cards "
        f"cannot carry, whatever is rented already: with {number(OWNED_CARDS)} owned cards, "
        f"{number(case.rented_cards_to_cover)}.",
        _sensitivity_note(),
        _peak_note(),
        assumptions_note(),
    )


def _sensitivity_note() -> str:
    """Return a Markdown table: owned-card cost as a share of the API price over the assumptions' range."""
    header = "| Tokens/s per card | " + " | ".join(f"API {money(api)} per 1M" for api in SENSITIVITY_API_USD) + " |"
    rule = "|---|" + "---|" * len(SENSITIVITY_API_USD)
    rows = [
        f"| {number(rate)} | "
        + " | ".join(
            percent(maths.token_cost(CARD_MONTH_USD, 1, rate, api).share_of_api, 3) for api in SENSITIVITY_API_USD
        )
        + " |"
        for rate in SENSITIVITY_TOKENS_PER_S
    ]
    low = maths.token_cost(CARD_MONTH_USD, 1, SENSITIVITY_TOKENS_PER_S[0], SENSITIVITY_API_USD[0]).share_of_api
    high = maths.token_cost(CARD_MONTH_USD, 1, SENSITIVITY_TOKENS_PER_S[-1], SENSITIVITY_API_USD[-1]).share_of_api
    return (
        "**A range, not a headline.** The two numbers that decide the answer, tokens per second per card "
        "and the API price, are assumptions with a wide range. An owned card at "
        f"{money(CARD_MONTH_USD)} a month costs this share of the API price per million tokens, from "
        f"{percent(low, 3)} to {percent(high, 2)} across the table; the margin check passes below "
        f"{percent(maths.MARGIN_LIMIT)}:\n\n" + "\n".join([header, rule, *rows])
    )


def _peak_note() -> str:
    """Return the note on sizing for a daily peak against the month's average."""
    average = maths.fleet(**_month())
    peak_cards = round(average.cards_needed * PEAK_TO_MEAN)
    at_peak = maths.fleet(**_month(owned_cards=peak_cards))
    return (
        "**Months average, days peak.** Tokens per month is an average; a chat product's demand swings "
        f"within each day. If the daily peak is {number(PEAK_TO_MEAN)}× the average and owned cards must "
        f"carry it, the fleet is {number(peak_cards)} cards instead of {number(average.cards_needed)}, and "
        f"over the month {percent(at_peak.idle_share, 3)} of that capacity idles, failing the idle check. "
        "Owning for the trough and renting or overflowing for the peak, or filling the night with an "
        "offline batch tier, is how the checks are met. Prices differ for input and output tokens too "
        "(see the request-cost calculator): a blended per-token price hides the prompt-to-answer mix."
    )


CALCULATOR = Calculator(
    slug="fleet",
    title="Buying the fleet: owned, rented and API",
    purpose=(
        "A month of demand served by owned cards, then rented cards, then an API: the "
        "bill, the blended price and the three checks."
    ),
    parameters=(
        Parameter(
            name="monthly_tokens",
            type="float",
            default=MONTHLY_TOKENS,
            min=1.0,
            max=1e18,
            unit="tokens",
            help="Tokens needed in the month (10¹³ = 10T, a serious product).",
            label="Tokens per month",
        ),
        Parameter(
            name="tokens_per_s_per_card",
            type="float",
            default=float(H100_70B_TOKENS_PER_S),
            min=0.001,
            max=10_000_000.0,
            unit="tokens/s",
            help="Sustained output tokens per second per card (H100 on a 70B model: about 700).",
            label="Token rate per card",
        ),
        Parameter(
            name="owned_cards",
            type="int",
            default=OWNED_CARDS,
            min=0,
            max=10_000_000,
            unit="cards",
            help="Cards you own; they serve first and bill whether busy or not.",
            label="Owned cards",
        ),
        Parameter(
            name="rented_cards",
            type="int",
            default=0,
            min=0,
            max=10_000_000,
            unit="cards",
            help="Cards rented for the month; they serve after owned cards.",
            label="Rented cards",
        ),
        Parameter(
            name="card_month_usd",
            type="float",
            default=float(CARD_MONTH_USD),
            min=0.0,
            max=1_000_000.0,
            unit="USD",
            help="What an owned card costs per month, all in.",
            label="Price per owned card-month",
        ),
        Parameter(
            name="rent_multiplier",
            type="float",
            default=RENT_MULTIPLIER,
            min=0.0,
            max=100.0,
            unit="×",
            help=f"Rented price as a multiple of the owned price (the course notes use {number(RENT_MULTIPLIER)}).",
            label="Rent multiplier",
        ),
        Parameter(
            name="api_usd_per_million",
            type="float",
            default=API_70B_USD_PER_MILLION,
            min=0.0,
            max=10_000.0,
            unit="USD per 1M tokens",
            help="API price per million tokens; the API takes whatever the cards cannot.",
            label="API price",
        ),
    ),
    outputs=(
        Output(name="tokens_per_card_month", unit="tokens", label="Tokens per card-month"),
        Output(name="cards_needed", unit="cards", label="Cards needed for the month"),
        Output(name="overflow_tokens", unit="tokens", label="Overflow to the API"),
        Output(name="overflow_share", unit="fraction", label="Overflow share of needed tokens"),
        Output(name="api_usd", unit="USD", label="API bill"),
        Output(name="total_usd", unit="USD", label="Total for the month"),
        Output(name="blended_usd_per_million", unit="USD per 1M tokens", label="Blended cost per million tokens"),
        Output(name="idle_share", unit="fraction", label="Idle share of owned capacity"),
        Output(name="rented_cards_to_cover", unit="cards", label="Rented cards to close the gap"),
        Output(name="idle_ok", unit="check", label=f"Idle at most {percent(maths.IDLE_LIMIT)}"),
        Output(name="margin_ok", unit="check", label=f"Blended at most {percent(maths.MARGIN_LIMIT)} of the API price"),
        Output(name="overflow_ok", unit="check", label=f"Overflow at most {percent(maths.OVERFLOW_LIMIT)}"),
    ),
    compute=maths.fleet,
    derive=derive,
    headline="blended_usd_per_million",
    presets=(
        Preset(
            label=(f"{number(MONTHLY_TOKENS / 1e12)}T tokens of 70B, own {number(OWNED_CARDS)} H100 (overflow case)"),
            values=_month(),
        ),
        Preset(label="Own 4,000, rent 1,000", values=_month(owned_cards=4000, rented_cards=1000)),
        Preset(label="Over-provisioned: own 8,000", values=_month(owned_cards=8000)),
        Preset(
            label=f"The “${number(BET_CARDS * CARD_MONTH_USD * MONTHS_PER_YEAR / 1e6, 3)}M bet”: own {number(BET_CARDS)} H100",
            values=_month(owned_cards=BET_CARDS),
        ),
        Preset(
            label=(f"8B model on H100 ({number(H100_8B_TOKENS_PER_S)} tokens/s, API {money(API_8B_USD_PER_MILLION)})"),
            values={"tokens_per_s_per_card": H100_8B_TOKENS_PER_S, "api_usd_per_million": API_8B_USD_PER_MILLION},
        ),
        Preset(
            label=f"B200 rate ({number(B200_OVER_H100)} × H100, assumed)",
            values={"tokens_per_s_per_card": B200_OVER_H100 * H100_70B_TOKENS_PER_S},
        ),
        Preset(
            label=f"Used A100 rate ({number(USED_A100_OVER_H100)} × H100, assumed)",
            values={"tokens_per_s_per_card": USED_A100_OVER_H100 * H100_70B_TOKENS_PER_S},
        ),
    ),
    chart=chart,
    notes=notes(),
)
