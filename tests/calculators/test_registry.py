"""The registry: the public contract of DESIGN.md, parsing, evaluation and derivations (no database)."""

import json
import math
import re

import pytest

from calculators.errors import CalculatorInputError
from calculators.formatting import bytes_text, input_text, money, number, percent, value_text
from calculators.registry import CALCULATORS, DerivationStep, Result, get_calculator

# The calculator table of DESIGN.md, verbatim: slug -> ([(parameter, default)], [outputs]).
CONTRACT = {
    "kv-cache": (
        [
            ("layers", 80),
            ("kv_heads", 8),
            ("head_dim", 128),
            ("bytes_per_value", 2),
            ("tokens", 1200),
            ("cache_gb", 8),
            ("tp", 1),
        ],
        ["bytes_per_token", "copy_bytes", "copies_per_cache", "bytes_per_token_per_gpu"],
    ),
    # Beyond DESIGN.md's table (extra calculators are welcome): KV under latent attention and sliding windows.
    "latent-kv": (
        [
            ("layers", 61),
            ("latent_dim", 512),
            ("rope_dim", 64),
            ("bytes_per_value", 2),
            ("context_tokens", 4096),
            ("head_dim", 128),
        ],
        ["bytes_per_token", "request_bytes", "equivalent_kv_heads"],
    ),
    "window-kv": (
        [
            ("layers", 36),
            ("windowed_layers", 18),
            ("kv_heads", 8),
            ("head_dim", 64),
            ("bytes_per_value", 2),
            ("window_tokens", 128),
            ("context_tokens", 131072),
        ],
        ["request_bytes", "full_attention_bytes", "share_of_full"],
    ),
    "routing": (
        [("cards", 64), ("hot_share", 0.8), ("family_fleet_share", 0.3), ("shards", 1)],
        ["round_robin_share", "hash_busiest_share", "fleet_points", "duplicate_copies"],
    ),
    "replica": (
        [
            ("gpus", 4),
            ("gpu_memory_gb", 80),
            ("weights_gb", 140),
            ("memory_utilization", 0.9),
            ("kv_bytes_per_token", 327680),
            ("context_tokens", 4096),
        ],
        ["kv_budget_bytes", "kv_bytes_per_request", "requests_per_replica"],
    ),
    "pool": (
        [
            ("peak_requests_per_s", 100),
            ("mean_request_s", 20),
            ("requests_per_replica", 110),
            ("gpus_per_replica", 4),
            ("target_utilization", 0.6),
        ],
        ["peak_concurrency", "replicas", "gpus"],
    ),
    "token-cost": (
        [("card_month_usd", 2100), ("cards", 1), ("tokens_per_s", 700), ("api_usd_per_million", 2.5)],
        ["usd_per_hour", "tokens_per_hour", "usd_per_million_tokens", "share_of_api"],
    ),
    "fleet": (
        [
            ("monthly_tokens", 1e13),
            ("tokens_per_s_per_card", 700),
            ("owned_cards", 5000),
            ("rented_cards", 0),
            ("card_month_usd", 2100),
            ("rent_multiplier", 1.35),
            ("api_usd_per_million", 2.5),
        ],
        [
            "tokens_per_card_month",
            "cards_needed",
            "overflow_tokens",
            "overflow_share",
            "api_usd",
            "total_usd",
            "blended_usd_per_million",
            "idle_share",
            "rented_cards_to_cover",
            "idle_ok",
            "margin_ok",
            "overflow_ok",
        ],
    ),
    "token-bucket": (
        [("rate_per_s", 10), ("burst", 20), ("arrivals", 50), ("window_s", 0)],
        ["admitted", "rejected"],
    ),
    "queue-wait": (
        [("service_ms", 50), ("utilization", 0.66), ("servers", 1), ("capacity_loss", 0.3)],
        [
            "wait_ms",
            "utilization_after",
            "wait_after_ms",
            "stable_after",
            "service_after_ms",
            "wait_after_same_speed_ms",
        ],
    ),
    "shed": (
        [("capacity_rps", 1000), ("paid_rps", 600), ("free_rps", 500), ("target_utilization", 0.85)],
        ["free_admitted_rps", "free_shed_rps", "utilization"],
    ),
    "spec-decode": (
        [
            ("acceptance", 0.8),
            ("draft_tokens", 4),
            ("draft_cost", 0.05),
            ("batch", 1),
            ("mean_context", 2048),
            ("compute_efficiency", 1.0),
        ],
        ["expected_tokens", "accepted_share", "verify_steps", "speedup"],
    ),
    "decode-step": (
        [
            ("params_b", 70),
            ("bytes_per_param", 2),
            ("kv_bytes_per_token", 327680),
            ("batch", 64),
            ("mean_context", 2048),
            ("tp", 4),
            ("hbm_tb_s", 3.35),
            ("tflops", 989),
        ],
        [
            "weights_ms",
            "kv_ms",
            "compute_ms",
            "step_ms",
            "tokens_per_s_per_stream",
            "tokens_per_s",
            "ridge_batch",
            "memory_bound",
        ],
    ),
    "prefill": (
        [("params_b", 70), ("prompt_tokens", 4000), ("gpus", 4), ("tflops", 989), ("mfu", 0.5)],
        ["flops", "ttft_s"],
    ),
    "bounded-load": (
        [("replicas", 48), ("in_flight", 1200), ("epsilon", 0.2), ("family_in_flight", 600)],
        ["cap_per_replica", "replicas_for_family", "replicas_if_others_first"],
    ),
    "rehash": ([("replicas_before", 40), ("replicas_after", 50)], ["consistent_moved", "modulo_moved"]),
    "autoscale": ([("replicas", 12), ("metric", 9), ("target", 4), ("tolerance", 0.1)], ["desired_replicas"]),
    "headroom": (
        [
            ("concurrency", 2000),
            ("slots_per_replica", 110),
            ("max_occupancy", 0.9),
            ("spare_replicas", 2),
            ("gpus_per_replica", 4),
        ],
        ["replicas", "gpus"],
    ),
    "request-cost": (
        [
            ("input_tokens", 3000),
            ("cached_fraction", 0.6),
            ("output_tokens", 300),
            ("input_usd_per_million", 0.6),
            ("cached_usd_per_million", 0.3),
            ("output_usd_per_million", 2.4),
            ("requests", 1000),
        ],
        ["usd_per_request", "usd_total"],
    ),
}


