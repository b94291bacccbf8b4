"""The fleet simulator against theory: queueing formulas, the routing and rehash calculators, bounded loads."""

import math

import numpy as np
import pytest

from calculators import maths
from calculators.errors import CalculatorError
from calculators.simulation import (
    ROUTING_POLICIES,
    AutoscalingSetup,
    RoutingSetup,
    draw_arrivals,
    family_shares,
    ring_owners,
    simulate_autoscaling,
    simulate_policy,
    simulate_routing,
)


def _queue(slots: int, arrival_rps: float, seed: int, requests: int = 200_000) -> RoutingSetup:
    """One replica, no prefill, exponential service of mean 1 s: an M/M/c queue with c = slots."""
    return RoutingSetup(
        replicas=1,
        slots_per_replica=slots,
        cache_copies=0,
        preamble_tokens=0,
        suffix_tokens=0,
        output_tokens=100,
        decode_ms_per_token=10.0,
        arrival_rps=arrival_rps,
        requests=requests,
        exponential_service=True,
        seed=seed,
    )


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_one_slot_waits_like_mm1(seed):
    setup = _queue(1, 0.6, seed)
    run = simulate_policy(setup, draw_arrivals(setup), "round_robin", summarise=False)
    expected = maths.mm1_wait(0.6, 1.0)  # 1.5 s
    assert run.wait_s.mean() == pytest.approx(expected, rel=0.05)
    assert run.hit.sum() == 0  # no cache


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_four_slots_wait_like_erlang_c(seed):
    setup = _queue(4, 2.4, seed)
    run = simulate_policy(setup, draw_arrivals(setup), "least_loaded", summarise=False)
    expected = maths.mmc_wait(4, 2.4, 1.0)
    assert run.wait_s.mean() == pytest.approx(expected, rel=0.05)
    # Erlang C is also the share of arrivals that wait at all.
    assert (run.wait_s > 0).mean() == pytest.approx(maths.erlang_c(4, 2.4), rel=0.05)


def test_service_times_are_exponential_with_the_mean_asked_for():
    arrivals = draw_arrivals(_queue(1, 0.5, 7, requests=50_000))
    assert arrivals.decode_s.mean() == pytest.approx(1.0, rel=0.02)
    assert arrivals.decode_s.std() == pytest.approx(1.0, rel=0.03)  # exponential: std = mean
    gaps = np.diff(arrivals.times)
    assert gaps.mean() == pytest.approx(2.0, rel=0.02)


@pytest.mark.parametrize("replicas", [8, 64])
def test_round_robin_shares_match_the_routing_calculator(replicas):
    setup = RoutingSetup(replicas=replicas, requests=replicas * 100, seed=4)
    run = simulate_policy(setup, draw_arrivals(setup), "round_robin")
    expected = maths.routing(replicas, 0.8, 0.3, 1).round_robin_share
    assert run.summary["replica_share"] == [pytest.approx(expected)] * replicas
    # Every family, the hot one included, is spread over the cards in the same shares.
    hot = run.replica[draw_arrivals(setup).family == 0]
    assert np.bincount(hot, minlength=replicas).max() / len(hot) == pytest.approx(expected, abs=3 / math.sqrt(len(hot)))


def test_hash_puts_the_hot_family_where_the_routing_calculator_says():
    # One family of 0.8 of the traffic, the rest spread over many families.
    families = 2000
    setup = RoutingSetup(replicas=64, families=families, zipf=0.0, requests=40_000, seed=5)
    arrivals = draw_arrivals(setup)
    hot = np.random.default_rng(9).random(setup.requests) < 0.8
    arrivals.family[hot] = 0
    arrivals.family[~hot] = np.maximum(arrivals.family[~hot], 1)
    run = simulate_policy(setup, arrivals, "hash")
    expected = maths.routing(64, 0.8, 0.3, 1).hash_busiest_share  # 0.8 + 0.2 / 64
    assert run.summary["busiest_share"] == pytest.approx(expected, abs=0.01)


