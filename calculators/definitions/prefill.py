"""The prefill calculator: the FLOPs of a prompt and the time to first token they imply."""

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
    LLAMA_3_8B_PARAMS_B,
    LLAMA_3_70B,
    NOMINAL_70B,
)
from calculators.formatting import number, plural, scientific

PROMPT_TOKENS = 4000
GPUS = 4
MFU = 0.5  # an assumption: the share of peak FLOPS prefill reaches
HIDDEN_70B = 8192  # Llama-3-70B's hidden size
LONG_PROMPT = 32_768
TABLE_PROMPTS = (500, 1000, 2000, 4000, 8000, 16_000, 32_000, 128_000)


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    rate = i["gpus"] * i["tflops"] * 1e12 * i["mfu"]
    return [
        step(
            "FLOPs of the prompt: about 2 per parameter per token",
            f"2 × {number(i['params_b'])} × 10⁹ × {number(i['prompt_tokens'])} tokens",
            o["flops"],
            "FLOPs",
        ),
        step(
            "FLOPs per second the GPUs sustain",
            f"{i['gpus']} {plural(i['gpus'], 'GPU')} × {number(i['tflops'])} TFLOPS × {number(i['mfu'])} utilisation",
            rate,
            "FLOP/s",
        ),
        step("Time to first token (queueing excluded)", f"{scientific(o['flops'])} ÷ {scientific(rate)}", o["ttft_s"], "s"),
        step("The same per prompt token", f"{number(o['ttft_s'] * 1e3)} ms ÷ {number(i['prompt_tokens'])}",
             o["ttft_s"] * 1e3 / i["prompt_tokens"], "ms"),
    ]  # fmt: skip


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table: time to first token against prompt length."""
    fixed = {k: v for k, v in i.items() if k != "prompt_tokens"}
    last = max(2 * i["prompt_tokens"], 1000)
    x_ticks = [float(t) for t in nice_ticks(last, 5)]
    ttft_at = lambda tokens: maths.prefill(**fixed, prompt_tokens=max(1, tokens)).ttft_s  # noqa: E731
    top = ttft_at(round(x_ticks[-1])) * 1.1
    title = "Time to first token against prompt length"
    description = (
        f"A {number(i['prompt_tokens'])}-token prompt needs {scientific(o['flops'])} FLOPs, "
        f"{number(o['ttft_s'], 4)} s on {i['gpus']} {plural(i['gpus'], 'GPU')}; the time grows in step with the prompt."
    )
    svg = line_svg("prefill", title, description)
    plot = Plot(svg, x_ticks, nice_ticks(top, 5), lambda t: number(t), lambda t: number(t, 3), "Prompt tokens", "s")
    svg.text(plot.left + 4, plot.top + 10, "seconds", "chart-axis-label")
    svg.polyline([(plot.x(x), plot.y(ttft_at(round(x)))) for x in (x_ticks[0], x_ticks[-1])], "chart-line")
    svg.circle(
        plot.x(i["prompt_tokens"]),
        plot.y(o["ttft_s"]),
        5,
        "chart-point chart-point-accent",
        f"Yours: {number(i['prompt_tokens'])} tokens, {number(o['ttft_s'], 4)} s",
    )
    shown = sorted({t for t in TABLE_PROMPTS if t <= x_ticks[-1]} | {i["prompt_tokens"]})
    rows = tuple(
        (
            number(t) + (" (yours)" if t == i["prompt_tokens"] else ""),
            scientific(maths.prefill(**fixed, prompt_tokens=t).flops),
            number(ttft_at(t), 4),
        )
        for t in shown
    )
    table = DataTable("Prefill time by prompt length", ("Prompt tokens", "FLOPs", "Seconds"), rows)
    return Chart(svg.render(), title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = maths.prefill(NOMINAL_70B, PROMPT_TOKENS, GPUS, H100_BF16_TFLOPS, MFU)
    long = maths.prefill(NOMINAL_70B, LONG_PROMPT, GPUS, H100_BF16_TFLOPS, MFU)
    layers = LLAMA_3_70B["layers"]
    attention = maths.prefill_attention_flops(layers, HIDDEN_70B, PROMPT_TOKENS)
    attention_long = maths.prefill_attention_flops(layers, HIDDEN_70B, LONG_PROMPT)
    # Below this prompt length, reading the weights once outlasts the formula's compute time.
    floor_tokens = maths.ridge_batch(BF16_BYTES, H100_HBM_TB_S, H100_BF16_TFLOPS * MFU)
    weights_ms = decode_step.roofline_case(batch=1, mean_context=0).weights_ms
    return (
        "**Why prefill is compute-bound.** The whole prompt goes through the model in one pass, so every "
        "weight read from memory is used for thousands of tokens at once: far past the ridge where decode "
        "sits (see the decode-step calculator). Its time is FLOPs ÷ sustained FLOP/s. That needs enough "
        f"tokens: in BF16 on H100s at {number(MFU)} utilisation, below about {number(floor_tokens, 3)} "
        f"prompt tokens reading the weights once ({number(weights_ms, 3)} ms for {NOMINAL_70B}B at TP "
        f"{decode_step.TP}) takes longer than the arithmetic, so for short prompts this formula gives too "
        "small a time to first token.",
        f"**Worked case.** A {NOMINAL_70B}B model and a {number(PROMPT_TOKENS)}-token prompt: "
        f"{scientific(case.flops)} FLOPs; on {GPUS} H100s at {number(H100_BF16_TFLOPS)} TFLOPS and "
        f"{number(MFU)} utilisation that is {number(case.ttft_s, 3)} s before the first token, and "
        f"{number(long.ttft_s, 3)} s at {number(LONG_PROMPT)} tokens.",
        "**What the formula leaves out.** Attention's own FLOPs grow with the square of the prompt: about "
        f"2 × layers × hidden × s² for a causal pass, {scientific(attention)} at {number(PROMPT_TOKENS)} tokens "
        f"({number(100 * attention / case.flops, 2)}% more) but {scientific(attention_long)} at "
        f"{number(LONG_PROMPT)} ({number(100 * attention_long / long.flops, 3)}% more). Queueing, the first "
        "decode step and the network are left out too, and the utilisation is an assumption to measure: "
        "short prompts, chunking and all-reduces pull it down.",
        "**Why it matters for the design.** A long prefill on a replica stalls every decode there unless "
        "prefill is chunked and mixed with decode steps, or run on separate prefill GPUs (disaggregation), "
        "which pays only when shipping the KV cache costs less than the interference it removes.",
    )


CALCULATOR = Calculator(
    slug="prefill",
    title="Prefill time and time to first token",
    purpose=(
        "How many FLOPs a prompt costs to prefill and how long the first token waits for them on a group of GPUs."
    ),
    parameters=(
        decode_step.MODEL_SIZE,
        Parameter(
            name="prompt_tokens",
            type="int",
            default=PROMPT_TOKENS,
            min=1,
            max=10_000_000,
            unit="tokens",
            help="Tokens in the prompt that are not already in the prefix cache.",
            label="Prompt tokens",
        ),
        Parameter(
            name="gpus",
            type="int",
            default=GPUS,
            min=1,
            max=100_000,
            unit="GPUs",
            help="GPUs that prefill the prompt together (the replica's tensor-parallel group).",
            label="GPUs",
        ),
        decode_step.COMPUTE_PER_GPU,
        Parameter(
            name="mfu",
            type="float",
            default=MFU,
            min=0.01,
            max=1.0,
            unit="fraction",
            help="Model FLOPs utilisation: the share of the peak prefill actually sustains (an assumption).",
            label="FLOPs utilisation",
        ),
    ),
    outputs=(
        Output(name="flops", unit="FLOPs", label="FLOPs of the prompt"),
        Output(name="ttft_s", unit="s", label="Time to first token"),
    ),
    compute=maths.prefill,
    derive=derive,
    headline="ttft_s",
    presets=(
        Preset(
            label=f"{NOMINAL_70B}B, {number(PROMPT_TOKENS)} tokens on {GPUS} H100",
            values={
                "params_b": float(NOMINAL_70B),
                "prompt_tokens": PROMPT_TOKENS,
                "gpus": GPUS,
                "tflops": H100_BF16_TFLOPS,
                "mfu": MFU,
            },
        ),  # fmt: skip
        Preset(label=f"A {number(LONG_PROMPT)}-token prompt", values={"prompt_tokens": LONG_PROMPT}),
        Preset(label="Llama-3-8B on one H100", values={"params_b": LLAMA_3_8B_PARAMS_B, "gpus": 1}),
        Preset(label="FP8 on H100 (about twice the TFLOPS)", values={"tflops": 2 * H100_BF16_TFLOPS}),
    ),
    chart=chart,
    notes=notes(),
)
