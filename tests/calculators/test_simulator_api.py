"""The simulator API: contract names, same seed same numbers, 400s for bad or oversized values, the cache."""

import re
from datetime import UTC, datetime
from unittest import mock

import pytest
import time_machine
from django.urls import reverse

from calculators import simulation
from calculators.simulation import AUTOSCALING_POLICIES, ROUTING_POLICIES

ROUTING_NAMES = {"policies", "replicas", "slots_per_replica", "cache_copies", "families", "zipf", "arrival_rps",
                 "requests", "preamble_tokens", "output_tokens", "seed"}  # fmt: skip
POLICY_OUTPUTS = {"hit_rate", "busiest_share", "ttft_p50_ms", "ttft_p99_ms", "prefill_tokens", "evictions",
                  "replica_share"}  # fmt: skip
SMALL = {"replicas": 8, "requests": 2000, "arrival_rps": 10}


def _routing(client, **params):
    return client.get(reverse("simulator-routing"), params)


def _autoscaling(client, **params):
    return client.get(reverse("simulator-autoscaling"), params)


def test_urls():
    assert reverse("simulator-routing") == "/api/v1/simulator/routing/"
    assert reverse("simulator-autoscaling") == "/api/v1/simulator/autoscaling/"


def test_routing_answers_with_the_contract_names(client):
    response = _routing(client, **SMALL)
    assert response.status_code == 200
    body = response.json()
    assert set(body) == {"inputs", "results"}
    assert set(body["inputs"]) >= ROUTING_NAMES
    assert body["inputs"]["policies"] == list(ROUTING_POLICIES)
    assert body["inputs"]["replicas"] == 8 and body["inputs"]["requests"] == 2000
    assert set(body["results"]) == set(ROUTING_POLICIES)
    for result in body["results"].values():
        assert set(result) >= POLICY_OUTPUTS
        assert len(result["replica_share"]) == 8
        assert sum(result["replica_share"]) == pytest.approx(1.0)
        assert 0 <= result["hit_rate"] <= 1
    assert body["results"]["round_robin"]["busiest_share"] == pytest.approx(1 / 8)


def test_routing_chosen_policies_and_seeds(client):
    body = _routing(client, policies="hash,round_robin", **SMALL).json()
    assert list(body["results"]) == ["hash", "round_robin"]
    again = _routing(client, policies="round_robin", **SMALL).json()
    assert again["results"]["round_robin"] == body["results"]["round_robin"]  # same arrivals, same numbers
    other = _routing(client, policies="round_robin", seed=2, **SMALL).json()
    assert other["results"]["round_robin"]["ttft_p99_ms"] != body["results"]["round_robin"]["ttft_p99_ms"] or (
        other["results"]["round_robin"]["hit_rate"] != body["results"]["round_robin"]["hit_rate"]
    )


@pytest.mark.parametrize(
    ("params", "field", "message"),
    [
        ({"requests": "200000"}, "requests", "Must be at most 100,000 requests; got 200000."),
        ({"replicas": "1000"}, "replicas", "Must be at most 256 replicas; got 1000."),
        ({"replicas": "0"}, "replicas", "Must be at least 1 replica; got 0."),
        ({"zipf": "nan"}, "zipf", "NaN (not a number) is not allowed: enter a finite number."),
        ({"cache_copies": "2.5"}, "cache_copies", "Must be a whole number; got 2.5."),
        ({"arrival_rps": "lots"}, "arrival_rps", "“lots” is not a number."),
        ({"policies": "hash,random"}, "policies", "Unknown: random."),
        ({"policies": ""}, "policies", "Name at least one of"),
        ({"colour": "red"}, "colour", "Unknown parameter. Routing simulation takes: replicas,"),
    ],
)
def test_routing_bad_values_are_400_with_field_errors(client, params, field, message):
    response = _routing(client, **params)
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == [field]
    assert errors[field][0].startswith(message)


def test_autoscaling_answers_with_the_contract_names(client):
    response = _autoscaling(client, policy="kv_use", cold_start_s=120, warm_replicas=2, seed=3)
    assert response.status_code == 200
    body = response.json()
    assert body["inputs"]["policy"] == "kv_use"
    assert (
        body["inputs"]["cold_start_s"] == 120 and body["inputs"]["warm_replicas"] == 2 and body["inputs"]["seed"] == 3
    )
    results = body["results"]
    assert {"slo_violation_minutes", "gpu_hours", "cost_usd", "timeline"} <= set(results)
    assert len(results["timeline"]) == 1440
    assert {"minute", "demand_rps", "replicas", "ttft_p99_ms"} <= set(results["timeline"][0])
    assert results["cost_usd"] == pytest.approx(results["gpu_hours"] * 2100 / 730)


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"policy": "cpu"}, "policy"),
        ({"policy": "kv_use,ttft"}, "policy"),
        ({"cold_start_s": "-1"}, "cold_start_s"),
        ({"max_replicas": "100000"}, "max_replicas"),
        ({"warm_replicas": "inf"}, "warm_replicas"),
    ],
)
def test_autoscaling_bad_values_are_400(client, params, field):
    response = _autoscaling(client, **params)
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]


def test_inputs_that_contradict_each_other_are_400(client):
    response = _autoscaling(client, min_replicas=20, max_replicas=10)
    assert response.status_code == 400
    assert response.json()["errors"]["min_replicas"] == ["The minimum replicas cannot exceed the maximum."]