def test_bounded_load_never_exceeds_its_cap():
    eps = 0.25
    setup = RoutingSetup(
        replicas=16, slots_per_replica=4, families=20, zipf=1.5, arrival_rps=30.0, requests=4000, epsilon=eps, seed=6
    )
    arrivals = draw_arrivals(setup)
    run = simulate_policy(setup, arrivals, "bounded_load")
    assert run.cap_exceeded == 0
    # Recount, from the trace alone, what each replica had in flight when each request arrived.
    t, finish, replica = arrivals.times, run.finish_s, run.replica
    earlier = np.tri(len(t), k=-1, dtype=bool)  # [i, j]: j arrived before i
    in_flight = earlier & (finish[None, :] > t[:, None])
    total = in_flight.sum(axis=1)
    on_chosen = (in_flight & (replica[None, :] == replica[:, None])).sum(axis=1)
    cap = np.ceil((1 + eps) * (total + 1) / setup.replicas)
    assert np.all(on_chosen + 1 <= cap)
    # The cap binds: some requests leave their family's hashed replica.
    owners = ring_owners(setup.replicas, arrivals.family)
    assert (replica != owners).mean() > 0.05
    # Plain hashing on the same arrivals goes far above that cap.
    hashed = simulate_policy(setup, arrivals, "hash")
    assert hashed.summary["busiest_share"] > run.summary["busiest_share"] * 1.5


@pytest.mark.parametrize(("before", "after"), [(40, 50), (50, 40), (100, 150), (10, 8)])
def test_consistent_hashing_moves_the_share_rehash_predicts(before, after):
    keys = np.arange(200_000)
    old, new = ring_owners(before, keys), ring_owners(after, keys)
    moved = old != new
    assert moved.mean() == pytest.approx(maths.rehash(before, after).consistent_moved, rel=0.05)
    if after > before:  # growing only moves keys onto the new replicas
        assert np.all(new[moved] >= before)
    else:  # shrinking only moves the removed replicas' keys
        assert np.all(old[moved] >= after)


def test_same_seed_same_numbers_and_every_policy_sees_the_same_arrivals():
    setup = RoutingSetup(replicas=8, requests=3000, arrival_rps=20, seed=11)
    first = simulate_routing(setup)
    assert simulate_routing(setup) == first
    assert simulate_routing(RoutingSetup(replicas=8, requests=3000, arrival_rps=20, seed=12)) != first
    one, two = draw_arrivals(setup), draw_arrivals(setup)
    assert np.array_equal(one.times, two.times) and np.array_equal(one.family, two.family)
    assert set(first) == set(ROUTING_POLICIES)


def test_zipf_popularity():
    shares = family_shares(4, 1.0)
    assert shares == pytest.approx([12 / 25, 6 / 25, 4 / 25, 3 / 25])
    assert family_shares(5, 0.0) == pytest.approx([0.2] * 5)


def test_round_robin_loses_hits_as_the_cache_shrinks_below_the_families():
    base = {"replicas": 16, "families": 100, "zipf": 0.8, "requests": 8000, "arrival_rps": 40, "seed": 2}
    big = simulate_routing(RoutingSetup(cache_copies=100, **base), ("round_robin", "hash"))
    small = simulate_routing(RoutingSetup(cache_copies=4, **base), ("round_robin", "hash"))
    # With room for every family, round robin only pays cold misses, as hashing does (once per card).
    assert big["round_robin"]["hit_rate"] > 0.8
    assert big["round_robin"]["evictions"] == 0
    # With room for 4 of 100 families, round robin's hit rate collapses; hashing keeps each family once.
    assert small["round_robin"]["hit_rate"] < 0.5 * big["round_robin"]["hit_rate"]
    assert small["hash"]["hit_rate"] > small["round_robin"]["hit_rate"] + 0.2
    # Fewer hits, more prefill: the preamble is computed on every miss.
    missed = lambda r: (r["prefill_tokens"] - 8000 * 200) / 2000  # noqa: E731
    assert missed(small["round_robin"]) == pytest.approx((1 - small["round_robin"]["hit_rate"]) * 8000)


def test_prefix_aware_keeps_hits_without_the_hash_hot_spot():
    setup = RoutingSetup(replicas=32, families=100, zipf=1.2, cache_copies=4, requests=20_000, arrival_rps=60, seed=3)
    results = simulate_routing(setup, ("round_robin", "hash", "prefix_aware"))
    assert results["prefix_aware"]["hit_rate"] > results["round_robin"]["hit_rate"] + 0.2
    assert results["prefix_aware"]["busiest_share"] < results["hash"]["busiest_share"] / 2
    assert results["prefix_aware"]["ttft_p99_ms"] < results["hash"]["ttft_p99_ms"]


def test_a_fleet_far_over_capacity_is_refused():
    fits = RoutingSetup(replicas=8, slots_per_replica=16, arrival_rps=30)  # 30 x 5.22 s / 128 slots = 1.22
    assert fits.fleet_load == pytest.approx(30 * 5.22 / 128)
    fits.check()
    with pytest.raises(CalculatorError, match="what the fleet.s slots can serve"):
        RoutingSetup(replicas=8, slots_per_replica=16, arrival_rps=40).check()  # 1.63