def test_every_slug_of_the_contract_in_display_order():
    assert list(CALCULATORS) == list(CONTRACT)


@pytest.mark.parametrize("slug", CONTRACT)
def test_parameters_and_defaults_match_the_contract(slug):
    calculator = get_calculator(slug)
    assert [(p.name, p.default) for p in calculator.parameters] == CONTRACT[slug][0]


@pytest.mark.parametrize("slug", CONTRACT)
def test_outputs_match_the_contract(slug):
    assert [o.name for o in get_calculator(slug).outputs] == CONTRACT[slug][1]


@pytest.mark.parametrize("slug", CONTRACT)
def test_defaults_lie_within_bounds_and_match_the_type(slug):
    for p in get_calculator(slug).parameters:
        assert p.min <= p.default <= p.max
        assert p.type in ("int", "float")
        assert isinstance(p.default, int if p.type == "int" else float)
        assert p.unit is not None and p.help and p.label


def test_get_calculator_raises_key_error_for_unknown_slug():
    with pytest.raises(KeyError):
        get_calculator("warp-drive")


def test_describe_has_exactly_the_api_fields():
    entry = get_calculator("kv-cache").describe()
    assert set(entry) == {"slug", "title", "parameters", "outputs"}
    assert set(entry["parameters"][0]) == {"name", "type", "default", "min", "max", "unit", "help"}
    assert set(entry["outputs"][0]) == {"name", "unit"}
    assert entry["parameters"][5] | {"help": ""} == {
        "name": "cache_gb",
        "type": "float",
        "default": 8.0,
        "min": 0.001,
        "max": 1_000_000.0,
        "unit": "GB",
        "help": "",
    }


# --- parse ------------------------------------------------------------------


