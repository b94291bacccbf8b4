"""The window-kv calculator: the KV one request holds when some layers attend to a sliding window."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Plot, line_svg, nice_ticks
from calculators.definitions.assumptions import BF16_BYTES, GPT_OSS_120B, MISTRAL_7B, MISTRAL_8X_CONTEXT
from calculators.definitions.kv_cache import BYTES_PER_VALUE
from calculators.formatting import number, percent, short_bytes

LONG_CONTEXT = 131_072  # gpt-oss-120b's 128K window
SHORT_CONTEXT = 4096
BLOCK_TOKENS = 16  # vLLM's default KV block size


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    per_layer = maths.kv_bytes_per_token(1, i["kv_heads"], i["head_dim"], i["bytes_per_value"])
    full_layers = i["layers"] - i["windowed_layers"]
    kept = min(i["context_tokens"], i["window_tokens"])
    return [
        step(
            "KV bytes per token in one layer",
            f"2 (K and V) × {number(i['kv_heads'])} KV heads × {number(i['head_dim'])} values × "
            f"{number(i['bytes_per_value'])} B",
            per_layer,
            "B",
        ),
        step(
            "Full-attention layers keep every token",
            f"{number(full_layers)} layers × {number(i['context_tokens'])} tokens × {number(per_layer)} B",
            full_layers * i["context_tokens"] * per_layer,
            "B",
        ),
        step(
            "Windowed layers keep only the last tokens of the window",
            f"{number(i['windowed_layers'])} layers × min({number(i['context_tokens'])}, "
            f"{number(i['window_tokens'])}) tokens × {number(per_layer)} B",
            i["windowed_layers"] * kept * per_layer,
            "B",
        ),
        step("KV bytes for one request", "the two parts added", o["request_bytes"], "B"),
        step(
            "The same request if every layer attended to everything",
            f"{number(i['layers'])} layers × {number(i['context_tokens'])} tokens × {number(per_layer)} B",
            o["full_attention_bytes"],
            "B",
        ),
        step(
            "Share of full attention's KV",
            f"{number(o['request_bytes'])} B ÷ {number(o['full_attention_bytes'])} B",
            o["share_of_full"],
            "fraction",
        ),
    ]


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table: one request's KV against its length."""
    fixed = {k: v for k, v in i.items() if k != "context_tokens"}
    x_ticks = [float(t) for t in nice_ticks(max(i["context_tokens"], 2 * i["window_tokens"]), 4)]
    lengths = sorted({max(1, round(x_ticks[-1] * k / 40)) for k in range(41)} | {i["window_tokens"]})
    lengths = [n for n in lengths if n <= x_ticks[-1]]
    results = [maths.windowed_kv(**fixed, context_tokens=n) for n in lengths]
    top = max(r.full_attention_bytes for r in results) * 1.05
    title = "KV of one request against its length"
    description = (
        f"At {number(i['context_tokens'])} tokens the request holds {short_bytes(o['request_bytes'])}, "
        f"{percent(o['share_of_full'])} of the {short_bytes(o['full_attention_bytes'])} it would hold if every "
        f"layer attended to everything. The {number(i['windowed_layers'])} windowed layers stop growing at "
        f"{number(i['window_tokens'])} tokens; the other {number(i['layers'] - i['windowed_layers'])} never do."
    )
    svg = line_svg("window-kv", title, description)
    plot = Plot(
        svg,
        x_ticks,
        nice_ticks(top / 1e9, 5),
        _tokens_tick if x_ticks[-1] >= 10_000 else number,
        lambda t: number(t, 3),
        "Tokens in the request",
        "GB",
        x_span=(0.0, x_ticks[-1] * 1.04),  # room for the last tick's label inside the chart
    )
    svg.text(plot.left + 4, plot.top + 10, "GB of KV", "chart-axis-label")
    svg.polyline(
        [(plot.x(n), plot.y(r.full_attention_bytes / 1e9)) for n, r in zip(lengths, results)],
        "chart-line chart-line-muted",
    )
    svg.polyline([(plot.x(n), plot.y(r.request_bytes / 1e9)) for n, r in zip(lengths, results)], "chart-line")
    svg.text(
        plot.right - 2,
        plot.y(results[-1].full_attention_bytes / 1e9) - 6,
        "every layer full",
        "chart-point-label",
        "end",
    )
    # Near the middle of the windowed line, clear of the marker for the request at the right: above it
    # when the full-attention line leaves room there, else below it.
    middle = min(range(len(lengths)), key=lambda k: abs(lengths[k] - 0.45 * x_ticks[-1]))
    windowed_y = plot.y(results[middle].request_bytes / 1e9)
    room = windowed_y - plot.y(results[middle].full_attention_bytes / 1e9)
    svg.text(
        plot.x(lengths[middle]),
        windowed_y - 8 if room > 30 else windowed_y + 18,
        "with windows",
        "chart-point-label",
        "middle",
    )
    svg.circle(
        plot.x(i["context_tokens"]),
        plot.y(o["request_bytes"] / 1e9),
        5,
        "chart-point chart-point-accent",
        f"Yours: {number(i['context_tokens'])} tokens, {short_bytes(o['request_bytes'])}",
    )
    shown = sorted({i["window_tokens"], i["context_tokens"], *(max(1, round(t)) for t in x_ticks[1:])})
    rows = []
    for n in shown:
        r = maths.windowed_kv(**fixed, context_tokens=n)
        mark = " (yours)" if n == i["context_tokens"] else ""
        rows.append(
            (
                f"{number(n)}{mark}",
                short_bytes(r.request_bytes),
                short_bytes(r.full_attention_bytes),
                percent(r.share_of_full),
            )
        )
    table = DataTable(
        "KV of one request by length",
        ("Tokens", "With windows", "Every layer full", "Share"),
        tuple(rows),
    )
    return Chart(svg.render(), title, description, table)