def test_ttft_is_the_wait_plus_the_prefill():
    setup = RoutingSetup(replicas=4, requests=2000, seed=8)
    run = simulate_policy(setup, draw_arrivals(setup), "hash")
    prefill = np.where(run.hit, setup.hit_prefill_s, setup.miss_prefill_s)
    assert np.allclose(run.ttft_s, run.wait_s + prefill)
    assert np.all(run.wait_s >= 0)
    assert run.summary["ttft_p50_ms"] <= run.summary["ttft_p99_ms"]


# --- Autoscaling ----------------------------------------------------------------------


def test_mmc_wait_quantile():
    # M/M/1 at rho 0.5, S = 1: P(W > t) = 0.5 e^(-0.5 t), so p99 = ln(50) / 0.5.
    assert maths.mmc_wait_quantile(1, 0.5, 1.0, 0.99) == pytest.approx(math.log(50) / 0.5)
    assert maths.mmc_wait_quantile(64, 10.0, 6.0, 0.99) == 0.0  # hardly anyone waits


def test_mmc_wait_quantile_matches_the_simulated_p99():
    setup = _queue(4, 2.4, 1)
    run = simulate_policy(setup, draw_arrivals(setup), "round_robin", summarise=False)
    expected = maths.mmc_wait_quantile(4, 2.4, 1.0, 0.99)
    assert np.percentile(run.wait_s, 99) == pytest.approx(expected, rel=0.05)


def test_hpa_rule():
    assert maths.autoscale(12, 9, 4, 0.1).desired_replicas == 27
    assert maths.autoscale(12, 4.3, 4, 0.1).desired_replicas == 12  # within 10%: unchanged
    assert maths.autoscale(10, 1, 4, 0.1).desired_replicas == 3


def test_a_day_is_reproducible_and_billed_for_every_replica():
    setup = AutoscalingSetup(policy="kv_use", warm_replicas=3, seed=4)
    day = simulate_autoscaling(setup)
    assert simulate_autoscaling(setup) == day
    assert len(day.timeline) == 1440
    replica_minutes = sum(entry["replicas"] for entry in day.timeline) + 3 * 1440
    assert day.gpu_hours == pytest.approx(replica_minutes / 60 * setup.gpus_per_replica)
    assert day.cost_usd == pytest.approx(day.gpu_hours * setup.card_month_usd / 730)
    assert day.slo_violation_minutes == sum(entry["ttft_p99_ms"] > setup.slo_ttft_ms for entry in day.timeline)


def test_a_minute_without_requests_measures_and_violates_nothing():
    day = simulate_autoscaling(AutoscalingSetup(base_rps=0, peak_rps=0, min_replicas=0))
    assert day.slo_violation_minutes == 0
    assert {entry["ttft_p99_ms"] for entry in day.timeline} == {None}
    assert day.gpu_hours == 0  # nothing provisioned for no demand


def test_cold_starts_cost_minutes_that_a_warm_pool_saves():
    cold = simulate_autoscaling(AutoscalingSetup(policy="kv_use", cold_start_s=600))
    warm = simulate_autoscaling(AutoscalingSetup(policy="kv_use", cold_start_s=600, warm_replicas=32))
    instant = simulate_autoscaling(AutoscalingSetup(policy="kv_use", cold_start_s=0))
    assert warm.slo_violation_minutes < cold.slo_violation_minutes
    assert instant.slo_violation_minutes < cold.slo_violation_minutes
    assert warm.gpu_hours > cold.gpu_hours  # the pool is paid for all day


def test_replicas_follow_the_demand_and_the_spike():
    day = simulate_autoscaling(AutoscalingSetup(policy="queue_depth"))
    at = {entry["minute"]: entry for entry in day.timeline}
    assert at[960]["replicas"] > at[240]["replicas"]  # the afternoon peak over the night
    assert at[620]["replicas"] > at[590]["replicas"]  # the spike from 10:00
    assert at[600]["demand_rps"] == pytest.approx(2 * at[599]["demand_rps"], rel=0.01)


def test_scale_down_waits_for_the_delay():
    quick = simulate_autoscaling(AutoscalingSetup(policy="kv_use", scale_down_delay_s=0))
    slow = simulate_autoscaling(AutoscalingSetup(policy="kv_use", scale_down_delay_s=3600))
    after_spike = slice(631, 700)
    assert sum(e["replicas"] for e in slow.timeline[after_spike]) > sum(
        e["replicas"] for e in quick.timeline[after_spike]
    )
