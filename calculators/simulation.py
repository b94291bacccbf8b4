"""The fleet simulator: routing and autoscaling played out request by request (numpy and stdlib only).

Two modes, each a pure function of its inputs and a seed (the same inputs give
the same numbers):

- `simulate_routing`: a discrete-event simulation of N replicas, each with
  `slots` decode slots served first come, first served and its own LRU prefix
  cache holding `cache_copies` preambles. Requests arrive as a Poisson process
  from prompt families of Zipf popularity; a hit skips the preamble's prefill.
  Every policy sees the same arrivals (drawn once, vectorised with numpy).
- `simulate_autoscaling`: a day minute by minute: a diurnal demand curve plus
  a spike, Poisson arrivals per minute, each ready replica an M/M/slots queue,
  an autoscaling policy (queue depth, KV use or TTFT, the Kubernetes HPA rule)
  with cold starts, an optional warm pool and a scale-down delay.

What is modelled and what is left out is described in the README ("Fleet
simulator"). The queueing formulas come from `calculators.maths`.
"""

from __future__ import annotations

import heapq
import math
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from calculators import maths
from calculators.errors import CalculatorError
from calculators.formatting import number, plural

__all__ = [
    "AUTOSCALING_POLICIES",
    "ROUTING_POLICIES",
    "AutoscalingResult",
    "AutoscalingSetup",
    "PolicyRun",
    "RoutingArrivals",
    "RoutingSetup",
    "demand_curve",
    "draw_arrivals",
    "family_shares",
    "ring_owners",
    "simulate_autoscaling",
    "simulate_policy",
    "simulate_routing",
]

ROUTING_POLICIES = ("round_robin", "least_loaded", "hash", "bounded_load", "prefix_aware")
AUTOSCALING_POLICIES = ("queue_depth", "kv_use", "ttft")
VIRTUAL_NODES = 160  # points per replica on the consistent-hashing ring
PERCENTILES = tuple(range(0, 101, 5))  # the TTFT distribution, as quantiles
MINUTES_PER_DAY = 1440
# Past this offered load (every request a miss) the fleet's queues only grow: the run would say no more,
# and its cost (loads in the thousands) would blow the time budget.
MAX_FLEET_LOAD = 1.5
HPA_TOLERANCE = 0.1  # the Kubernetes HPA's default: no change while metric/target is within 10%


# --- Deterministic hashing (the ring must not depend on the seed) ------------------


def _mix64(values: np.ndarray) -> np.ndarray:
    """Return splitmix64 of unsigned 64-bit integers: a fixed, well-spread hash (Steele et al. 2014)."""
    with np.errstate(over="ignore"):
        z = values.astype(np.uint64) + np.uint64(0x9E3779B97F4A7C15)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _ring(replicas: int) -> tuple[np.ndarray, np.ndarray]:
    """Return the ring's sorted points and the replica owning each (VIRTUAL_NODES points a replica).

    A replica's points depend only on its number, so growing the fleet adds
    points without moving the old ones: that is what makes the hashing consistent.
    """
    ids = np.arange(replicas, dtype=np.uint64)[:, None] * np.uint64(1 << 20) + np.arange(VIRTUAL_NODES, dtype=np.uint64)
    points = _mix64(ids.ravel() ^ np.uint64(0x5EED_0F_F1EE7))
    owners = np.repeat(np.arange(replicas), VIRTUAL_NODES)
    order = np.argsort(points, kind="stable")
    return points[order], owners[order]


def _key_hashes(keys: np.ndarray) -> np.ndarray:
    return _mix64(keys.astype(np.uint64) + np.uint64(1 << 40))