def test_parse_fills_defaults():
    assert get_calculator("routing").parse({}) == {
        "cards": 64,
        "hot_share": 0.8,
        "family_fleet_share": 0.3,
        "shards": 1,
    }


def test_parse_accepts_strings_and_numbers():
    values = get_calculator("routing").parse({"cards": " 32 ", "hot_share": 0.5, "shards": "2.0"})
    assert values == {"cards": 32, "hot_share": 0.5, "family_fleet_share": 0.3, "shards": 2}
    assert type(values["shards"]) is int


def test_parse_casts_floats_and_accepts_exponents():
    values = get_calculator("fleet").parse(
        {"monthly_tokens": "1e13", "tokens_per_s_per_card": "700", "owned_cards": "5e3"}
    )
    assert values["monthly_tokens"] == 1e13
    assert type(values["tokens_per_s_per_card"]) is float
    assert values["owned_cards"] == 5000 and type(values["owned_cards"]) is int


def _errors(slug, raw):
    with pytest.raises(CalculatorInputError) as error:
        get_calculator(slug).parse(raw)
    return error.value.errors


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("abc", "“abc” is not a number."),
        ("", "Enter a number."),
        ("nan", "NaN (not a number) is not allowed: enter a finite number."),
        ("NaN", "NaN (not a number) is not allowed: enter a finite number."),
        ("inf", "Infinity is not allowed: enter a finite number."),
        ("-inf", "Infinity is not allowed: enter a finite number."),
        ("Infinity", "Infinity is not allowed: enter a finite number."),
        ("0", "Must be at least 1 layer; got 0."),
        ("1001", "Must be at most 1,000 layers; got 1001."),
        ("4.5", "Must be a whole number; got 4.5."),
        (float("nan"), "NaN (not a number) is not allowed: enter a finite number."),
        (True, "Enter a number."),
        (None, "Enter a number."),
    ],
)
def test_parse_messages(raw, message):
    assert _errors("kv-cache", {"layers": raw}) == {"layers": [message]}


def test_fraction_bounds_explain_the_unit():
    assert _errors("routing", {"hot_share": "80"}) == {
        "hot_share": ["Must be at most 1 (a fraction: 0.8 means 80%); got 80."]
    }


def test_bound_messages_name_the_unit():
    assert _errors("kv-cache", {"cache_gb": "0"}) == {"cache_gb": ["Must be at least 0.001 GB; got 0."]}
    assert _errors("queue-wait", {"service_ms": "-1"}) == {"service_ms": ["Must be at least 0.001 ms; got -1."]}


def test_unknown_parameter_lists_the_valid_names():
    errors = _errors("spec-decode", {"alpha": "0.8"})
    assert errors == {
        "alpha": [
            "Unknown parameter. Speculative decoding speedup takes: acceptance, draft_tokens, draft_cost, batch, "
            "mean_context, compute_efficiency."
        ]
    }


def test_parse_collects_every_error():
    errors = _errors("kv-cache", {"layers": "x", "kv_heads": "nan", "tokens": "0", "nope": "1"})
    assert set(errors) == {"layers", "kv_heads", "tokens", "nope"}


def test_very_long_bad_values_are_shortened_in_messages():
    message = _errors("kv-cache", {"layers": "x" * 500})["layers"][0]
    assert len(message) < 60 and "…" in message


def test_huge_integers_are_compared_exactly():
    assert _errors("kv-cache", {"layers": "9" * 40})["layers"][0].startswith("Must be at most 1,000 layers")


# --- evaluate ---------------------------------------------------------------


def test_evaluate_returns_the_api_shape():
    result = get_calculator("kv-cache").evaluate({"tokens": "1200"})
    assert isinstance(result, Result)
    body = result.as_dict()
    assert list(body) == ["slug", "inputs", "outputs", "steps"]
    assert body["outputs"] == {
        "bytes_per_token": 327680,
        "copy_bytes": 393216000,
        "copies_per_cache": 20,
        "bytes_per_token_per_gpu": 327680,
    }
    assert body["inputs"]["cache_gb"] == 8.0
    assert set(body["steps"][0]) == {"label", "expression", "value", "unit"}
    json.dumps(body, allow_nan=False)


