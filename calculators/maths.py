"""Closed-form serving maths behind the calculators: numpy and the standard library only.

Every function is pure, typed and fast (scalars use `math`; numpy only where a
vector helps). Each docstring names its formula and where it comes from; the
section numbers (F1, F8, S5, ...) refer to `reference/serving-math.md`.
Units follow the public contract: shares are fractions in [0, 1], parameters
ending in `_gb` are decimal gigabytes (10^9 bytes), byte counts are plain bytes.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from calculators.errors import CalculatorError

__all__ = [
    "BYTES_PER_GB",
    "HOURS_PER_MONTH",
    "IDLE_LIMIT",
    "MARGIN_LIMIT",
    "OVERFLOW_LIMIT",
    "SECONDS_PER_HOUR",
    "AutoscaleResult",
    "BoundedLoadResult",
    "CalculatorError",
    "DecodeStepResult",
    "FleetBreakdown",
    "FleetResult",
    "HeadroomResult",
    "KvCacheResult",
    "LatentKvResult",
    "PoolResult",
    "PrefillResult",
    "QueueWaitResult",
    "RehashResult",
    "ReplicaResult",
    "RequestCostResult",
    "RoutingResult",
    "ShedResult",
    "SpecDecodeResult",
    "TokenBucketResult",
    "TokenCostResult",
    "WindowKvResult",
    "autoscale",
    "best_draft_tokens",
    "bounded_load",
    "bounded_load_cap",
    "bounded_load_spill_most",
    "bounded_load_spread",
    "compute_bound_batch",
    "consistent_moved_share",
    "decode_step",
    "concurrency",
    "erlang_c",
    "fleet",
    "fleet_breakdown",
    "headroom",
    "kingman_wait",
    "kv_bytes_per_token",
    "kv_cache",
    "kv_heads_per_gpu",
    "latent_kv",
    "mla_kv_bytes_per_token",
    "mm1_wait",
    "mmc_queue_length",
    "mmc_wait",
    "modulo_moved_share",
    "mmc_wait_quantile",
    "one_token_period",
    "pool",
    "prefill",
    "prefill_attention_flops",
    "queue_wait",
    "rehash",
    "replica",
    "request_cost",
    "request_cost_parts",
    "ridge_batch",
    "routing",
    "shed",
    "simulate_token_bucket",
    "spec_decode",
    "spec_decode_accepted_share",
    "spec_decode_at_batch",
    "spec_decode_compute_bound",
    "spec_decode_on_roofline",
    "spec_decode_speedups",
    "token_bucket",
    "token_bucket_curve",
    "token_cost",
    "whole_ceil",
    "whole_floor",
    "windowed_kv",
]

BYTES_PER_GB = 1_000_000_000
HOURS_PER_MONTH = 730  # 8760 h / 12 (S12)
SECONDS_PER_HOUR = 3600
IDLE_LIMIT = 0.15  # S18: at most 15% of owned capacity idle
MARGIN_LIMIT = 0.75  # S18: blended cost at most 75% of the API price
OVERFLOW_LIMIT = 0.10  # S18: at most 10% of needed tokens sent to the API

# Quotients such as 2000 / (110 x 0.6) or 0.7 x 10 / 7 land a hair away from a
# whole number in binary floating point; rounding them to whole units must not
# turn 30.000000000000004 into 31 or 19.999999999999996 into 19.
_WHOLE_TOLERANCE = 1e-9


def _near_whole(x: float) -> int | None:
    nearest = round(x)
    if abs(x - nearest) <= _WHOLE_TOLERANCE * max(1.0, abs(x)):
        return int(nearest)
    return None


def whole_floor(x: float) -> int:
    """Return floor(x), treating values within 1e-9 (relative) of an integer as it."""
    nearest = _near_whole(x)
    return nearest if nearest is not None else math.floor(x)


def whole_ceil(x: float) -> int:
    """Return ceil(x), treating values within 1e-9 (relative) of an integer as it."""
    nearest = _near_whole(x)
    return nearest if nearest is not None else math.ceil(x)


def _require(condition: bool, message: str, *fields: str) -> None:
    if not condition:
        raise CalculatorError(message, fields)


def _gb_to_bytes(gb: float) -> int:
    return round(gb * BYTES_PER_GB)


# --- F1, F4: KV cache -------------------------------------------------------


class KvCacheResult(NamedTuple):
    bytes_per_token: int | float
    copy_bytes: int | float
    copies_per_cache: int
    bytes_per_token_per_gpu: int | float


def _whole_if_whole(x: float) -> int | float:
    """Return x as an int when it is a whole number (byte counts), else as a float."""
    nearest = _near_whole(x)
    return nearest if nearest is not None else float(x)


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, bytes_per_value: float) -> int | float:
    """Return the KV-cache bytes one token occupies.

    F1: kv_bytes_per_token = 2 (one K and one V) x n_layers x n_kv_heads x
    head_dim x bytes_per_value. Same formula as cli99/llm-analysis
    `get_memory_kv_cache_per_layer` and microsoft/vidur's memory planner.
    Llama-3-70B: 2 x 80 x 8 x 128 x 2 B = 327,680 B = 320 KiB (S1). Fractions
    of a byte are allowed (0.5 for a 4-bit cache); whole results are ints.
    """
    _require(layers >= 1, "Needs at least one layer.", "layers")
    _require(kv_heads >= 1, "Needs at least one KV head.", "kv_heads")
    _require(head_dim >= 1, "The head dimension must be at least 1.", "head_dim")
    _require(bytes_per_value > 0, "Bytes per value must be positive.", "bytes_per_value")
    return _whole_if_whole(2 * layers * kv_heads * head_dim * bytes_per_value)


def kv_heads_per_gpu(kv_heads: int, tp: int) -> int:
    """Return the KV heads one GPU holds under tensor parallelism `tp`: max(kv_heads / tp, 1).

    F1: each GPU keeps its share of the KV heads; when tp exceeds the heads,
    each head is replicated on tp / kv_heads GPUs, so a GPU still holds one
    (cli99/llm-analysis: max(kv_heads / tp, 1)). A tp that neither divides nor
    is a multiple of kv_heads would split a head across GPUs: refused.
    Llama-3-70B (8 KV heads): TP 4 -> 2; TP 8 -> 1; TP 16 -> 1 (replicated twice).
    """
    _require(kv_heads >= 1, "Needs at least one KV head.", "kv_heads")
    _require(tp >= 1, "The tensor-parallel degree is at least 1.", "tp")
    _require(
        kv_heads % tp == 0 or tp % kv_heads == 0,
        f"A tensor-parallel degree of {tp} cannot share {kv_heads} KV heads evenly: use a tp that "
        f"divides {kv_heads} or is a multiple of it.",
        "tp",
    )
    return max(kv_heads // tp, 1)


def kv_cache(
    layers: int,
    kv_heads: int,
    head_dim: int,
    bytes_per_value: float,
    tokens: int,
    cache_gb: float,
    tp: int = 1,
) -> KvCacheResult:
    """Return the KV bytes per token, one prefix copy's bytes, whole copies per cache, and one GPU's share.

    F1 and F4: copy_bytes = tokens x kv_bytes_per_token;
    copies_per_cache = floor(cache_gb x 10^9 / copy_bytes), one copy per family;
    bytes_per_token_per_gpu = the same with max(kv_heads / tp, 1) heads.
    A 1,200-token preamble on a 70B model is 393,216,000 B = 393.2 MB = 375 MiB
    (S5; the seed's 384 MB reads 320 KiB as 320 kB) and 8 GB holds 20 (S6).
    At TP 4 one GPU holds 81,920 B (80 KiB) per token.
    """
    per_token = kv_bytes_per_token(layers, kv_heads, head_dim, bytes_per_value)
    per_gpu = kv_bytes_per_token(layers, kv_heads_per_gpu(kv_heads, tp), head_dim, bytes_per_value)
    _require(tokens >= 1, "A prefix needs at least one token.", "tokens")
    _require(cache_gb > 0, "The cache size must be positive.", "cache_gb")
    # Exact fractions (bytes_per_value as typed, e.g. 0.5) keep the floor exact.
    exact_copy = tokens * 2 * layers * kv_heads * head_dim * Fraction(str(bytes_per_value))
    copies = math.floor(Fraction(_gb_to_bytes(cache_gb)) / exact_copy)
    copy_bytes = int(exact_copy) if exact_copy.denominator == 1 else float(exact_copy)
    return KvCacheResult(per_token, copy_bytes, copies, per_gpu)


# --- KV beyond grouped-query attention: latent attention and sliding windows --


class LatentKvResult(NamedTuple):
    bytes_per_token: int | float
    request_bytes: int | float
    equivalent_kv_heads: float


def mla_kv_bytes_per_token(layers: int, latent_dim: int, rope_dim: int, bytes_per_value: float) -> int | float:
    """Return the KV-cache bytes one token occupies under multi-head latent attention (MLA).

    DeepSeek-V2 (arXiv:2405.04434, section 2.1 and Table 1): each layer caches one compressed
    latent of d_c values, from which every head's key and value are projected back up, plus one
    decoupled RoPE key of d_h^R values shared by all heads: (d_c + d_h^R) x l elements per token,
    with no factor 2 for K and V (the latent stands for both). DeepSeek-V3 (arXiv:2412.19437,
    section 4.2: 61 layers, d_c = 512, d_h^R = 64) in BF16: 61 x 576 x 2 B = 70,272 B (68.6 KiB).
    """
    _require(layers >= 1, "Needs at least one layer.", "layers")
    _require(latent_dim >= 1, "The latent needs at least one value.", "latent_dim")
    _require(rope_dim >= 0, "The RoPE key cannot have a negative size.", "rope_dim")
    _require(bytes_per_value > 0, "Bytes per value must be positive.", "bytes_per_value")
    return _whole_if_whole(layers * (latent_dim + rope_dim) * bytes_per_value)


def latent_kv(
    layers: int,
    latent_dim: int,
    rope_dim: int,
    bytes_per_value: float,
    context_tokens: int,
    head_dim: int,
) -> LatentKvResult:
    """Return MLA's KV bytes per token, for one request of `context_tokens`, and the GQA it equals.

    request_bytes = context_tokens x mla_kv_bytes_per_token. equivalent_kv_heads = (d_c + d_h^R) /
    (2 x head_dim): a grouped-query model with that many KV heads of `head_dim` caches as much.
    DeepSeek-V2 sets d_c = 4 d_h and d_h^R = d_h / 2, so 576 / 256 = 2.25, the paper's "GQA with
    only 2.25 groups" (Table 1). DeepSeek-V3 at 131,072 tokens: 9,210,691,584 B (9.2 GB).
    """
    per_token = mla_kv_bytes_per_token(layers, latent_dim, rope_dim, bytes_per_value)
    _require(context_tokens >= 1, "A request holds at least one token.", "context_tokens")
    _require(head_dim >= 1, "The head dimension must be at least 1.", "head_dim")
    exact = context_tokens * layers * (latent_dim + rope_dim) * Fraction(str(bytes_per_value))
    request = int(exact) if exact.denominator == 1 else float(exact)
    return LatentKvResult(per_token, request, float((latent_dim + rope_dim) / (2 * head_dim)))


class WindowKvResult(NamedTuple):
    request_bytes: int | float
    full_attention_bytes: int | float
    share_of_full: float


def windowed_kv(
    layers: int,
    windowed_layers: int,
    kv_heads: int,
    head_dim: int,
    bytes_per_value: float,
    window_tokens: int,
    context_tokens: int,
) -> WindowKvResult:
    """Return the KV one request holds when some layers attend only to a sliding window of recent tokens.

    A full-attention layer keeps K and V for every token; a sliding-window layer needs only the last
    W (Mistral 7B, arXiv:2310.06825, section 2: a rolling buffer of W entries; vLLM's hybrid KV
    cache manager reserves window-sized room for such layers). One layer's bytes per token is F1
    with one layer, 2 x kv_heads x head_dim x bytes, so
    request = per_layer x ((layers - windowed) x N + windowed x min(N, W)),
    full_attention = per_layer x layers x N, share_of_full = request / full_attention.
    Mistral 7B (32 layers, all windowed at W = 4,096, 8 KV heads of 128) at 32,768 tokens: 1/8,
    the paper's "reduces the cache memory usage by 8x". gpt-oss-120b (36 layers, 18 of them
    windowed at 128 tokens, 8 KV heads of 64) at 131,072 tokens: 0.5005, about half.
    """
    # F1 with one layer, kept exact (bytes_per_value as typed, e.g. 0.5) so whole byte counts stay ints.
    per_layer = Fraction(str(kv_bytes_per_token(1, kv_heads, head_dim, bytes_per_value)))
    _require(layers >= 1, "Needs at least one layer.", "layers")
    _require(windowed_layers >= 0, "Windowed layers cannot be negative.", "windowed_layers")
    _require(
        windowed_layers <= layers,
        f"A model of {layers} layers cannot have {windowed_layers} windowed layers.",
        "windowed_layers",
    )
    _require(window_tokens >= 1, "A window holds at least one token.", "window_tokens")
    _require(context_tokens >= 1, "A request holds at least one token.", "context_tokens")
    kept = (layers - windowed_layers) * context_tokens + windowed_layers * min(context_tokens, window_tokens)
    exact, full = per_layer * kept, per_layer * layers * context_tokens
    return WindowKvResult(
        request_bytes=int(exact) if exact.denominator == 1 else float(exact),
        full_attention_bytes=int(full) if full.denominator == 1 else float(full),
        share_of_full=float(Fraction(kept, layers * context_tokens)),
    )


# --- F5: routing shares -----------------------------------------------------


class RoutingResult(NamedTuple):
    round_robin_share: float
    hash_busiest_share: float
    fleet_points: float
    duplicate_copies: int


def routing(cards: int, hot_share: float, family_fleet_share: float, shards: int) -> RoutingResult:
    """Return per-replica shares of one prefix family under round robin and hashing.

    `cards` are the replicas the router chooses between (the API's name; a replica may
    span several GPUs). F5, reading A (share of the family), with other keys hashed
    uniformly over all replicas and the hot key split evenly over `shards` replicas:
    round robin = 1/N; busiest replica under hash = h/k + (1 - h)/N;
    fleet points = 100 x f x busiest; duplicate copies = k - 1.
    64 replicas, h = 0.8: 0.015625 (S7) and 0.803125 (S8; the seed's 80 + 20/63
    mixes two models); f = 0.3 gives 24.09 points (S9); k = 2 gives 0.403125 (S10).
    """
    _require(cards >= 1, "Needs at least one replica.", "cards")
    _require(0.0 <= hot_share <= 1.0, "The hot share is a fraction in [0, 1].", "hot_share")
    _require(
        0.0 <= family_fleet_share <= 1.0,
        "The family's share of the fleet is a fraction in [0, 1].",
        "family_fleet_share",
    )
    _require(shards >= 1, "The hot key needs at least one replica.", "shards")
    _require(
        shards <= cards,
        f"The hot key cannot be split over more replicas than the fleet has ({shards} shards > {cards} replicas).",
        "shards",
    )
    busiest = hot_share / shards + (1.0 - hot_share) / cards
    return RoutingResult(
        round_robin_share=float(1.0 / cards),
        hash_busiest_share=min(1.0, busiest),
        fleet_points=100.0 * family_fleet_share * min(1.0, busiest),
        duplicate_copies=shards - 1,
    )


# --- F3: KV budget and requests per replica ---------------------------------


class ReplicaResult(NamedTuple):
    kv_budget_bytes: int
    kv_bytes_per_request: int
    requests_per_replica: int


def replica(
    gpus: int,
    gpu_memory_gb: float,
    weights_gb: float,
    memory_utilization: float,
    kv_bytes_per_token: int,
    context_tokens: int,
) -> ReplicaResult:
    """Return the KV budget of a replica and the whole requests it holds at full context.

    F3, vLLM convention (`gpu_memory_utilization` is a fraction of *total*
    memory; activations ignored): KV_budget = util x gpus x memory - weights;
    requests = floor(KV_budget / (kv_bytes_per_token x context_tokens)).
    70B on 4 x 80 GB at 0.9, 4,096 tokens: 148 GB -> 110 requests; on 2 GPUs
    only 4 GB is left -> 2 requests (S4).
    """
    _require(gpus >= 1, "A replica needs at least one GPU.", "gpus")
    _require(gpu_memory_gb > 0, "GPU memory must be positive.", "gpu_memory_gb")
    _require(weights_gb >= 0, "Weights cannot be negative.", "weights_gb")
    _require(
        0.0 < memory_utilization <= 1.0,
        "Memory utilisation is a fraction in (0, 1].",
        "memory_utilization",
    )
    _require(kv_bytes_per_token >= 1, "KV bytes per token must be positive.", "kv_bytes_per_token")
    _require(context_tokens >= 1, "Context needs at least one token.", "context_tokens")
    usable = round(memory_utilization * _gb_to_bytes(gpus * gpu_memory_gb))
    budget = usable - _gb_to_bytes(weights_gb)
    if budget < 0:
        raise CalculatorError(
            f"The weights ({weights_gb:g} GB) do not fit in the {usable / BYTES_PER_GB:g} GB "
            f"the engine may use ({memory_utilization:g} x {gpus} x {gpu_memory_gb:g} GB): "
            "add GPUs, use bigger GPUs or smaller weights.",
            ("weights_gb",),
        )
    per_request = kv_bytes_per_token * context_tokens
    return ReplicaResult(budget, per_request, budget // per_request)


# --- F12: GPUs per pool -----------------------------------------------------


class PoolResult(NamedTuple):
    peak_concurrency: float
    replicas: int
    gpus: int


def concurrency(arrivals_per_s: float, time_in_system_s: float) -> float:
    """Return the mean number of requests in the system by Little's law, L = lambda x W.

    W is the time from arrival to completion (queueing included). 100 requests/s
    held 20 s each -> 2,000 in flight.
    """
    return arrivals_per_s * time_in_system_s


def pool(
    peak_requests_per_s: float,
    mean_request_s: float,
    requests_per_replica: int,
    gpus_per_replica: int,
    target_utilization: float,
) -> PoolResult:
    """Return the peak concurrency, whole replicas and GPUs of a pool.

    Little's law: concurrency L = lambda x W. F12 (concurrency term):
    replicas = ceil(L / (requests_per_replica x target_utilization)), so no
    replica runs above the target share of its request capacity;
    GPUs = replicas x gpus_per_replica. 2,000 concurrent requests at 110 per
    replica and target 1.0 -> 19 replicas = 76 GPUs.
    """
    _require(peak_requests_per_s >= 0, "The arrival rate cannot be negative.", "peak_requests_per_s")
    _require(mean_request_s > 0, "The mean request time must be positive.", "mean_request_s")
    _require(requests_per_replica >= 1, "A replica holds at least one request.", "requests_per_replica")
    _require(gpus_per_replica >= 1, "A replica needs at least one GPU.", "gpus_per_replica")
    _require(
        0.0 < target_utilization <= 1.0,
        "The target utilisation is a fraction in (0, 1].",
        "target_utilization",
    )
    in_flight = concurrency(peak_requests_per_s, mean_request_s)
    replicas = whole_ceil(in_flight / (requests_per_replica * target_utilization))
    return PoolResult(float(in_flight), replicas, replicas * gpus_per_replica)


# --- F10: cost per token ----------------------------------------------------


class TokenCostResult(NamedTuple):
    usd_per_hour: float
    tokens_per_hour: float
    usd_per_million_tokens: float
    share_of_api: float


def token_cost(card_month_usd: float, cards: int, tokens_per_s: float, api_usd_per_million: float) -> TokenCostResult:
    """Return what self-hosted tokens cost, per hour and per million, against an API.

    F10: card_hour = card_month / 730 (S12); cost per 1M tokens =
    cards x card_hour / (tokens_per_s x 3600) x 10^6, where tokens_per_s is the
    cards' combined rate. share_of_api = that cost / the API price (above 1
    means dearer than the API). H100 at $2,100 and 700 tok/s: $1.1416 per 1M,
    45.7% of $2.50.
    """
    _require(card_month_usd >= 0, "The card-month price cannot be negative.", "card_month_usd")
    _require(cards >= 1, "Needs at least one card.", "cards")
    _require(tokens_per_s > 0, "The token rate must be positive.", "tokens_per_s")
    _require(api_usd_per_million > 0, "The API price must be positive.", "api_usd_per_million")
    usd_per_hour = card_month_usd * cards / HOURS_PER_MONTH
    tokens_per_hour = tokens_per_s * SECONDS_PER_HOUR
    per_million = usd_per_hour / tokens_per_hour * 1e6
    return TokenCostResult(
        float(usd_per_hour),
        float(tokens_per_hour),
        float(per_million),
        float(per_million / api_usd_per_million),
    )


# --- F10: fleet economics ---------------------------------------------------


class FleetResult(NamedTuple):
    tokens_per_card_month: float
    cards_needed: int
    overflow_tokens: float
    overflow_share: float
    api_usd: float
    total_usd: float
    blended_usd_per_million: float
    idle_share: float
    rented_cards_to_cover: int
    idle_ok: bool
    margin_ok: bool
    overflow_ok: bool


class FleetBreakdown(NamedTuple):
    """Intermediate figures of `fleet`, for derivations and charts."""

    owned_capacity: float
    rented_capacity: float
    served_by_owned: float
    served_by_rented: float
    owned_usd: float
    rented_usd: float


def fleet_breakdown(
    monthly_tokens: float,
    tokens_per_s_per_card: float,
    owned_cards: int,
    rented_cards: int,
    card_month_usd: float,
    rent_multiplier: float,
) -> FleetBreakdown:
    """Return capacities, tokens served by each tier and card bills (F10)."""
    per_card = tokens_per_s_per_card * SECONDS_PER_HOUR * HOURS_PER_MONTH
    owned_capacity = owned_cards * per_card
    rented_capacity = rented_cards * per_card
    served_by_owned = min(monthly_tokens, owned_capacity)
    served_by_rented = min(monthly_tokens - served_by_owned, rented_capacity)
    return FleetBreakdown(
        owned_capacity,
        rented_capacity,
        served_by_owned,
        served_by_rented,
        owned_cards * card_month_usd,
        rented_cards * card_month_usd * rent_multiplier,
    )


def fleet(
    monthly_tokens: float,
    tokens_per_s_per_card: float,
    owned_cards: int,
    rented_cards: int,
    card_month_usd: float,
    rent_multiplier: float,
    api_usd_per_million: float,
) -> FleetResult:
    """Return a month of a fleet: cards needed, overflow, bills, blended cost and checks.

    F10: tokens per card-month = tok/s x 3600 x 730; cards_needed =
    ceil(needed / per card). Owned cards serve first, then rented, then the API
    takes the overflow (billed per 1M at the API price). total = owned x price
    + rented x price x rent_multiplier + API bill; blended = total / (needed /
    10^6); idle = unused owned capacity / owned capacity (0 with no owned
    cards); rented_cards_to_cover = ceil(gap left by owned cards / per card).
    Checks (S18): idle <= 15%, blended <= 75% of the API price, overflow <= 10%.
    10T tokens, 5,000 owned H100 at 700 tok/s: overflow 8.02%, API $2,005,000,
    blended $1.2505 per 1M (50.0% of $2.50), idle 0.
    """
    _require(monthly_tokens > 0, "The month needs some tokens.", "monthly_tokens")
    _require(tokens_per_s_per_card > 0, "The token rate must be positive.", "tokens_per_s_per_card")
    _require(owned_cards >= 0, "Owned cards cannot be negative.", "owned_cards")
    _require(rented_cards >= 0, "Rented cards cannot be negative.", "rented_cards")
    _require(card_month_usd >= 0, "The card-month price cannot be negative.", "card_month_usd")
    _require(rent_multiplier >= 0, "The rent multiplier cannot be negative.", "rent_multiplier")
    _require(api_usd_per_million >= 0, "The API price cannot be negative.", "api_usd_per_million")
    per_card = tokens_per_s_per_card * SECONDS_PER_HOUR * HOURS_PER_MONTH
    parts = fleet_breakdown(
        monthly_tokens,
        tokens_per_s_per_card,
        owned_cards,
        rented_cards,
        card_month_usd,
        rent_multiplier,
    )
    overflow = max(0.0, monthly_tokens - parts.served_by_owned - parts.served_by_rented)
    overflow_share = overflow / monthly_tokens
    api_usd = overflow / 1e6 * api_usd_per_million
    total = parts.owned_usd + parts.rented_usd + api_usd
    blended = total / (monthly_tokens / 1e6)
    idle = (parts.owned_capacity - parts.served_by_owned) / parts.owned_capacity if parts.owned_capacity > 0 else 0.0
    gap = max(0.0, monthly_tokens - parts.owned_capacity)
    return FleetResult(
        tokens_per_card_month=float(per_card),
        cards_needed=whole_ceil(monthly_tokens / per_card),
        overflow_tokens=float(overflow),
        overflow_share=float(overflow_share),
        api_usd=float(api_usd),
        total_usd=float(total),
        blended_usd_per_million=float(blended),
        idle_share=float(idle),
        rented_cards_to_cover=whole_ceil(gap / per_card),
        idle_ok=idle <= IDLE_LIMIT + _WHOLE_TOLERANCE,
        margin_ok=blended <= MARGIN_LIMIT * api_usd_per_million * (1 + _WHOLE_TOLERANCE),
        overflow_ok=overflow_share <= OVERFLOW_LIMIT + _WHOLE_TOLERANCE,
    )


# --- F9: token bucket -------------------------------------------------------


class TokenBucketResult(NamedTuple):
    admitted: int
    rejected: int


def token_bucket(rate_per_s: float, burst: int, arrivals: int, window_s: float) -> TokenBucketResult:
    """Return how many of `arrivals` evenly spaced requests a token bucket admits.

    F9 bucket: starts full with `burst` tokens, refills continuously at
    `rate_per_s` up to `burst`, one whole token per request, excess rejected
    (not queued). Arrival i (0-based) comes at t = i x window_s / arrivals.
    With d = rate x window / arrivals tokens refilled between arrivals, the
    simulation has a closed form: admitted = min(N, floor(b + (N - 1) d)),
    exact whenever d >= 1 or b >= 2 (the cap can only bind at the start);
    for b = 1 and d < 1 the cap discards the fraction, so one request passes
    every ceil(1/d) arrivals. Bound: admitted <= min(N, b + r x T).
    b = 20, r = 10, 50 at t = 0 -> 20; N = 100 over 10 s, r = 5, b = 10 -> 59.
    """
    _require(rate_per_s >= 0, "The refill rate cannot be negative.", "rate_per_s")
    _require(burst >= 1, "The bucket holds at least one token.", "burst")
    _require(arrivals >= 0, "Arrivals cannot be negative.", "arrivals")
    _require(window_s >= 0, "The window cannot be negative.", "window_s")
    admitted = _token_bucket_admitted(rate_per_s, burst, arrivals, window_s)
    return TokenBucketResult(admitted, arrivals - admitted)


def _token_bucket_admitted(rate_per_s: float, burst: int, n: int, window_s: float) -> int:
    if n == 0:
        return 0
    refill = rate_per_s * window_s / n  # tokens added between consecutive arrivals
    if refill == 0:
        return min(n, burst)
    if burst >= 2 or refill >= 1 - _WHOLE_TOLERANCE:
        return min(n, whole_floor(burst + (n - 1) * refill))
    return 1 + (n - 1) // one_token_period(refill, n)


def one_token_period(refill: float, arrivals: int) -> int:
    """Return ceil(1/d): the arrivals between admissions of a one-token bucket (capped at `arrivals`)."""
    inverse = 1.0 / refill
    if not math.isfinite(inverse) or inverse >= arrivals:
        return arrivals  # no second token before the last arrival
    return whole_ceil(inverse)


def token_bucket_curve(rate_per_s: float, burst: int, arrivals: int, window_s: float) -> np.ndarray:
    """Return the cumulative admitted count after each arrival (length `arrivals`).

    Vectorised form of `token_bucket` for charts: A(n) = min(n, floor(b + (n-1) d))
    or, for b = 1 and d < 1, 1 + floor((n - 1) / ceil(1/d)).
    """
    n = np.arange(1, arrivals + 1, dtype=np.float64)
    if arrivals == 0:
        return n.astype(np.int64)
    refill = rate_per_s * window_s / arrivals
    if refill == 0:
        return np.minimum(n, burst).astype(np.int64)
    if burst >= 2 or refill >= 1 - _WHOLE_TOLERANCE:
        raw = burst + (n - 1) * refill
        floored = np.floor(raw + _WHOLE_TOLERANCE * np.maximum(1.0, raw))
        return np.minimum(n, floored).astype(np.int64)
    return (1 + (n - 1) // one_token_period(refill, arrivals)).astype(np.int64)


def simulate_token_bucket(rate_per_s: float, burst: int, arrival_times: list[float] | np.ndarray) -> int:
    """Return the requests admitted at the given (sorted) arrival times, one at a time.

    Reference simulation of the F9 bucket (full at t = 0, continuous refill
    capped at `burst`, a whole token per request). Linear in the arrivals; the
    calculators use the closed form in `token_bucket`. F9: 50 at t = 0 then 50
    at t = 1 s with b = 20, r = 10 admits 30 in total; at t = 5 s, 40.
    """
    _require(rate_per_s >= 0, "The refill rate cannot be negative.", "rate_per_s")
    _require(burst >= 1, "The bucket holds at least one token.", "burst")
    tokens = float(burst)
    last = 0.0
    admitted = 0
    for t in arrival_times:
        t = float(t)
        _require(t >= last, "Arrival times must be sorted and start at 0 or later.")
        tokens = min(float(burst), tokens + rate_per_s * (t - last))
        last = t
        if tokens >= 1 - _WHOLE_TOLERANCE:
            tokens -= 1
            admitted += 1
    return admitted


# --- F8: queueing -----------------------------------------------------------


def erlang_c(servers: int, offered_load: float) -> float:
    """Return Erlang C: the probability an arrival waits in an M/M/c queue.

    F8: C(c, A) = [A^c/c! x c/(c - A)] / [sum_{k<c} A^k/k! + A^c/c! x c/(c - A)],
    A = lambda/mu Erlangs (standard Erlang C; Wolfram ErlangC, KSL wqMMc).
    Computed through the Erlang B recursion B_k = A B_{k-1} / (k + A B_{k-1}),
    C = B_c / (1 - rho (1 - B_c)), which never overflows. C(3, 2) = 4/9;
    C(4, 3) = 0.5094; C(3, 2.5) = 0.7022.
    """
    _require(servers >= 1, "Needs at least one server.", "servers")
    _require(offered_load >= 0, "The offered load cannot be negative.")
    _require(
        offered_load < servers,
        f"Unstable: the offered load {offered_load:g} Erlangs needs more than {servers} servers.",
    )
    if offered_load == 0:
        return 0.0
    blocking = 1.0
    for k in range(1, servers + 1):
        blocking = offered_load * blocking / (k + offered_load * blocking)
    rho = offered_load / servers
    return blocking / (1.0 - rho * (1.0 - blocking))


def mm1_wait(arrival_rate: float, service_rate: float) -> float:
    """Return the mean time in queue Wq of an M/M/1 queue (same time unit as the rates).

    F8: Wq = rho / (mu - lambda) = S rho / (1 - rho), rho = lambda / mu.
    lambda = 8/s, mu = 10/s -> 0.4 s.
    """
    _require(service_rate > 0, "The service rate must be positive.")
    _require(arrival_rate >= 0, "The arrival rate cannot be negative.")
    _require(arrival_rate < service_rate, "Unstable: arrivals reach the service rate.")
    return (arrival_rate / service_rate) / (service_rate - arrival_rate)


def mmc_wait(servers: int, offered_load: float, service_time: float) -> float:
    """Return the mean time in queue of an M/M/c queue, in the unit of `service_time`.

    F8: Wq = C(c, A) x S / (c - A). M/M/4, A = 3, S = 1 s -> 0.5094 s;
    M/M/3, A = 2.5, S = 5 min -> 7.02 min.
    """
    _require(service_time >= 0, "The service time cannot be negative.")
    return erlang_c(servers, offered_load) * service_time / (servers - offered_load)


def mmc_queue_length(servers: int, offered_load: float) -> float:
    """Return the mean number of requests waiting in an M/M/c queue, Lq.

    F8 with Little's law (Lq = lambda x Wq): Lq = C(c, A) x A / (c - A).
    M/M/4 at A = 3: 0.5094 x 3 / 1 = 1.528 waiting.
    """
    return erlang_c(servers, offered_load) * offered_load / (servers - offered_load)


def mmc_wait_quantile(servers: int, offered_load: float, service_time: float, quantile: float) -> float:
    """Return the `quantile` of the time in queue of an M/M/c queue, in the unit of `service_time`.

    F8: P(Wq > t) = C(c, A) x exp(-(c - A) t / S), so the q-quantile is
    ln(C / (1 - q)) x S / (c - A), or 0 when at most 1 - q of arrivals wait.
    M/M/1 at rho = 0.5, S = 1: C = 0.5, p99 = ln(50) / 0.5 = 7.824.
    """
    _require(0.0 < quantile < 1.0, "The quantile is a fraction in (0, 1).")
    _require(service_time >= 0, "The service time cannot be negative.")
    waiting = erlang_c(servers, offered_load)
    if waiting <= 1.0 - quantile:
        return 0.0
    return math.log(waiting / (1.0 - quantile)) * service_time / (servers - offered_load)


def kingman_wait(utilization: float, service_time: float, arrival_cv2: float = 1.0, service_cv2: float = 1.0) -> float:
    """Return Kingman's G/G/1 approximation of the mean time in queue.

    F8 (Kingman 1961): Wq ~= (rho / (1 - rho)) x ((ca^2 + cs^2) / 2) x E[S].
    S = 50 ms, rho = 0.8, ca^2 = 1, cs^2 = 0.5 -> 150 ms; cs^2 = 1 gives M/M/1's 200 ms.
    """
    _require(0 <= utilization < 1, "Utilisation must be in [0, 1).")
    return utilization / (1 - utilization) * (arrival_cv2 + service_cv2) / 2 * service_time


class QueueWaitResult(NamedTuple):
    wait_ms: float
    utilization_after: float
    wait_after_ms: float | None
    stable_after: bool
    service_after_ms: float
    wait_after_same_speed_ms: float | None


def _wait_at(service_ms: float, utilization: float, servers: int) -> float:
    if servers == 1:  # M/M/1 closed form, no loop
        return service_ms * utilization / (1.0 - utilization)
    return mmc_wait(servers, servers * utilization, service_ms)


def queue_wait(service_ms: float, utilization: float, servers: int, capacity_loss: float) -> QueueWaitResult:
    """Return the mean queue wait before and after losing a share of capacity, read two ways.

    F8: M/M/c mean time in queue (Erlang C; M/M/1 when servers = 1:
    Wq = S rho / (1 - rho)) at per-server utilisation rho. The same arrivals
    meet 1 / (1 - loss) times the load either way: rho' = rho / (1 - loss).
    What the service time does depends on what was lost:
    - every server slows (throttled cards, a degraded link, a pool modelled as
      one server): S' = S / (1 - loss), and wait_after_ms is Wq at S' and rho';
    - whole replicas fail (each replica its own queue of ``servers``; the
      usual GPU incident): the survivors keep their speed and share the
      traffic, and wait_after_same_speed_ms is Wq at S and rho'.
    rho' >= 1 is unstable: the queue grows without bound, reported as
    stable_after False and both waits after None.
    One server at 50 ms and rho 0.66 losing 30%: rho' = 0.943; slowed,
    S' = 71.43 ms and 97.1 -> 1,179 ms; replicas lost, 97.1 -> 825 ms.
    S22's 97 -> 851 ms is the replicas-lost reading from S = 49.67 ms, rho = 0.6614.
    """
    _require(service_ms > 0, "The service time must be positive.", "service_ms")
    _require(
        0.0 <= utilization < 1.0,
        "Utilisation must be at least 0 and below 1 for the queue to be stable.",
        "utilization",
    )
    _require(servers >= 1, "Needs at least one server.", "servers")
    _require(
        0.0 <= capacity_loss < 1.0,
        "The capacity lost is a fraction in [0, 1).",
        "capacity_loss",
    )
    before = float(_wait_at(service_ms, utilization, servers))
    service_after = service_ms / (1.0 - capacity_loss)
    utilization_after = utilization / (1.0 - capacity_loss)
    if utilization_after >= 1.0:
        return QueueWaitResult(before, float(utilization_after), None, False, float(service_after), None)
    wait_after = float(_wait_at(service_after, utilization_after, servers))
    same_speed = float(_wait_at(service_ms, utilization_after, servers))
    return QueueWaitResult(before, float(utilization_after), wait_after, True, float(service_after), same_speed)


# --- Shedding ---------------------------------------------------------------


class ShedResult(NamedTuple):
    free_admitted_rps: float
    free_shed_rps: float
    utilization: float


def shed(capacity_rps: float, paid_rps: float, free_rps: float, target_utilization: float) -> ShedResult:
    """Return how much free traffic a shared pool admits and sheds at a target utilisation.

    Paid traffic has priority; free traffic fills what is left of
    target x capacity: admitted = min(free, max(0, target x capacity - paid)),
    shed = free - admitted, utilisation = (paid + admitted) / capacity (above 1
    when paid traffic alone overloads the pool). 1,000 rps at 0.85 with 600
    paid admits 250 of 500 free.
    """
    _require(capacity_rps > 0, "The pool's capacity must be positive.", "capacity_rps")
    _require(paid_rps >= 0, "Paid traffic cannot be negative.", "paid_rps")
    _require(free_rps >= 0, "Free traffic cannot be negative.", "free_rps")
    _require(
        0.0 <= target_utilization <= 1.0,
        "The target utilisation is a fraction in [0, 1].",
        "target_utilization",
    )
    admitted = min(free_rps, max(0.0, target_utilization * capacity_rps - paid_rps))
    return ShedResult(float(admitted), float(free_rps - admitted), float((paid_rps + admitted) / capacity_rps))


# --- F11: speculative decoding ----------------------------------------------


class SpecDecodeResult(NamedTuple):
    expected_tokens: float
    speedup: float


def _expected_tokens(acceptance: float, draft_tokens: int) -> float:
    if acceptance == 0.0:
        return 1.0
    if acceptance == 1.0:
        return float(draft_tokens + 1)
    miss = 1.0 - acceptance
    if acceptance < 0.5:
        return (1.0 - acceptance ** (draft_tokens + 1)) / miss
    # Near a = 1, 1 - a^(g+1) loses digits; -expm1((g+1) log1p(-(1-a))) keeps them.
    return -math.expm1((draft_tokens + 1) * math.log1p(-miss)) / miss


def spec_decode(acceptance: float, draft_tokens: int, draft_cost: float) -> SpecDecodeResult:
    """Return the expected tokens per target pass and the walltime speedup.

    Leviathan, Kalman & Matias, ICML'23 (arXiv:2211.17192), F11:
    Eq. 1 E[tokens] = (1 - a^(g+1)) / (1 - a) (g + 1 when a = 1);
    Theorem 3.8 speedup = E / (g c + 1), with c = draft step time / target step
    time. Assumes verifying g + 1 tokens costs one target step (memory-bound
    decode); at large batch that fails and speculation can slow things down.
    a = 0.8, g = 4, c = 0.05 -> 3.3616 tokens, 2.801x.
    """
    _require(0.0 <= acceptance <= 1.0, "The acceptance rate is a fraction in [0, 1].", "acceptance")
    _require(draft_tokens >= 0, "The draft length cannot be negative.", "draft_tokens")
    _require(draft_cost >= 0, "The draft cost cannot be negative.", "draft_cost")
    expected = _expected_tokens(acceptance, draft_tokens)
    return SpecDecodeResult(float(expected), float(expected / (draft_tokens * draft_cost + 1.0)))


def spec_decode_accepted_share(acceptance: float, draft_tokens: int) -> float:
    """Return the share of drafted tokens the target accepts: (E - 1) / g, the rate engines log.

    vLLM logs its acceptance rate as accepted / drafted tokens. With each drafted
    token accepted with probability a independently of the others, a round of one
    chain stops at the first rejection and keeps E - 1 of its g drafts on
    average, so the logged share is (E - 1) / g: below a for g > 1, because the
    drafts after a rejection are paid for and never counted as accepted.
    a = 0.8, g = 4: 2.3616 / 4 = 0.5904. With no drafts (g = 0) nothing is
    accepted and the share is 0.
    """
    _require(0.0 <= acceptance <= 1.0, "The acceptance rate is a fraction in [0, 1].", "acceptance")
    _require(draft_tokens >= 0, "The draft length cannot be negative.", "draft_tokens")
    if draft_tokens == 0:
        return 0.0
    return float((_expected_tokens(acceptance, draft_tokens) - 1.0) / draft_tokens)


def spec_decode_speedups(acceptance: float, draft_cost: float, max_draft: int) -> np.ndarray:
    """Return the Theorem 3.8 speedup for draft lengths 0..max_draft (index = length)."""
    _require(0.0 <= acceptance <= 1.0, "The acceptance rate is a fraction in [0, 1].", "acceptance")
    _require(draft_cost >= 0, "The draft cost cannot be negative.", "draft_cost")
    gammas = np.arange(max_draft + 1, dtype=np.float64)
    if acceptance == 1.0:
        expected = gammas + 1
    else:
        expected = (1 - acceptance ** (gammas + 1)) / (1 - acceptance)
    return expected / (gammas * draft_cost + 1)


def best_draft_tokens(acceptance: float, draft_cost: float, max_draft: int = 64) -> tuple[int, float]:
    """Return the draft length in 1..max_draft with the highest speedup, and that speedup.

    F11: for a = 0.8, c = 0.05 the best is 8 drafted tokens (3.092x).
    """
    speedups = spec_decode_speedups(acceptance, draft_cost, max_draft)
    best = int(np.argmax(speedups[1:])) + 1
    return best, float(speedups[best])


def spec_decode_compute_bound(acceptance: float, draft_tokens: int, draft_cost: float) -> float:
    """Return the speedup when verification is fully compute-bound: E / (g + 1 + g c).

    Far past the ridge, checking g + 1 tokens per sequence costs g + 1 plain
    target steps, while each of the g draft steps still costs c of one (a draft
    step handles one token per sequence), so a round takes (g + 1 + g c) plain
    steps for E tokens. a = 0.8, g = 4, c = 0.05: 3.3616 / 5.2 = 0.646x. (An
    older form, E / ((g + 1)(1 + g c)) = 0.56x, also multiplied the draft steps
    by g + 1.) This is the limit of `spec_decode_at_batch` at very large batch.
    """
    expected = spec_decode(acceptance, draft_tokens, draft_cost).expected_tokens
    return float(expected / (draft_tokens + 1 + draft_tokens * draft_cost))


class SpecDecodeRooflineResult(NamedTuple):
    expected_tokens: float
    accepted_share: float
    verify_steps: float
    speedup: float


def spec_decode_on_roofline(
    acceptance: float,
    draft_tokens: int,
    draft_cost: float,
    params_b: float,
    bytes_per_param: float,
    kv_bytes_per_token: float,
    batch: int,
    mean_context: int,
    tp: int,
    hbm_tb_s: float,
    tflops: float,
) -> SpecDecodeRooflineResult:
    """Return the tokens per pass, the verification pass in plain steps, and the speedup at a batch size.

    Theorem 3.8 prices a verification pass at one plain step. Here a plain step
    is `decode_step` at the batch, and a verification pass reads the same
    weights and KV once but computes batch x (g + 1) tokens, so it costs
    v = max(memory time, (g + 1) x compute time) / plain step. Draft steps cost
    c plain steps each (c measured at this batch). speedup = E / (g c + v). At
    batch 1 v = 1 and this is theorem 3.8; far past the ridge it falls to
    `spec_decode_compute_bound`. 70B BF16, TP 4, H100, 2,048-token contexts,
    a = 0.8, g = 4, c = 0.05: batch 128 verifies 640 tokens in 22.6 ms against
    a 16.9 ms plain step (v = 1.34), still 2.18x; KV reads are not multiplied,
    so long contexts keep it paying. At half the peak TFLOPS v = 2.69.
    """
    plain = decode_step(params_b, bytes_per_param, kv_bytes_per_token, batch, mean_context, tp, hbm_tb_s, tflops)
    expected = spec_decode(acceptance, draft_tokens, draft_cost).expected_tokens
    verify_ms = max(plain.weights_ms + plain.kv_ms, (draft_tokens + 1) * plain.compute_ms)
    verify_steps = verify_ms / plain.step_ms
    return SpecDecodeRooflineResult(
        float(expected),
        spec_decode_accepted_share(acceptance, draft_tokens),
        float(verify_steps),
        float(expected / (draft_tokens * draft_cost + verify_steps)),
    )


def spec_decode_at_batch(
    acceptance: float,
    draft_tokens: int,
    draft_cost: float,
    params_b: float,
    bytes_per_param: float,
    kv_bytes_per_token: float,
    batch: int,
    mean_context: int,
    tp: int,
    hbm_tb_s: float,
    tflops: float,
) -> float:
    """Return the speedup of `spec_decode_on_roofline` alone."""
    return spec_decode_on_roofline(
        acceptance, draft_tokens, draft_cost, params_b, bytes_per_param, kv_bytes_per_token, batch, mean_context, tp,
        hbm_tb_s, tflops,
    ).speedup  # fmt: skip


# --- Roofline: one decode step and one prefill --------------------------------


class DecodeStepResult(NamedTuple):
    weights_ms: float
    kv_ms: float
    compute_ms: float
    step_ms: float
    tokens_per_s_per_stream: float
    tokens_per_s: float
    ridge_batch: float
    memory_bound: bool


def decode_step(
    params_b: float,
    bytes_per_param: float,
    kv_bytes_per_token: float,
    batch: int,
    mean_context: int,
    tp: int,
    hbm_tb_s: float,
    tflops: float,
) -> DecodeStepResult:
    """Return the roofline time of one decode step of a batch, and the tokens it yields.

    Each step reads every GPU's share of the weights (params x bytes / tp) and
    of the batch's KV cache (batch x mean_context x kv_bytes_per_token / tp)
    from HBM, and does 2 x params FLOPs per token of the batch, split over tp
    GPUs. step = max(memory time, compute time) (roofline; all-reduces,
    attention FLOPs and kernel launch overheads left out). The ridge batch,
    where the weights' read time equals the compute time, is
    tflops x bytes_per_param / (2 x hbm_tb_s): 989 x 2 / (2 x 3.35) = 295 on an
    H100 in BF16, so at batch 128 a 70B decode step is still memory-bound.
    70B BF16, TP 4, batch 64 at 2,048 tokens: 10.45 + 3.21 ms of reads against
    2.27 ms of compute -> 13.65 ms a step, 73.2 tokens/s per stream.
    """
    _require(params_b > 0, "The model needs some parameters.", "params_b")
    _require(bytes_per_param > 0, "Bytes per parameter must be positive.", "bytes_per_param")
    _require(kv_bytes_per_token >= 0, "KV bytes per token cannot be negative.", "kv_bytes_per_token")
    _require(batch >= 1, "A step decodes at least one sequence.", "batch")
    _require(mean_context >= 0, "The mean context cannot be negative.", "mean_context")
    _require(tp >= 1, "The tensor-parallel degree is at least 1.", "tp")
    _require(hbm_tb_s > 0, "The memory bandwidth must be positive.", "hbm_tb_s")
    _require(tflops > 0, "The compute rate must be positive.", "tflops")
    params = params_b * 1e9
    bandwidth = hbm_tb_s * 1e12  # bytes per second per GPU
    weights_ms = params * bytes_per_param / tp / bandwidth * 1e3
    kv_ms = batch * mean_context * kv_bytes_per_token / tp / bandwidth * 1e3
    compute_ms = 2 * params * batch / tp / (tflops * 1e12) * 1e3
    memory_ms = weights_ms + kv_ms
    step_ms = max(memory_ms, compute_ms)
    per_stream = 1e3 / step_ms
    return DecodeStepResult(
        weights_ms=float(weights_ms),
        kv_ms=float(kv_ms),
        compute_ms=float(compute_ms),
        step_ms=float(step_ms),
        tokens_per_s_per_stream=float(per_stream),
        tokens_per_s=float(batch * per_stream),
        ridge_batch=float(ridge_batch(bytes_per_param, hbm_tb_s, tflops)),
        memory_bound=memory_ms >= compute_ms,
    )


def ridge_batch(bytes_per_param: float, hbm_tb_s: float, tflops: float) -> float:
    """Return the decode batch at which compute time equals the time to read the weights.

    Per step a batch of B does 2 x params x B FLOPs and reads params x
    bytes_per_param bytes of weights, so its intensity is 2B / bytes_per_param
    FLOP per byte; it meets the chip's ridge (tflops / hbm_tb_s FLOP per byte)
    at B = tflops x bytes_per_param / (2 x hbm_tb_s). H100 SXM (989 dense BF16
    TFLOPS, 3.35 TB/s): ridge 295 FLOP/byte, batch 295 in BF16, 148 in FP8 weights
    at the same TFLOPS.
    """
    _require(bytes_per_param > 0, "Bytes per parameter must be positive.", "bytes_per_param")
    _require(hbm_tb_s > 0, "The memory bandwidth must be positive.", "hbm_tb_s")
    _require(tflops > 0, "The compute rate must be positive.", "tflops")
    return tflops * bytes_per_param / (2 * hbm_tb_s)


def compute_bound_batch(
    params_b: float,
    bytes_per_param: float,
    kv_bytes_per_token: float,
    mean_context: int,
    hbm_tb_s: float,
    tflops: float,
) -> float | None:
    """Return the batch at which compute time catches up with weights plus KV reads, or None if never.

    Memory time W + B k equals compute time B f at B = W / (f - k), where W is
    the weights' read time, k one sequence's KV read time and f one token's
    compute time (all per GPU; tp cancels). When a sequence's KV takes longer
    to read than its token takes to compute (k >= f), decode never turns
    compute-bound: long contexts keep it memory-bound at any batch.
    """
    params = params_b * 1e9
    weights = params * bytes_per_param / (hbm_tb_s * 1e12)
    kv = mean_context * kv_bytes_per_token / (hbm_tb_s * 1e12)
    flops = 2 * params / (tflops * 1e12)
    if kv >= flops:
        return None
    return weights / (flops - kv)


class PrefillResult(NamedTuple):
    flops: float
    ttft_s: float


def prefill(params_b: float, prompt_tokens: int, gpus: int, tflops: float, mfu: float) -> PrefillResult:
    """Return the FLOPs of a prompt's prefill and the time to first token it implies.

    Prefill is compute-bound: flops = 2 x params x prompt_tokens (attention's
    own FLOPs, which grow with the square of the prompt, left out);
    ttft = flops / (gpus x tflops x 10^12 x mfu), queueing excluded.
    70B, 4,000 tokens, 4 H100s at 989 TFLOPS and 50% MFU: 5.6 x 10^14 FLOPs, 0.283 s.
    """
    _require(params_b > 0, "The model needs some parameters.", "params_b")
    _require(prompt_tokens >= 1, "A prompt has at least one token.", "prompt_tokens")
    _require(gpus >= 1, "Prefill runs on at least one GPU.", "gpus")
    _require(tflops > 0, "The compute rate must be positive.", "tflops")
    _require(0 < mfu <= 1, "The model FLOPs utilisation is a fraction in (0, 1].", "mfu")
    flops = 2 * params_b * 1e9 * prompt_tokens
    return PrefillResult(float(flops), float(flops / (gpus * tflops * 1e12 * mfu)))


# --- Routing: bounded loads and rehashing -------------------------------------


class BoundedLoadResult(NamedTuple):
    cap_per_replica: int
    replicas_for_family: int


def bounded_load_cap(replicas: int, in_flight: int, epsilon: float) -> int:
    """Return the most requests one replica may hold under consistent hashing with bounded loads.

    Mirrokni, Thorup & Zadimoghaddam (arXiv:1608.01350): cap = ceil((1 + eps) x
    average load) = ceil((1 + eps) x in_flight / replicas). A key whose ring
    replica is full walks clockwise to the next one below the cap. 64 replicas,
    1,000 in flight, eps 0.25 -> 20 (F5); eps 0.1 -> 18.
    """
    _require(replicas >= 1, "Needs at least one replica.", "replicas")
    _require(in_flight >= 1, "Needs at least one request in flight.", "in_flight")
    _require(epsilon >= 0, "The balance slack epsilon cannot be negative.", "epsilon")
    return whole_ceil((1 + epsilon) * in_flight / replicas)


def bounded_load(replicas: int, in_flight: int, epsilon: float, family_in_flight: int) -> BoundedLoadResult:
    """Return the per-replica cap and the replicas one family's requests spill over.

    A family of `family_in_flight` requests (all hashing to one ring point)
    fills its replica to the cap and spills onto the next: it spreads over
    ceil(family_in_flight / cap) replicas. 48 replicas, 1,200 in flight,
    eps 0.2: cap 30, a 600-request family over 20 replicas; 800 of 1,000 on
    64 replicas at eps 0.25: cap 20, 40 replicas (F5).
    """
    cap = bounded_load_cap(replicas, in_flight, epsilon)
    _require(family_in_flight >= 0, "The family's requests cannot be negative.", "family_in_flight")
    _require(
        family_in_flight <= in_flight,
        f"The family's {family_in_flight} requests are part of the {in_flight} in flight: they cannot be more.",
        "family_in_flight",
    )
    return BoundedLoadResult(cap, whole_ceil(family_in_flight / cap))


def bounded_load_spill_most(replicas: int, in_flight: int, epsilon: float, family_in_flight: int) -> int:
    """Return how many replicas a family spreads over when its replicas also keep their own share of other keys.

    `bounded_load` assumes the family fills each replica to the cap. The rest
    of the traffic, (in_flight - family) / replicas per replica on average,
    also hashes onto those replicas; where it got there first, the family finds
    only cap - that much room on each and spreads over ceil(family / (cap -
    others)) replicas. The true spread lies between the two, depending on who
    arrives first. 48 replicas, 1,200 in flight, eps 0.2, a 600 family: cap 30,
    others 12.5 a replica, ceil(600 / 17.5) = 35 against 20; F5's case
    (64, 1,000, 0.25, 800): ceil(800 / 16.875) = 48 against 40.
    """
    cap = bounded_load(replicas, in_flight, epsilon, family_in_flight).cap_per_replica
    if family_in_flight == 0:
        return 0
    room = cap - others_per_replica(replicas, in_flight, family_in_flight)  # >= family / replicas > 0
    return whole_ceil(family_in_flight / room)


class BoundedLoadSpreadResult(NamedTuple):
    cap_per_replica: int
    replicas_for_family: int
    replicas_if_others_first: int


def bounded_load_spread(
    replicas: int, in_flight: int, epsilon: float, family_in_flight: int
) -> BoundedLoadSpreadResult:
    """Return the cap and both ends of a family's spread: `bounded_load`'s floor and `bounded_load_spill_most`.

    48 replicas, 1,200 in flight, eps 0.2, a 600 family: cap 30, at least 20 replicas, 35 if the other keys
    got there first.
    """
    floor = bounded_load(replicas, in_flight, epsilon, family_in_flight)
    most = bounded_load_spill_most(replicas, in_flight, epsilon, family_in_flight)
    return BoundedLoadSpreadResult(floor.cap_per_replica, floor.replicas_for_family, most)


def others_per_replica(replicas: int, in_flight: int, family_in_flight: int) -> float:
    """Return the requests of other keys each replica holds on average: (in_flight - family) / replicas."""
    return (in_flight - family_in_flight) / replicas


def bounded_load_unbounded(replicas: int, in_flight: int, family_in_flight: int) -> float:
    """Return the load of a family's own replica under plain consistent hashing (no bound).

    The whole family lands on one replica, which also keeps its share of the other keys:
    family + (in_flight - family) / replicas. 48 replicas, 1,200 in flight, a 600 family: 612.5.
    """
    return family_in_flight + others_per_replica(replicas, in_flight, family_in_flight)


class RehashResult(NamedTuple):
    consistent_moved: float
    modulo_moved: float


def consistent_moved_share(replicas_before: int, replicas_after: int) -> float:
    """Return the share of keys that change replica under consistent hashing when the fleet resizes.

    With evenly spread ring points only the keys of added (or removed)
    replicas move: |after - before| / max(before, after). 40 -> 50: 0.2.
    """
    _require(replicas_before >= 1, "Needs at least one replica before.", "replicas_before")
    _require(replicas_after >= 1, "Needs at least one replica after.", "replicas_after")
    return abs(replicas_after - replicas_before) / max(replicas_before, replicas_after)


def modulo_moved_share(replicas_before: int, replicas_after: int) -> float:
    """Return the share of keys that change replica under hash mod N when N changes.

    A key h stays put iff h mod a = h mod b, true for min(a, b) of every
    lcm(a, b) consecutive hashes: moved = 1 - min(a, b) / lcm(a, b).
    40 -> 50: lcm 200, 1 - 40/200 = 0.8; 40 -> 41: 1 - 40/1640 = 0.976.
    """
    _require(replicas_before >= 1, "Needs at least one replica before.", "replicas_before")
    _require(replicas_after >= 1, "Needs at least one replica after.", "replicas_after")
    return 1 - min(replicas_before, replicas_after) / math.lcm(replicas_before, replicas_after)


def rehash(replicas_before: int, replicas_after: int) -> RehashResult:
    """Return the share of keys remapped by a resize, under consistent hashing and under hash mod N."""
    return RehashResult(
        float(consistent_moved_share(replicas_before, replicas_after)),
        float(modulo_moved_share(replicas_before, replicas_after)),
    )


# --- Autoscaling and headroom -------------------------------------------------


class AutoscaleResult(NamedTuple):
    desired_replicas: int


def autoscale(replicas: int, metric: float, target: float, tolerance: float) -> AutoscaleResult:
    """Return the Kubernetes Horizontal Pod Autoscaler's desired replica count.

    desired = ceil(replicas x metric / target), left unchanged while
    |metric / target - 1| <= tolerance (the controller's default tolerance is
    0.1). The HPA then clamps to its min and max replicas (not modelled).
    10 replicas at 12 waiting against a target of 5 -> 24 (F6); 12 at 9 against 4 -> 27.
    """
    _require(replicas >= 0, "Replicas cannot be negative.", "replicas")
    _require(metric >= 0, "The metric cannot be negative.", "metric")
    _require(target > 0, "The target must be positive.", "target")
    _require(tolerance >= 0, "The tolerance cannot be negative.", "tolerance")
    ratio = metric / target
    if abs(ratio - 1) <= tolerance + _WHOLE_TOLERANCE:
        return AutoscaleResult(replicas)
    return AutoscaleResult(whole_ceil(replicas * ratio))


class HeadroomResult(NamedTuple):
    replicas: int
    gpus: int


def headroom(
    concurrency: float, slots_per_replica: int, max_occupancy: float, spare_replicas: int, gpus_per_replica: int
) -> HeadroomResult:
    """Return replicas and GPUs for a concurrency with slots kept below an occupancy, plus spares.

    replicas = ceil(concurrency / (slots_per_replica x max_occupancy)) +
    spare_replicas (N + k: survive losing k replicas); gpus = replicas x
    gpus_per_replica. 2,000 in flight, 110 slots at 0.9, 2 spares: 21 + 2 = 23
    replicas, 92 GPUs; with 125 slots (H100 memory as software sees it): 18 + 2 = 20, 80 GPUs.
    """
    _require(concurrency >= 0, "Concurrency cannot be negative.", "concurrency")
    _require(slots_per_replica >= 1, "A replica has at least one slot.", "slots_per_replica")
    _require(0 < max_occupancy <= 1, "The occupancy cap is a fraction in (0, 1].", "max_occupancy")
    _require(spare_replicas >= 0, "Spare replicas cannot be negative.", "spare_replicas")
    _require(gpus_per_replica >= 1, "A replica needs at least one GPU.", "gpus_per_replica")
    replicas = whole_ceil(concurrency / (slots_per_replica * max_occupancy)) + spare_replicas
    return HeadroomResult(replicas, replicas * gpus_per_replica)


# --- What one request costs -----------------------------------------------------


class RequestCostResult(NamedTuple):
    usd_per_request: float
    usd_total: float


def request_cost_parts(
    input_tokens: int,
    cached_fraction: float,
    output_tokens: int,
    input_usd_per_million: float,
    cached_usd_per_million: float,
    output_usd_per_million: float,
) -> tuple[float, float, float]:
    """Return one request's bill in three parts: uncached input, cached input and output (USD)."""
    _require(input_tokens >= 0, "Input tokens cannot be negative.", "input_tokens")
    _require(0 <= cached_fraction <= 1, "The cached share is a fraction in [0, 1].", "cached_fraction")
    _require(output_tokens >= 0, "Output tokens cannot be negative.", "output_tokens")
    for name, price in (
        ("input_usd_per_million", input_usd_per_million),
        ("cached_usd_per_million", cached_usd_per_million),
        ("output_usd_per_million", output_usd_per_million),
    ):
        _require(price >= 0, "A price cannot be negative.", name)
    cached = input_tokens * cached_fraction
    return (
        (input_tokens - cached) * input_usd_per_million / 1e6,
        cached * cached_usd_per_million / 1e6,
        output_tokens * output_usd_per_million / 1e6,
    )