def _ring_positions(points: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Return the index of the first ring point clockwise from each key's hash."""
    return np.searchsorted(points, _key_hashes(keys), side="left") % len(points)


def ring_owners(replicas: int, keys: np.ndarray) -> np.ndarray:
    """Return the replica that consistent hashing gives each key (integer keys) on a fleet of `replicas`."""
    points, owners = _ring(replicas)
    return owners[_ring_positions(points, np.asarray(keys))]


# --- Routing mode ----------------------------------------------------------------


@dataclass(frozen=True)
class RoutingSetup:
    """The fleet, the traffic and the policies' knobs of one routing simulation."""

    replicas: int = 64
    slots_per_replica: int = 16
    cache_copies: int = 4
    families: int = 200
    zipf: float = 1.1
    arrival_rps: float = 100.0
    requests: int = 20_000
    preamble_tokens: int = 2000
    suffix_tokens: int = 200
    output_tokens: int = 250
    prefill_tokens_per_s: float = 10_000.0
    decode_ms_per_token: float = 20.0
    load_gap: int = 4
    epsilon: float = 0.25
    exponential_service: bool = False
    seed: int = 1

    def check(self) -> None:
        """Raise CalculatorError when the setup cannot run (the adapters bound each value first)."""
        if self.replicas < 1:
            raise CalculatorError("Needs at least one replica.", ("replicas",))
        if self.slots_per_replica < 1:
            raise CalculatorError("A replica needs at least one slot.", ("slots_per_replica",))
        if self.cache_copies < 0:
            raise CalculatorError("The cache cannot hold fewer than 0 copies.", ("cache_copies",))
        if self.families < 1:
            raise CalculatorError("Needs at least one prompt family.", ("families",))
        if self.arrival_rps <= 0:
            raise CalculatorError("The arrival rate must be positive.", ("arrival_rps",))
        if self.requests < 1:
            raise CalculatorError("Needs at least one request.", ("requests",))
        if self.prefill_tokens_per_s <= 0:
            raise CalculatorError("The prefill rate must be positive.", ("prefill_tokens_per_s",))
        if self.fleet_load > MAX_FLEET_LOAD:
            slots = self.replicas * self.slots_per_replica
            raise CalculatorError(
                f"Arrivals are {number(self.fleet_load)}× what the fleet's slots can serve when every request "
                f"pays its whole prefill ({number(self.arrival_rps)} requests/s × "
                f"{number(self.miss_prefill_s + self.decode_s)} s ÷ {number(slots)} {plural(slots, 'slot')}). "
                f"The simulator runs loads up to {MAX_FLEET_LOAD:g}× that: lower the arrival rate or add replicas "
                "or slots.",
                ("arrival_rps",),
            )

    @property
    def decode_s(self) -> float:
        return self.output_tokens * self.decode_ms_per_token / 1000.0

    @property
    def fleet_load(self) -> float:
        """Return the offered load over all slots, every request paying a miss: arrival_rps x service / slots."""
        return self.arrival_rps * (self.miss_prefill_s + self.decode_s) / (self.replicas * self.slots_per_replica)

    @property
    def hit_prefill_s(self) -> float:
        return self.suffix_tokens / self.prefill_tokens_per_s

    @property
    def miss_prefill_s(self) -> float:
        return (self.preamble_tokens + self.suffix_tokens) / self.prefill_tokens_per_s


def family_shares(families: int, zipf: float) -> np.ndarray:
    """Return each family's share of requests: Zipf, p_k proportional to 1 / k^s for k = 1..families."""
    weights = 1.0 / np.arange(1, families + 1, dtype=np.float64) ** zipf
    return weights / weights.sum()


@dataclass(frozen=True)
class RoutingArrivals:
    """The requests every policy sees: arrival times, families, decode times and random pairs."""

    times: np.ndarray  # seconds, sorted
    family: np.ndarray  # family index, 0 = the hottest
    decode_s: np.ndarray  # decode time of each request
    pairs: np.ndarray  # (n, 2) replica pairs for the power of two choices


def draw_arrivals(setup: RoutingSetup) -> RoutingArrivals:
    """Return the arrivals of a setup, drawn at once from its seed (vectorised)."""
    rng = np.random.default_rng(setup.seed)
    n = setup.requests
    times = np.cumsum(rng.exponential(1.0 / setup.arrival_rps, n))
    cdf = np.cumsum(family_shares(setup.families, setup.zipf))
    family = np.minimum(np.searchsorted(cdf, rng.random(n), side="right"), setup.families - 1)
    decode_s = np.full(n, setup.decode_s)
    if setup.exponential_service:
        decode_s = decode_s * rng.exponential(1.0, n)
    pairs = rng.integers(0, setup.replicas, size=(n, 2))
    return RoutingArrivals(times, family, decode_s, pairs)


@dataclass
class PolicyRun:
    """One policy's run: a summary and, per request, where it went and when it started."""

    policy: str
    replica: np.ndarray
    hit: np.ndarray
    wait_s: np.ndarray
    ttft_s: np.ndarray
    finish_s: np.ndarray
    evictions: int
    cap_exceeded: int  # bounded_load only: assignments above the cap (0 by construction)
    summary: dict = field(default_factory=dict)


def simulate_policy(setup: RoutingSetup, arrivals: RoutingArrivals, policy: str, summarise: bool = True) -> PolicyRun:
    """Run one routing policy over the arrivals, request by request.

    Each replica is a c-server FCFS queue (c = slots): a request starts when it
    arrives or when the replica's earliest slot frees, whichever is later
    (the Kiefer-Wolfowitz recursion), and holds its slot for prefill then
    decode. Prefill covers the preamble only on a prefix-cache miss; the cache
    is LRU over whole preamble copies and is filled at routing time. Loads (for
    least_loaded, bounded_load and prefix_aware) are requests in flight,
    queued or running, when the request arrives.
    """
    if policy not in ROUTING_POLICIES:
        raise CalculatorError(f"Unknown policy “{policy}”.", ("policies",))
    n_rep = setup.replicas
    capacity = setup.cache_copies
    hit_s, miss_s = setup.hit_prefill_s, setup.miss_prefill_s
    times = arrivals.times.tolist()
    families = arrivals.family.tolist()
    decode = arrivals.decode_s.tolist()
    slots = [[0.0] * setup.slots_per_replica for _ in range(n_rep)]
    caches: list[OrderedDict] = [OrderedDict() for _ in range(n_rep)]
    holders: list[set[int]] = [set() for _ in range(setup.families)]
    # Loads: prefix_aware needs every replica's count up to date (one heap of (finish, replica),
    # and the replicas grouped by load so the lightest holder is found without scanning them all);
    # least_loaded and bounded_load look at a few replicas, so each keeps its own heap of finish
    # times and drops the finished ones only when asked (plus one heap for bounded_load's total).
    loads = [0] * n_rep
    levels: list[set[int]] = [set(range(n_rep))]  # prefix_aware: levels[k] = the replicas with load k
    lowest = 0  # the lightest load
    in_flight: list[tuple[float, int]] = []
    finishing: list[list[float]] = [[] for _ in range(n_rep)]
    ends: list[float] = []
    track_holders = policy == "prefix_aware"
    owner = start_pos = ring_owner = None
    if policy in ("hash", "bounded_load"):
        points, owners = _ring(n_rep)
        positions = _ring_positions(points, np.arange(setup.families))
        owner = owners[positions].tolist()
        start_pos = positions.tolist()
        ring_owner = owners.tolist()
    pairs = arrivals.pairs.tolist() if policy == "least_loaded" else None
    code = ROUTING_POLICIES.index(policy)
    ring_size = n_rep * VIRTUAL_NODES
    bounded_load_cap, epsilon = maths.bounded_load_cap, setup.epsilon
    gap = setup.load_gap
    cap_exceeded = 0
    evictions = 0
    out_replica = [0] * len(times)
    out_hit = [False] * len(times)
    out_start = [0.0] * len(times)
    pop, push, replace = heapq.heappop, heapq.heappush, heapq.heapreplace
    for i, (t, fam, decode_s) in enumerate(zip(times, families, decode)):
        if code == 0:  # round_robin
            r = i % n_rep
        elif code == 2:  # hash
            r = owner[fam]
        elif code == 1:  # least_loaded: the lighter of two random replicas
            a, b = pairs[i]
            fa, fb = finishing[a], finishing[b]
            while fa and fa[0] <= t:
                pop(fa)
            while fb and fb[0] <= t:
                pop(fb)
            r = a if len(fa) <= len(fb) else b
        elif code == 3:  # bounded_load: the first replica clockwise below the cap, counting this request
            while ends and ends[0] <= t:
                pop(ends)
            cap = bounded_load_cap(n_rep, len(ends) + 1, epsilon)
            pos = start_pos[fam]
            for step in range(ring_size):
                r = ring_owner[(pos + step) % ring_size]
                fr = finishing[r]
                while fr and fr[0] <= t:
                    pop(fr)
                if len(fr) < cap:
                    break
            else:
                cap_exceeded += 1
        else:  # prefix_aware: the least-loaded holder, unless it is more than `gap` above the lightest
            while in_flight and in_flight[0][0] <= t:
                q = pop(in_flight)[1]
                level = loads[q]
                levels[level].discard(q)
                levels[level - 1].add(q)
                loads[q] = level - 1
                if level - 1 < lowest:
                    lowest = level - 1
            held = holders[fam]
            if held:
                level = lowest
                while levels[level].isdisjoint(held):
                    level += 1
                r = min(levels[level] & held)  # ties: the lowest-numbered replica
                if level - lowest > gap:
                    r = loads.index(lowest)
            else:
                r = loads.index(lowest)
        cache = caches[r]
        if fam in cache:
            cache.move_to_end(fam)
            hit = True
        else:
            hit = False
            if capacity:
                cache[fam] = None
                if track_holders:
                    holders[fam].add(r)
                if len(cache) > capacity:
                    old = cache.popitem(last=False)[0]
                    evictions += 1
                    if track_holders:
                        holders[old].discard(r)
        free = slots[r]
        begin = free[0]
        if begin < t:
            begin = t
        finish = begin + (hit_s if hit else miss_s) + decode_s
        replace(free, finish)
        if code == 4:
            push(in_flight, (finish, r))
            level = loads[r]
            levels[level].discard(r)
            if level + 1 == len(levels):
                levels.append(set())
            levels[level + 1].add(r)
            loads[r] = level + 1
            if level == lowest and not levels[level]:
                lowest += 1
        elif code == 1 or code == 3:
            push(finishing[r], finish)
            if code == 3:
                push(ends, finish)
        out_replica[i] = r
        out_hit[i] = hit
        out_start[i] = begin
    replica = np.array(out_replica, dtype=np.int64)
    hits = np.array(out_hit, dtype=bool)
    start = np.array(out_start)
    wait = start - arrivals.times
    prefill = np.where(hits, hit_s, miss_s)
    run = PolicyRun(
        policy=policy,
        replica=replica,
        hit=hits,
        wait_s=wait,
        ttft_s=wait + prefill,
        finish_s=start + prefill + arrivals.decode_s,
        evictions=evictions,
        cap_exceeded=cap_exceeded,
    )
    if summarise:
        run.summary = _summarise(setup, arrivals, run)
    return run


def _summarise(setup: RoutingSetup, arrivals: RoutingArrivals, run: PolicyRun) -> dict:
    n = len(run.replica)
    counts = np.bincount(run.replica, minlength=setup.replicas)
    share = counts / n
    busy = np.bincount(run.replica, weights=run.finish_s - (arrivals.times + run.wait_s), minlength=setup.replicas)
    span = float(max(run.finish_s.max(), arrivals.times[-1]))
    utilisation = busy / (setup.slots_per_replica * span)
    busiest = int(np.argmax(counts))
    ttft_ms = run.ttft_s * 1000.0
    wait_ms = run.wait_s * 1000.0
    prefill_tokens = int(n * setup.suffix_tokens + np.count_nonzero(~run.hit) * setup.preamble_tokens)
    return {
        "hit_rate": float(run.hit.mean()),
        "busiest_share": float(share[busiest]),
        "busiest_utilization": float(utilisation.max()),
        "mean_utilization": float(utilisation.mean()),
        "ttft_p50_ms": float(np.percentile(ttft_ms, 50)),
        "ttft_p99_ms": float(np.percentile(ttft_ms, 99)),
        "queue_wait_mean_ms": float(wait_ms.mean()),
        "queue_wait_p99_ms": float(np.percentile(wait_ms, 99)),
        "prefill_tokens": prefill_tokens,
        "evictions": int(run.evictions),
        "replica_share": [float(x) for x in share],
        "ttft_percentiles_ms": [float(x) for x in np.percentile(ttft_ms, PERCENTILES)],
    }


def simulate_routing(setup: RoutingSetup, policies: tuple[str, ...] = ROUTING_POLICIES) -> dict[str, dict]:
    """Return each policy's summary, every policy run on the same arrivals."""
    setup.check()
    arrivals = draw_arrivals(setup)
    return {policy: simulate_policy(setup, arrivals, policy).summary for policy in policies}


# --- Autoscaling mode --------------------------------------------------------------


@dataclass(frozen=True)
class AutoscalingSetup:
    """A day of demand, the replicas' speed, the policy and its targets, prices and the SLO."""

    policy: str = "queue_depth"
    base_rps: float = 100.0
    peak_rps: float = 300.0
    spike_multiplier: float = 2.0
    spike_start_minute: int = 600
    spike_minutes: int = 30
    slots_per_replica: int = 64
    request_s: float = 6.0
    prefill_ms: float = 220.0
    slo_ttft_ms: float = 2000.0
    cold_start_s: float = 300.0
    warm_replicas: int = 0
    warm_start_s: float = 20.0
    scale_down_delay_s: float = 300.0
    min_replicas: int = 2
    max_replicas: int = 128
    queue_target: float = 48.0
    kv_target: float = 0.7
    ttft_target_ms: float = 1000.0
    gpus_per_replica: int = 4
    card_month_usd: float = 2100.0
    seed: int = 1

    def check(self) -> None:
        if self.policy not in AUTOSCALING_POLICIES:
            raise CalculatorError(f"Unknown policy “{self.policy}”.", ("policy",))
        if self.min_replicas > self.max_replicas:
            raise CalculatorError("The minimum replicas cannot exceed the maximum.", ("min_replicas", "max_replicas"))
        if self.peak_rps < self.base_rps:
            raise CalculatorError("The peak demand cannot be below the base demand.", ("peak_rps",))


def demand_curve(setup: AutoscalingSetup) -> np.ndarray:
    """Return the mean demand (requests/s) of each minute of the day.

    A cosine from `base_rps` at 04:00 to `peak_rps` at 16:00, multiplied by
    `spike_multiplier` for `spike_minutes` from `spike_start_minute`.
    """
    minutes = np.arange(MINUTES_PER_DAY, dtype=np.float64)
    swing = (1.0 - np.cos(2.0 * np.pi * (minutes - 240.0) / MINUTES_PER_DAY)) / 2.0
    demand = setup.base_rps + (setup.peak_rps - setup.base_rps) * swing
    spike = (minutes >= setup.spike_start_minute) & (minutes < setup.spike_start_minute + setup.spike_minutes)
    return np.where(spike, demand * setup.spike_multiplier, demand)


@dataclass(frozen=True)
class AutoscalingResult:
    slo_violation_minutes: int
    gpu_hours: float
    cost_usd: float
    timeline: list[dict]


def _replica_minute(setup: AutoscalingSetup, arrival_rps: float, ready: float) -> tuple[float, float, float]:
    """Return (p99 queue wait in s, queued requests, busy share of slots) of one replica for a minute.

    The arrivals split evenly over the ready replicas; each is an M/M/c queue,
    c = slots. p99 of the wait: P(W > t) = C(c, A) e^(-(c mu - lambda) t).
    """
    c = setup.slots_per_replica
    if ready <= 0:
        return math.inf, math.inf, 1.0
    offered = arrival_rps / ready * setup.request_s  # Erlangs per replica
    if offered >= c:
        return math.inf, math.inf, 1.0
    wait_p99 = maths.mmc_wait_quantile(c, offered, setup.request_s, 0.99)
    queued = maths.mmc_queue_length(c, offered)
    return wait_p99, queued, offered / c


def simulate_autoscaling(setup: AutoscalingSetup) -> AutoscalingResult:
    """Return a day of a fleet under one autoscaling policy, minute by minute.

    Each minute: Poisson arrivals at the demand curve; a backlog carries
    requests the ready replicas could not take; the p99 TTFT is the prefill
    plus the backlog's drain time plus the M/M/c p99 wait of one replica. At
    the end of the minute the policy asks the HPA rule for replicas,
    ceil(current x metric / target) (unchanged within 10%); new replicas come
    from the warm pool (ready after `warm_start_s`, the pool refilled by a cold
    start) or load weights for `cold_start_s`. Scaling down waits until every
    decision of the last `scale_down_delay_s` wanted fewer. Billed: every
    replica provisioned, starting or warm, at card_month_usd / 730 per GPU-hour.
    """
    setup.check()
    rng = np.random.default_rng(setup.seed)
    demand = demand_curve(setup)
    arrivals = rng.poisson(demand * 60.0) / 60.0
    service_rate = setup.slots_per_replica / setup.request_s  # requests/s one replica finishes when busy
    # Start with the replicas the first minute's concurrency (Little's law) needs at the KV-use target.
    concurrency = float(demand[0]) * setup.request_s
    first = maths.headroom(concurrency, setup.slots_per_replica, setup.kv_target, 0, setup.gpus_per_replica).replicas
    first = min(max(first, setup.min_replicas), setup.max_replicas)
    ready_at = [0.0] * first  # when each provisioned replica serves
    warm_ready_at = [0.0] * setup.warm_replicas  # when each standby replica is loaded
    window = max(1, math.ceil(setup.scale_down_delay_s / 60.0))
    recent: list[int] = []
    backlog = 0.0
    violations = 0
    replica_minutes = 0.0
    timeline = []
    card_hour = setup.card_month_usd / maths.HOURS_PER_MONTH
    for minute in range(MINUTES_PER_DAY):
        begin = minute * 60.0
        ready = sum(min(1.0, max(0.0, (begin + 60.0 - at) / 60.0)) for at in ready_at)
        rate = float(arrivals[minute])
        capacity = ready * service_rate
        before = backlog
        backlog = max(0.0, backlog + (rate - capacity) * 60.0)
        drain_s = max(before, backlog) / capacity if capacity > 0 else math.inf
        admitted = min(rate, capacity) if backlog > 0 else rate
        wait_p99, queued, busy = _replica_minute(setup, admitted, ready)
        if backlog > 0:
            busy = 1.0
        ttft = setup.prefill_ms + 1000.0 * (drain_s + (wait_p99 if math.isfinite(wait_p99) else 0.0))
        if not math.isfinite(ttft):
            ttft = 3_600_000.0  # no replica ready: report an hour
        quiet = rate == 0 and before == 0  # no request this minute: nothing to measure or violate
        violations += not quiet and ttft > setup.slo_ttft_ms
        provisioned = len(ready_at)
        replica_minutes += provisioned + len(warm_ready_at)
        timeline.append(
            {
                "minute": minute,
                "demand_rps": float(demand[minute]),
                "arrival_rps": rate,
                "replicas": provisioned,
                "ready_replicas": round(ready, 3),
                "ttft_p99_ms": None if quiet else ttft,
            }
        )
        if setup.policy == "queue_depth":
            waiting = queued if math.isfinite(queued) else 0.0
            per_replica = backlog / max(ready, 1e-9) + waiting + busy * setup.slots_per_replica
            metric, target = per_replica, setup.queue_target
        elif setup.policy == "kv_use":
            metric, target = busy, setup.kv_target
        else:
            metric, target = ttft, setup.ttft_target_ms
        if quiet:
            ttft = setup.prefill_ms  # for the policy: an idle minute reads as an unqueued one
        if setup.policy == "ttft":
            # TTFT hardly moves until the queue saturates, so a ratio would cut deep on a quiet
            # minute: scale up by the ratio when over the target, down a tenth below half of it.
            if ttft > target:
                wanted = maths.autoscale(
                    provisioned, ttft * ready / max(provisioned, 1), target, HPA_TOLERANCE
                ).desired_replicas
            elif ttft < target / 2:
                wanted = math.floor(provisioned * 0.9)
            else:
                wanted = provisioned
        else:
            # Replicas still loading count as idle (the HPA's rule for pods not ready), so a
            # cold start in progress does not make it ask again for the same load.
            wanted = maths.autoscale(
                provisioned, metric * ready / max(provisioned, 1), target, HPA_TOLERANCE
            ).desired_replicas
        wanted = min(max(wanted, setup.min_replicas), setup.max_replicas)
        recent = (recent + [wanted])[-window:]
        now = begin + 60.0
        if wanted > provisioned:
            for _ in range(wanted - provisioned):
                if warm_ready_at:
                    loaded = warm_ready_at.pop(0)
                    ready_at.append(max(now, loaded) + setup.warm_start_s)
                    warm_ready_at.append(now + setup.cold_start_s)  # refill the pool
                else:
                    ready_at.append(now + setup.cold_start_s)
        elif max(recent) < provisioned:
            ready_at.sort()
            del ready_at[max(recent) :]  # the newest (latest ready) go first
    gpu_hours = replica_minutes / 60.0 * setup.gpus_per_replica
    return AutoscalingResult(int(violations), float(gpu_hours), float(gpu_hours * card_hour), timeline)
