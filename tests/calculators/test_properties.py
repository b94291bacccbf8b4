"""Property tests of the maths, the registry and the charts (hypothesis; no database)."""

import json
import math
import xml.etree.ElementTree as ET
from fractions import Fraction

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from calculators import maths
from calculators.errors import CalculatorInputError
from calculators.registry import CALCULATORS, Calculator

fractions = st.floats(min_value=0, max_value=1, allow_nan=False)
cards = st.integers(min_value=1, max_value=100_000)


@given(cards=cards, hot=fractions, family=fractions, data=st.data())
def test_routing_shares_stay_in_zero_one(cards, hot, family, data):
    shards = data.draw(st.integers(min_value=1, max_value=cards))
    result = maths.routing(cards, hot, family, shards)
    assert 0 <= result.round_robin_share <= 1
    assert 0 <= result.hash_busiest_share <= 1
    assert 0 <= result.fleet_points <= 100


@given(cards=cards)
def test_round_robin_share_times_cards_is_one(cards):
    assert maths.routing(cards, 0.8, 0.3, 1).round_robin_share * cards == pytest.approx(1.0, rel=1e-12)


@given(cards=st.integers(min_value=2, max_value=10_000), hot=fractions)
def test_hashing_never_beats_round_robin_on_the_busiest_card(cards, hot):
    result = maths.routing(cards, hot, 0.3, 1)
    assert result.hash_busiest_share >= result.round_robin_share - 1e-15


@given(
    service=st.floats(min_value=0.001, max_value=1e6),
    servers=st.integers(min_value=1, max_value=60),
    low=st.floats(min_value=0.0, max_value=0.99),
    high=st.floats(min_value=0.0, max_value=0.99),
)
def test_wait_grows_with_utilisation(service, servers, low, high):
    low, high = sorted((low, high))
    wait_low = maths.queue_wait(service, low, servers, 0).wait_ms
    wait_high = maths.queue_wait(service, high, servers, 0).wait_ms
    assert wait_low <= wait_high * (1 + 1e-9)


@given(
    service=st.floats(min_value=0.001, max_value=1e6),
    servers=st.integers(min_value=1, max_value=60),
    utilization=st.floats(min_value=0.0, max_value=0.999),
    loss=st.floats(min_value=0.0, max_value=0.99),
)
def test_losing_capacity_slows_every_server_and_never_shortens_the_wait(service, servers, utilization, loss):
    """The wait after is the wait at the new load on servers slowed by 1 / (1 - loss), same servers."""
    result = maths.queue_wait(service, utilization, servers, loss)
    assert result.service_after_ms == pytest.approx(service / (1 - loss))
    if not result.stable_after:
        assert result.utilization_after >= 1 and result.wait_after_ms is None
        return
    assert result.wait_after_ms >= result.wait_ms * (1 - 1e-9)
    at_new_load = maths.queue_wait(result.service_after_ms, result.utilization_after, servers, 0)
    assert result.wait_after_ms == pytest.approx(at_new_load.wait_ms, rel=1e-9)
    # Slowed servers wait longer than survivors at the old speed (replicas lost): by 1 / (1 - loss) exactly.
    same_speed = maths.queue_wait(service, result.utilization_after, servers, 0).wait_ms
    assert result.wait_after_same_speed_ms == pytest.approx(same_speed, rel=1e-9)
    assert result.wait_after_ms == pytest.approx(same_speed / (1 - loss), rel=1e-9)


@given(
    servers=st.integers(min_value=1, max_value=30),
    load_share=st.floats(min_value=0.0, max_value=0.99),
)
def test_erlang_c_is_a_probability(servers, load_share):
    assert 0 <= maths.erlang_c(servers, servers * load_share) <= 1


@given(
    rate=st.floats(min_value=0, max_value=1e6),
    burst=st.integers(min_value=1, max_value=10**9),
    arrivals=st.integers(min_value=1, max_value=10**9),
    window=st.floats(min_value=0, max_value=1e7),
)
def test_token_bucket_admits_at_most_the_arrivals(rate, burst, arrivals, window):
    result = maths.token_bucket(rate, burst, arrivals, window)
    assert 0 <= result.admitted <= arrivals
    assert result.admitted + result.rejected == arrivals
    assert result.admitted >= min(arrivals, burst)  # the bucket starts full
    assert result.admitted <= burst + rate * window + 1e-6 * max(1.0, rate * window)  # F9 bound


def _exact_simulation(rate: Fraction, burst: int, arrivals: int, window: Fraction) -> int:
    tokens, last, admitted = Fraction(burst), Fraction(0), 0
    for i in range(arrivals):
        t = window * i / arrivals
        tokens = min(Fraction(burst), tokens + rate * (t - last))
        last = t
        if tokens >= 1:
            tokens -= 1
            admitted += 1
    return admitted


