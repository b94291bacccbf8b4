"""The spec-decode calculator: expected tokens per target pass and the speedup of speculative decoding."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Plot, line_svg, nice_ticks
from calculators.definitions import decode_step
from calculators.definitions.assumptions import (
    BF16_BYTES,
    H100_BF16_TFLOPS,
    H100_HBM_TB_S,
    LLAMA_3_8B,
    LLAMA_3_8B_PARAMS_B,
)
from calculators.formatting import number

ACCEPTANCE = 0.8
DRAFT_TOKENS = 4
DRAFT_COST = 0.05  # a tiny draft model; below 0.05 in Leviathan et al.
CHEN_SPEEDUP = (2, 2.5)  # Chen et al. on Chinchilla 70B
# vLLM's measurements on Llama-3-70B with 4 × H100: speedups at low load, slowdowns at high load.
VLLM_LOW_LOAD = {"draft model": 1.5, "n-gram": 2.8}
VLLM_HIGH_LOAD_SLOWDOWN = (1.4, 1.8)
VLLM_GPUS = 4
VLLM_DRAFT_PARAMS_B = 0.5  # vLLM's draft-model run used a 0.5B draft (Qwama-0.5B-Instruct) for Llama-3-70B
LARGE_BATCH = decode_step.CLAIMED_COMPUTE_BOUND


def _step_ms(params_b: float, tp: int, kv_bytes_per_token: float, batch: int = 1) -> float:
    """Return one decode step's roofline time for a model on the default H100 replica (decode-step maths)."""
    return decode_step.roofline_case(params_b=params_b, tp=tp, kv_bytes_per_token=kv_bytes_per_token, batch=batch,
                             bytes_per_param=float(BF16_BYTES)).step_ms  # fmt: skip


def draft_cost(draft_params_b: float, draft_tp: int, draft_kv: float) -> float:
    """Return c, a draft step's time over the 70B target's at batch 1, from the decode-step roofline."""
    target = _step_ms(decode_step.NOMINAL_70B, decode_step.TP, decode_step.KV_70B)
    return _step_ms(draft_params_b, draft_tp, draft_kv) / target


KV_8B = maths.kv_bytes_per_token(**LLAMA_3_8B)
C_TINY = round(draft_cost(VLLM_DRAFT_PARAMS_B, 1, 0), 3)  # a 0.5B draft on one GPU (its KV is negligible)
C_8B = round(draft_cost(LLAMA_3_8B_PARAMS_B, decode_step.TP, KV_8B), 3)  # an 8B draft split like the target
C_8B_ONE_GPU = round(draft_cost(LLAMA_3_8B_PARAMS_B, 1, KV_8B), 3)  # an 8B draft on one GPU
HALF_PEAK = 0.5  # an assumption, as for prefill: the share of peak FLOPS real kernels reach
# At a large batch the 8B draft reads its own 128 sequences' KV every step, so c grows with the batch.
C_8B_AT_LARGE_BATCH = round(
    decode_step.roofline_case(params_b=LLAMA_3_8B_PARAMS_B, kv_bytes_per_token=KV_8B, batch=LARGE_BATCH,
                              tflops=H100_BF16_TFLOPS * HALF_PEAK).step_ms
    / decode_step.roofline_case(batch=LARGE_BATCH, tflops=H100_BF16_TFLOPS * HALF_PEAK).step_ms,
    3,
)  # fmt: skip


def compute(
    acceptance: float, draft_tokens: int, draft_cost: float, batch: int, mean_context: int, compute_efficiency: float
) -> maths.SpecDecodeRooflineResult:
    """Return the speedup for the 70B target on four H100s, verification priced on the decode-step roofline."""
    return maths.spec_decode_on_roofline(
        acceptance, draft_tokens, draft_cost, params_b=float(decode_step.NOMINAL_70B),
        bytes_per_param=float(BF16_BYTES), kv_bytes_per_token=decode_step.KV_70B, batch=batch,
        mean_context=mean_context, tp=decode_step.TP, hbm_tb_s=H100_HBM_TB_S,
        tflops=H100_BF16_TFLOPS * compute_efficiency,
    )  # fmt: skip


def _speedups(i: Mapping[str, Any], last: int) -> list[float]:
    """Return the speedup for draft lengths 0..last (index = length) at the result's batch."""
    return [compute(**{**i, "draft_tokens": gamma}).speedup for gamma in range(last + 1)]