def _tokens_tick(tokens: float) -> str:
    """Return a token count on the axis in thousands ("50K"), so the last label fits the chart."""
    return f"{number(tokens / 1000)}K" if tokens else "0"


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    mistral = maths.windowed_kv(**MISTRAL_7B, bytes_per_value=BF16_BYTES, context_tokens=MISTRAL_8X_CONTEXT)
    oss_long = maths.windowed_kv(**GPT_OSS_120B, bytes_per_value=BF16_BYTES, context_tokens=LONG_CONTEXT)
    oss_short = maths.windowed_kv(**GPT_OSS_120B, bytes_per_value=BF16_BYTES, context_tokens=SHORT_CONTEXT)
    return (
        "**The model.** A full-attention layer keeps a key and a value for every token of the request; a "
        "sliding-window layer only looks at the most recent tokens, so it needs to keep only a window's worth "
        "(Mistral 7B's paper calls it a rolling buffer). The calculator adds the two kinds of layer. Whether a "
        "server really frees the older entries is an engine question: vLLM's hybrid KV cache manager reserves "
        "window-sized room for windowed layers, and without it those layers are given blocks for every token "
        f"like the others. Paged engines also round up to whole blocks ({number(BLOCK_TOKENS)} tokens in vLLM by "
        "default) and keep the tokens of the step being computed, so real windows hold a little more.",
        f"**Every layer windowed.** Mistral 7B (v0.1) windows all {number(MISTRAL_7B['layers'])} layers at "
        f"{number(MISTRAL_7B['window_tokens'])} tokens: at {number(MISTRAL_8X_CONTEXT)} tokens it holds "
        f"{short_bytes(mistral.request_bytes)} instead of {short_bytes(mistral.full_attention_bytes)}, "
        f"{number(1 / mistral.share_of_full)} times less, the saving its paper reports. Mistral 7B v0.2 "
        "dropped the window and attends to everything.",
        f"**Hybrids halve, they do not cap.** gpt-oss-120b alternates: {number(GPT_OSS_120B['windowed_layers'])} "
        f"of its {number(GPT_OSS_120B['layers'])} layers see a window of {number(GPT_OSS_120B['window_tokens'])} "
        f"tokens, the rest see everything. At {number(LONG_CONTEXT)} tokens a request holds "
        f"{short_bytes(oss_long.request_bytes)}, {percent(oss_long.share_of_full)} of full attention: the global "
        f"layers still grow with every token. At {number(SHORT_CONTEXT)} tokens the share is "
        f"{percent(oss_short.share_of_full)}: windows save most when requests are far longer than the window.",
    )