@settings(max_examples=150)
@given(
    rate_tenths=st.integers(min_value=0, max_value=500),
    burst=st.integers(min_value=1, max_value=40),
    arrivals=st.integers(min_value=1, max_value=300),
    window_tenths=st.integers(min_value=0, max_value=400),
)
def test_token_bucket_closed_form_equals_an_exact_simulation(rate_tenths, burst, arrivals, window_tenths):
    rate, window = Fraction(rate_tenths, 10), Fraction(window_tenths, 10)
    expected = _exact_simulation(rate, burst, arrivals, window)
    assert maths.token_bucket(rate_tenths / 10, burst, arrivals, window_tenths / 10).admitted == expected
    assert int(maths.token_bucket_curve(rate_tenths / 10, burst, arrivals, window_tenths / 10)[-1]) == expected


@given(
    alpha=fractions,
    gamma=st.integers(min_value=1, max_value=64),
    cost=st.floats(min_value=0, max_value=1),
)
def test_spec_decode_expected_tokens_between_1_and_gamma_plus_1(alpha, gamma, cost):
    result = maths.spec_decode(alpha, gamma, cost)
    assert 1 - 1e-12 <= result.expected_tokens <= gamma + 1 + 1e-9
    assert result.speedup > 0


@given(
    capacity=st.floats(min_value=0.001, max_value=1e9),
    paid=st.floats(min_value=0, max_value=1e9),
    free=st.floats(min_value=0, max_value=1e9),
    target=fractions,
)
def test_shed_splits_free_traffic(capacity, paid, free, target):
    result = maths.shed(capacity, paid, free, target)
    assert 0 <= result.free_admitted_rps <= free
    assert result.free_admitted_rps + result.free_shed_rps == pytest.approx(free)


# --- Every calculator: every valid input gives finite outputs ------------------

# Cross-field rules that bounds alone cannot express: the registry reports these as input errors.
ALLOWED_DOMAIN_ERRORS = {
    ("routing", "shards"),
    ("replica", "weights_gb"),
    ("kv-cache", "tp"),
    ("bounded-load", "family_in_flight"),
    ("window-kv", "windowed_layers"),
}


def _value(parameter):
    if parameter.type == "int":
        return st.integers(min_value=parameter.min, max_value=parameter.max)
    return st.floats(min_value=parameter.min, max_value=parameter.max, allow_nan=False, allow_infinity=False)


def _tp_for(kv_heads: int):
    """Return tensor-parallel degrees that share `kv_heads` evenly: its divisors and multiples up to 1,024."""
    divisors = [d for d in range(1, kv_heads + 1) if kv_heads % d == 0]
    multiples = list(range(kv_heads, 1025, kv_heads))
    return st.sampled_from(sorted(set(divisors + multiples)))


def _inputs(calculator: Calculator):
    values = st.fixed_dictionaries({p.name: _value(p) for p in calculator.parameters})
    if calculator.slug == "kv-cache":  # most random pairs split a head: draw tp that fits the heads
        return values.flatmap(lambda raw: _tp_for(raw["kv_heads"]).map(lambda tp: {**raw, "tp": tp}))
    return values


def _check_finite(calculator: Calculator, raw: dict) -> None:
    try:
        result = calculator.evaluate(raw)
    except CalculatorInputError as error:
        assert {(calculator.slug, name) for name in error.errors} <= ALLOWED_DOMAIN_ERRORS, error.errors
        assume(False)
        return
    for name, value in result.outputs.items():
        if value is None:
            assert calculator.slug == "queue-wait" and name in ("wait_after_ms", "wait_after_same_speed_ms")
            assert result.outputs["stable_after"] is False
            continue
        assert isinstance(value, (bool, int, float)), name
        assert isinstance(value, bool) or math.isfinite(value), (name, value)
    for step in result.steps:
        assert step.value is None or isinstance(step.value, bool) or math.isfinite(step.value), step
    json.dumps(result.as_dict(), allow_nan=False)
    chart = calculator.draw(result)
    if chart is not None:
        root = ET.fromstring(chart.svg)  # well-formed XML
        assert root.get("role") == "img"
        assert "nan" not in chart.svg.lower().replace("nanosecond", "")
        assert "inf" not in chart.svg.lower().replace("info", "")
        assert chart.table.rows


@pytest.mark.parametrize("slug", list(CALCULATORS))
def test_every_valid_input_gives_finite_outputs_and_a_chart(slug):
    calculator = CALCULATORS[slug]

    @settings(max_examples=60, deadline=None)
    @given(raw=_inputs(calculator))
    def check(raw):
        _check_finite(calculator, raw)

    check()


@pytest.mark.parametrize("slug", list(CALCULATORS))
def test_bounds_themselves_give_finite_outputs(slug):
    calculator = CALCULATORS[slug]
    for pick in ("min", "max"):
        raw = {p.name: getattr(p, pick) for p in calculator.parameters}
        if slug == "routing" and pick == "max":
            raw["shards"] = raw["cards"]
        if slug == "replica" and pick == "max":
            raw["weights_gb"] = 0
        _check_finite(calculator, raw)