def test_domain_error_becomes_an_input_error_on_the_parameter():
    with pytest.raises(CalculatorInputError) as error:
        get_calculator("routing").evaluate({"cards": "4", "shards": "5"})
    assert list(error.value.errors) == ["shards"]
    assert "more replicas than the fleet has" in error.value.errors["shards"][0]


def test_weights_that_do_not_fit_are_reported_on_weights():
    with pytest.raises(CalculatorInputError) as error:
        get_calculator("replica").evaluate({"gpus": "1"})
    assert list(error.value.errors) == ["weights_gb"]


def test_unstable_queue_is_a_result_not_an_error():
    result = get_calculator("queue-wait").evaluate({"utilization": "0.8"})
    assert result.outputs["stable_after"] is False
    assert result.outputs["wait_after_ms"] is None
    assert result.steps[-1].value is None
    json.dumps(result.as_dict(), allow_nan=False)


@pytest.mark.parametrize("slug", CONTRACT)
def test_defaults_evaluate_to_finite_outputs_of_plain_types(slug):
    result = get_calculator(slug).evaluate({})
    for name, value in result.outputs.items():
        assert type(value) in (int, float, bool), name
        assert isinstance(value, bool) or math.isfinite(value), name


@pytest.mark.parametrize("slug", CONTRACT)
def test_every_preset_evaluates(slug):
    calculator = get_calculator(slug)
    assert calculator.presets, "every calculator has presets"
    for preset in calculator.presets:
        calculator.evaluate({**{k: input_text(v) for k, v in calculator.defaults.items()}, **preset.values})


@pytest.mark.parametrize("slug", CONTRACT)
def test_every_calculator_has_notes(slug):
    assert get_calculator(slug).notes


def test_seed_corrections_are_explained_in_notes():
    notes = {slug: " ".join(c.notes) for slug, c in CALCULATORS.items()}
    assert "80 + 20/64 = **80.3%**" in notes["routing"] and "20/63" in notes["routing"]
    assert "393.2 MB, or 375 MiB" in notes["kv-cache"] and "384 MB" in notes["kv-cache"]
    assert "68.9% idle" in notes["fleet"] and "71%" in notes["fleet"]
    assert "0.945" in notes["queue-wait"] and "97" in notes["queue-wait"]
    for slug in ("token-cost", "fleet"):
        for assumption in (
            "*Per-card throughput*",
            "*B200 speed*",
            "*Used A100 speed*",
            "*Card prices*",
            "*API prices*",
        ):
            assert assumption in notes[slug]
    every = " ".join(notes.values())
    assert not re.search(r"\bS1\d\b|the source\b", every), "notes name assumptions and the course notes in words"


def test_presets_include_the_model_shapes_and_chips():
    kv_labels = " ".join(p.label for p in get_calculator("kv-cache").presets)
    assert all(model in kv_labels for model in ("Llama-3-70B", "Llama-3-8B", "Llama-2-13B"))
    fleet_labels = " ".join(p.label for p in get_calculator("fleet").presets)
    assert all(chip in fleet_labels for chip in ("H100", "B200", "A100"))


# --- derivations ------------------------------------------------------------


def test_kv_cache_derivation_reads_like_the_worked_example():
    steps = get_calculator("kv-cache").evaluate({}).steps
    assert steps[0] == DerivationStep(
        "KV bytes per token", "2 (K and V) × 80 layers × 8 KV heads × 128 values per head × 2 B", 327680, "B"
    )
    assert [(s.label, s.value, s.unit) for s in steps[3:5]] == [
        ("Copy size in decimal megabytes", 393.216, "MB"),
        ("Copy size in binary mebibytes", 375.0, "MiB"),
    ]
    assert steps[6].expression == "⌊8,000,000,000 B ÷ 393,216,000 B⌋ = ⌊20.35⌋"


def test_replica_derivation_ends_with_the_floor():
    step = get_calculator("replica").evaluate({}).steps[-1]
    assert (step.label, step.value) == ("Whole requests that fit", 110)
    assert step.expression == "⌊148,000,000,000 B ÷ 1,342,177,280 B⌋ = ⌊110.3⌋"


