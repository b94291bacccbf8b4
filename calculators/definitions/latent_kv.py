"""The latent-kv calculator: KV bytes per token and per request under multi-head latent attention (MLA)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Segment, stacked_chart
from calculators.definitions.assumptions import (
    BF16_BYTES,
    DEEPSEEK_V2,
    DEEPSEEK_V3,
    DEEPSEEK_V3_ATTENTION_HEADS,
    LLAMA_3_70B,
)
from calculators.definitions.kv_cache import BYTES_PER_VALUE
from calculators.formatting import bytes_text, number, short_bytes

CONTEXT_TOKENS = 4096  # the replica calculator's request length
LONG_CONTEXT = 131_072  # DeepSeek-V3's 128K window
FP8_BYTES = 1


def _values_per_layer(i: Mapping[str, Any]) -> int:
    return i["latent_dim"] + i["rope_dim"]


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    values = _values_per_layer(i)
    return [
        step(
            "Values cached per layer: the latent plus the shared RoPE key (no separate K and V)",
            f"{number(i['latent_dim'])} + {number(i['rope_dim'])}",
            values,
            "values",
        ),
        step(
            "KV bytes per token",
            f"{number(i['layers'])} layers × {number(values)} values × {number(i['bytes_per_value'])} B",
            o["bytes_per_token"],
            "B",
        ),
        step("The same in KiB", f"{number(o['bytes_per_token'])} B ÷ 1,024", o["bytes_per_token"] / 1024, "KiB"),
        step(
            "KV bytes for one request",
            f"{number(i['context_tokens'])} tokens × {number(o['bytes_per_token'])} B",
            o["request_bytes"],
            "B",
        ),
        step(
            "Grouped-query attention that caches as much: KV heads of the same head size",
            f"{number(values)} ÷ (2 × {number(i['head_dim'])})",
            o["equivalent_kv_heads"],
            "heads",
        ),
        step(
            "KV bytes per token on each GPU under tensor parallelism: every head reads the whole "
            "latent, so each GPU keeps all of it",
            f"{number(o['bytes_per_token'])} B, whatever the tensor-parallel degree",
            o["bytes_per_token"],
            "B",
        ),
    ]


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table: one request's KV split into latent and RoPE key."""
    latent = i["context_tokens"] * i["layers"] * i["latent_dim"] * i["bytes_per_value"]
    rope = o["request_bytes"] - latent
    title = "What one request's latent KV is made of"
    description = (
        f"A request of {number(i['context_tokens'])} tokens holds {bytes_text(o['request_bytes'])}: "
        f"{short_bytes(latent)} of latents and {short_bytes(rope)} of RoPE keys."
    )
    segments = [
        Segment(
            f"Latents ({number(i['latent_dim'])} a layer)", latent, short_bytes(latent), "chart-bar chart-bar-accent"
        ),
        Segment(f"RoPE keys ({number(i['rope_dim'])} a layer)", rope, short_bytes(rope), "chart-bar chart-bar-muted"),
    ]
    svg = stacked_chart("latent-kv", title, description, segments, o["request_bytes"])
    table = DataTable(
        "Latent KV of one request",
        ("Part", "Bytes"),
        (
            ("Latents", bytes_text(latent)),
            ("RoPE keys", bytes_text(rope)),
            ("One request", bytes_text(o["request_bytes"])),
            ("One token", bytes_text(o["bytes_per_token"])),
        ),
    )
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    v3 = maths.latent_kv(**DEEPSEEK_V3, bytes_per_value=BF16_BYTES, context_tokens=LONG_CONTEXT)
    v2 = maths.latent_kv(**DEEPSEEK_V2, bytes_per_value=BF16_BYTES, context_tokens=LONG_CONTEXT)
    fp8 = maths.mla_kv_bytes_per_token(
        DEEPSEEK_V3["layers"], DEEPSEEK_V3["latent_dim"], DEEPSEEK_V3["rope_dim"], FP8_BYTES
    )
    llama = maths.kv_cache(**LLAMA_3_70B, tokens=LONG_CONTEXT, cache_gb=1)
    heads, head_dim = DEEPSEEK_V3_ATTENTION_HEADS, DEEPSEEK_V3["head_dim"]
    mha = maths.kv_bytes_per_token(DEEPSEEK_V3["layers"], heads, head_dim, BF16_BYTES)
    values = DEEPSEEK_V3["latent_dim"] + DEEPSEEK_V3["rope_dim"]
    return (
        "**What is cached.** Multi-head latent attention (DeepSeek-V2, then DeepSeek-V3) stores, per layer "
        f"and token, one compressed latent of {number(DEEPSEEK_V3['latent_dim'])} values, from which every "
        "head's key and value are projected back up, plus one RoPE key of "
        f"{number(DEEPSEEK_V3['rope_dim'])} values shared by all heads: {number(values)} values, with no "
        f"separate K and V. DeepSeek-V3's {number(DEEPSEEK_V3['layers'])} layers in BF16 come to "
        f"{number(v3.bytes_per_token)} B per token ({number(v3.bytes_per_token / 1024, 4)} KiB); "
        f"DeepSeek-V2's {number(DEEPSEEK_V2['layers'])} layers to {number(v2.bytes_per_token)} B. Llama-3-70B, "
        f"with grouped-query attention, stores {number(llama.bytes_per_token)} B, "
        f"{number(llama.bytes_per_token / v3.bytes_per_token, 3)} times as much for a model about a tenth "
        "of DeepSeek-V3's size.",
        "**Against full multi-head attention.** Had each of DeepSeek-V3's "
        f"{number(heads)} heads cached its own key and value of {number(head_dim)} values (the papers' "
        f"multi-head baseline), a token would take {number(mha)} B, {number(mha / v3.bytes_per_token, 3)} "
        "times the latent. The DeepSeek-V2 paper sets the latent to four head sizes and the RoPE key to half "
        f"of one, and puts MLA's cache at that of grouped-query attention with {number(v3.equivalent_kv_heads)} "
        "groups, as this calculator's equivalent KV heads reproduces.",
        "**Tensor parallelism does not split it.** Tensor parallelism shares heads between GPUs, but the "
        "latent belongs to every head, so each GPU of a tensor-parallel group keeps a full copy, as the "
        "kv-cache calculator shows for a model with a single KV head. SGLang's documentation describes "
        "the waste (the KV cache duplicated on every GPU, a smaller batch) and its answer, data-parallel "
        "attention: each GPU keeps the latents of its own requests only.",
        f"**Precision.** In FP8 a DeepSeek-V3 token takes {number(fp8)} B. A {number(LONG_CONTEXT)}-token "
        f"request holds {short_bytes(v3.request_bytes)} in BF16, against {short_bytes(llama.copy_bytes)} on "
        "Llama-3.1-70B (Llama-3-70B's shape, with a 128K window). Whether a lower-precision latent keeps "
        "quality is measured, not assumed.",
    )


