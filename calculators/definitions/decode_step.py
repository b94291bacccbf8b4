"""The decode-step calculator: one decode step on the roofline, from weight and KV reads against compute."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import LINE, Chart, DataTable, Plot, line_svg, nice_ticks
from calculators.definitions.assumptions import (
    BF16_BYTES,
    H100_BF16_TFLOPS,
    H100_HBM_TB_S,
    LLAMA_3_8B,
    LLAMA_3_8B_PARAMS_B,
    LLAMA_3_70B,
    NOMINAL_70B,
)
from calculators.formatting import number, plural

# The default case: Llama-3-70B in BF16 on a TP-4 replica of H100s, 64 sequences at 2,048 tokens.
KV_70B = maths.kv_bytes_per_token(**LLAMA_3_70B)
KV_8B = maths.kv_bytes_per_token(**LLAMA_3_8B)
BATCH = 64
MEAN_CONTEXT = 2048
TP = 4
CLAIMED_COMPUTE_BOUND = 128  # the batch an older lesson called compute-bound
SPEC_DRAFT_TOKENS = 4  # a speculative round verifies draft + 1 tokens per sequence
SHORT_CONTEXT = 256
TABLE_BATCHES = (1, 8, 32, 64, 128, 256, 512, 1024)


# Shared with the prefill calculator: the model's size and one GPU's compute rate.
MODEL_SIZE = Parameter(
    name="params_b",
    type="float",
    default=float(NOMINAL_70B),
    min=0.001,
    max=100_000.0,
    unit="billion parameters",
    help="Parameters each token passes through, in billions (for a mixture of experts, the active ones).",
    label="Model size",
)
COMPUTE_PER_GPU = Parameter(
    name="tflops",
    type="float",
    default=H100_BF16_TFLOPS,
    min=0.01,
    max=100_000.0,
    unit="TFLOPS",
    help="Dense tensor throughput of one GPU at the weights' precision (H100 SXM BF16: 989; FP8: about twice).",
    label="Compute per GPU",
)


def _h100(**values: float) -> dict[str, float]:
    return {"hbm_tb_s": H100_HBM_TB_S, "tflops": H100_BF16_TFLOPS, **values}


def roofline_case(**changes: float) -> maths.DecodeStepResult:
    """Return the decode-step maths for the default 70B replica with `changes` applied."""
    inputs = {
        "params_b": float(NOMINAL_70B),
        "bytes_per_param": float(BF16_BYTES),
        "kv_bytes_per_token": KV_70B,
        "batch": BATCH,
        "mean_context": MEAN_CONTEXT,
        "tp": TP,
        **_h100(),
    }
    return maths.decode_step(**{**inputs, **changes})


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    tp, batch = i["tp"], i["batch"]
    memory_ms = o["weights_ms"] + o["kv_ms"]
    crossover = maths.compute_bound_batch(
        i["params_b"], i["bytes_per_param"], i["kv_bytes_per_token"], i["mean_context"], i["hbm_tb_s"], i["tflops"]
    )
    steps = [
        step(
            "Reading each GPU's share of the weights",
            f"{number(i['params_b'])} × 10⁹ parameters × {number(i['bytes_per_param'])} B ÷ {tp} "
            f"{plural(tp, 'GPU')} ÷ {number(i['hbm_tb_s'])} TB/s",
            o["weights_ms"],
            "ms",
        ),
        step(
            "Reading each GPU's share of the batch's KV cache",
            f"{batch} × {number(i['mean_context'])} tokens × {number(i['kv_bytes_per_token'])} B ÷ {tp} "
            f"÷ {number(i['hbm_tb_s'])} TB/s",
            o["kv_ms"],
            "ms",
        ),
        step("Memory time of the step", f"{number(o['weights_ms'])} + {number(o['kv_ms'])} ms", memory_ms, "ms"),
        step(
            "Compute time of the step",
            f"2 × {number(i['params_b'])} × 10⁹ × {batch} tokens ÷ {tp} ÷ {number(i['tflops'])} TFLOPS",
            o["compute_ms"],
            "ms",
        ),
        step(
            "Step time: the larger of the two (roofline)",
            f"max({number(memory_ms)}, {number(o['compute_ms'])}) ms",
            o["step_ms"],
            "ms",
        ),
        step(
            "Reads against arithmetic (1 or more: memory-bound"
            + (", as here)" if o["memory_bound"] else "; here compute-bound)"),
            f"{number(memory_ms)} ms ÷ {number(o['compute_ms'])} ms",
            memory_ms / o["compute_ms"],
            "×",
        ),
        step(
            "Tokens per second for each sequence",
            f"1,000 ÷ {number(o['step_ms'])} ms",
            o["tokens_per_s_per_stream"],
            "tokens/s",
        ),
        step(
            "Tokens per second for the replica",
            f"{batch} × {number(o['tokens_per_s_per_stream'])}",
            o["tokens_per_s"],
            "tokens/s",
        ),
        step("Tokens per second per GPU", f"{number(o['tokens_per_s'])} ÷ {tp}", o["tokens_per_s"] / tp, "tokens/s"),
        step(
            "Chip's ridge point (compute ÷ bandwidth)",
            f"{number(i['tflops'])} TFLOPS ÷ {number(i['hbm_tb_s'])} TB/s",
            i["tflops"] / i["hbm_tb_s"],
            "FLOP/byte",
        ),
        step(
            "Ridge batch: compute time equals the weights' read time",
            f"{number(i['tflops'])} × {number(i['bytes_per_param'])} ÷ (2 × {number(i['hbm_tb_s'])})",
            o["ridge_batch"],
            "sequences",
        ),
    ]
    kv_per_sequence = o["kv_ms"] / batch
    compute_per_token = o["compute_ms"] / batch
    if crossover is None:
        steps.append(
            step(
                "Compute never catches up with the KV reads at this context: one sequence's KV read "
                "against its token's arithmetic",
                f"{number(kv_per_sequence, 4)} ms ÷ {number(compute_per_token, 4)} ms",
                kv_per_sequence / compute_per_token,
                "×",
            )
        )
    else:
        steps.append(
            step(
                "Batch where compute also catches up with the KV reads",
                f"{number(o['weights_ms'])} ms ÷ ({number(compute_per_token, 4)} − {number(kv_per_sequence, 4)}) ms",
                crossover,
                "sequences",
            )
        )
    return steps


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table: memory and compute time against batch size."""
    fixed = {k: v for k, v in i.items() if k != "batch"}
    last = max(2 * i["batch"], 2 * o["ridge_batch"], 16)
    x_ticks = [float(t) for t in nice_ticks(last, 5)]
    batches = sorted({max(1, round(x_ticks[-1] * k / 40)) for k in range(41)})
    results = [maths.decode_step(**fixed, batch=b) for b in batches]
    memory = [r.weights_ms + r.kv_ms for r in results]
    compute = [r.compute_ms for r in results]
    top = max(max(memory), max(compute)) * 1.1
    title = "Decode step time against batch size"
    state = "memory-bound" if o["memory_bound"] else "compute-bound"
    description = (
        f"At batch {i['batch']} a step takes {number(o['step_ms'], 4)} ms and is {state}: reading weights and KV "
        f"takes {number(o['weights_ms'] + o['kv_ms'], 4)} ms, the arithmetic {number(o['compute_ms'], 4)} ms. "
        f"Compute alone matches the weights' read time at batch {number(o['ridge_batch'], 4)}."
    )
    svg = line_svg("decode-step", title, description)
    plot = Plot(
        svg, x_ticks, nice_ticks(top, 5), lambda t: number(t), lambda t: number(t, 3), "Sequences in the batch", "ms"
    )
    svg.text(plot.left + 4, plot.top + 10, "ms per step", "chart-axis-label")
    svg.polyline([(plot.x(b), plot.y(m)) for b, m in zip(batches, memory)], "chart-line")
    svg.polyline([(plot.x(b), plot.y(c)) for b, c in zip(batches, compute)], "chart-line chart-line-muted")
    memory_y = plot.y(memory[-1]) - 6
    svg.text(plot.right - 2, memory_y, "memory reads", "chart-point-label", "end")
    svg.text(plot.right - 2, plot.y(compute[-1]) + 14, "compute", "chart-point-label", "end")
    if o["ridge_batch"] <= x_ticks[-1]:
        x = plot.x(o["ridge_batch"])
        svg.line(x, plot.top, x, plot.bottom, "chart-marker")
        ridge_y = plot.top + 32  # below "ms per step"; below "memory reads" and its line when level with it
        if abs(ridge_y - memory_y) < LINE + 2:
            ridge_y = memory_y + LINE + 8
        svg.text(x + 4, ridge_y, f"ridge {number(o['ridge_batch'], 3)}", "chart-marker-label")
    svg.circle(
        plot.x(i["batch"]),
        plot.y(o["step_ms"]),
        5,
        "chart-point chart-point-accent",
        f"Yours: batch {i['batch']}, {number(o['step_ms'], 4)} ms",
    )
    shown = sorted({b for b in TABLE_BATCHES if b <= x_ticks[-1]} | {i["batch"]})
    rows = []
    for b in shown:
        r = maths.decode_step(**fixed, batch=b)
        rows.append(
            (
                f"{b}" + (" (yours)" if b == i["batch"] else ""),
                number(r.weights_ms + r.kv_ms, 4),
                number(r.compute_ms, 4),
                number(r.tokens_per_s, 4),
                "memory" if r.memory_bound else "compute",
            )
        )
    table = DataTable(
        "Decode step by batch size",
        ("Batch", "Memory ms", "Compute ms", "Tokens/s (replica)", "Bound by"),
        tuple(rows),
    )
    return Chart(svg.render(), title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    base = roofline_case()
    at_claim = roofline_case(batch=CLAIMED_COMPUTE_BOUND)
    ridge_fp8 = maths.ridge_batch(1, H100_HBM_TB_S, H100_BF16_TFLOPS)
    ridge_fp8_compute = maths.ridge_batch(1, H100_HBM_TB_S, 2 * H100_BF16_TFLOPS)  # FP8 tensor cores
    never = maths.compute_bound_batch(NOMINAL_70B, BF16_BYTES, KV_70B, MEAN_CONTEXT, H100_HBM_TB_S, H100_BF16_TFLOPS)
    short = maths.compute_bound_batch(NOMINAL_70B, BF16_BYTES, KV_70B, SHORT_CONTEXT, H100_HBM_TB_S, H100_BF16_TFLOPS)
    gamma = SPEC_DRAFT_TOKENS
    verify = roofline_case(batch=CLAIMED_COMPUTE_BOUND * (gamma + 1), mean_context=0)  # compute of the verified tokens
    verify_reads = at_claim.weights_ms + at_claim.kv_ms  # weights and KV are still read once per step
    crossing = "never catches up" if never is None else f"catches up at batch {number(never, 4)}"
    short_text = "never" if short is None else f"at batch {number(short, 4)}"
    return (
        "**The model.** Every decode step produces one token per sequence and must stream each GPU's share "
        "of the weights and of every sequence's KV cache out of HBM; it also does about 2 FLOPs per "
        "parameter per token. Whichever takes longer sets the step time (the roofline). All-reduces between "
        "the tensor-parallel GPUs, attention's own FLOPs and kernel launch gaps are left out, so real steps "
        f"are slower. Defaults: a {NOMINAL_70B}B model in BF16 on {TP} H100 SXM ({number(H100_HBM_TB_S)} TB/s, "
        f"{number(H100_BF16_TFLOPS)} dense BF16 TFLOPS each). The KV is divided evenly by tp, which holds "
        f"only up to the model's KV heads ({LLAMA_3_70B['kv_heads']} for Llama-3-70B): past that each head "
        "is replicated (see the kv-cache calculator), so one GPU's KV read stops shrinking and this "
        "calculator understates it.",
        f"**Where the ridge sits.** An H100 does {number(H100_BF16_TFLOPS / H100_HBM_TB_S, 3)} FLOPs in the "
        "time it reads one byte. A decode step does 2 FLOPs per parameter per sequence and reads each BF16 "
        f"parameter's 2 bytes once, so it reaches the ridge only at a batch of about "
        f"{number(base.ridge_batch, 3)} ({number(ridge_fp8, 3)} with 1-byte FP8 weights computed at BF16 "
        f"rates, but {number(ridge_fp8_compute, 3)} again when FP8 arithmetic doubles the TFLOPS). These are "
        f"datasheet peaks; kernels reach less of both, so measure where your own step turns. **At batch {CLAIMED_COMPUTE_BOUND} a {NOMINAL_70B}B decode step is still memory-bound**: "
        f"{number(at_claim.weights_ms + at_claim.kv_ms, 3)} ms of reads against "
        f"{number(at_claim.compute_ms, 3)} ms of arithmetic. Saying it turns compute-bound there is a common "
        "slip.",
        f"**The KV reads push the ridge further.** With {number(MEAN_CONTEXT)}-token contexts one sequence's "
        f"KV ({number(KV_70B)} B a token) takes longer to read than its token takes to compute, so compute "
        f"{crossing}; at {number(SHORT_CONTEXT)} tokens it catches up {short_text}. Batching amortises the "
        "weights, never the KV cache: long contexts stay memory-bound.",
        f"**What does cross the ridge: speculative verification.** Checking γ = {gamma} drafted tokens "
        f"processes {gamma + 1} tokens per sequence in one pass while reading the weights and KV once. At "
        f"batch {CLAIMED_COMPUTE_BOUND} that is {CLAIMED_COMPUTE_BOUND * (gamma + 1)} tokens: "
        f"{number(verify.compute_ms, 3)} ms of compute against {number(verify_reads, 3)} ms of reads, so "
        "verification is compute-bound and every rejected draft costs real time. That is why speculation "
        "pays at small batch and is switched off at large batch (see the spec-decode calculator).",
        f"**Per GPU.** At the defaults the replica makes {number(base.tokens_per_s, 4)} tokens/s, "
        f"{number(base.tokens_per_s / TP, 4)} per GPU, at {number(base.tokens_per_s_per_stream, 3)} tokens/s "
        "for each sequence: a bigger batch raises the first and lowers the last.",
    )


CALCULATOR = Calculator(
    slug="decode-step",
    title="Decode step on the roofline",
    purpose=(
        "How long one decode step takes from the weights and KV cache read out of memory against the "
        "arithmetic, where the ridge sits, and the tokens per second that follow."
    ),
    parameters=(
        MODEL_SIZE,
        Parameter(
            name="bytes_per_param",
            type="float",
            default=float(BF16_BYTES),
            min=0.125,
            max=8.0,
            unit="B",
            help="Bytes per weight: 2 for BF16, 1 for FP8, 0.5 for 4-bit.",
            label="Bytes per weight",
        ),
        Parameter(
            name="kv_bytes_per_token",
            type="int",
            default=KV_70B,
            min=0,
            max=100_000_000,
            unit="B",
            help="KV bytes per token for the whole model (70B: 327,680; see the KV-cache calculator).",
            label="KV bytes per token",
        ),
        Parameter(
            name="batch",
            type="int",
            default=BATCH,
            min=1,
            max=100_000,
            unit="sequences",
            help="Sequences decoded together in one step.",
            label="Batch size",
        ),
        Parameter(
            name="mean_context",
            type="int",
            default=MEAN_CONTEXT,
            min=0,
            max=10_000_000,
            unit="tokens",
            help="Mean tokens already in each sequence's KV cache.",
            label="Mean context",
        ),
        Parameter(
            name="tp",
            type="int",
            default=TP,
            min=1,
            max=1024,
            unit="GPUs",
            help="Tensor-parallel degree: GPUs sharing the weights and the KV cache.",
            label="Tensor-parallel GPUs",
        ),
        Parameter(
            name="hbm_tb_s",
            type="float",
            default=H100_HBM_TB_S,
            min=0.01,
            max=1000.0,
            unit="TB/s",
            help="Memory bandwidth of one GPU in decimal TB/s (H100 SXM: 3.35).",
            label="Memory bandwidth per GPU",
        ),
        COMPUTE_PER_GPU,
    ),
    outputs=(
        Output(name="weights_ms", unit="ms", label="Time to read the weights"),
        Output(name="kv_ms", unit="ms", label="Time to read the KV cache"),
        Output(name="compute_ms", unit="ms", label="Time for the arithmetic"),
        Output(name="step_ms", unit="ms", label="Step time"),
        Output(name="tokens_per_s_per_stream", unit="tokens/s", label="Tokens per second for each sequence"),
        Output(name="tokens_per_s", unit="tokens/s", label="Tokens per second for the replica"),
        Output(name="ridge_batch", unit="sequences", label="Ridge batch (weights alone)"),
        Output(name="memory_bound", unit="check", label="Memory-bound", yes="Yes", no="No: compute-bound"),
    ),
    compute=maths.decode_step,
    derive=derive,
    headline="step_ms",
    presets=(
        Preset(
            label=f"Llama-3-70B, BF16, TP {TP} on H100, batch {BATCH}",
            values={
                "params_b": float(NOMINAL_70B),
                "bytes_per_param": float(BF16_BYTES),
                "kv_bytes_per_token": KV_70B,
                "batch": BATCH,
                "mean_context": MEAN_CONTEXT,
                "tp": TP,
                **_h100(),
            },
        ),  # fmt: skip
        Preset(label=f"Batch {CLAIMED_COMPUTE_BOUND}: still memory-bound", values={"batch": CLAIMED_COMPUTE_BOUND}),
        Preset(label="Batch 512, short contexts", values={"batch": 512, "mean_context": SHORT_CONTEXT}),
        Preset(
            label=f"Verification of γ = {SPEC_DRAFT_TOKENS} at batch {CLAIMED_COMPUTE_BOUND} (tokens, KV once)",
            values={
                "batch": CLAIMED_COMPUTE_BOUND * (SPEC_DRAFT_TOKENS + 1),
                "mean_context": MEAN_CONTEXT // (SPEC_DRAFT_TOKENS + 1),
            },
        ),  # fmt: skip
        Preset(
            label="Llama-3-8B, BF16, one H100",
            values={
                "params_b": LLAMA_3_8B_PARAMS_B,
                "bytes_per_param": float(BF16_BYTES),
                "kv_bytes_per_token": KV_8B,
                "tp": 1,
                **_h100(),
            },
        ),  # fmt: skip
        Preset(
            label=f"{NOMINAL_70B}B with FP8 weights on 2 H100 (FP8 TFLOPS)",
            values={
                "params_b": float(NOMINAL_70B),
                "bytes_per_param": 1.0,
                "tp": 2,
                **_h100(tflops=2 * H100_BF16_TFLOPS),
            },
        ),  # fmt: skip
    ),
    chart=chart,
    notes=notes(),
)