def test_fleet_derivation_shows_the_three_checks():
    steps = get_calculator("fleet").evaluate({}).steps
    checks = [s for s in steps if s.unit == "check"]
    assert [s.value for s in checks] == [True, True, True]
    assert checks[1].expression == "$1.25 ≤ 0.75 × $2.50 = $1.88"


def test_queue_wait_derivation_with_several_servers_names_erlang_c():
    labels = [s.label for s in get_calculator("queue-wait").evaluate({"servers": "4", "utilization": "0.75"}).steps]
    assert "Probability a request waits (Erlang C)" in labels


@pytest.mark.parametrize("slug", CONTRACT)
def test_every_output_appears_in_the_derivation(slug):
    result = get_calculator(slug).evaluate({})
    step_values = [s.value for s in result.steps]
    for name, value in result.outputs.items():
        if isinstance(value, bool) or value is None:
            continue
        assert any(
            isinstance(v, (int, float))
            and not isinstance(v, bool)
            and math.isclose(v, value, rel_tol=1e-12, abs_tol=1e-12)
            for v in step_values
        ), name


# --- formatting -------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (327680, "327,680"),
        (0.015625, "0.0156"),
        (80.3125, "80.3"),
        (1e13, "10¹³"),
        (9.198e12, "9.198 × 10¹²"),
        (2005000.0, "2,005,000"),
        (3.1e-5, "3.1 × 10⁻⁵"),
        (True, "yes"),
        (None, "—"),
    ],
)
def test_number(value, text):
    assert number(value) == text


def test_sizes_say_which_unit():
    assert bytes_text(393_216_000) == "393,216,000 B (393.2 MB, 375.0 MiB)"
    assert bytes_text(327_680) == "327,680 B (327.7 kB, 320.0 KiB)"


def test_money_percent_and_values():
    assert (money(2.5), money(1.2505), money(2_005_000)) == ("$2.50", "$1.25", "$2,005,000")
    assert percent(0.803125) == "80.3%"
    assert value_text(0.015625, "fraction") == "1.6%"
    assert value_text(False, "check") == "fail"
    assert value_text(None, "ms") == "none: the queue is unstable"


@pytest.mark.parametrize(
    ("value", "text"), [(80, "80"), (8.0, "8"), (0.9, "0.9"), (1e13, "1e13"), (1.8396e9, "1.8396e9")]
)
def test_input_text_round_trips(value, text):
    assert input_text(value) == text
    assert float(text) == value


def test_failed_checks_read_as_true_statements():
    steps = get_calculator("fleet").evaluate({"owned_cards": "0"}).steps
    checks = {s.label.split(":")[0]: s.expression for s in steps if s.unit == "check"}
    assert checks == {
        "Idle check": "0% ≤ 15%",
        "Margin check": "$2.50 > 0.75 × $2.50 = $1.88",
        "Overflow check": "100% > 10%",
    }


# --- Corrections from the expert review (issue 13) -------------------------------


def test_h100_presets_use_the_total_the_engine_counts_and_hold_123_requests():
    # CUDA's total: 79.11 GiB = 84.94 GB; 0.9 x 4 x 84.94 - 140 = 165.79 GB -> 123 at 4,096 tokens.
    replica = get_calculator("replica")
    preset = next(p for p in replica.presets if "79.11 GiB" in p.label)
    assert preset.values["gpu_memory_gb"] == pytest.approx(79.11 * 2**30 / 1e9, abs=0.005)
    assert replica.evaluate(preset.values).outputs["requests_per_replica"] == 123
    assert replica.evaluate({}).outputs["requests_per_replica"] == 110  # the contract's default keeps 80 GB
    assert "81,559 MiB" in replica.parameter("gpu_memory_gb").help
    assert "79.11 GiB" in replica.parameter("gpu_memory_gb").help
    assert "**123 requests**" in " ".join(replica.notes) and "79.65 GiB" in " ".join(replica.notes)