def _best(i: Mapping[str, Any]) -> tuple[int, float]:
    """Return the draft length in 1..64 with the highest speedup at the result's batch, and that speedup."""
    speedups = _speedups(i, 64)
    best = max(range(1, 65), key=lambda gamma: speedups[gamma])
    return best, speedups[best]


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    alpha, gamma, cost = i["acceptance"], i["draft_tokens"], i["draft_cost"]
    best, best_speedup = _best(i)
    expected = (
        f"{gamma} + 1 (every draft accepted)"
        if alpha == 1
        else f"(1 − {number(alpha)}^({gamma} + 1)) ÷ (1 − {number(alpha)})"
    )
    plain = decode_step.roofline_case(
        batch=i["batch"], mean_context=i["mean_context"], tflops=H100_BF16_TFLOPS * i["compute_efficiency"]
    )
    verify = o["verify_steps"]
    round_steps = gamma * cost + verify
    return [
        step("Expected tokens per target pass (Leviathan et al., eq. 1)", expected, o["expected_tokens"], "tokens"),
        step(
            "Share of drafted tokens accepted, as vLLM logs it (not α)",
            f"({number(o['expected_tokens'], 4)} − 1) ÷ {gamma}",
            o["accepted_share"],
        ),
        step(
            f"Verification pass at batch {number(i['batch'])}, in plain target steps",
            f"max({number(plain.weights_ms + plain.kv_ms, 4)} ms of reads, ({gamma} + 1) × "
            f"{number(plain.compute_ms, 4)} ms of arithmetic) ÷ {number(plain.step_ms, 4)} ms",
            verify,
            "target steps",
        ),
        step(
            "Time of one round, in target steps",
            f"{gamma} drafts × {number(cost)} + {number(verify, 4)}",
            round_steps,
            "target steps",
        ),
        step(
            "Speedup (theorem 3.8 when verification costs one step)",
            f"{number(o['expected_tokens'])} ÷ {number(round_steps, 4)}",
            o["speedup"],
            "×",
        ),
        step(
            "Best draft length for this acceptance, cost and batch (1 to 64)",
            f"γ = {best} gives {number(best_speedup, 4)}×",
            best,
            "tokens",
        ),
    ]


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
    alpha, gamma, cost = i["acceptance"], i["draft_tokens"], i["draft_cost"]
    best, best_speedup = _best(i)
    last = min(64, max(12, gamma + 4, best + 4))
    speedups = _speedups(i, last)
    top = max(max(speedups[1:]), 1.0) * 1.12
    title = "Speedup against draft length"
    description = (
        f"At acceptance {number(alpha)}, draft cost {number(cost)} and batch {number(i['batch'])}, "
        f"{gamma} drafted tokens give "
        f"{number(o['speedup'], 4)}×; the best length is {best} ({number(best_speedup, 4)}×). "
        "Below 1× speculation slows decoding down."
    )
    svg = line_svg("spec-decode", title, description)
    x_ticks = [float(t) for t in nice_ticks(last, 6)]
    plot = Plot(
        svg,
        x_ticks,
        nice_ticks(top, 5),
        lambda t: number(t),
        lambda t: f"{number(t, 3)}×",
        "Draft length γ (tokens per round)",
        "×",
    )
    svg.text(plot.left + 4, plot.top + 10, "speedup", "chart-axis-label")
    svg.line(plot.left, plot.y(1.0), plot.right, plot.y(1.0), "chart-marker")
    svg.text(plot.right - 2, plot.y(1.0) - 5, "no gain (1×)", "chart-marker-label", "end")
    svg.polyline([(plot.x(g), plot.y(s)) for g, s in enumerate(speedups) if g >= 1 and g <= x_ticks[-1]], "chart-line")
    svg.circle(
        plot.x(gamma),
        plot.y(o["speedup"]),
        5,
        "chart-point chart-point-accent",
        f"Yours: γ = {gamma}, {number(o['speedup'], 4)}×",
    )
    svg.text(plot.x(gamma) + 8, plot.y(o["speedup"]) + 16, f"yours {number(o['speedup'], 3)}×", "chart-point-label")
    if best != gamma:
        svg.circle(
            plot.x(best), plot.y(best_speedup), 5, "chart-point", f"Best: γ = {best}, {number(best_speedup, 4)}×"
        )
        svg.text(plot.x(best), plot.y(best_speedup) - 9, f"best γ = {best}", "chart-point-label", "middle")
    shown = sorted({1, 2, 3, 4, 6, 8, 12, 16, gamma, best} & set(range(1, last + 1)))
    rows = tuple(
        (
            f"{g}" + (" (yours)" if g == gamma else "") + (" (best)" if g == best else ""),
            number(float(speedups[g]), 4) + "×",
        )
        for g in shown
    )
    table = DataTable(f"Speedup by draft length at batch {number(i['batch'])}", ("Draft length γ", "Speedup"), rows)
    return Chart(svg.render(), title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    compute_bound = maths.spec_decode_compute_bound(ACCEPTANCE, DRAFT_TOKENS, DRAFT_COST)
    theorem = maths.spec_decode(ACCEPTANCE, DRAFT_TOKENS, DRAFT_COST)
    # The course notes' slip: E / ((g + 1)(1 + g c)), the theorem's speedup divided by g + 1 once more.
    source_bound = theorem.speedup / (DRAFT_TOKENS + 1)
    round_steps = DRAFT_TOKENS + 1 + DRAFT_TOKENS * DRAFT_COST
    source_round_steps = (DRAFT_TOKENS + 1) * (1 + DRAFT_TOKENS * DRAFT_COST)
    low, high = VLLM_LOW_LOAD, VLLM_HIGH_LOAD_SLOWDOWN
    tiny = maths.spec_decode(ACCEPTANCE, DRAFT_TOKENS, C_TINY).speedup
    big = maths.spec_decode(ACCEPTANCE, DRAFT_TOKENS, C_8B).speedup
    big_one = maths.spec_decode(ACCEPTANCE, DRAFT_TOKENS, C_8B_ONE_GPU).speedup
    best_big, best_big_speedup = maths.best_draft_tokens(ACCEPTANCE, C_8B)
    ridge = decode_step.roofline_case().ridge_batch
    verified = LARGE_BATCH * (DRAFT_TOKENS + 1)
    plain = decode_step.roofline_case(batch=LARGE_BATCH)
    verify_ms = decode_step.roofline_case(batch=verified, mean_context=0).compute_ms
    at_batch = {
        (batch, context): _at_batch(batch, context)
        for batch in (LARGE_BATCH, 2 * LARGE_BATCH)
        for context in (decode_step.MEAN_CONTEXT, decode_step.SHORT_CONTEXT)
    }
    long_ctx, short_ctx = decode_step.MEAN_CONTEXT, decode_step.SHORT_CONTEXT
    peak = compute(ACCEPTANCE, DRAFT_TOKENS, C_8B, LARGE_BATCH, long_ctx, 1.0)
    half = compute(ACCEPTANCE, DRAFT_TOKENS, C_8B_AT_LARGE_BATCH, LARGE_BATCH, long_ctx, HALF_PEAK)
    return (
        "**Formulas.** Leviathan, Kalman and Matias (ICML 2023): expected tokens per "
        "target pass (1 − α^(γ+1)) ÷ (1 − α) (eq. 1) and walltime speedup "
        "(1 − α^(γ+1)) ÷ ((1 − α)(γc + 1)) (theorem 3.8). Chen et al. report "
        f"{number(CHEN_SPEEDUP[0])}–{number(CHEN_SPEEDUP[1])}× on Chinchilla 70B.",
        f"**The draft cost depends on the draft.** The default c = {number(DRAFT_COST)} suits a tiny draft. "
        f"By the decode roofline (weights read per step, see the decode-step calculator), a "
        f"{number(VLLM_DRAFT_PARAMS_B)}B draft on one H100 costs c ≈ {number(C_TINY, 2)} of a "
        f"{decode_step.NOMINAL_70B}B target step on {decode_step.TP} GPUs; vLLM's draft-model measurement on "
        f"Llama-3-70B used a draft of that size. An 8B draft for a {decode_step.NOMINAL_70B}B target is not "
        f"cheap: c ≈ {number(C_8B, 2)} at best, split over the same {decode_step.TP} GPUs, and "
        f"c ≈ {number(C_8B_ONE_GPU, 2)} on a single GPU. At α = {number(ACCEPTANCE)} and γ = {DRAFT_TOKENS} "
        f"that is {number(tiny, 3)}× for the tiny draft against {number(big, 3)}× (or {number(big_one, 3)}×) "
        f"for the 8B one, whose best γ is {best_big} ({number(best_big_speedup, 3)}×). Real drafts also pay "
        "kernel launches and scheduling per step, so measured c is higher than these roofline figures; a "
        "larger draft has to earn its cost with a higher acceptance rate.",
        "**When it does not pay.** The theorem assumes checking γ + 1 tokens costs one target step, which "
        "holds while the target's step is memory-bound. Verification multiplies the tokens per step by "
        f"γ + 1: at batch {LARGE_BATCH} with γ = {DRAFT_TOKENS} the target checks {verified} tokens per "
        f"step, past the H100's ridge of about {number(ridge, 3)} tokens (a plain decode step at batch "
        f"{LARGE_BATCH} is still memory-bound). Past the ridge verification costs grow with γ + 1 and rejected "
        "drafts waste compute. vLLM measured up to "
        + " and ".join(f"{number(speedup)}× ({name})" for name, speedup in low.items())
        + f" at low load on Llama-3-70B with {VLLM_GPUS} × H100, but {number(high[0])}× and {number(high[1])}× "
        "slowdowns at high load. When verification is wholly compute-bound a round costs γ + 1 + γc plain "
        f"steps, so the speedup falls to E ÷ (γ + 1 + γc) = {number(compute_bound, 2)}× at the defaults.",
        "**Where the course notes' figure slips.** The course notes' compute-bound bound is "
        f"E ÷ ((γ + 1)(1 + γc)) = {number(theorem.expected_tokens, 5)} ÷ {number(source_round_steps)} = "
        f"{number(source_bound, 2)}× at α = {number(ACCEPTANCE)}, γ = {DRAFT_TOKENS}, c = {number(DRAFT_COST)}. "
        "That multiplies the draft steps by γ + 1 as well as the check: only verification handles γ + 1 "
        "tokens per sequence, while each of the γ draft steps still handles one and costs c of a plain step. "
        f"A round costs γ + 1 + γc = {number(round_steps)} plain steps, not {number(source_round_steps)}, so "
        f"the bound is **{number(compute_bound, 3)}×**, the limit this calculator reaches at very large batch "
        "when the contexts are short enough for the arithmetic to outweigh the KV reads. Both say the same "
        "thing: wholly compute-bound, speculation is a slowdown.",
        "**Crossing the ridge is not yet a slowdown.** On the decode-step roofline (70B, TP "
        f"{decode_step.TP}, H100) the {verified}-token check at batch {LARGE_BATCH} computes for "
        f"{number(verify_ms, 3)} ms against a plain step of {number(plain.step_ms, 3)} ms: it costs more than "
        "one step but far less than γ + 1, because the weights and the KV are still read once. So at "
        f"{number(long_ctx)}-token contexts the defaults still give {number(at_batch[LARGE_BATCH, long_ctx], 3)}× "
        f"at batch {LARGE_BATCH} and {number(at_batch[2 * LARGE_BATCH, long_ctx], 3)}× at "
        f"{2 * LARGE_BATCH}; with {number(short_ctx)}-token contexts, where the KV reads no longer hide the "
        f"arithmetic, {number(at_batch[LARGE_BATCH, short_ctx], 3)}× and "
        f"{number(at_batch[2 * LARGE_BATCH, short_ctx], 3)}×. The measured slowdowns also carry costs the "
        "roofline leaves out (the draft's own batch, scheduling, rejection sampling), so gate speculation "
        "on batch size and context length together, and measure the crossover on your own traffic.",
        "**What turns it into a slowdown.** Two things the peak roofline hides. Kernels reach about "
        f"{number(HALF_PEAK)} of peak, which doubles the verification's arithmetic: at batch {LARGE_BATCH} the "
        f"check costs {number(half.verify_steps, 3)} plain steps instead of {number(peak.verify_steps, 3)}. "
        f"And a draft's cost grows with the batch: an 8B draft reads its own {LARGE_BATCH} sequences' KV, so "
        f"c rises from {number(C_8B, 2)} at batch 1 to {number(C_8B_AT_LARGE_BATCH, 2)}. With both, α = "
        f"{number(ACCEPTANCE)} and γ = {DRAFT_TOKENS} give {number(half.speedup, 3)}×, against "
        f"{number(peak.speedup, 3)}× for the same 8B draft priced at peak and at batch 1's cost.",
    )


def _at_batch(batch: int, mean_context: int) -> float:
    """Return the defaults' speedup at a batch and context, verification priced on the decode-step roofline."""
    return compute(ACCEPTANCE, DRAFT_TOKENS, DRAFT_COST, batch, mean_context, compute_efficiency=1.0).speedup


def _preset(acceptance: float, draft_tokens: int, draft_cost: float, note: str = "") -> Preset:
    return Preset(
        label=f"α {number(acceptance)}, γ {draft_tokens}, c {number(draft_cost)}{note}",
        values={"acceptance": acceptance, "draft_tokens": draft_tokens, "draft_cost": draft_cost},
    )


CALCULATOR = Calculator(
    slug="spec-decode",
    title="Speculative decoding speedup",
    purpose=(
        "How many tokens each pass of the large model yields with a draft model, and "
        "how much faster decoding gets (Leviathan et al.), with verification priced at the batch you run."
    ),
    parameters=(
        Parameter(
            name="acceptance",
            type="float",
            default=ACCEPTANCE,
            min=0.0,
            max=1.0,
            unit="fraction",
            help="Chance the target model accepts each drafted token (α).",
            label="Acceptance rate",
        ),
        Parameter(
            name="draft_tokens",
            type="int",
            default=DRAFT_TOKENS,
            min=1,
            max=64,
            unit="tokens",
            help="Tokens the draft model proposes per round (γ).",
            label="Draft length",
        ),
        Parameter(
            name="draft_cost",
            type="float",
            default=DRAFT_COST,
            min=0.0,
            max=1.0,
            unit="× target step",
            help=(
                "Time of one draft step as a share of one target step (c). 0.05 suits a tiny draft (vLLM's "
                "1.5× on Llama-3-70B used a 0.5B one); an 8B draft for a 70B target costs 0.1 or more."
            ),
            label="Draft cost",
        ),
        Parameter(
            name="batch",
            type="int",
            default=1,
            min=1,
            max=100_000,
            unit="sequences",
            help=(
                f"Sequences in the target's decode step ({decode_step.NOMINAL_70B}B in BF16 on "
                f"{decode_step.TP} H100s). At small batch verification costs one plain step (theorem 3.8); "
                "past the ridge it costs more."
            ),
            label="Batch",
        ),
        Parameter(
            name="mean_context",
            type="int",
            default=decode_step.MEAN_CONTEXT,
            min=0,
            max=10_000_000,
            unit="tokens",
            help="Mean tokens of KV each sequence reads per step; the reads hide the verification's arithmetic.",
            label="Mean context",
        ),
        Parameter(
            name="compute_efficiency",
            type="float",
            default=1.0,
            min=0.01,
            max=1.0,
            unit="fraction",
            help=(
                f"Share of the H100's {number(H100_BF16_TFLOPS)} dense BF16 TFLOPS the target's kernels reach; "
                f"1 is the peak, real kernels reach about {number(HALF_PEAK)}."
            ),
            label="Compute efficiency",
        ),
    ),
    outputs=(
        Output(name="expected_tokens", unit="tokens", label="Expected tokens per target pass"),
        Output(
            name="accepted_share",
            unit="fraction",
            label="Share of drafted tokens accepted (the acceptance rate vLLM logs)",
        ),
        Output(name="verify_steps", unit="target steps", label="Verification pass, in plain target steps"),
        Output(name="speedup", unit="×", label="Speedup"),
    ),
    compute=compute,
    derive=derive,
    headline="speedup",
    presets=(
        _preset(ACCEPTANCE, DRAFT_TOKENS, DRAFT_COST),
        _preset(ACCEPTANCE, maths.best_draft_tokens(ACCEPTANCE, DRAFT_COST)[0], DRAFT_COST, " (best γ)"),
        _preset(0.6, 5, 0.1),
        _preset(0.5, 3, 0.2),
        _preset(ACCEPTANCE, DRAFT_TOKENS, C_TINY, f" ({number(VLLM_DRAFT_PARAMS_B)}B draft, 70B target)"),
        _preset(ACCEPTANCE, DRAFT_TOKENS, C_8B, " (8B draft, 70B target, at best)"),
        _preset(ACCEPTANCE, DRAFT_TOKENS, C_8B_ONE_GPU, " (8B draft on one GPU)"),
        Preset(
            label=f"Batch {LARGE_BATCH}, 8B draft, peak compute",
            values={"draft_cost": C_8B, "batch": LARGE_BATCH},
        ),
        Preset(
            label=f"Batch {LARGE_BATCH}, 8B draft, half of peak (c {number(C_8B_AT_LARGE_BATCH)} at that batch)",
            values={"draft_cost": C_8B_AT_LARGE_BATCH, "batch": LARGE_BATCH, "compute_efficiency": HALF_PEAK},
        ),
    ),
    chart=chart,
    notes=notes(),
)