CALCULATOR = Calculator(
    slug="window-kv",
    title="KV cache with sliding-window layers",
    purpose=(
        "How much KV one request holds when some layers attend only to a sliding window of recent tokens "
        "and the rest to the whole context, against a model where every layer sees everything."
    ),
    parameters=(
        Parameter(
            name="layers",
            type="int",
            default=GPT_OSS_120B["layers"],
            min=1,
            max=1000,
            unit="layers",
            help="Transformer layers in all (gpt-oss-120b: 36; Mistral 7B: 32).",
            label="Layers",
        ),
        Parameter(
            name="windowed_layers",
            type="int",
            default=GPT_OSS_120B["windowed_layers"],
            min=0,
            max=1000,
            unit="layers",
            help="How many of the layers use the sliding window; the others attend to every token "
            "(gpt-oss-120b: every other layer, 18; Mistral 7B: all 32). At most the layers.",
            label="Windowed layers",
        ),
        Parameter(
            name="kv_heads",
            type="int",
            default=GPT_OSS_120B["kv_heads"],
            min=1,
            max=1024,
            unit="heads",
            help="Key/value heads per layer (8 on both models here).",
            label="KV heads",
        ),
        Parameter(
            name="head_dim",
            type="int",
            default=GPT_OSS_120B["head_dim"],
            min=1,
            max=4096,
            unit="values",
            help="Values per head (gpt-oss-120b: 64; Mistral 7B: 128).",
            label="Head dimension",
        ),
        BYTES_PER_VALUE,
        Parameter(
            name="window_tokens",
            type="int",
            default=GPT_OSS_120B["window_tokens"],
            min=1,
            max=10_000_000,
            unit="tokens",
            help="Tokens a windowed layer attends to (gpt-oss-120b: 128; Mistral 7B: 4,096).",
            label="Window",
        ),
        Parameter(
            name="context_tokens",
            type="int",
            default=LONG_CONTEXT,
            min=1,
            max=10_000_000,
            unit="tokens",
            help="Tokens the request holds (prompt plus output).",
            label="Tokens per request",
        ),
    ),
    outputs=(
        Output(name="request_bytes", unit="B", label="KV bytes per request"),
        Output(name="full_attention_bytes", unit="B", label="KV bytes if every layer were full attention"),
        Output(name="share_of_full", unit="fraction", label="Share of full attention's KV"),
    ),
    compute=maths.windowed_kv,
    derive=derive,
    headline="request_bytes",
    presets=(
        Preset(
            label="gpt-oss-120b, BF16, 128K tokens",
            values={**GPT_OSS_120B, "bytes_per_value": BF16_BYTES, "context_tokens": LONG_CONTEXT},
        ),
        Preset(
            label="gpt-oss-120b, BF16, 4K tokens",
            values={**GPT_OSS_120B, "bytes_per_value": BF16_BYTES, "context_tokens": SHORT_CONTEXT},
        ),
        Preset(
            label="Mistral 7B (v0.1), every layer windowed, 32K tokens",
            values={**MISTRAL_7B, "bytes_per_value": BF16_BYTES, "context_tokens": MISTRAL_8X_CONTEXT},
        ),
        Preset(label="No windowed layers (full attention)", values={"windowed_layers": 0}),
    ),
    chart=chart,
    notes=notes(),
)