def test_pool_and_headroom_show_what_123_slots_change():
    pool = get_calculator("pool")
    preset = next(p for p in pool.presets if "as the engine counts it" in p.label)
    assert pool.evaluate(preset.values).outputs["gpus"] == 112  # ceil(2,000 / (123 x 0.6)) = 28 replicas
    headroom = get_calculator("headroom")
    preset = next(p for p in headroom.presets if "as the engine counts it" in p.label)
    assert headroom.evaluate(preset.values).outputs == {"replicas": 21, "gpus": 84}  # ceil(18.07) + 2


def test_littles_law_help_asks_for_arrival_to_completion_time():
    help_text = get_calculator("pool").parameter("mean_request_s").help
    assert "arrival" in help_text and "first token to last" not in help_text
    notes = " ".join(get_calculator("pool").notes)
    assert "1,500 in flight and 92 GPUs instead of 124" in notes  # 100/s x 15 s against 100/s x 20 s


def test_pool_headroom_note_no_longer_rests_on_m_m_1():
    notes = " ".join(get_calculator("pool").notes)
    assert "110 slots act like 110 servers" in notes and "wrong reason" in notes


def test_kv_heads_help_gives_the_per_gpu_rule():
    assert "max(kv_heads ÷ TP, 1)" in get_calculator("kv-cache").parameter("kv_heads").help


def test_spec_decode_prices_a_big_draft_higher_than_a_tiny_one():
    from calculators.definitions import spec_decode

    # Weight reads per step: 8.03B x 2 B over 4 GPUs against 70B x 2 B over 4 GPUs (KV at batch 1 is tiny).
    target = (70e9 * 2 / 4 + 2048 * 327_680 / 4) / 3.35e12
    eight_b = (8.03e9 * 2 / 4 + 2048 * 131_072 / 4) / 3.35e12
    big, tiny = spec_decode.C_8B, spec_decode.C_TINY
    assert big == pytest.approx(eight_b / target, abs=0.0005)
    assert tiny == pytest.approx(0.5e9 * 2 / 3.35e12 / target, abs=0.0005)
    assert tiny < 0.05 < 0.1 < big
    calculator = get_calculator("spec-decode")
    labels = [p.label for p in calculator.presets]
    assert any("8B draft, 70B target" in label for label in labels)
    assert "0.5B" in calculator.parameter("draft_cost").help


def test_no_calculator_says_decode_turns_compute_bound_at_batch_128():
    decode = get_calculator("decode-step").evaluate({"batch": "128"})
    assert decode.outputs["memory_bound"] is True
    assert decode.outputs["ridge_batch"] == pytest.approx(295.22, abs=0.01)
    for calculator in CALCULATORS.values():
        text = " ".join(calculator.notes)
        assert "batch the target step becomes compute-bound" not in text, calculator.slug
    assert "still memory-bound" in " ".join(get_calculator("decode-step").notes)


def test_fleet_notes_show_the_sensitivity_not_one_headline(client):
    # $2,100 / 730 h / (700 tokens/s x 3,600 s) x 1e6 = $1.1416 per 1M: 45.7% of $2.50, 91.3% of $1.25.
    notes = " ".join(get_calculator("fleet").notes)
    assert "| 700 | 91.3% | 45.7% | 22.8% |" in notes
    assert "| 350 | 182.6% | 91.3% | 45.7% |" in notes  # percentages to one decimal
    # Sized for a daily peak twice the average: 2 x 5,436 cards, half of it idle over the month.
    assert "10,872 cards instead of 5,436" in notes and "50% of that capacity idles" in notes
    page = client.get("/calculators/fleet/").content.decode()
    assert "<table>" in page and "API $1.25 per 1M" in page


def test_spec_decode_notes_price_verification_on_the_roofline_not_as_g_plus_1_steps():
    # Review fix: E / (g + 1 + g c) = 0.65x in the compute-bound limit (not 0.56x), and at batch 128
    # with 2,048-token contexts the roofline still gives 2.18x: crossing the ridge is not yet a slowdown.
    # The course notes' (g + 1)(1 + g c) is named only in the paragraph that says where it slips.
    notes = get_calculator("spec-decode").notes
    teaching = " ".join(note for note in notes if "course notes' figure slips" not in note)
    assert "E ÷ (γ + 1 + γc) = 0.65×" in teaching and "(γ + 1)(1 + γc)" not in teaching
    notes = " ".join(notes)
    assert "2.18× at batch 128" in notes and "context length" in notes


