"""The public calculator API: list, evaluate, and a 400 for each kind of bad input."""

import pytest
from django.urls import reverse

from calculators.registry import CALCULATORS


def _detail(client, slug, **params):
    return client.get(reverse("calculator-detail", args=[slug]), params)


def test_urls():
    assert reverse("calculator-list") == "/api/v1/calculators/"
    assert reverse("calculator-detail", args=["kv-cache"]) == "/api/v1/calculators/kv-cache/"


def test_list_describes_every_calculator(client):
    response = client.get(reverse("calculator-list"))
    assert response.status_code == 200
    body = response.json()
    assert [entry["slug"] for entry in body] == list(CALCULATORS)
    kv = body[0]
    assert set(kv) == {"slug", "title", "parameters", "outputs"}
    assert kv["parameters"][0] == {
        "name": "layers",
        "type": "int",
        "default": 80,
        "min": 1,
        "max": 1000,
        "unit": "layers",
        "help": CALCULATORS["kv-cache"].parameters[0].help,
    }
    assert kv["outputs"][0] == {"name": "bytes_per_token", "unit": "B"}


def test_detail_with_defaults(client):
    response = _detail(client, "kv-cache")
    assert response.status_code == 200
    body = response.json()
    assert list(body) == ["slug", "inputs", "outputs", "steps"]
    assert body["slug"] == "kv-cache"
    assert body["inputs"] == {
        "layers": 80,
        "kv_heads": 8,
        "head_dim": 128,
        "bytes_per_value": 2,
        "tokens": 1200,
        "cache_gb": 8.0,
        "tp": 1,
    }
    assert body["outputs"] == {
        "bytes_per_token": 327680,
        "copy_bytes": 393216000,
        "copies_per_cache": 20,
        "bytes_per_token_per_gpu": 327680,
    }
    assert body["steps"][0] == {
        "label": "KV bytes per token",
        "expression": "2 (K and V) × 80 layers × 8 KV heads × 128 values per head × 2 B",
        "value": 327680,
        "unit": "B",
    }


def test_detail_with_parameters(client):
    body = _detail(client, "replica", gpus="2").json()
    assert body["inputs"]["gpus"] == 2
    assert body["outputs"]["requests_per_replica"] == 2


def test_fleet_returns_booleans_for_checks(client):
    outputs = _detail(client, "fleet", owned_cards="8000").json()["outputs"]
    assert (outputs["idle_ok"], outputs["margin_ok"], outputs["overflow_ok"]) == (False, True, True)


def test_unstable_queue_returns_null(client):
    response = _detail(client, "queue-wait", utilization="0.8")
    assert response.status_code == 200
    assert response.json()["outputs"]["wait_after_ms"] is None
    assert response.json()["outputs"]["stable_after"] is False


def test_queue_wait_reports_the_slowed_service_and_its_wait(client):
    # One server at 50 ms and 66% losing 30%: 71.43 ms service at 94.29%, 1,178.57 ms in queue.
    outputs = _detail(client, "queue-wait").json()["outputs"]
    assert outputs["service_after_ms"] == pytest.approx(50 / 0.7)
    assert outputs["utilization_after"] == pytest.approx(0.66 / 0.7)
    assert outputs["wait_after_ms"] == pytest.approx(1178.57, abs=0.005)
    # Whole replicas lost instead (the survivors keep 50 ms): 50 x 0.942857 / 0.057143 = 825 ms.
    assert outputs["wait_after_same_speed_ms"] == pytest.approx(825.0)


def test_the_api_lists_the_slowed_service_as_an_output(client):
    queue = next(c for c in client.get(reverse("calculator-list")).json() if c["slug"] == "queue-wait")
    assert {"name": "service_after_ms", "unit": "ms"} in queue["outputs"]


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("abc", "“abc” is not a number."),
        ("nan", "NaN (not a number) is not allowed: enter a finite number."),
        ("inf", "Infinity is not allowed: enter a finite number."),
        ("-inf", "Infinity is not allowed: enter a finite number."),
        ("0", "Must be at least 1 layer; got 0."),
        ("1001", "Must be at most 1,000 layers; got 1001."),
        ("2.5", "Must be a whole number; got 2.5."),
        ("", "Enter a number."),
    ],
)
def test_bad_values_give_400_with_field_errors(client, value, message):
    response = _detail(client, "kv-cache", layers=value)
    assert response.status_code == 400
    assert response.json() == {"errors": {"layers": [message]}}


def test_float_parameter_out_of_range(client):
    response = _detail(client, "routing", hot_share="1.5")
    assert response.status_code == 400
    assert response.json() == {"errors": {"hot_share": ["Must be at most 1 (a fraction: 0.8 means 80%); got 1.5."]}}


@pytest.mark.parametrize("sign", ["", "-"])
def test_a_whole_number_too_large_for_a_float_is_out_of_range_not_a_500(client, sign):
    huge = sign + "1" + "0" * 400  # float() of it overflows
    response = _detail(client, "kv-cache", cache_gb=huge)
    assert response.status_code == 400
    bound = "at least 0.001 GB" if sign else "at most 1,000,000 GB"
    assert response.json()["errors"]["cache_gb"][0].startswith(f"Must be {bound}")
    page = client.get(reverse("calculators:detail", args=["kv-cache"]), {"cache_gb": huge})
    assert page.status_code == 400 and "Must be " in page.content.decode()


def test_unknown_parameter_gives_400(client):
    response = _detail(client, "kv-cache", layer="80")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["layer"]
    assert response.json()["errors"]["layer"][0].startswith("Unknown parameter.")


