"""The pool calculator: replicas and GPUs for a peak load at a target utilisation (Little's law)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.definitions import replica
from calculators.definitions.assumptions import (
    BF16_BYTES,
    H100_70B_TOKENS_PER_S,
    H100_CUDA_GB,
    H100_CUDA_GIB,
    H100_GB,
    LLAMA_3_8B,
    LLAMA_3_8B_PARAMS_B,
)
from calculators.formatting import number, percent, plural

# The source's pool: 100 requests/s at peak, 20 s each, 70B replicas of 4 GPUs holding 110 requests.
PEAK_REQUESTS_PER_S = 100.0
MEAN_REQUEST_S = 20.0
REQUESTS_PER_REPLICA = 110
GPUS_PER_REPLICA = 4
TARGET_UTILIZATION = 0.6  # S11: a policy value, not a sourced figure
TOKENS_PER_S_DEMAND = 50_000  # a token-throughput example for the last note
# The same 70B replica with the H100's memory as the engine counts it (CUDA's 79.11 GiB) instead of 80 GB.
REQUESTS_H100 = maths.replica(
    replica.GPUS, H100_CUDA_GB, replica.WEIGHTS_GB, replica.UTILIZATION, replica.KV_70B, replica.CONTEXT_TOKENS
).requests_per_replica
DECODE_ONLY_S = 15.0  # an example: the streaming part of a 20 s request, first token to last
REQUESTS_8B = maths.replica(
    1, H100_CUDA_GB, LLAMA_3_8B_PARAMS_B * BF16_BYTES, replica.UTILIZATION, maths.kv_bytes_per_token(**LLAMA_3_8B),
    replica.CONTEXT_TOKENS,
).requests_per_replica  # fmt: skip

# Shared with the headroom calculator.
REPLICA_GPUS = Parameter(
    name="gpus_per_replica",
    type="int",
    default=GPUS_PER_REPLICA,
    min=1,
    max=1024,
    unit="GPUs",
    help="GPUs in one replica.",
    label="GPUs per replica",
)


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    usable = i["requests_per_replica"] * i["target_utilization"]
    steps = [
        step(
            "Peak concurrency (Little's law: L = λ × W)",
            f"{number(i['peak_requests_per_s'])} requests/s × {number(i['mean_request_s'])} s",
            o["peak_concurrency"],
            "requests",
        ),
        step(
            "Requests each replica should carry at the target",
            f"{number(i['requests_per_replica'])} × {number(i['target_utilization'])}",
            usable,
            "requests",
        ),
        step(
            "Replicas, rounded up",
            f"⌈{number(o['peak_concurrency'])} ÷ {number(usable)}⌉ = ⌈{number(o['peak_concurrency'] / usable, 4)}⌉",
            o["replicas"],
            "replicas",
        ),
        step(
            "GPUs in the pool",
            f"{number(o['replicas'])} {plural(o['replicas'], 'replica')} × {number(i['gpus_per_replica'])}"
            f" {plural(i['gpus_per_replica'], 'GPU')}",
            o["gpus"],
            "GPUs",
        ),
    ]
    if o["replicas"] > 0:
        slots = o["replicas"] * i["requests_per_replica"]
        steps.append(
            step(
                "Share of request slots in use at peak",
                f"{number(o['peak_concurrency'])} ÷ ({number(o['replicas'])} × {number(i['requests_per_replica'])})",
                o["peak_concurrency"] / slots,
                "ratio",
            )
        )
    return steps


def _source_pool(target_utilization: float) -> maths.PoolResult:
    return maths.pool(PEAK_REQUESTS_PER_S, MEAN_REQUEST_S, REQUESTS_PER_REPLICA, GPUS_PER_REPLICA, target_utilization)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    case = _source_pool(TARGET_UTILIZATION)
    wait_in_services = maths.queue_wait(1.0, TARGET_UTILIZATION, 1, 0.0).wait_ms  # a 1 ms service time
    pooled_wait = maths.queue_wait(1.0, TARGET_UTILIZATION, REQUESTS_PER_REPLICA, 0.0).wait_ms
    replica_tokens_per_s = H100_70B_TOKENS_PER_S * GPUS_PER_REPLICA
    by_tokens = [
        maths.pool(TOKENS_PER_S_DEMAND, 1.0, replica_tokens_per_s, GPUS_PER_REPLICA, target).replicas
        for target in (1.0, TARGET_UTILIZATION)
    ]
    visible = maths.pool(PEAK_REQUESTS_PER_S, MEAN_REQUEST_S, REQUESTS_H100, GPUS_PER_REPLICA, TARGET_UTILIZATION)
    decode_only = maths.pool(
        PEAK_REQUESTS_PER_S, DECODE_ONLY_S, REQUESTS_PER_REPLICA, GPUS_PER_REPLICA, TARGET_UTILIZATION
    )
    return (
        "**Little's law.** Requests in flight = arrival rate × time in the system: "
        f"{number(PEAK_REQUESTS_PER_S)} requests/s × {number(MEAN_REQUEST_S)} s = "
        f"{number(case.peak_concurrency)} concurrent requests, whatever their arrival pattern. The time must "
        "run from arrival to completion: queueing, prefill and the whole streamed answer, since a request "
        "holds its slot and its KV memory all that while. Timing only the stream (first token to last, "
        f"say {number(DECODE_ONLY_S)} s of the {number(MEAN_REQUEST_S)}) would give "
        f"{number(decode_only.peak_concurrency)} in flight and {number(decode_only.gpus)} GPUs instead of "
        f"{number(case.gpus)}.",
        f"**Slots per replica.** {REQUESTS_PER_REPLICA} requests is a 70B replica on four H100s sized at "
        f"{H100_GB} decimal GB each. The engine counts the total CUDA reports, {number(H100_CUDA_GIB, 4)} GiB = "
        f"{number(H100_CUDA_GB, 4)} GB per H100, so the same replica holds {REQUESTS_H100} (see the replica "
        "calculator) and the pool needs "
        f"{number(visible.gpus)} GPUs, not {number(case.gpus)}.",
        f"**Headroom.** A cap near {percent(TARGET_UTILIZATION)} is a policy value from the course notes, not a "
        f"sourced figure , and an M/M/1 queue (ρ = {number(TARGET_UTILIZATION)}: a wait of "
        f"{number(wait_in_services)} service times) is the wrong reason for it: a replica's "
        f"{REQUESTS_PER_REPLICA} slots act like {REQUESTS_PER_REPLICA} servers on one queue, which at the same "
        f"load wait next to nothing ({number(pooled_wait, 2)} service times). The reasons that hold are losing a replica, bursts "
        "faster than a cold start, time per output token growing with the batch, and KV growing until the "
        "engine preempts; the headroom calculator sizes spares and an occupancy cap separately.",
        "**Only the memory limit.** A pool can also be limited by token throughput: "
        f"{number(TOKENS_PER_S_DEMAND)} tokens/s of a 70B model at {number(H100_70B_TOKENS_PER_S)} tokens/s "
        f"per GPU with TP = {GPUS_PER_REPLICA} needs {number(by_tokens[0])} "
        f"replicas at full load, {number(by_tokens[1])} at a {number(TARGET_UTILIZATION)} cap. Size for "
        "whichever limit binds first.",
    )


CALCULATOR = Calculator(
    slug="pool",
    title="Replicas and GPUs for a pool at peak",
    purpose=(
        "How many replicas and GPUs a peak load needs when no replica may run above a "
        "target share of its request slots (Little's law)."
    ),
    parameters=(
        Parameter(
            name="peak_requests_per_s",
            type="float",
            default=PEAK_REQUESTS_PER_S,
            min=0.0,
            max=10_000_000.0,
            unit="requests/s",
            help="Requests arriving per second at peak.",
            label="Peak arrival rate",
        ),
        Parameter(
            name="mean_request_s",
            type="float",
            default=MEAN_REQUEST_S,
            min=0.001,
            max=86_400.0,
            unit="s",
            help=(
                "Mean time from a request's arrival to its last token: queueing, prefill and the whole "
                "answer (Little's law needs the full time in the system)."
            ),
            label="Mean request time",
        ),
        Parameter(
            name="requests_per_replica",
            type="int",
            default=REQUESTS_PER_REPLICA,
            min=1,
            max=1_000_000,
            unit="requests",
            help="Concurrent requests one replica holds (see the replica calculator).",
            label="Requests per replica",
        ),
        REPLICA_GPUS,
        Parameter(
            name="target_utilization",
            type="float",
            default=TARGET_UTILIZATION,
            min=0.01,
            max=1.0,
            unit="fraction",
            help=(
                "Highest share of its request slots a replica should use at peak (0.6 leaves 40% headroom "
                "for a lost replica, bursts and KV growth)."
            ),
            label="Target utilisation",
        ),
    ),
    outputs=(
        Output(name="peak_concurrency", unit="requests", label="Peak concurrency"),
        Output(name="replicas", unit="replicas", label="Replicas"),
        Output(name="gpus", unit="GPUs", label="GPUs"),
    ),
    compute=maths.pool,
    derive=derive,
    headline="gpus",
    presets=(
        Preset(
            label=(
                f"70B replicas at {percent(TARGET_UTILIZATION)} "
                f"({number(PEAK_REQUESTS_PER_S)} requests/s × {number(MEAN_REQUEST_S)} s)"
            ),
            values={
                "peak_requests_per_s": PEAK_REQUESTS_PER_S,
                "mean_request_s": MEAN_REQUEST_S,
                "requests_per_replica": REQUESTS_PER_REPLICA,
                "gpus_per_replica": GPUS_PER_REPLICA,
                "target_utilization": TARGET_UTILIZATION,
            },
        ),
        Preset(
            label=(
                f"{number(_source_pool(1.0).peak_concurrency)} concurrent at full utilisation "
                f"({number(_source_pool(1.0).gpus)} GPUs)"
            ),
            values={
                "peak_requests_per_s": PEAK_REQUESTS_PER_S,
                "mean_request_s": MEAN_REQUEST_S,
                "requests_per_replica": REQUESTS_PER_REPLICA,
                "gpus_per_replica": GPUS_PER_REPLICA,
                "target_utilization": 1.0,
            },
        ),
        Preset(
            label=f"H100 as the engine counts it ({number(H100_CUDA_GB, 4)} GB): {REQUESTS_H100} requests per replica",
            values={"requests_per_replica": REQUESTS_H100, "gpus_per_replica": GPUS_PER_REPLICA},
        ),
        Preset(
            label=f"Llama-3-8B replicas: 1 GPU, {number(REQUESTS_8B)} requests",
            values={"requests_per_replica": REQUESTS_8B, "gpus_per_replica": 1},
        ),
    ),
    notes=notes(),
)