def test_bounded_load_notes_and_derivation_show_the_spill_is_a_floor():
    calculator = get_calculator("bounded-load")
    assert "reaches 35 replicas instead of 20 (48 instead of 40" in " ".join(calculator.notes)
    steps = calculator.evaluate({}).steps
    assert any(s.value == 35 and "other keys" in s.label for s in steps)


def test_replica_notes_size_with_the_total_cuda_reports_and_name_nvidia_smis_125():
    # Review fix: vLLM multiplies torch.cuda.mem_get_info's total, 79.11 GiB = 84.94 GB on an H100:
    # 0.9 x 4 x 84.94 - 140 = 165.79 GB / 1.342 GB -> 123 requests, below the 125 from nvidia-smi's figure.
    from calculators.definitions.assumptions import H100_CUDA_GB

    replica = get_calculator("replica")
    assert pytest.approx(79.11 * 2**30 / 1e9, abs=0.005) == H100_CUDA_GB
    assert replica.evaluate({"gpu_memory_gb": str(H100_CUDA_GB)}).outputs["requests_per_replica"] == 123
    notes = " ".join(replica.notes)
    assert "gives 125 requests" in notes and "123 is itself a ceiling" in notes


def test_headroom_counts_spares_in_whole_servers():
    # Review fix: an 8-GPU H100 server holds two TP-4 replicas, so N + 1 server is N + 2 replicas.
    notes = " ".join(get_calculator("headroom").notes)
    assert "holds 2 replicas of 4 GPUs" in notes and "N + 1 replicas does not cover it" in notes


def test_prefill_notes_warn_that_short_prompts_are_bound_by_the_weight_read():
    # Review fix: 2 x P x N / (g x 989e12 x 0.5) equals P x 2 B / (g x 3.35e12) at N = 989 x 0.5 x 2 / (2 x 3.35)
    # = 147.6 tokens; a 100-token prompt's formula time (7.1 ms at TP 4) is below the 10.4 ms weight read.
    prefill = get_calculator("prefill")
    short = prefill.evaluate({"prompt_tokens": "100"}).outputs["ttft_s"]
    assert short * 1e3 < 70e9 * 2 / 4 / 3.35e12 * 1e3
    notes = " ".join(prefill.notes)
    assert "below about 148 prompt tokens" in notes and "10.4 ms" in notes


def test_decode_step_ridge_note_separates_fp8_weights_from_fp8_arithmetic():
    # Review fix: W8 at BF16 rates: 989 x 1 / (2 x 3.35) = 148; FP8 tensor cores (1,979 TFLOPS): 295 again.
    notes = " ".join(get_calculator("decode-step").notes)
    assert "148 with 1-byte FP8 weights computed at BF16 rates, but 295 again" in notes
    assert "{CLAIMED_COMPUTE_BOUND}" not in notes and "datasheet peaks" in notes


def test_request_cost_notes_name_the_cache_write_premium_it_leaves_out():
    # Review addition: Anthropic's prompt cache reads at 0.1x input and writes (5-minute TTL) at 1.25x.
    notes = " ".join(get_calculator("request-cost").notes)
    assert "0.1 × the input price" in notes and "1.25 ×" in notes and "leaves out" in notes
    assert "shared only with the other sequences in the batch" in notes


def test_decode_step_notes_warn_that_kv_stops_splitting_past_the_kv_heads():
    # Review fix: the contract divides KV by tp, true only while tp <= kv_heads (8 for Llama-3-70B).
    notes = " ".join(get_calculator("decode-step").notes)
    assert "only up to the model's KV heads (8 for Llama-3-70B)" in notes and "understates" in notes


def test_rehash_cites_consistent_hashing():
    assert "(Karger et al.)" in get_calculator("rehash").notes[0]
