"""The request-cost calculator: what requests cost at per-token prices for input, cached input and output."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Segment, stacked_chart
from calculators.formatting import money, number, percent

INPUT_TOKENS = 3000
CACHED_FRACTION = 0.6
OUTPUT_TOKENS = 300
# Illustrative list prices per million tokens (no one vendor's): cached input at half, output at 4x input.
INPUT_USD = 0.6
CACHED_USD = 0.3
OUTPUT_USD = 2.4
REQUESTS = 1000
# Anthropic's prompt-cache rates, as multiples of the input price: reads, and writes of a 5-minute entry.
ANTHROPIC_CACHE_READ = 0.1
ANTHROPIC_CACHE_WRITE_5M = 1.25
LONG_CHAT = {"input_tokens": 20_000, "cached_fraction": 0.9, "output_tokens": 500}


def _parts(i: Mapping[str, Any]) -> tuple[float, float, float]:
    return maths.request_cost_parts(
        i["input_tokens"],
        i["cached_fraction"],
        i["output_tokens"],
        i["input_usd_per_million"],
        i["cached_usd_per_million"],
        i["output_usd_per_million"],
    )


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    fresh, cached, output = _parts(i)
    cached_tokens = i["input_tokens"] * i["cached_fraction"]
    return [
        step("Input tokens not in the cache", f"{number(i['input_tokens'])} × (1 − {number(i['cached_fraction'])})",
             i["input_tokens"] - cached_tokens, "tokens"),
        step("Their cost", f"{number(i['input_tokens'] - cached_tokens)} × {money(i['input_usd_per_million'])} ÷ 10⁶",
             fresh, "USD"),
        step("Cached input tokens", f"{number(i['input_tokens'])} × {number(i['cached_fraction'])}", cached_tokens,
             "tokens"),
        step("Their cost", f"{number(cached_tokens)} × {money(i['cached_usd_per_million'])} ÷ 10⁶", cached, "USD"),
        step("Output tokens' cost", f"{number(i['output_tokens'])} × {money(i['output_usd_per_million'])} ÷ 10⁶",
             output, "USD"),
        step("Cost of one request", f"{money(fresh)} + {money(cached)} + {money(output)}", o["usd_per_request"], "USD"),
        step(f"Cost of {number(i['requests'])} requests", f"{money(o['usd_per_request'])} × {number(i['requests'])}",
             o["usd_total"], "USD"),
    ]  # fmt: skip


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table: one request's bill by part."""
    fresh, cached, output = _parts(i)
    total = o["usd_per_request"]
    segments = [
        Segment("Uncached input", fresh, money(fresh), "chart-bar"),
        Segment("Cached input", cached, money(cached), "chart-bar chart-bar-light"),
        Segment("Output", output, money(output), "chart-bar chart-bar-accent"),
    ]
    title = "What one request's bill is made of"
    description = (
        f"One request costs {money(total)}: " + ", ".join(
            f"{s.label.lower()} {s.text} ({percent(s.value / total, 3) if total else '0%'})" for s in segments
        ) + "."
    )  # fmt: skip
    svg = stacked_chart("request-cost", title, description, segments, total if total > 0 else 1.0)
    rows = tuple((s.label, s.text, percent(s.value / total, 3) if total else "0%") for s in segments)
    table = DataTable("Cost of one request", ("Part", "USD", "Share"), rows + (("Total", money(total), "100%"),))
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    prices = (INPUT_USD, CACHED_USD, OUTPUT_USD)
    case = maths.request_cost(INPUT_TOKENS, CACHED_FRACTION, OUTPUT_TOKENS, *prices, REQUESTS)
    uncached = maths.request_cost(INPUT_TOKENS, 0.0, OUTPUT_TOKENS, *prices, REQUESTS)
    output_share = maths.request_cost_parts(INPUT_TOKENS, CACHED_FRACTION, OUTPUT_TOKENS, *prices)[2]
    chat = maths.request_cost(**LONG_CHAT, input_usd_per_million=INPUT_USD, cached_usd_per_million=CACHED_USD,
                              output_usd_per_million=OUTPUT_USD, requests=1)  # fmt: skip
    return (
        f"**Worked case.** {number(INPUT_TOKENS)} input tokens, {percent(CACHED_FRACTION)} of them cached, and "
        f"{number(OUTPUT_TOKENS)} output tokens at {money(INPUT_USD)}, {money(CACHED_USD)} and "
        f"{money(OUTPUT_USD)} per million: {money(case.usd_per_request)} a request, "
        f"{money(case.usd_total)} for {number(REQUESTS)}. Without the cache it would be "
        f"{money(uncached.usd_per_request)}. The prices are illustrative, not one vendor's.",
        "**Why output costs more.** Every output token needs a decode step of its own, which rereads the "
        "weights (shared only with the other sequences in the batch) and the sequence's whole KV cache, "
        "while a prompt's tokens share one compute-bound prefill pass. Here the "
        f"{number(OUTPUT_TOKENS)} output tokens are {percent(output_share / case.usd_per_request, 3)} of the "
        f"bill though they are {percent(OUTPUT_TOKENS / (INPUT_TOKENS + OUTPUT_TOKENS), 2)} of the tokens.",
        "**Why cached input is cheaper, and what it costs the provider.** A cached prefix skips its prefill, "
        "but the KV has to be kept somewhere until the next request: in GPU memory, or in host memory or SSD "
        "tiers that store KV (Mooncake, LMCache, Dynamo's host tiers). The discount pays for compute saved "
        f"and memory used. A long chat where most of the prompt repeats ({number(LONG_CHAT['input_tokens'])} "
        f"tokens, {percent(LONG_CHAT['cached_fraction'])} cached) costs {money(chat.usd_per_request)} a turn. "
        "Vendors price the cache differently: Anthropic bills a cache read at "
        f"{number(ANTHROPIC_CACHE_READ)} × the input price but a write at {number(ANTHROPIC_CACHE_WRITE_5M)} × "
        "for a five-minute entry, a premium this calculator leaves out; a prefix written and never read "
        "again costs more than an uncached one.",
    )


