"""The replica calculator: the KV budget left after the weights, and requests per replica."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Segment, stacked_chart
from calculators.definitions.assumptions import (
    BF16_BYTES,
    H100_CUDA_GB,
    H100_CUDA_GIB,
    H100_GB,
    H100_MIB,
    H100_VISIBLE_GB,
    LLAMA_2_13B,
    LLAMA_3_8B,
    LLAMA_3_8B_PARAMS_B,
    LLAMA_3_70B,
    LLAMA_3_70B_PARAMS_B,
    NOMINAL_13B,
    NOMINAL_70B,
)
from calculators.formatting import bytes_text, number, plural, short_bytes

# The source's replica: Llama-3-70B in BF16 on four H100s, vLLM's default utilisation, 4,096 tokens each.
GPUS = 4
WEIGHTS_GB = float(NOMINAL_70B * BF16_BYTES)
UTILIZATION = 0.9  # vLLM's default gpu_memory_utilization
CONTEXT_TOKENS = 4096
KV_70B = maths.kv_bytes_per_token(**LLAMA_3_70B)


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    total_gb = i["gpus"] * i["gpu_memory_gb"]
    usable_gb = i["memory_utilization"] * total_gb
    ratio = o["kv_budget_bytes"] / o["kv_bytes_per_request"]
    return [
        step(
            "Total GPU memory",
            f"{number(i['gpus'])} {plural(i['gpus'], 'GPU')} × {number(i['gpu_memory_gb'])} GB",
            total_gb,
            "GB",
        ),
        step(
            "Memory the engine may use",
            f"{number(i['memory_utilization'])} × {number(total_gb)} GB",
            usable_gb,
            "GB",
        ),
        step(
            "KV budget: usable memory minus the weights",
            f"{number(usable_gb)} GB − {number(i['weights_gb'])} GB",
            o["kv_budget_bytes"],
            "B",
        ),
        step(
            "KV bytes for one request at full context",
            f"{number(i['kv_bytes_per_token'])} B × {number(i['context_tokens'])} tokens",
            o["kv_bytes_per_request"],
            "B",
        ),
        step(
            "Whole requests that fit",
            f"⌊{number(o['kv_budget_bytes'])} B ÷ {number(o['kv_bytes_per_request'])} B⌋ = ⌊{number(ratio, 4)}⌋",
            o["requests_per_replica"],
            "requests",
        ),
    ]


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
    total = round(i["gpus"] * i["gpu_memory_gb"] * maths.BYTES_PER_GB)
    weights = round(i["weights_gb"] * maths.BYTES_PER_GB)
    budget = o["kv_budget_bytes"]
    in_use = o["requests_per_replica"] * o["kv_bytes_per_request"]
    reserved = max(0, total - weights - budget)
    title = "Where the replica's GPU memory goes"
    description = (
        f"Of {bytes_text(total)}, the weights take {bytes_text(weights)} and the KV budget is "
        f"{bytes_text(budget)}: {number(o['requests_per_replica'])} requests at full context."
    )
    segments = [
        Segment("Weights", weights, short_bytes(weights), "chart-bar"),
        Segment(
            f"KV for {number(o['requests_per_replica'])} requests",
            in_use,
            short_bytes(in_use),
            "chart-bar chart-bar-accent",
        ),
        Segment("KV unused (< 1 request)", budget - in_use, short_bytes(budget - in_use), "chart-bar chart-bar-light"),
        Segment("Held back (1 − utilisation)", reserved, short_bytes(reserved), "chart-bar chart-bar-muted"),
    ]
    svg = stacked_chart("replica", title, description, segments, total)
    table = DataTable(
        "Replica memory",
        ("Part", "Bytes"),
        tuple((s.label, bytes_text(s.value)) for s in segments) + (("Total", bytes_text(total)),),
    )
    return Chart(svg, title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    four = maths.replica(GPUS, H100_CUDA_GB, WEIGHTS_GB, UTILIZATION, KV_70B, CONTEXT_TOKENS)
    two = maths.replica(2, H100_CUDA_GB, WEIGHTS_GB, UTILIZATION, KV_70B, CONTEXT_TOKENS)
    boxed = maths.replica(GPUS, H100_GB, WEIGHTS_GB, UTILIZATION, KV_70B, CONTEXT_TOKENS)
    smi = maths.replica(GPUS, H100_VISIBLE_GB, WEIGHTS_GB, UTILIZATION, KV_70B, CONTEXT_TOKENS)
    source_budget_gb = (GPUS * H100_CUDA_GB - WEIGHTS_GB) * UTILIZATION  # the source's convention
    source_requests = maths.whole_floor(source_budget_gb * maths.BYTES_PER_GB / four.kv_bytes_per_request)
    heads = LLAMA_3_70B["kv_heads"]
    gib = H100_MIB / 2**10
    return (
        f"**An “{H100_GB}GB” H100 is not {H100_GB} decimal GB.** The total CUDA reports "
        f"(`torch.cuda.mem_get_info`), which vLLM multiplies by `gpu_memory_utilization`, is "
        f"{number(H100_CUDA_GIB, 4)} GiB, {number(H100_CUDA_GB, 4)} GB (10⁹ bytes). The label is close to GiB, and "
        f"this calculator, like every `_gb` input here, counts decimal GB: entering {H100_GB} throws away "
        f"{number(H100_CUDA_GB - H100_GB, 3)} GB per GPU. For a 70B replica on {GPUS} GPUs that is "
        f"{number(four.kv_budget_bytes / 1e9, 4)} GB of KV budget and **{four.requests_per_replica} requests** at "
        f"{number(CONTEXT_TOKENS)} tokens, not {number(boxed.kv_budget_bytes / 1e9, 4)} GB and "
        f"{boxed.requests_per_replica}. The defaults keep {H100_GB} GB (the public contract); the H100 presets "
        "use the total the engine counts.",
        f"**Convention.** This follows vLLM: `gpu_memory_utilization` (default {UTILIZATION:.2f}) is a "
        "share of *total* GPU memory, and the weights and the activations measured at start-up both come "
        "out of it; the rest is held back. Activations are ignored here, so a real engine fits slightly "
        "fewer requests. The course notes' convention, (memory − weights) × utilisation, gives "
        f"{number(source_budget_gb, 4)} GB and {number(source_requests)} requests for the same replica.",
        f"**`nvidia-smi` shows a little more.** It reports {number(H100_MIB)} MiB, {number(gib, 4)} GiB or "
        f"{number(H100_VISIBLE_GB, 4)} GB; multiplying that instead gives {smi.requests_per_replica} requests. The "
        "activation peak and CUDA graphs also come out of the engine's budget, so "
        f"{four.requests_per_replica} is itself a ceiling: plan on a few fewer, and read the engine's own "
        "start-up log (vLLM prints its KV-cache size in tokens and the concurrency that allows).",
        f"**Why a 70B replica has four GPUs.** {number(WEIGHTS_GB)} GB of BF16 weights fit on two H100s, "
        f"but at {number(UTILIZATION)} utilisation that leaves {number(two.kv_budget_bytes / 1e9, 3)} GB for "
        f"the KV cache: {number(two.requests_per_replica)} requests at {number(CONTEXT_TOKENS)} tokens. Four "
        f"GPUs leave {number(four.kv_budget_bytes / 1e9, 4)} GB: {number(four.requests_per_replica)} requests. "
        f"(Its {heads} KV heads also split evenly, {heads // GPUS} per GPU, at tensor parallelism {GPUS}.)",
        f"**Weights are decimal too.** {NOMINAL_70B}B parameters × {BF16_BYTES} B = {number(WEIGHTS_GB)} GB "
        f"nominal; Llama-3-70B has about {number(LLAMA_3_70B_PARAMS_B)}B parameters, so "
        f"{number(LLAMA_3_70B_PARAMS_B * BF16_BYTES)} GB. The Llama-2-13B preset uses {NOMINAL_13B}B × "
        f"{BF16_BYTES} B = {number(NOMINAL_13B * BF16_BYTES)} GB, nominal too.",
        "**Full context.** Requests are counted at their maximum length (prompt plus "
        "output). A paged engine (vLLM) admits more when most requests are shorter.",
    )


CALCULATOR = Calculator(
    slug="replica",
    title="KV budget and requests per replica",
    purpose=(
        "How much GPU memory a replica has left for the KV cache after its weights, "
        "and how many full-context requests fit in it."
    ),
    parameters=(
        Parameter(
            name="gpus",
            type="int",
            default=GPUS,
            min=1,
            max=1024,
            unit="GPUs",
            help="GPUs in one replica (tensor parallel).",
            label="GPUs per replica",
        ),
        Parameter(
            name="gpu_memory_gb",
            type="float",
            default=float(H100_GB),
            min=1.0,
            max=10_000.0,
            unit="GB",
            help=(
                f"Memory per GPU in decimal GB, as the engine counts it. CUDA reports an “{H100_GB}GB” H100 as "
                f"{number(H100_CUDA_GIB, 4)} GiB = {number(H100_CUDA_GB, 4)} GB ({number(H100_MIB)} MiB in nvidia-smi); "
                f"{H100_GB} understates it."
            ),
            label="Memory per GPU",
        ),
        Parameter(
            name="weights_gb",
            type="float",
            default=WEIGHTS_GB,
            min=0.0,
            max=1_000_000.0,
            unit="GB",
            help="Model weights in decimal GB: parameters × bytes (70B in BF16: 140).",
            label="Weights",
        ),
        Parameter(
            name="memory_utilization",
            type="float",
            default=UTILIZATION,
            min=0.01,
            max=1.0,
            unit="fraction",
            help="Share of total GPU memory the engine may use, as vLLM's gpu_memory_utilization (default 0.9).",
            label="Memory utilisation",
        ),
        Parameter(
            name="kv_bytes_per_token",
            type="int",
            default=KV_70B,
            min=1,
            max=100_000_000,
            unit="B",
            help="KV bytes per token for the whole model (70B: 327,680; see the KV-cache calculator).",
            label="KV bytes per token",
        ),
        Parameter(
            name="context_tokens",
            type="int",
            default=CONTEXT_TOKENS,
            min=1,
            max=10_000_000,
            unit="tokens",
            help="Tokens each request may hold: prompt plus maximum output.",
            label="Context per request",
        ),
    ),
    outputs=(
        Output(name="kv_budget_bytes", unit="B", label="KV budget"),
        Output(name="kv_bytes_per_request", unit="B", label="KV bytes per request"),
        Output(name="requests_per_replica", unit="requests", label="Requests per replica"),
    ),
    compute=maths.replica,
    derive=derive,
    headline="requests_per_replica",
    presets=(
        Preset(
            label=(
                f"Llama-3-70B on {GPUS} × H100 ({number(H100_CUDA_GIB, 4)} GiB = {number(H100_CUDA_GB, 4)} GB), "
                f"{number(CONTEXT_TOKENS)} tokens"
            ),
            values={
                "gpus": GPUS,
                "gpu_memory_gb": H100_CUDA_GB,
                "weights_gb": WEIGHTS_GB,
                "memory_utilization": UTILIZATION,
                "kv_bytes_per_token": KV_70B,
                "context_tokens": CONTEXT_TOKENS,
            },
        ),
        Preset(
            label=f"The same, sizing each H100 at the box's {H100_GB} GB (the slip)",
            values={"gpus": GPUS, "gpu_memory_gb": H100_GB, "weights_gb": WEIGHTS_GB},
        ),
        Preset(
            label="Llama-3-70B on 2 × H100",
            values={
                "gpus": 2,
                "gpu_memory_gb": H100_CUDA_GB,
                "weights_gb": WEIGHTS_GB,
                "memory_utilization": UTILIZATION,
                "kv_bytes_per_token": KV_70B,
            },
        ),
        Preset(
            label="Llama-3-8B on 1 × H100",
            values={
                "gpus": 1,
                "gpu_memory_gb": H100_CUDA_GB,
                "weights_gb": LLAMA_3_8B_PARAMS_B * BF16_BYTES,
                "memory_utilization": UTILIZATION,
                "kv_bytes_per_token": maths.kv_bytes_per_token(**LLAMA_3_8B),
            },
        ),
        Preset(
            label="Llama-2-13B on 1 × H100",
            values={
                "gpus": 1,
                "gpu_memory_gb": H100_CUDA_GB,
                "weights_gb": NOMINAL_13B * BF16_BYTES,
                "memory_utilization": UTILIZATION,
                "kv_bytes_per_token": maths.kv_bytes_per_token(**LLAMA_2_13B),
            },
        ),
        Preset(label="Context of 8,192 tokens", values={"context_tokens": 8192}),
        Preset(label="Context of 2,048 tokens", values={"context_tokens": 2048}),
    ),
    chart=chart,
    notes=notes(),
)
