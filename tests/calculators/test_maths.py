"""Every formula of calculators.maths against the worked figures of reference/serving-math.md."""

import random
from fractions import Fraction

import pytest

from calculators import maths
from calculators.errors import CalculatorError

# --- F1, F4: KV cache (S1, S5, S6) ------------------------------------------


def test_70b_kv_bytes_per_token_is_320_kib():  # S1
    assert maths.kv_bytes_per_token(80, 8, 128, 2) == 327_680 == 320 * 1024


@pytest.mark.parametrize(
    ("shape", "expected"),
    [
        ((80, 8, 128, 2), 327_680),  # Llama-2-70B / Llama-3-70B BF16
        ((80, 8, 128, 1), 163_840),  # FP8
        ((32, 8, 128, 2), 131_072),  # Llama-3-8B
        ((32, 32, 128, 2), 524_288),  # Llama-2-7B (MHA)
        ((40, 40, 128, 2), 819_200),  # Llama-2-13B (MHA)
    ],
)
def test_kv_bytes_per_token_table(shape, expected):  # F1 worked examples
    assert maths.kv_bytes_per_token(*shape) == expected


def test_70b_at_tp4_holds_80_kib_per_token_per_gpu():  # F1: 2 KV heads per GPU
    assert maths.kv_bytes_per_token(80, 8 // 4, 128, 2) == 81_920


def test_llama_2_13b_2048_tokens_matches_vllm_blog():  # F1 cross-check: "up to 1.7GB"
    assert maths.kv_cache(40, 40, 128, 2, 2048, 8).copy_bytes == 1_677_721_600


def test_1200_token_preamble_is_393_2_mb_and_375_mib():  # S5
    copy = maths.kv_cache(80, 8, 128, 2, 1200, 8).copy_bytes
    assert copy == 393_216_000
    assert copy / 2**20 == 375.0


def test_8_gb_cache_holds_20_copies():  # S6, F4
    assert maths.kv_cache(80, 8, 128, 2, 1200, 8).copies_per_cache == 20


def test_8b_preamble_is_157_mb_and_50_copies():  # F4
    result = maths.kv_cache(32, 8, 128, 2, 1200, 8)
    assert round(result.copy_bytes / 1e6, 1) == 157.3
    assert result.copies_per_cache == 50


def test_copies_floor_is_exact_at_a_whole_number():
    # 2.01 GB of 100.5 MB copies is exactly 20, though 2.01 x 10^9 is 2,009,999,999.9999998 in floating point.
    assert maths.kv_cache(1, 1, 1, 1, 50_250_000, 2.01).copies_per_cache == 20


def test_kv_cache_returns_python_ints():
    result = maths.kv_cache(80, 8, 128, 2, 1200, 8)
    assert all(type(value) is int for value in result)


# --- F5: routing (S7 to S10) -------------------------------------------------


def test_round_robin_share_on_64_cards():  # S7
    assert maths.routing(64, 0.8, 0.3, 1).round_robin_share == 0.015625


def test_hash_busiest_card_is_80_plus_20_over_64():  # S8, reading A over all cards
    assert maths.routing(64, 0.8, 0.3, 1).hash_busiest_share == pytest.approx(0.803125, abs=1e-15)


def test_fleet_points_about_24_1():  # S9
    points = maths.routing(64, 0.8, 0.3, 1).fleet_points
    assert points == pytest.approx(24.09375)
    assert round(points, 1) == 24.1


def test_hot_card_carries_15_4_times_its_fair_share():  # S9
    assert maths.routing(64, 0.8, 0.3, 1).fleet_points / (100 / 64) == pytest.approx(15.42, abs=0.005)


@pytest.mark.parametrize(
    ("shards", "busiest", "points", "copies"),
    [(2, 0.403125, 12.09, 1), (4, 0.203125, 6.09, 3), (8, 0.103125, 3.09, 7)],
)
def test_sharding_table(shards, busiest, points, copies):  # S10, F5 sharding table
    result = maths.routing(64, 0.8, 0.3, shards)
    assert result.hash_busiest_share == pytest.approx(busiest)
    assert round(result.fleet_points, 2) == points
    assert result.duplicate_copies == copies


def test_routing_refuses_more_shards_than_cards():
    with pytest.raises(CalculatorError) as error:
        maths.routing(4, 0.8, 0.3, 5)
    assert error.value.fields == ("shards",)


# --- F3: requests per replica (S4) -------------------------------------------


def test_70b_on_4_h100_holds_110_requests():  # F3 vLLM convention
    result = maths.replica(4, 80, 140, 0.9, 327_680, 4096)
    assert result.kv_budget_bytes == 148_000_000_000
    assert result.kv_bytes_per_request == 1_342_177_280
    assert result.requests_per_replica == 110


@pytest.mark.parametrize(("context", "requests"), [(8192, 55), (2048, 220)])
def test_requests_per_replica_at_other_contexts(context, requests):  # F3 table
    assert maths.replica(4, 80, 140, 0.9, 327_680, context).requests_per_replica == requests


def test_70b_on_2_gpus_holds_2_requests():  # S4: why the replica has 4 GPUs
    result = maths.replica(2, 80, 140, 0.9, 327_680, 4096)
    assert result.kv_budget_bytes == 4_000_000_000
    assert result.requests_per_replica == 2


def test_8b_on_1_h100_holds_104_requests():  # F3
    result = maths.replica(1, 80, 16.06, 0.9, 131_072, 4096)
    assert result.kv_budget_bytes == 55_940_000_000
    assert result.requests_per_replica == 104


def test_replica_refuses_weights_that_do_not_fit():
    with pytest.raises(CalculatorError) as error:
        maths.replica(1, 80, 140, 0.9, 327_680, 4096)
    assert error.value.fields == ("weights_gb",)
    assert "72 GB" in error.value.message


# --- F12: pool --------------------------------------------------------------


def test_2000_concurrent_at_110_per_replica_is_76_gpus():  # F12
    result = maths.pool(100, 20, 110, 4, 1.0)
    assert result.peak_concurrency == 2000
    assert (result.replicas, result.gpus) == (19, 76)


def test_pool_at_60_percent_target():
    assert maths.pool(100, 20, 110, 4, 0.6) == (2000.0, 31, 124)


def test_pool_ceil_ignores_float_noise():
    # 3,000 requests at 100 per replica and 0.3: exactly 100 replicas, though 100 x 0.3 is 30.000000000000004.
    assert maths.pool(150, 20, 100, 1, 0.3).replicas == 100


def test_pool_with_no_traffic_needs_no_replicas():
    assert maths.pool(0, 20, 110, 4, 0.6) == (0.0, 0, 0)


# --- F10: token cost and fleet (S12, S19) -------------------------------------


def test_a_month_is_730_hours():  # S12
    assert maths.HOURS_PER_MONTH == 8760 / 12


def test_h100_70b_token_cost():  # F10 table: $1.1416, 45.7%
    result = maths.token_cost(2100, 1, 700, 2.5)
    assert result.usd_per_hour == pytest.approx(2.8767, abs=1e-4)
    assert result.tokens_per_hour == 2_520_000
    assert result.usd_per_million_tokens == pytest.approx(1.1416, abs=1e-4)
    assert result.share_of_api == pytest.approx(0.457, abs=5e-4)


@pytest.mark.parametrize(
    ("card_month", "tokens_per_s", "api", "per_million", "share"),
    [
        (2100, 10_000, 0.2, 0.0799, 0.400),
        (2900, 10_000, 0.2, 0.1104, 0.552),
        (2835, 10_000, 0.2, 0.1079, 0.539),
        (3915, 10_000, 0.2, 0.1490, 0.745),
        (2900, 700, 2.5, 1.5764, 0.631),
        (2835, 700, 2.5, 1.5411, 0.616),
        (3915, 700, 2.5, 2.1282, 0.851),
    ],
)
def test_cost_per_million_table(card_month, tokens_per_s, api, per_million, share):  # F10 table
    result = maths.token_cost(card_month, 1, tokens_per_s, api)
    assert result.usd_per_million_tokens == pytest.approx(per_million, abs=1e-4)
    assert result.share_of_api == pytest.approx(share, abs=5e-4)


def test_token_cost_is_the_same_for_n_cards_at_n_times_the_rate():
    assert maths.token_cost(2100, 4, 2800, 2.5).usd_per_million_tokens == pytest.approx(
        maths.token_cost(2100, 1, 700, 2.5).usd_per_million_tokens
    )


def test_tokens_per_card_month():  # F10
    assert maths.fleet(1e13, 10_000, 0, 0, 2100, 1.35, 0.2).tokens_per_card_month == 2.628e10
    assert maths.fleet(1e13, 700, 0, 0, 2100, 1.35, 2.5).tokens_per_card_month == 1.8396e9


@pytest.mark.parametrize(
    ("tokens_per_s", "cards"),
    [(10_000, 381), (10_000 * 2.4, 159), (10_000 * 0.45, 846), (700, 5436), (700 * 2.4, 2265), (700 * 0.45, 12_080)],
)
def test_cards_needed_for_a_10t_month(tokens_per_s, cards):  # F10 table (B200 and A100 are assumptions)
    assert maths.fleet(1e13, tokens_per_s, 0, 0, 2100, 1.35, 2.5).cards_needed == cards


def test_fleet_overflow_scenario():  # F10: own 5,000 H100 for 10T 70B tokens
    result = maths.fleet(1e13, 700, 5000, 0, 2100, 1.35, 2.5)
    assert result.overflow_tokens == pytest.approx(0.802e12)
    assert result.overflow_share == pytest.approx(0.0802)
    assert result.api_usd == pytest.approx(2_005_000)
    assert result.total_usd == pytest.approx(12_505_000)
    assert result.blended_usd_per_million == pytest.approx(1.2505)
    assert result.blended_usd_per_million / 2.5 == pytest.approx(0.500, abs=5e-4)
    assert result.idle_share == 0
    assert result.rented_cards_to_cover == 436
    assert (result.idle_ok, result.margin_ok, result.overflow_ok) == (True, True, True)


def test_fleet_own_4000_rent_1000():  # F10
    result = maths.fleet(1e13, 700, 4000, 1000, 2100, 1.35, 2.5)
    assert result.overflow_share == pytest.approx(0.0802)
    assert result.total_usd == pytest.approx(13_240_000)
    assert result.blended_usd_per_million == pytest.approx(1.324)
    assert result.blended_usd_per_million / 2.5 == pytest.approx(0.530, abs=5e-4)


def test_fleet_over_provisioned_fails_idle_check():  # F10: own 8,000
    result = maths.fleet(1e13, 700, 8000, 0, 2100, 1.35, 2.5)
    assert result.idle_share == pytest.approx(0.3205, abs=5e-5)
    assert result.blended_usd_per_million == pytest.approx(1.68)
    assert result.blended_usd_per_million / 2.5 == pytest.approx(0.672)
    assert (result.idle_ok, result.margin_ok, result.overflow_ok) == (False, True, True)


def test_441m_bet_is_68_9_percent_idle_not_71():  # S19
    assert 17_500 * 2100 * 12 == 441_000_000
    result = maths.fleet(1e13, 700, 17_500, 0, 2100, 1.35, 2.5)
    assert round(result.idle_share, 3) == 0.689
    assert round(maths.fleet(1e13, 750, 17_500, 0, 2100, 1.35, 2.5).idle_share, 2) == 0.71
    assert round(maths.fleet(9.34e12, 700, 17_500, 0, 2100, 1.35, 2.5).idle_share, 2) == 0.71


def test_fleet_with_no_owned_cards_reports_no_idle():
    result = maths.fleet(1e13, 700, 0, 0, 2100, 1.35, 2.5)
    assert result.idle_share == 0
    assert result.overflow_share == 1
    assert result.rented_cards_to_cover == 5436
    assert result.overflow_ok is False


def test_fleet_rented_cards_serve_before_the_api():
    result = maths.fleet(1e13, 700, 5000, 436, 2100, 1.35, 2.5)
    assert result.overflow_tokens == 0
    assert result.api_usd == 0


def test_fleet_returns_plain_python_types():
    result = maths.fleet(1e13, 700, 5000, 0, 2100, 1.35, 2.5)
    assert {type(value) for value in result} <= {float, int, bool}


# --- F9: token bucket (S20) ---------------------------------------------------


def test_burst_of_50_admits_20():  # F9
    assert maths.token_bucket(10, 20, 50, 0) == (20, 30)


def test_100_over_10_s_admits_59():  # F9: bound 59.5
    assert maths.token_bucket(5, 10, 100, 10) == (59, 41)


def test_second_burst_after_1_s_and_5_s():  # F9 (reference simulation)
    assert maths.simulate_token_bucket(10, 20, [0.0] * 50 + [1.0] * 50) == 30
    assert maths.simulate_token_bucket(10, 20, [0.0] * 50 + [5.0] * 50) == 40


def test_redis_cell_example_admits_16_of_20():  # F9 GCRA 15 30 60: limit = max_burst + 1
    assert maths.token_bucket(30 / 60, 16, 20, 0).admitted == 16


def test_gcra_second_burst_after_10_s():  # F9: another 20 at t = 10 s -> +5
    assert maths.simulate_token_bucket(0.5, 16, [0.0] * 20 + [10.0] * 20) == 21


def test_steady_stream_under_the_rate_is_all_admitted():
    assert maths.token_bucket(10, 20, 100, 20) == (100, 0)


def test_one_token_bucket_drops_the_fraction_it_cannot_hold():
    # b = 1, d = 0.4 per arrival: one request every ceil(1 / 0.4) = 3 arrivals.
    assert maths.token_bucket(0.4, 1, 10, 10).admitted == 4
    assert maths.simulate_token_bucket(0.4, 1, [float(i) for i in range(10)]) == 4


def test_token_bucket_curve_matches_the_closed_form():
    curve = maths.token_bucket_curve(5, 10, 100, 10)
    assert len(curve) == 100
    assert int(curve[-1]) == 59
    assert [int(x) for x in curve[:3]] == [1, 2, 3]


def test_token_bucket_curve_with_one_token():
    assert [int(x) for x in maths.token_bucket_curve(0.4, 1, 10, 10)] == [1, 1, 1, 2, 2, 2, 3, 3, 3, 4]


# --- F8: queueing (S11, S21, S22) ---------------------------------------------


def test_erlang_c_3_servers_2_erlangs_is_4_9():  # F8
    assert maths.erlang_c(3, 2) == pytest.approx(float(Fraction(4, 9)), abs=1e-12)


def test_mm4_at_3_erlangs():  # F8: C = 0.5094, Wq = 0.5094 s
    assert maths.erlang_c(4, 3) == pytest.approx(0.5094, abs=5e-5)
    assert maths.mmc_wait(4, 3, 1.0) == pytest.approx(0.5094, abs=5e-5)
    assert maths.mmc_queue_length(4, 3) == pytest.approx(3 * maths.mmc_wait(4, 3, 1.0), rel=1e-12)  # Lq = lambda Wq


def test_mm3_at_2_5_erlangs():  # F8: C = 0.7022, Wq = 7.02 min (not the 60% one tutorial prints)
    assert maths.erlang_c(3, 2.5) == pytest.approx(0.7022, abs=5e-5)
    assert maths.mmc_wait(3, 2.5, 5.0) == pytest.approx(7.02, abs=5e-3)


def test_mm1_lambda_8_mu_10_waits_0_4_s():  # F8
    assert maths.mm1_wait(8, 10) == pytest.approx(0.4)


def test_erlang_c_with_one_server_is_the_utilisation():
    assert maths.erlang_c(1, 0.66) == pytest.approx(0.66)


def test_erlang_c_refuses_an_unstable_queue():
    with pytest.raises(CalculatorError):
        maths.erlang_c(3, 3)


def test_kingman():  # F8: 150 ms, and 200 ms (= M/M/1) with cs^2 = 1
    assert maths.kingman_wait(0.8, 50, 1, 0.5) == pytest.approx(150)
    assert maths.kingman_wait(0.8, 50, 1, 1) == pytest.approx(200)


def test_one_server_losing_30_percent_slows_and_waits_about_1179_ms():
    # By hand: S' = 50 / 0.7 = 71.4286 ms, rho' = 0.66 / 0.7 = 0.942857,
    # Wq = 71.4286 x 0.942857 / 0.057143 = 71.4286 x 16.5 = 1178.57 ms (not 825: the service slows too).
    result = maths.queue_wait(50, 0.66, 1, 0.3)
    assert result.wait_ms == pytest.approx(97.06, abs=0.005)
    assert result.service_after_ms == pytest.approx(71.4286, abs=1e-4)
    assert result.utilization_after == pytest.approx(0.942857, abs=1e-6)
    assert result.wait_after_ms == pytest.approx(1178.57, abs=0.005)
    assert result.stable_after is True


def test_the_source_97_to_850_ms_is_the_reading_with_replicas_lost():  # S22, F8 model A
    # Whole replicas fail and the survivors keep their 49.67 ms service: rho 0.6614 -> 0.9449 gives 97 -> 851 ms.
    result = maths.queue_wait(49.67, 0.6614, 1, 0.3)
    assert result.wait_ms == pytest.approx(97.0, abs=0.1)
    assert result.wait_after_same_speed_ms == pytest.approx(851.1, abs=0.05)
    # If every server slowed instead (71.0 ms), the same start waits longer.
    assert result.service_after_ms == pytest.approx(70.957, abs=1e-3)
    assert result.wait_after_ms == pytest.approx(1215.8, abs=0.05)
    # By hand, the round numbers: 50 x 0.942857 / 0.057143 = 825 ms with replicas lost; 0.8 / 0.7 > 1: unstable.
    assert maths.queue_wait(50, 0.66, 1, 0.3).wait_after_same_speed_ms == pytest.approx(825.0)
    assert maths.queue_wait(50, 0.8, 1, 0.3).wait_after_same_speed_ms is None


def test_slowed_servers_reach_850_ms_from_a_lower_start():  # F8 model C: S = 54.19 ms, rho = 0.6416
    result = maths.queue_wait(54.19, 0.6416, 1, 0.3)
    assert result.wait_ms == pytest.approx(97.0, abs=0.05)
    assert result.wait_after_ms == pytest.approx(850.5, abs=0.05)


def test_headroom_cap_waits_1_5_then_8_6_service_times():  # S11: 6 slowed service times = 6 / 0.7 original ones
    result = maths.queue_wait(1.0, 0.6, 1, 0.3)
    assert result.wait_ms == pytest.approx(1.5)
    assert result.utilization_after == pytest.approx(0.857, abs=5e-4)
    assert result.wait_after_ms == pytest.approx(6.0 / 0.7)
    assert result.wait_after_same_speed_ms == pytest.approx(6.0)  # replicas lost: S11's 6 service times


def test_a_pool_of_ten_losing_30_percent_waits_far_less_than_one_server():
    # M/M/10 against M/M/1 at the same per-server load and loss: pooling shortens the wait.
    one = maths.queue_wait(50, 0.66, 1, 0.3)
    pool = maths.queue_wait(50, 0.66, 10, 0.3)
    assert pool.utilization_after == pytest.approx(one.utilization_after)
    assert pool.service_after_ms == pytest.approx(one.service_after_ms)
    # Erlang C at 9.4286 Erlangs on 10 servers of 71.43 ms: C = 0.8021, Wq = C x 71.43 / 0.5714 = 125 C.
    assert pool.wait_after_ms == pytest.approx(100.26, abs=0.005)
    assert pool.wait_after_ms < one.wait_after_ms / 10


def test_mmc_pool_losing_30_percent_of_servers_jumps_at_least_21_8_times():  # F8 table, c = 10 -> 7
    # Same offered load on 7 servers instead of 10; the smallest ratio over stable loads is about 21.75.
    ratios = [maths.mmc_wait(7, a, 1) / maths.mmc_wait(10, a, 1) for a in [x / 100 for x in range(1, 700)]]
    assert min(ratios) == pytest.approx(21.75, abs=0.01)


def test_queue_wait_unstable_after_loss_is_not_an_error():
    result = maths.queue_wait(50, 0.8, 1, 0.3)
    assert result.stable_after is False
    assert result.wait_after_ms is None
    assert result.utilization_after == pytest.approx(0.8 / 0.7)
    assert result.service_after_ms == pytest.approx(50 / 0.7)


def test_queue_wait_with_several_servers_uses_erlang_c():
    result = maths.queue_wait(1000, 0.75, 4, 0)
    assert result.wait_ms == pytest.approx(509.4, abs=0.05)
    assert result.wait_after_ms == pytest.approx(result.wait_ms)


# --- Shedding ---------------------------------------------------------------


def test_shed_default_case():
    assert maths.shed(1000, 600, 500, 0.85) == (250.0, 250.0, 0.85)


def test_shed_never_admits_below_zero():
    result = maths.shed(700, 600, 500, 0.85)  # 30% of capacity lost: paid alone is above the target
    assert result.free_admitted_rps == 0
    assert result.free_shed_rps == 500
    assert result.utilization == pytest.approx(600 / 700)


def test_shed_never_admits_more_than_free_demand():
    assert maths.shed(1000, 100, 50, 0.85) == (50.0, 0.0, 0.15)


# --- F11: speculative decoding ------------------------------------------------


@pytest.mark.parametrize(
    ("alpha", "gamma", "cost", "tokens", "speedup"),
    [
        (0.8, 4, 0.05, 3.3616, 2.801),
        (0.6, 5, 0.1, 2.3834, 1.589),
        (0.5, 3, 0.2, 1.875, 1.172),
        (0.7, 3, 0.1, 2.533, 1.949),  # 2.533 / 1.3 = 1.94846: the reference rounds the last digit up
    ],
)
def test_spec_decode_table(alpha, gamma, cost, tokens, speedup):  # F11 worked examples
    result = maths.spec_decode(alpha, gamma, cost)
    assert result.expected_tokens == pytest.approx(tokens, abs=5e-4)
    assert result.speedup == pytest.approx(speedup, abs=1e-3)


def test_best_draft_length_for_0_8_and_0_05_is_8():  # F11: 3.092x
    best, speedup = maths.best_draft_tokens(0.8, 0.05)
    assert best == 8
    assert speedup == pytest.approx(3.092, abs=5e-4)


def test_spec_decode_at_full_and_zero_acceptance():
    assert maths.spec_decode(1.0, 4, 0).expected_tokens == 5
    assert maths.spec_decode(0.0, 4, 0.05) == (1.0, pytest.approx(1 / 1.2))


def test_spec_decode_near_full_acceptance_keeps_precision():
    assert maths.spec_decode(1 - 1e-12, 4, 0).expected_tokens == pytest.approx(5, rel=1e-9)


def test_logged_acceptance_is_accepted_over_drafted_not_alpha():
    # vLLM logs accepted / drafted tokens: E - 1 of g drafts per round, 2.3616 / 4 at a = 0.8, g = 4.
    assert maths.spec_decode_accepted_share(0.8, 4) == pytest.approx(2.3616 / 4, rel=1e-9)
    assert maths.spec_decode_accepted_share(0.8, 1) == pytest.approx(0.8)
    assert maths.spec_decode_accepted_share(1.0, 4) == 1.0 and maths.spec_decode_accepted_share(0.0, 4) == 0.0


def test_compute_bound_speedup_counts_the_draft_steps_once():
    # Review fix: a round is g + 1 verified tokens (g + 1 plain steps) plus g draft steps at c each:
    # 3.3616 / (5 + 0.2) = 0.6465, not F11's 3.3616 / (5 x 1.2) = 0.56, which priced the drafts g + 1 times.
    assert maths.spec_decode_compute_bound(0.8, 4, 0.05) == pytest.approx(3.3616 / 5.2, rel=1e-9)
    assert maths.spec_decode_compute_bound(0.8, 4, 0.05) > 0.6


_H100_70B_TP4 = {"params_b": 70, "bytes_per_param": 2, "kv_bytes_per_token": 327_680, "tp": 4,
                 "hbm_tb_s": 3.35, "tflops": 989.0}  # fmt: skip


def test_spec_decode_at_batch_one_is_theorem_3_8():
    at_one = maths.spec_decode_at_batch(0.8, 4, 0.05, batch=1, mean_context=2048, **_H100_70B_TP4)
    assert at_one == pytest.approx(maths.spec_decode(0.8, 4, 0.05).speedup, rel=1e-12)


def test_spec_decode_at_batch_128_prices_verification_on_the_roofline():
    # Plain step: 70e9 x 2 / 4 / 3.35e12 = 10.448 ms of weights + 128 x 2,048 x 327,680 / 4 / 3.35e12
    # = 6.410 ms of KV = 16.858 ms. Verify: 2 x 70e9 x 640 / 4 / 989e12 = 22.649 ms of compute.
    plain = 70e9 * 2 / 4 / 3.35e12 + 128 * 2048 * 327_680 / 4 / 3.35e12
    verify = 2 * 70e9 * 640 / 4 / 989e12
    expected = 3.3616 * plain / (4 * 0.05 * plain + verify)
    at_128 = maths.spec_decode_at_batch(0.8, 4, 0.05, batch=128, mean_context=2048, **_H100_70B_TP4)
    assert at_128 == pytest.approx(expected, rel=1e-9)
    assert 2.17 < at_128 < 2.19  # past the ridge, still a speedup at long contexts


def test_spec_decode_at_large_batch_and_short_context_is_a_slowdown_down_to_the_limit():
    short = maths.spec_decode_at_batch(0.8, 4, 0.05, batch=256, mean_context=256, **_H100_70B_TP4)
    assert short < 1
    huge = maths.spec_decode_at_batch(0.8, 4, 0.05, batch=100_000, mean_context=256, **_H100_70B_TP4)
    assert huge == pytest.approx(maths.spec_decode_compute_bound(0.8, 4, 0.05), rel=1e-9)


# --- Whole-number helpers -----------------------------------------------------


@pytest.mark.parametrize(
    ("x", "floor", "ceil"),
    [(30.000000000000004, 30, 30), (19.999999999999996, 20, 20), (20.35, 20, 21), (0.0, 0, 0)],
)
def test_whole_floor_and_ceil_ignore_float_noise(x, floor, ceil):
    assert maths.whole_floor(x) == floor
    assert maths.whole_ceil(x) == ceil


# --- F1: one GPU's share of the KV cache under tensor parallelism ---------------


@pytest.mark.parametrize(
    ("kv_heads", "tp", "heads_per_gpu"),
    [(8, 1, 8), (8, 2, 4), (8, 4, 2), (8, 8, 1), (8, 16, 1), (8, 32, 1), (40, 8, 5), (1, 4, 1)],
)
def test_kv_heads_per_gpu_is_max_of_share_and_one(kv_heads, tp, heads_per_gpu):  # cli99: max(kv_heads / tp, 1)
    assert maths.kv_heads_per_gpu(kv_heads, tp) == heads_per_gpu


def test_70b_kv_per_gpu_at_tp4_is_80_kib_and_stops_shrinking_past_8():  # F1: 81,920 B at TP 4
    assert maths.kv_cache(80, 8, 128, 2, 1200, 8, tp=4).bytes_per_token_per_gpu == 81_920
    assert maths.kv_cache(80, 8, 128, 2, 1200, 8, tp=8).bytes_per_token_per_gpu == 40_960
    assert maths.kv_cache(80, 8, 128, 2, 1200, 8, tp=16).bytes_per_token_per_gpu == 40_960


@pytest.mark.parametrize(("kv_heads", "tp"), [(8, 3), (8, 12), (40, 16), (6, 4)])
def test_a_tp_that_would_split_a_head_is_refused_on_tp(kv_heads, tp):
    with pytest.raises(CalculatorError) as error:
        maths.kv_cache(80, kv_heads, 128, 2, 1200, 8, tp=tp)
    assert error.value.fields == ("tp",)
    assert f"{tp} cannot share {kv_heads} KV heads evenly" in error.value.message


def test_a_4_bit_kv_cache_is_half_a_byte_per_value():  # 2 x 80 x 8 x 128 x 0.5 = 81,920 B
    result = maths.kv_cache(80, 8, 128, 0.5, 1200, 8)
    assert result.bytes_per_token == 81_920 and isinstance(result.bytes_per_token, int)
    assert result.copies_per_cache == 81  # 8e9 / 98,304,000 = 81.4


def test_odd_fractions_of_a_byte_keep_fractional_bytes():
    result = maths.kv_cache(1, 1, 3, 0.25, 1, 1)  # 2 x 3 x 0.25 = 1.5 B
    assert result.bytes_per_token == 1.5 and result.copies_per_cache == 666_666_666


# --- KV beyond grouped-query attention: MLA and sliding windows ---------------------


def test_deepseek_v3_mla_caches_576_values_a_layer_70_272_bytes_a_token():
    # DeepSeek-V3 report, section 4.2: 61 layers, d_c = 512, d_h^R = 64; DeepSeek-V2, section 2.1.3:
    # (d_c + d_h^R) x l elements per token, no factor 2 for K and V.
    assert maths.mla_kv_bytes_per_token(61, 512, 64, 2) == 61 * 576 * 2 == 70_272
    assert maths.mla_kv_bytes_per_token(61, 512, 64, 1) == 35_136  # an FP8 cache
    assert round(70_272 / 1024, 2) == 68.62  # KiB


def test_mla_equals_gqa_with_2_25_groups_as_the_deepseek_v2_paper_says():
    # Table 1: d_c = 4 d_h and d_h^R = d_h / 2, so (d_c + d_h^R) l = 9/2 d_h l = 2 x 2.25 x d_h x l.
    for head_dim in (64, 128):
        result = maths.latent_kv(60, 4 * head_dim, head_dim // 2, 2, 1, head_dim)
        assert result.equivalent_kv_heads == 2.25
        assert result.bytes_per_token == maths.kv_bytes_per_token(60, 1, head_dim, 2) * 2.25


def test_mla_is_57_times_smaller_than_deepseek_v3_heads_caching_full_k_and_v():
    mha = maths.kv_bytes_per_token(61, 128, 128, 2)  # 2 n_h d_h l elements, the papers' MHA row
    assert mha == 3_997_696
    assert mha / maths.mla_kv_bytes_per_token(61, 512, 64, 2) == pytest.approx(56.89, abs=0.01)


def test_a_128k_deepseek_v3_request_holds_9_2_gb_of_latents():
    result = maths.latent_kv(61, 512, 64, 2, 131_072, 128)
    assert result.request_bytes == 131_072 * 70_272 == 9_210_691_584
    assert isinstance(result.request_bytes, int)


def test_mla_refuses_a_negative_rope_key_on_its_field():
    with pytest.raises(CalculatorError) as error:
        maths.latent_kv(61, 512, -1, 2, 1, 128)
    assert error.value.fields == ("rope_dim",)


def test_mistral_7b_window_cuts_a_32k_cache_8_times_as_its_paper_reports():
    # Mistral 7B (arXiv:2310.06825): W = 4,096 on all 32 layers, 8 KV heads of 128; "On a sequence length
    # of 32k tokens, this reduces the cache memory usage by 8x".
    result = maths.windowed_kv(32, 32, 8, 128, 2, 4096, 32_768)
    assert result.full_attention_bytes == maths.kv_cache(32, 8, 128, 2, 32_768, 1).copy_bytes
    assert result.full_attention_bytes / result.request_bytes == 8 and result.share_of_full == 0.125


def test_gpt_oss_120b_alternating_windows_halve_a_long_request_but_do_not_cap_it():
    # 36 layers, every other one windowed at 128 tokens, 8 KV heads of 64 (its config.json).
    long = maths.windowed_kv(36, 18, 8, 64, 2, 128, 131_072)
    assert long.request_bytes == 2048 * (18 * 131_072 + 18 * 128) == 4_836_556_800
    assert long.share_of_full == pytest.approx(0.5005, abs=1e-4)
    longer = maths.windowed_kv(36, 18, 8, 64, 2, 128, 2 * 131_072)
    assert longer.request_bytes > 1.99 * long.request_bytes  # the full layers keep growing


def test_a_window_saves_nothing_until_the_request_outgrows_it():
    short = maths.windowed_kv(32, 32, 8, 128, 2, 4096, 4096)
    assert short.request_bytes == short.full_attention_bytes and short.share_of_full == 1
    assert maths.windowed_kv(36, 0, 8, 64, 2, 128, 131_072).share_of_full == 1  # no windowed layers


def test_more_windowed_layers_than_layers_is_refused_on_windowed_layers():
    with pytest.raises(CalculatorError) as error:
        maths.windowed_kv(36, 37, 8, 64, 2, 128, 4096)
    assert error.value.fields == ("windowed_layers",)


def test_a_4_bit_windowed_cache_keeps_exact_bytes():
    result = maths.windowed_kv(36, 18, 8, 64, 0.5, 128, 4097)
    assert result.request_bytes == 512 * (18 * 4097 + 18 * 128) and isinstance(result.request_bytes, int)


# --- Roofline: decode step and prefill ------------------------------------------


def test_decode_step_defaults_by_hand():
    # 70B BF16 over TP 4 on H100 (3.35 TB/s, 989 TFLOPS), batch 64 at 2,048 tokens.
    r = maths.decode_step(70, 2, 327_680, 64, 2048, 4, 3.35, 989)
    assert r.weights_ms == pytest.approx(35e9 / 3.35e12 * 1e3)  # 10.448 ms
    assert r.kv_ms == pytest.approx(64 * 2048 * 327_680 / 4 / 3.35e12 * 1e3)  # 3.205 ms
    assert r.compute_ms == pytest.approx(2 * 70e9 * 64 / 4 / 989e12 * 1e3)  # 2.265 ms
    assert r.step_ms == pytest.approx(r.weights_ms + r.kv_ms) == pytest.approx(13.653, abs=5e-4)
    assert r.tokens_per_s_per_stream == pytest.approx(1000 / r.step_ms)
    assert r.tokens_per_s == pytest.approx(64 * 1000 / r.step_ms)
    assert r.memory_bound is True


def test_the_h100_ridge_is_about_295_and_batch_128_is_memory_bound():  # issue 13: the review's correction
    assert maths.ridge_batch(2, 3.35, 989) == pytest.approx(295.22, abs=0.01)
    at_128 = maths.decode_step(70, 2, 327_680, 128, 2048, 4, 3.35, 989)
    assert at_128.memory_bound and at_128.weights_ms > at_128.compute_ms  # even without the KV reads
    past_ridge = maths.decode_step(70, 2, 0, 300, 0, 4, 3.35, 989)
    assert not past_ridge.memory_bound and past_ridge.step_ms == past_ridge.compute_ms


def test_compute_catches_up_with_kv_reads_only_at_short_contexts():
    # One sequence's KV at 2,048 tokens: 671 MB / 3.35 TB/s = 0.200 ms > 1.4e11 / 989e12 = 0.142 ms of compute.
    assert maths.compute_bound_batch(70, 2, 327_680, 2048, 3.35, 989) is None
    at_256 = maths.compute_bound_batch(70, 2, 327_680, 256, 3.35, 989)
    weights, kv, flops = 140e9 / 3.35e12, 256 * 327_680 / 3.35e12, 1.4e11 / 989e12
    assert at_256 == pytest.approx(weights / (flops - kv))
    r = maths.decode_step(70, 2, 327_680, round(at_256), 256, 4, 3.35, 989)
    assert r.weights_ms + r.kv_ms == pytest.approx(r.compute_ms, rel=0.01)


def test_prefill_of_4000_tokens_on_four_h100s():
    r = maths.prefill(70, 4000, 4, 989, 0.5)
    assert r.flops == 5.6e14  # 2 x 70e9 x 4,000
    assert r.ttft_s == pytest.approx(5.6e14 / (4 * 989e12 * 0.5)) == pytest.approx(0.2831, abs=1e-4)


def test_prefill_attention_flops_grow_with_the_square():
    assert maths.prefill_attention_flops(80, 8192, 4000) == 2 * 80 * 8192 * 4000**2
    assert maths.prefill_attention_flops(80, 8192, 8000) == 4 * maths.prefill_attention_flops(80, 8192, 4000)


# --- Routing: bounded loads and rehashing ----------------------------------------


def test_bounded_load_reference_case():  # F5: 64 cards, 1,000 in flight, eps 0.25 -> 20; 800 -> 40 cards
    assert maths.bounded_load(64, 1000, 0.25, 800) == (20, 40)
    assert maths.bounded_load_cap(64, 1000, 0.10) == 18  # ceil(17.1875)


def test_bounded_load_defaults_land_on_a_whole_cap():
    # 1.2 x 1,200 / 48 = 30 exactly in decimal, 29.999999999999996 in binary floating point: still 30.
    assert maths.bounded_load(48, 1200, 0.2, 600) == (30, 20)


def test_a_family_larger_than_the_fleet_is_refused_on_family_in_flight():
    with pytest.raises(CalculatorError) as error:
        maths.bounded_load(48, 1200, 0.2, 1201)
    assert error.value.fields == ("family_in_flight",)


@pytest.mark.parametrize(
    ("before", "after", "consistent", "modulo"),
    [
        (40, 50, Fraction(10, 50), 1 - Fraction(40, 200)),  # 0.2 and 0.8
        (40, 41, Fraction(1, 41), 1 - Fraction(40, 1640)),
        (40, 80, Fraction(1, 2), Fraction(1, 2)),  # one size divides the other: the same
        (50, 40, Fraction(10, 50), 1 - Fraction(40, 200)),  # shrinking is symmetric
        (7, 7, 0, 0),
    ],
)
def test_rehash_shares(before, after, consistent, modulo):
    r = maths.rehash(before, after)
    assert r.consistent_moved == pytest.approx(float(consistent))
    assert r.modulo_moved == pytest.approx(float(modulo))


def test_modulo_share_matches_counting_keys():
    before, after = 12, 18
    moved = sum(1 for key in range(36 * 100) if key % before != key % after) / (36 * 100)
    assert maths.modulo_moved_share(before, after) == pytest.approx(moved)


# --- Autoscaling and headroom ----------------------------------------------------


def test_hpa_rule_and_tolerance():  # F6: 10 replicas, 12 waiting, target 5 -> 24
    assert maths.autoscale(10, 12, 5, 0.1).desired_replicas == 24
    assert maths.autoscale(12, 9, 4, 0.1).desired_replicas == 27
    assert maths.autoscale(12, 4.4, 4, 0.1).desired_replicas == 12  # exactly at the tolerance: unchanged
    assert maths.autoscale(12, 4.41, 4, 0.1).desired_replicas == 14  # ceil(13.23)
    assert maths.autoscale(12, 2, 4, 0.1).desired_replicas == 6


def test_headroom_by_hand():
    assert maths.headroom(2000, 110, 0.9, 2, 4) == (23, 92)  # ceil(20.2) + 2
    assert maths.headroom(2000, 125, 0.9, 2, 4) == (20, 80)  # ceil(17.8) + 2
    assert maths.headroom(1980, 110, 0.9, 0, 4) == (20, 80)  # 1,980 / 99 = 20 exactly


# --- Request cost ----------------------------------------------------------------


def test_request_cost_by_hand():
    # 1,200 uncached x $0.60 + 1,800 cached x $0.30 + 300 x $2.40, per million.
    r = maths.request_cost(3000, 0.6, 300, 0.6, 0.3, 2.4, 1000)
    assert r.usd_per_request == pytest.approx((1200 * 0.6 + 1800 * 0.3 + 300 * 2.4) / 1e6) == pytest.approx(0.00198)
    assert r.usd_total == pytest.approx(1.98)
    assert maths.request_cost_parts(3000, 0.6, 300, 0.6, 0.3, 2.4) == pytest.approx((0.00072, 0.00054, 0.00072))


def _bounded_load_fill(replicas, in_flight, epsilon, family, seed):
    """Place requests in random order on a bounded-load ring; return the replicas the family lands on."""
    rng = random.Random(seed)
    cap = maths.bounded_load_cap(replicas, in_flight, epsilon)
    keys = [True] * family + [False] * (in_flight - family)
    rng.shuffle(keys)
    load, used = [0] * replicas, set()
    for is_family in keys:
        home = 0 if is_family else rng.randrange(replicas)
        while load[home] >= cap:
            home = (home + 1) % replicas
        load[home] += 1
        if is_family:
            used.add(home)
    return len(used)


@pytest.mark.parametrize(("case", "floor", "most"), [((48, 1200, 0.2, 600), 20, 35), ((64, 1000, 0.25, 800), 40, 48)])
def test_bounded_load_spill_floor_and_the_spread_with_other_keys(case, floor, most):
    # Review fix: ceil(F / cap) is a floor; with the others' (in_flight - F) / n per replica already there,
    # ceil(F / (cap - others)): 600 / (30 - 12.5) -> 35; 800 / (20 - 3.125) -> 48.
    assert maths.bounded_load(*case).replicas_for_family == floor
    assert maths.bounded_load_spill_most(*case) == most
    spreads = [_bounded_load_fill(*case, seed) for seed in range(20)]
    assert abs(sum(spreads) / len(spreads) - most) <= 1.5  # random arrival order lands near the higher figure
    assert min(spreads) > floor


def test_bounded_load_spill_most_edges():
    assert maths.bounded_load_spill_most(10, 100, 0.0, 0) == 0
    assert maths.bounded_load_spill_most(10, 100, 0.0, 5) == 10  # cap = average: the family gets F / n a replica


def test_a_family_with_no_load_bound_piles_onto_its_own_replica():
    # 48 replicas, 1,200 in flight, a 600-request family: 600 + 600 / 48 = 612.5 on the family's replica.
    assert maths.bounded_load_unbounded(48, 1200, 600) == pytest.approx(612.5)
    assert maths.bounded_load_unbounded(64, 1000, 0) == pytest.approx(1000 / 64)


def test_concurrency_is_littles_law_and_the_pool_uses_it():
    assert maths.concurrency(100, 20) == 2000  # 100 requests/s held 20 s each
    assert maths.pool(100, 20, 110, 4, 0.6).peak_concurrency == maths.concurrency(100, 20)