CALCULATOR = Calculator(
    slug="request-cost",
    title="Cost of a request at per-token prices",
    purpose=(
        "What a request costs when input, cached input and output tokens each have their own price per "
        "million, and what a batch of requests costs."
    ),
    parameters=(
        Parameter(
            name="input_tokens",
            type="int",
            default=INPUT_TOKENS,
            min=0,
            max=100_000_000,
            unit="tokens",
            help="Prompt tokens per request, cached or not.",
            label="Input tokens",
        ),
        Parameter(
            name="cached_fraction",
            type="float",
            default=CACHED_FRACTION,
            min=0.0,
            max=1.0,
            unit="fraction",
            help="Share of the input served from the prefix cache.",
            label="Cached share of the input",
        ),
        Parameter(
            name="output_tokens",
            type="int",
            default=OUTPUT_TOKENS,
            min=0,
            max=100_000_000,
            unit="tokens",
            help="Tokens generated per request.",
            label="Output tokens",
        ),
        Parameter(
            name="input_usd_per_million",
            type="float",
            default=INPUT_USD,
            min=0.0,
            max=10_000.0,
            unit="USD per 1M tokens",
            help="Price of uncached input tokens.",
            label="Input price",
        ),
        Parameter(
            name="cached_usd_per_million",
            type="float",
            default=CACHED_USD,
            min=0.0,
            max=10_000.0,
            unit="USD per 1M tokens",
            help="Price of cached input tokens.",
            label="Cached input price",
        ),
        Parameter(
            name="output_usd_per_million",
            type="float",
            default=OUTPUT_USD,
            min=0.0,
            max=10_000.0,
            unit="USD per 1M tokens",
            help="Price of output tokens.",
            label="Output price",
        ),
        Parameter(
            name="requests",
            type="int",
            default=REQUESTS,
            min=0,
            max=10**12,
            unit="requests",
            help="Requests to price together.",
            label="Requests",
        ),
    ),  # fmt: skip
    outputs=(
        Output(name="usd_per_request", unit="USD", label="Cost per request"),
        Output(name="usd_total", unit="USD", label="Cost of all the requests"),
    ),
    compute=maths.request_cost,
    derive=derive,
    headline="usd_total",
    presets=(
        Preset(
            label="Chat turn, 60% cached",
            values={
                "input_tokens": INPUT_TOKENS,
                "cached_fraction": CACHED_FRACTION,
                "output_tokens": OUTPUT_TOKENS,
                "input_usd_per_million": INPUT_USD,
                "cached_usd_per_million": CACHED_USD,
                "output_usd_per_million": OUTPUT_USD,
                "requests": REQUESTS,
            },
        ),
        Preset(label="No cache hits", values={"cached_fraction": 0.0}),
        Preset(label="Long chat, 90% cached", values=LONG_CHAT),
        Preset(label="A million requests", values={"requests": 1_000_000}),
    ),  # fmt: skip
    chart=chart,
    notes=notes(),
)
