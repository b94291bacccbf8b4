"""The kv-cache calculator: KV bytes per token, one prefix copy, and copies per cache."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Segment, stacked_chart
from calculators.definitions.assumptions import LLAMA_2_13B, LLAMA_3_8B, LLAMA_3_70B
from calculators.formatting import bytes_text, number, power_of_ten, short_bytes

# The source's worked case: a 1,200-token preamble on Llama-3-70B, an 8 GB prefix cache.
PREFIX_TOKENS = 1200
CACHE_GB = 8.0
BLOCK_TOKENS = 16  # vLLM's default KV block size
TP = 4  # the tensor-parallel degree of a 70B replica on H100s
WIDE_TP = 16  # more GPUs than a 70B model has KV heads: heads are replicated
VLLM_13B_SEQUENCE_GB = 1.7  # vLLM's “up to 1.7GB” for one Llama-2-13B sequence
VLLM_13B_TOKENS = 2048


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    cache_bytes = round(i["cache_gb"] * maths.BYTES_PER_GB)
    ratio = cache_bytes / o["copy_bytes"]
    return [
        step(
            "KV bytes per token",
            f"2 (K and V) × {number(i['layers'])} layers × {number(i['kv_heads'])} KV heads"
            f" × {number(i['head_dim'])} values per head × {number(i['bytes_per_value'])} B",
            o["bytes_per_token"],
            "B",
        ),
        step("The same in KiB", f"{number(o['bytes_per_token'])} B ÷ 1,024", o["bytes_per_token"] / 1024, "KiB"),
        step(
            "Bytes for one copy of the prefix",
            f"{number(i['tokens'])} tokens × {number(o['bytes_per_token'])} B",
            o["copy_bytes"],
            "B",
        ),
        step(
            "Copy size in decimal megabytes",
            f"{number(o['copy_bytes'])} B ÷ {power_of_ten(6)}",
            o["copy_bytes"] / 1e6,
            "MB",
        ),
        step(
            "Copy size in binary mebibytes",
            f"{number(o['copy_bytes'])} B ÷ 2²⁰ (1,048,576)",
            o["copy_bytes"] / 2**20,
            "MiB",
        ),
        step("Cache size in bytes", f"{number(i['cache_gb'])} GB × {power_of_ten(9)}", cache_bytes, "B"),
        step(
            "Whole copies that fit in the cache",
            f"⌊{number(cache_bytes)} B ÷ {number(o['copy_bytes'])} B⌋ = ⌊{number(ratio, 4)}⌋",
            o["copies_per_cache"],
            "copies",
        ),
        step(
            "KV heads on one GPU: max(heads ÷ TP, 1)",
            f"max({number(i['kv_heads'])} ÷ {number(i['tp'])}, 1)"
            + (" (each head replicated on several GPUs)" if i["tp"] > i["kv_heads"] else ""),
            maths.kv_heads_per_gpu(i["kv_heads"], i["tp"]),
            "heads",
        ),
        step(
            "KV bytes per token on one GPU",
            f"2 × {number(i['layers'])} × {number(maths.kv_heads_per_gpu(i['kv_heads'], i['tp']))} × "
            f"{number(i['head_dim'])} × {number(i['bytes_per_value'])} B",
            o["bytes_per_token_per_gpu"],
            "B",
        ),
    ]


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
    cache = round(i["cache_gb"] * maths.BYTES_PER_GB)
    used = min(cache, o["copies_per_cache"] * o["copy_bytes"])
    title = "How the prefix cache fills with copies"
    description = (
        f"The {number(i['cache_gb'])} GB cache holds {number(o['copies_per_cache'])} whole copies of "
        f"{bytes_text(o['copy_bytes'])}; {bytes_text(cache - used)} is left over."
    )
    segments = [
        Segment(f"{number(o['copies_per_cache'])} copies", used, short_bytes(used), "chart-bar chart-bar-accent"),
        Segment("Left over", cache - used, short_bytes(cache - used), "chart-bar chart-bar-muted"),
    ]
    svg = stacked_chart("kv-cache", title, description, segments, cache)
    table = DataTable(
        "Prefix cache use",
        ("Part", "Bytes"),
        (
            ("One copy", bytes_text(o["copy_bytes"])),
            (f"{number(o['copies_per_cache'])} whole copies", bytes_text(used)),
            ("Left over", bytes_text(cache - used)),
            ("Cache", bytes_text(cache)),
        ),
    )
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.kv_cache(**LLAMA_3_70B, tokens=PREFIX_TOKENS, cache_gb=CACHE_GB)
    per_token, copy = case.bytes_per_token, case.copy_bytes
    kib = per_token / 2**10
    source_copy = PREFIX_TOKENS * kib * 1000  # the source's slip: KiB read as kB
    cache_bytes = CACHE_GB * maths.BYTES_PER_GB
    binary_ratio = CACHE_GB * 2**30 / copy
    blocks = -(-PREFIX_TOKENS // BLOCK_TOKENS)
    exactly = "exactly " if PREFIX_TOKENS % BLOCK_TOKENS == 0 else ""
    no_gqa = maths.kv_cache(**LLAMA_2_13B, tokens=VLLM_13B_TOKENS, cache_gb=CACHE_GB)
    at_tp = maths.kv_cache(**LLAMA_3_70B, tokens=PREFIX_TOKENS, cache_gb=CACHE_GB, tp=TP)
    wide = maths.kv_cache(**LLAMA_3_70B, tokens=PREFIX_TOKENS, cache_gb=CACHE_GB, tp=WIDE_TP)
    heads = LLAMA_3_70B["kv_heads"]
    return (
        "**Units.** Sizes are in bytes. MB and GB are decimal (10⁶ and 10⁹ bytes); "
        "KiB, MiB and GiB are binary (2¹⁰, 2²⁰, 2³⁰). A 70B-class model stores "
        f"{number(per_token)} B of KV per token: exactly {number(kib)} KiB, or {number(per_token / 1e3, 4)} kB.",
        f"**Where the course notes' figure slips.** A {number(PREFIX_TOKENS)}-token preamble on a 70B model "
        f"takes {number(PREFIX_TOKENS)} × {number(per_token)} B = {number(copy)} B: "
        f"**{number(copy / 1e6, 4)} MB, or {number(copy / 2**20, 4)} MiB**. The "
        f"course notes' {number(source_copy / 1e6, 4)} MB multiplies {number(PREFIX_TOKENS)} by "
        f"“{number(kib)} kB”, reading {number(kib)} KiB as {number(kib)} kB. "
        f"The {number(CACHE_GB)} GB cache still holds {number(case.copies_per_cache)} whole copies "
        f"({number(cache_bytes / copy, 3)}; {number(cache_bytes / source_copy, 3)} in the course notes' "
        f"units). In binary units throughout, {number(CACHE_GB)} GiB ÷ {number(copy / 2**20, 4)} MiB = "
        f"{number(binary_ratio, 3)}, so {number(maths.whole_floor(binary_ratio))}.",
        "**What the formula leaves out.** A paged engine rounds each copy up to whole "
        f"blocks (up to block size − 1 extra tokens; {number(PREFIX_TOKENS)} tokens is {exactly}{number(blocks)} "
        f"blocks of {number(BLOCK_TOKENS)}). Under tensor parallelism each GPU keeps only its share of the "
        f"KV heads: {number(at_tp.bytes_per_token_per_gpu / 2**10)} KiB per token per GPU for a 70B model at "
        f"TP = {TP}. Past the number of KV heads the share stops shrinking: at TP = {WIDE_TP} each of the "
        f"{heads} heads is held by {WIDE_TP // heads} GPUs, so one GPU still stores "
        f"{number(wide.bytes_per_token_per_gpu / 2**10)} KiB per token, max(heads ÷ TP, 1) heads.",
        f"**Model shapes.** Llama-2-70B and Llama-3-70B: {_shape(LLAMA_3_70B)} "
        f"(grouped-query attention), head size {LLAMA_3_70B['head_dim']}. Llama-3-8B: {_shape(LLAMA_3_8B)}. "
        f"Llama-2-13B has no GQA: {LLAMA_2_13B['layers']} layers × {LLAMA_2_13B['kv_heads']} KV heads, "
        f"so {number(no_gqa.bytes_per_token)} B per token, "
        f"and {number(VLLM_13B_TOKENS)} tokens take {number(no_gqa.copy_bytes / 1e9, 3)} GB, matching "
        f"vLLM's “up to {number(VLLM_13B_SEQUENCE_GB)}GB” for one sequence.",
    )


def _shape(model: Mapping[str, int]) -> str:
    return f"{model['layers']} layers, {model['kv_heads']} KV heads"


# Bytes a cached value takes: the KV calculators (this one, latent-kv and window-kv) ask it alike.
BYTES_PER_VALUE = Parameter(
    name="bytes_per_value",
    type="float",
    default=2.0,
    min=0.125,
    max=8.0,
    unit="B",
    help="2 for BF16/FP16, 1 for an FP8 KV cache, 0.5 for a 4-bit one.",
    label="Bytes per value",
)

CALCULATOR = Calculator(
    slug="kv-cache",
    title="KV cache per token and prefix copies",
    purpose=(
        "How many bytes of KV cache one token costs, how big a cached prompt prefix "
        "is, and how many copies of it a cache holds."
    ),
    parameters=(
        Parameter(
            name="layers",
            type="int",
            default=80,
            min=1,
            max=1000,
            unit="layers",
            help="Transformer layers (Llama-3-70B: 80).",
            label="Layers",
        ),
        Parameter(
            name="kv_heads",
            type="int",
            default=8,
            min=1,
            max=1024,
            unit="heads",
            help="Key/value heads per layer: 8 with grouped-query attention on Llama-3; "
            "equal to the attention heads without it (Llama-2-13B: 40). Under "
            "tensor parallelism one GPU holds max(kv_heads ÷ TP, 1): heads are replicated "
            "when TP exceeds them.",
            label="KV heads",
        ),
        Parameter(
            name="head_dim",
            type="int",
            default=128,
            min=1,
            max=4096,
            unit="values",
            help="Values per head: hidden size ÷ attention heads (128 on every Llama here).",
            label="Head dimension",
        ),
        BYTES_PER_VALUE,
        Parameter(
            name="tokens",
            type="int",
            default=PREFIX_TOKENS,
            min=1,
            max=10_000_000,
            unit="tokens",
            help="Tokens in the cached prefix (the shared preamble).",
            label="Prefix tokens",
        ),
        Parameter(
            name="cache_gb",
            type="float",
            default=CACHE_GB,
            min=0.001,
            max=1_000_000.0,
            unit="GB",
            help="Prefix-cache size in decimal GB (10⁹ bytes).",
            label="Cache size",
        ),
        Parameter(
            name="tp",
            type="int",
            default=1,
            min=1,
            max=1024,
            unit="GPUs",
            help="Tensor-parallel degree: GPUs that split the KV heads. It must divide the KV heads "
            "or be a multiple of them.",
            label="Tensor-parallel GPUs",
        ),
    ),
    outputs=(
        Output(name="bytes_per_token", unit="B", label="KV bytes per token"),
        Output(name="copy_bytes", unit="B", label="Bytes per prefix copy"),
        Output(name="copies_per_cache", unit="copies", label="Whole copies per cache"),
        Output(name="bytes_per_token_per_gpu", unit="B", label="KV bytes per token on one GPU"),
    ),
    compute=maths.kv_cache,
    derive=derive,
    headline="copies_per_cache",
    presets=(
        Preset(label="Llama-3-70B, BF16 (also Llama-2-70B)", values={**LLAMA_3_70B, "tp": 1}),
        Preset(label="Llama-3-70B, FP8 KV cache", values={**LLAMA_3_70B, "bytes_per_value": 1, "tp": 1}),
        Preset(label=f"Llama-3-70B, BF16, split over TP {TP}", values={**LLAMA_3_70B, "tp": TP}),
        Preset(label=f"Llama-3-70B, BF16, TP {WIDE_TP} (heads replicated)", values={**LLAMA_3_70B, "tp": WIDE_TP}),
        Preset(label="Llama-3-70B, 4-bit KV cache", values={**LLAMA_3_70B, "bytes_per_value": 0.5, "tp": 1}),
        Preset(label="Llama-3-8B, BF16", values={**LLAMA_3_8B, "tp": 1}),
        Preset(label="Llama-2-13B, BF16 (no GQA)", values={**LLAMA_2_13B, "tp": 1}),
        Preset(
            label=f"Check: Llama-2-13B, {number(VLLM_13B_TOKENS)} tokens (vLLM's “up to {number(VLLM_13B_SEQUENCE_GB)} GB”)",
            values={**LLAMA_2_13B, "tokens": VLLM_13B_TOKENS, "tp": 1},
        ),
    ),
    chart=chart,
    notes=notes(),
)
