"""Lessons embed fleet-simulator numbers through {{calc ...}}: computed from a run, never typed."""

import pytest

from calculators.formatting import in_format
from calculators.simulator import AUTOSCALING, ROUTING
from lessons.markup import MarkupError, expand_calcs
from tests.lesson_pages import whole_lesson


def _preset(mode, slug, **changes):
    return {**{name: str(value) for name, value in mode.preset(slug).values.items()}, **changes}


def test_a_routing_reference_gives_the_runs_number():
    text = expand_calcs(
        "{{calc simulator-routing.round_robin.hit_rate preset=round-robin-crossover | pct1}} and "
        "{{calc simulator-routing.hash.busiest_share preset=round-robin-crossover cache_copies=8 | pct2}}"
    )
    four = ROUTING.evaluate(_preset(ROUTING, "round-robin-crossover"))["results"]
    eight = ROUTING.evaluate(_preset(ROUTING, "round-robin-crossover", cache_copies="8"))["results"]
    assert text == f"{in_format(four['round_robin']['hit_rate'], 'pct1')} and " + in_format(
        eight["hash"]["busiest_share"], "pct2"
    )


def test_an_autoscaling_reference_gives_the_days_number():
    text = expand_calcs("{{calc simulator-autoscaling.slo_violation_minutes preset=warm-pool policy=kv_use | int}}")
    day = AUTOSCALING.evaluate({**_preset(AUTOSCALING, "warm-pool"), "policy": "kv_use"})["results"]
    assert text == in_format(day["slo_violation_minutes"], "int")


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("simulator-routing.hit_rate", "should be <policy>.<output>"),
        ("simulator-routing.hash.timeline", "has no number 'hash.timeline'"),
        ("simulator-routing.hash.replica_share", "has no number"),
        ("simulator-routing.hash.hit_rate preset=nope", "has no preset 'nope'"),
        ("simulator-routing.hash.hit_rate requests=500000", "Must be at most 100,000 requests"),
        ("simulator-autoscaling.cost_usd policy=gpu", "Unknown: gpu"),
    ],
)
def test_a_bad_simulator_reference_is_refused_with_a_reason(ref, message):
    with pytest.raises(MarkupError, match=message.replace("(", r"\(").replace(".", r"\.")):
        expand_calcs(f"{{{{calc {ref} | f2}}}}")


def test_the_cache_aware_routing_lesson_shows_the_simulated_crossover(client, content):
    html = whole_lesson(client, "/lessons/cache-aware-routing/")  # every layer, a page each
    four = ROUTING.evaluate(_preset(ROUTING, "round-robin-crossover"))["results"]
    assert "Watch the crossover in the simulator" in html
    assert f"<td>{in_format(four['round_robin']['hit_rate'], 'pct1')}</td>" in html
    assert f"<td>{in_format(four['hash']['hit_rate'], 'pct1')}</td>" in html
    assert 'href="/simulator/"' in html


def test_the_autoscaling_prose_claims_what_the_runs_show():
    """llm-serving-platform says a warm pool cuts KV-use's minutes at a GPU-hour price, and TTFT scaling lags."""

    def day(preset=None, **values):
        raw = {**(_preset(AUTOSCALING, preset) if preset else {}), **values}
        return AUTOSCALING.evaluate(raw)["results"]

    cold, warm = day("evening-spike", policy="kv_use"), day("warm-pool", policy="kv_use")
    assert warm["slo_violation_minutes"] < cold["slo_violation_minutes"]
    assert warm["gpu_hours"] > cold["gpu_hours"]
    assert day(policy="ttft")["slo_violation_minutes"] > day(policy="queue_depth")["slo_violation_minutes"]