CALCULATOR = Calculator(
    slug="latent-kv",
    title="KV cache under multi-head latent attention",
    purpose=(
        "How many bytes of KV one token and one request cost when each layer caches a shared latent "
        "and RoPE key (DeepSeek's multi-head latent attention) instead of keys and values per head."
    ),
    parameters=(
        Parameter(
            name="layers",
            type="int",
            default=DEEPSEEK_V3["layers"],
            min=1,
            max=1000,
            unit="layers",
            help="Transformer layers (DeepSeek-V3: 61; DeepSeek-V2: 60).",
            label="Layers",
        ),
        Parameter(
            name="latent_dim",
            type="int",
            default=DEEPSEEK_V3["latent_dim"],
            min=1,
            max=65_536,
            unit="values",
            help="Values in the compressed latent each layer caches per token (the paper's d_c; "
            "kv_lora_rank in the model config: 512 on DeepSeek-V2 and V3).",
            label="Latent size",
        ),
        Parameter(
            name="rope_dim",
            type="int",
            default=DEEPSEEK_V3["rope_dim"],
            min=0,
            max=65_536,
            unit="values",
            help="Values in the decoupled RoPE key, shared by all heads and cached beside the latent "
            "(d_h^R; qk_rope_head_dim in the config: 64).",
            label="RoPE key size",
        ),
        BYTES_PER_VALUE,
        Parameter(
            name="context_tokens",
            type="int",
            default=CONTEXT_TOKENS,
            min=1,
            max=10_000_000,
            unit="tokens",
            help="Tokens one request holds (prompt plus output).",
            label="Tokens per request",
        ),
        Parameter(
            name="head_dim",
            type="int",
            default=DEEPSEEK_V3["head_dim"],
            min=1,
            max=4096,
            unit="values",
            help="Values per attention head (d_h: 128), to express the cache as grouped-query KV heads.",
            label="Head dimension",
        ),
    ),
    outputs=(
        Output(name="bytes_per_token", unit="B", label="KV bytes per token"),
        Output(name="request_bytes", unit="B", label="KV bytes per request"),
        Output(name="equivalent_kv_heads", unit="heads", label="Grouped-query KV heads that cache as much"),
    ),
    compute=maths.latent_kv,
    derive=derive,
    headline="bytes_per_token",
    presets=(
        Preset(label="DeepSeek-V3, BF16", values={**DEEPSEEK_V3, "bytes_per_value": BF16_BYTES}),
        Preset(label="DeepSeek-V3, FP8 cache", values={**DEEPSEEK_V3, "bytes_per_value": FP8_BYTES}),
        Preset(
            label="DeepSeek-V3, BF16, a 128K-token request",
            values={**DEEPSEEK_V3, "bytes_per_value": BF16_BYTES, "context_tokens": LONG_CONTEXT},
        ),
        Preset(label="DeepSeek-V2, BF16", values={**DEEPSEEK_V2, "bytes_per_value": BF16_BYTES}),
    ),
    chart=chart,
    notes=notes(),
)
