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


def _best_choice_text(slug, key):
    from lessons.models import Choice

    return Choice.objects.get(deep_dive__key=key, deep_dive__section__lesson__slug=slug, verdict="best").text


def test_the_routing_lesson_asks_which_affinity_policy_the_run_favours(client, content):
    """Issue 17 item 4: the best choice is the policy with the most hits among those that keep the load even."""
    run = ROUTING.evaluate(_preset(ROUTING, "round-robin-crossover"))["results"]
    even = 2 / 64  # at most twice a fair share on the busiest replica
    capped = [policy for policy in ("hash", "bounded_load", "prefix_aware") if run[policy]["busiest_share"] <= even]
    assert run["hash"]["busiest_share"] > even and capped == ["bounded_load", "prefix_aware"]
    assert max(capped, key=lambda policy: run[policy]["hit_rate"]) == "prefix_aware"
    assert _best_choice_text("routing", "read-the-policies").startswith("Prefix-aware.")
    html = whole_lesson(client, "/lessons/routing/")  # every layer, a page each
    assert "Three affinity policies on the same arrivals" in html
    for policy in ("hash", "bounded_load", "prefix_aware", "round_robin"):
        assert f"<td>{in_format(run[policy]['hit_rate'], 'pct1')}</td>" in html
    assert f"<td>{in_format(run['hash']['ttft_p99_ms'], 'int')} ms</td>" in html


def test_the_autoscaling_lesson_asks_what_to_change_and_the_day_agrees(client, content):
    """Queue depth beats TTFT on both minutes and GPU-hours; a warm pool on TTFT costs more and still misses more."""

    def day(preset, policy, **values):
        return AUTOSCALING.evaluate({**_preset(AUTOSCALING, preset), "policy": policy, **values})["results"]

    ttft, queue = day("evening-spike", "ttft"), day("evening-spike", "queue_depth")
    assert queue["slo_violation_minutes"] < ttft["slo_violation_minutes"]
    assert queue["gpu_hours"] < ttft["gpu_hours"]
    warm_ttft = day("warm-pool", "ttft")
    assert queue["slo_violation_minutes"] < warm_ttft["slo_violation_minutes"] < ttft["slo_violation_minutes"]
    assert warm_ttft["gpu_hours"] > ttft["gpu_hours"]
    kv = day("evening-spike", "kv_use")  # the weak choice: a busy share saturates at 100% in the spike
    assert kv["slo_violation_minutes"] > queue["slo_violation_minutes"]
    tight = day("evening-spike", "ttft", ttft_target_ms="500")  # the acceptable choice: fewer minutes, more GPUs
    assert tight["slo_violation_minutes"] < ttft["slo_violation_minutes"] and tight["gpu_hours"] > queue["gpu_hours"]
    assert _best_choice_text("autoscaling", "read-the-day").startswith("Scale on queue depth instead.")
    html = whole_lesson(client, "/lessons/autoscaling/")  # every layer, a page each
    assert "One day, three signals, with and without a warm pool" in html
    assert f"<td>{in_format(ttft['slo_violation_minutes'], 'int')}</td>" in html
    assert f"<td>{in_format(warm_ttft['gpu_hours'], 'int')}</td>" in html
    assert 'href="/simulator/autoscaling/"' in html
    assert "busy share of slots, the KV-use stand-in (target 70%)" in html
    from lessons.models import Choice

    kv_choice = Choice.objects.get(deep_dive__key="read-the-day", text__startswith="Scale on KV use")
    assert kv_choice.verdict == "weak" and "a busy share cannot pass 100%" in kv_choice.feedback