def test_a_fleet_far_over_capacity_is_refused(client):
    # 64 replicas x 16 slots, each request 0.22 s of prefill + 5 s of decode: about 196 requests/s fill them.
    assert _routing(client, arrival_rps=250).status_code == 200
    response = _routing(client, arrival_rps=400)
    assert response.status_code == 400
    message = response.json()["errors"]["arrival_rps"][0]
    assert message.startswith("Arrivals are 2.04× what the fleet's slots can serve")
    assert "when every request pays its whole prefill" in message and "even with every preamble" not in message
    assert "The simulator runs loads up to 1.5× that" in message and "lower the arrival rate or add replicas" in message
    # Far over, on one slot: the numbers read as numbers ("5.22e+05×", "÷ 1 slots" before).
    far = _routing(client, replicas=1, slots_per_replica=1, arrival_rps=100_000).json()["errors"]["arrival_rps"][0]
    assert re.match(r"Arrivals are [\d,]+× what", far) and "÷ 1 slot)" in far and "e+" not in far, far


def test_every_policy_is_accepted(client):
    for policy in AUTOSCALING_POLICIES:
        assert _autoscaling(client, policy=policy).status_code == 200


def test_identical_parameters_are_served_from_the_cache(client):
    with mock.patch.object(simulation, "simulate_routing", wraps=simulation.simulate_routing) as run:
        first = _routing(client, **SMALL).json()
        # The same inputs spelled differently (a default given explicitly) are the same run.
        second = _routing(client, seed=1, **SMALL).json()
        assert run.call_count == 1
        _routing(client, seed=2, **SMALL)
        assert run.call_count == 2
    assert first == second


def test_a_failing_cache_only_costs_time(client, caplog):
    with (
        mock.patch("django.core.cache.cache.get", side_effect=ConnectionError("down")),
        mock.patch("django.core.cache.cache.set", side_effect=ConnectionError("down")),
    ):
        response = _routing(client, **SMALL)
    assert response.status_code == 200
    assert set(response.json()["results"]) == set(ROUTING_POLICIES)
    assert "Simulator cache not read" in caplog.text


def test_schema_documents_every_parameter_and_output(client):
    from drf_spectacular.generators import SchemaGenerator

    from calculators.simulator import AUTOSCALING, ROUTING

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, mode in (("/api/v1/simulator/routing/", ROUTING), ("/api/v1/simulator/autoscaling/", AUTOSCALING)):
        operation = schema["paths"][path]["get"]
        names = {p["name"] for p in operation["parameters"]}
        assert {p.name for p in mode.parameters} | {mode.choice.name} <= names
        assert {"200", "400"} <= set(operation["responses"])
    components = schema["components"]["schemas"]
    assert set(components["PolicyResult"]["properties"]) >= POLICY_OUTPUTS
    assert {"slo_violation_minutes", "gpu_hours", "cost_usd", "timeline"} <= set(
        components["AutoscalingResult"]["properties"]
    )
    assert {"minute", "demand_rps", "replicas", "ttft_p99_ms"} <= set(components["Minute"]["properties"])


def test_runs_are_limited_per_visitor_across_pages_and_api(client, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "simulations": "2/min"}
    with time_machine.travel(datetime(2026, 3, 2, 12, 0, 15, tzinfo=UTC), tick=False):
        assert _routing(client, **SMALL).status_code == 200
        assert client.get(reverse("simulator:routing"), SMALL).status_code == 200
        refused = _routing(client, **SMALL)
        assert refused.status_code == 429
        assert refused["Retry-After"] == "45"
        page = client.get(reverse("simulator:autoscaling"))
        assert page.status_code == 429
        assert "Too many simulation runs in a short time." in page.content.decode()


def test_too_many_prompt_families_are_refused_before_running(client):
    refused = _routing(client, families=10_001)
    assert refused.status_code == 400
    assert "at most 10,000" in refused.json()["errors"]["families"][0]
    page = client.get(reverse("simulator:routing"), {"families": 10_001})
    assert page.status_code == 400 and "at most 10,000" in page.content.decode()


def test_a_large_run_is_charged_by_its_cost(client, settings):
    """A run is charged one per 50,000 simulated requests (requests x policies): the default run is
    one charge, 100,000 requests over all five policies ten."""
    from calculators.simulator import ROUTING, run_charge

    assert run_charge(ROUTING, {}) == 1
    assert run_charge(ROUTING, {"requests": "100000"}) == 10
    # The run reads "1e5" and "100000.0" as 100,000: they were charged 1, a tenth of the run.
    assert run_charge(ROUTING, {"requests": "1e5"}) == run_charge(ROUTING, {"requests": "100000.0"}) == 10
    assert run_charge(ROUTING, {"requests": "100000", "policies": "hash"}) == 2
    assert run_charge(ROUTING, {"requests": "lots"}) == 1  # refused by the form; counted once
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "simulations": "12/min"}
    with time_machine.travel(datetime(2026, 3, 2, 12, 0, 15, tzinfo=UTC), tick=False):
        big = {**SMALL, "requests": 50_000, "policies": "round_robin,hash"}  # 100,000 simulated: two charges
        for _ in range(5):
            assert _routing(client, **big).status_code == 200
        assert client.get(reverse("simulator:routing"), big).status_code == 200  # the pages pay alike: 12
        assert _routing(client, **SMALL).status_code == 429