def test_every_error_is_reported_at_once(client):
    response = _detail(client, "kv-cache", layers="x", tokens="nan", cache_gb="-1", extra="1")
    assert response.status_code == 400
    assert set(response.json()["errors"]) == {"layers", "tokens", "cache_gb", "extra"}


def test_inconsistent_inputs_give_400_on_the_parameter(client):
    response = _detail(client, "routing", cards="4", shards="8")
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["shards"]


def test_format_override_is_not_a_parameter(client):
    assert _detail(client, "kv-cache", format="json").status_code == 200


def test_unknown_slug_gives_404_json(client):
    response = client.get("/api/v1/calculators/warp-drive/")
    assert response.status_code == 404
    assert response["Content-Type"] == "application/json"
    assert "warp-drive" in response.json()["detail"]


@pytest.mark.parametrize("slug", list(CALCULATORS))
def test_every_calculator_answers_with_defaults(client, slug):
    response = _detail(client, slug)
    assert response.status_code == 200
    assert set(response.json()["outputs"]) == {o.name for o in CALCULATORS[slug].outputs}


def test_api_is_read_only(client):
    assert client.post(reverse("calculator-detail", args=["kv-cache"])).status_code in (403, 405)


def test_schema_documents_the_calculator_api(client):
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    evaluate = schema["paths"]["/api/v1/calculators/{slug}/"]["get"]
    assert evaluate["operationId"] == "calculators_evaluate"
    assert {"200", "400", "404"} <= set(evaluate["responses"])
    slug = next(p for p in evaluate["parameters"] if p["name"] == "slug")
    assert slug["schema"]["enum"] == sorted(CALCULATORS)
    assert schema["paths"]["/api/v1/calculators/"]["get"]["operationId"] == "calculators_list"


def test_schema_validates_without_warnings():
    from django.core.management import call_command

    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


def test_kv_cache_per_gpu_share_under_tensor_parallelism(client):
    outputs = _detail(client, "kv-cache", tp="4").json()["outputs"]
    assert outputs["bytes_per_token_per_gpu"] == 81920  # 2 of the 8 KV heads per GPU
    assert _detail(client, "kv-cache", tp="16").json()["outputs"]["bytes_per_token_per_gpu"] == 40960


def test_kv_cache_refuses_a_tp_that_splits_heads(client):
    response = _detail(client, "kv-cache", tp="3")
    assert response.status_code == 400
    assert response.json() == {
        "errors": {
            "tp": [
                "A tensor-parallel degree of 3 cannot share 8 KV heads evenly: use a tp that divides 8 or "
                "is a multiple of it."
            ]
        }
    }


def test_kv_cache_accepts_half_a_byte_per_value(client):
    body = _detail(client, "kv-cache", bytes_per_value="0.5").json()
    assert body["outputs"]["bytes_per_token"] == 81920


@pytest.mark.parametrize(
    ("slug", "params", "expected"),
    [
        ("decode-step", {"batch": "128"}, {"memory_bound": True}),
        ("prefill", {}, {"flops": 5.6e14}),
        ("bounded-load", {"replicas": "64", "in_flight": "1000", "epsilon": "0.25", "family_in_flight": "800"},
         {"cap_per_replica": 20, "replicas_for_family": 40}),
        ("rehash", {}, {"consistent_moved": 0.2, "modulo_moved": 0.8}),
        ("autoscale", {"replicas": "10", "metric": "12", "target": "5"}, {"desired_replicas": 24}),
        ("headroom", {}, {"replicas": 23, "gpus": 92}),
        ("request-cost", {}, {"usd_total": 1.98}),
        ("latent-kv", {}, {"bytes_per_token": 70272, "equivalent_kv_heads": 2.25}),
        ("window-kv", {"layers": "32", "windowed_layers": "32", "head_dim": "128", "window_tokens": "4096",
                       "context_tokens": "32768"}, {"request_bytes": 536870912, "share_of_full": 0.125}),
    ],
)  # fmt: skip
def test_new_calculators_answer_over_the_api(client, slug, params, expected):
    body = _detail(client, slug, **params).json()
    for name, value in expected.items():
        assert body["outputs"][name] == pytest.approx(value)
    assert body["steps"] and set(body["inputs"]) == {p.name for p in CALCULATORS[slug].parameters}


def test_bounded_load_family_bigger_than_the_fleet_is_a_400(client):
    response = _detail(client, "bounded-load", family_in_flight="5000")
    assert response.status_code == 400
    assert "cannot be more" in response.json()["errors"]["family_in_flight"][0]


def test_more_windowed_layers_than_layers_is_a_400_on_windowed_layers(client):
    response = _detail(client, "window-kv", layers="36", windowed_layers="40")
    assert response.status_code == 400
    assert "cannot have 40 windowed layers" in response.json()["errors"]["windowed_layers"][0]


def test_the_api_list_and_schema_include_the_new_calculators(client):
    from drf_spectacular.generators import SchemaGenerator

    listed = {c["slug"] for c in client.get(reverse("calculator-list")).json()}
    new = {"decode-step", "prefill", "bounded-load", "rehash", "autoscale", "headroom", "request-cost"}
    new |= {"latent-kv", "window-kv"}
    assert new <= listed
    schema = SchemaGenerator().get_schema(request=None, public=True)
    slug = next(p for p in schema["paths"]["/api/v1/calculators/{slug}/"]["get"]["parameters"] if p["name"] == "slug")
    assert new <= set(slug["schema"]["enum"])