def request_cost(
    input_tokens: int,
    cached_fraction: float,
    output_tokens: int,
    input_usd_per_million: float,
    cached_usd_per_million: float,
    output_usd_per_million: float,
    requests: int,
) -> RequestCostResult:
    """Return what one request and `requests` requests cost at per-token list prices.

    Per request: uncached input at the input price, cached input at the cached
    price, output at the output price, each per million tokens. 3,000 input
    tokens 60% cached, 300 output, at $0.60 / $0.30 / $2.40 per million:
    $0.00072 + $0.00054 + $0.00072 = $0.00198; $1.98 per 1,000 requests.
    """
    _require(requests >= 0, "Requests cannot be negative.", "requests")
    per_request = sum(
        request_cost_parts(
            input_tokens,
            cached_fraction,
            output_tokens,
            input_usd_per_million,
            cached_usd_per_million,
            output_usd_per_million,
        )
    )
    return RequestCostResult(float(per_request), float(per_request * requests))


def prefill_attention_flops(layers: int, hidden: int, prompt_tokens: int) -> float:
    """Return the attention-score FLOPs of a causal prefill that `prefill` leaves out.

    Per layer, Q x K^T and the weighted sum over V are two matrix products of
    about s^2 / 2 causal pairs x hidden multiply-adds each: 2 x 2 x (s^2 / 2) x
    hidden = 2 x hidden x s^2 FLOPs. Llama-3-70B (80 layers, hidden 8,192) at
    4,000 tokens: 2.1 x 10^13, about 4% of 2 x params x tokens; at 32,768, 31%.
    """
    _require(layers >= 1, "Needs at least one layer.", "layers")
    _require(hidden >= 1, "The hidden size must be at least 1.", "hidden")
    _require(prompt_tokens >= 0, "The prompt cannot be negative.", "prompt_tokens")
    return 2.0 * layers * hidden * prompt_tokens**2
