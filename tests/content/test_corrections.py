"""Claims an expert review found wrong in the source documents stay corrected in the shipped lessons."""

import re
from pathlib import Path

import pytest
import yaml

from tests.lesson_pages import whole_lesson
from tests.lessons.factories import answer_steps_before

CONTENT = Path(__file__).resolve().parents[2] / "content" / "lessons"


def texts(node):
    """Yield every string in a lesson file, however deeply nested."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from texts(value)
    elif isinstance(node, list):
        for value in node:
            yield from texts(value)


def all_texts() -> list[tuple[str, str]]:
    return [
        (path.name, " ".join(text.split()))
        for path in sorted(CONTENT.glob("*.yaml"))
        for text in texts(yaml.safe_load(path.read_text(encoding="utf-8")))
    ]


# Under round robin every card keeps its own LRU prefix cache and sees the same mix of
# families, so popular families stay resident everywhere; hits collapse only for the tail.
ROUND_ROBIN_MYTHS = [
    r"round robin throws away",
    r"hit share round robin throws away",
    r"in practice hits are rare",
    r"too few to keep its opening resident",
    r"bigger cache does not rescue round robin",
    r"round robin is polite and cache-blind",
]


# Pooling: a pool of many servers losing 30% waits far less than one server losing 30%
# (M/M/10 against M/M/1); its larger ratio comes from a near-zero wait before the loss.
POOLING_MYTHS = [
    r"pool of many servers that loses 30%",
    r"wait ratio of at least",
    r"eight and a half times",
]


@pytest.mark.parametrize("myth", ROUND_ROBIN_MYTHS + POOLING_MYTHS)
def test_no_lesson_repeats_a_myth(myth):
    found = [name for name, text in all_texts() if re.search(myth, text, re.IGNORECASE)]
    assert found == [], f"{myth!r} is stated as a fact in {found}"


def test_the_one_in_n_figure_always_comes_with_its_assumption():
    """The source's "one time in N" only holds if each family's opening lives on exactly one card."""
    quoting = [(name, text) for name, text in all_texts() if re.search(r"one time in N|100% / N", text)]
    assert quoting, "the lessons should still teach the source's figure, with its assumption"
    for name, text in quoting:
        assert re.search(r"exactly one card|assumption", text), f"{name}: {text[:120]}..."


# Engine details that changed or were wrong: vLLM renamed its KV-use metric and its V1 engine
# preempts by recomputation only; nginx buffers responses unless told not to; the usage chunk
# of a stream is sent only when asked for; gpu_memory_utilization's 10% is not kept for activations.
OUTDATED = [
    r"gpu_cache_usage_perc`(?!\s+in older)",
    r"proxies untouched",
    r"keeps 10% back for activations",
]


@pytest.mark.parametrize("claim", OUTDATED)
def test_no_lesson_states_an_outdated_engine_detail(claim):
    found = [name for name, text in all_texts() if re.search(claim, text)]
    assert found == [], f"{claim!r} in {found}"


def test_the_usage_chunk_is_taught_with_the_option_that_asks_for_it():
    mentions = [text for _name, text in all_texts() if "usage chunk" in text or "carrying the token usage" in text]
    assert mentions
    assert all("include_usage" in text for text in mentions)


def _tail_wait_section(client) -> str:
    from lessons.models import Lesson

    page = whole_lesson(client, Lesson.objects.get(slug="design-chatgpt-tiers").get_absolute_url())
    # The section's heading, not its entry in the lesson outline that comes first on the page.
    start = re.search(r"<h3[^>]*>Why the tail punishes utilisation", page).start()
    end = re.search(r"<h3[^>]*>Every knob is money or trust", page).start()
    return " ".join(re.sub(r"<[^>]+>", " ", page[start:end]).split())


def test_the_tiers_lesson_reads_a_capacity_loss_both_ways_and_shows_the_pool(client, content):
    text = _tail_wait_section(client)
    # One server, 50 ms at 66%, losing 30%: rho' = 0.943. Replicas lost (survivors keep 50 ms):
    # Wq = 50 x 0.942857 / 0.057143 = 825 ms. Every server slowed to 71.4 ms: 1,179 ms.
    assert "825 ms" in text and "71 ms" in text and "1,179 ms" in text
    # The same loss on a pool of ten (Erlang C), servers slowed: 2.4 ms before, 100 ms after.
    assert "2.4 ms" in text and "100 ms" in text
    # The source's 97 ms -> 850 ms is the replicas-lost reading (851 ms), not an error; slowed, 1,216 ms.
    assert "850 ms" in text and "851 ms" in text and "1,216 ms" in text
    assert "without saying what was lost" in text and "not lost capacity" not in text


def test_the_wait_after_loss_challenge_wants_the_slowed_service_and_names_the_old_reading(client, content):
    from django.urls import reverse

    from lessons.models import Challenge, Lesson

    lesson = Lesson.objects.get(slug="design-chatgpt-tiers")
    page = whole_lesson(client, lesson.get_absolute_url())
    service_ms = int(re.search(r"mean service time of <strong>(\d+) ms</strong>", page).group(1))
    url = reverse("answer-challenge", args=[lesson.slug, Challenge.objects.get(key="wait-after-loss").pk])
    # rho' = 0.66 / 0.7, so rho' / (1 - rho') = 0.66 / 0.04 = 16.5; the slowed service is S / 0.7.
    kept_service = client.post(url, {"value": f"{16.5 * service_ms:.1f}"}, HTTP_HX_REQUEST="true")
    assert "whole replicas failed and the survivors kept their speed" in kept_service.content.decode()
    slowed = client.post(url, {"value": f"{16.5 * service_ms / 0.7:.1f}"}, HTTP_HX_REQUEST="true")
    assert "Correct" in slowed.content.decode()


# An "80GB" H100: CUDA reports a total of 79.11 GiB = 84.94 GB, the figure vLLM multiplies by
# gpu_memory_utilization (nvidia-smi shows 81,559 MiB = 85.52 GB); sizing with 80 decimal GB understates KV room.
# Every lesson that asks the replica calculator about an H100 gives it the total the engine counts.
REPLICA_REFERENCE = re.compile(r"\{\{\s*calc\s+replica\.\w+(?P<params>[^}|]*)")


def test_every_replica_number_in_the_lessons_uses_the_memory_the_engine_counts():
    references = [(name, m.group("params")) for name, text in all_texts() for m in REPLICA_REFERENCE.finditer(text)]
    assert len(references) > 20
    for name, params in references:
        # 80 GB appears only where a lesson shows what the slip costs, and it says so explicitly.
        assert re.search(r"gpu_memory_gb=(84\.94|85\.52|80|85\.9)\b", params), (
            f"{name}: replica reference without memory: {params}"
        )
    # nvidia-smi's 85.52 GB only in a slip that names it.
    smi = [text for _name, text in all_texts() if "gpu_memory_gb=85.52" in text]
    assert smi and all("nvidia-smi" in text and "84.94" in text for text in smi)
    # An A100 80GB shows 81,920 MiB = 85.90 GB, a little more than an H100 (review fix): never sized as an H100.
    a100 = [text for _name, text in all_texts() if "gpu_memory_gb=85.9 " in text]
    assert a100 and all("81,920 MiB" in text and "A100" in text for text in a100)
    assert not [text for _name, text in all_texts() if "A100" in text and "leave the same" in text]
    slips = [text for _name, text in all_texts() if "gpu_memory_gb=80" in text]
    assert slips and all("label" in text for text in slips)


def _asks(node):
    """Yield every `ask` mapping (envelope steps and challenges) in a lesson file."""
    if isinstance(node, dict):
        if isinstance(node.get("ask"), dict):
            yield node["ask"]
        for value in node.values():
            yield from _asks(value)
    elif isinstance(node, list):
        for value in node:
            yield from _asks(value)


def test_no_graded_question_sizes_an_h100_at_80_gb():
    for path in sorted(CONTENT.glob("*.yaml")):
        for ask in _asks(yaml.safe_load(path.read_text(encoding="utf-8"))):
            if ask.get("calculator") == "replica" and "gpu_memory_gb" in ask.get("inputs", {}):
                assert ask["inputs"]["gpu_memory_gb"] == 84.94, path.name
            if ask.get("calculator") == "pool":
                assert ask["inputs"].get("requests_per_replica") != 110, path.name


def _platform_step(title_start):
    from lessons.models import Step

    return Step.objects.get(walkthrough__section__lesson__slug="llm-serving-platform", title__startswith=title_start)


def test_the_platform_replica_holds_123_and_sizing_at_80_gb_is_named_as_the_slip(client, content):
    from django.urls import reverse

    step = _platform_step("How many requests can one 70B replica")
    url = reverse("answer-step", args=["llm-serving-platform", step.pk])
    # vLLM multiplies CUDA's total: 0.9 x 4 x 84.94 GB - 140 GB = 165.79 GB; / (4,096 x 327,680 B) = 123.5 -> 123.
    slip = client.post(url, {"value": "110"}, HTTP_HX_REQUEST="true").content.decode()
    assert "79.11" in slip and "80 GiB" in slip
    right = client.post(url, {"value": "123"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Correct" in right
    # nvidia-smi's 81,559 MiB (85.52 GB) gives 125: a named slip, not the answer.
    smi = client.post(url, {"value": "125"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Correct" not in smi and "nvidia-smi" in smi
    page = whole_lesson(client, reverse("lesson", args=["llm-serving-platform"]))
    assert "79.11 GiB = 84.94 GB" in page and "81,559 MiB" in page


def test_the_platform_pool_is_sized_from_123_requests(client, content):
    from django.urls import reverse

    step = _platform_step("How many GPUs must the 70B pool have")
    answer_steps_before(client, step)
    url = reverse("answer-step", args=["llm-serving-platform", step.pk])
    # ceil(100/s x 20 s / (123 x 0.6)) = ceil(27.1) = 28 replicas = 112 GPUs (not 27 replicas = 108 from 125).
    assert "Correct" in client.post(url, {"value": "112"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Correct" not in client.post(url, {"value": "108"}, HTTP_HX_REQUEST="true").content.decode()


# Decode at batch 128 on an H100 is still memory-bound (ridge near 295); verification of
# batch x (gamma + 1) tokens is what crosses it.
BATCH_128_MYTHS = [r"batch 128 the step is limited by compute", r"compute-bound at batch 128"]


@pytest.mark.parametrize("myth", BATCH_128_MYTHS)
def test_no_lesson_calls_decode_at_batch_128_compute_bound(myth):
    found = [name for name, text in all_texts() if re.search(myth, text, re.IGNORECASE)]
    assert found == [], f"{myth!r} in {found}"


def test_the_speculative_moment_prices_an_8b_draft_and_shows_the_ridge():
    texts = [text for name, text in all_texts() if name == "llm-serving-platform.yaml"]
    feedback = next(text for text in texts if "three times" in text and "ridge" in text)
    assert "spec-decode.speedup draft_cost=0.116" in feedback
    assert "decode-step.ridge_batch" in feedback and "decode-step.step_ms batch=128" in feedback


# The platform case sizes its 70B pool at 28 replicas for 2,000 requests in flight; its routing
# moments must argue on that pool, not on the 64 replicas and 1,000 in flight of a source example.
PLATFORM_ROUTING_PARAMS = re.compile(r"\{\{\s*calc\s+(?:routing|bounded-load)\.\w+(?P<params>[^}|]*)")


def test_the_platform_routing_moments_use_the_pool_the_case_sized():
    from calculators import maths

    pool = maths.pool(
        peak_requests_per_s=100, mean_request_s=20, requests_per_replica=123, target_utilization=0.6, gpus_per_replica=4
    )
    texts = [text for name, text in all_texts() if name == "llm-serving-platform.yaml"]
    params = [m.group("params") for text in texts for m in PLATFORM_ROUTING_PARAMS.finditer(text)]
    assert len(params) >= 5
    for p in params:
        replicas = re.search(r"\b(?:cards|replicas)=(\d+)", p)
        assert replicas and int(replicas.group(1)) == pool.replicas, p
        in_flight = re.search(r"\bin_flight=(\d+)", p)
        assert in_flight is None or int(in_flight.group(1)) == round(pool.peak_concurrency), p
    assert not [t for t in texts if re.search(r"\b64 replicas|64-replica|1,000 requests in flight", t)]


def test_the_rendered_hot_prefix_moment_names_the_pool_and_its_cap(client, content):
    from lessons.models import Choice

    best = Choice.objects.get(
        deep_dive__key="hot-prefix", verdict="best", deep_dive__section__lesson__slug="llm-serving-platform"
    )
    text = " ".join(re.sub(r"<[^>]+>", " ", best.feedback_html).split())
    # 28 replicas, 2,000 in flight, eps 0.25: cap ceil(1.25 x 2,000 / 28) = 90; 480 hot requests over >= 6 replicas.
    assert "28 replicas with 2,000 requests in flight" in text
    assert "more than 90" in text and "at least 6 replicas" in text


def test_the_build_up_and_the_speculative_moment_design_the_same_gate(client, content):
    """No dedicated speculative pool: every 70B replica speculates only while its batch keeps the check under the ridge.

    Both state the gate as a principle, batch × (γ + 1) under the ridge, without naming γ (the draft-length moment
    asks for it later) or a hand-typed gate such as ⌊ridge ÷ 4⌋."""
    import math

    from lessons.models import Choice, Step

    gate = math.floor(_default_ridge() / (3 + 1))  # the gate for gamma = 3, which the build-up must not hand over
    step = Step.objects.get(walkthrough__key="build-the-design", title__contains="speculate")
    labels = " ".join(c["label"] for c in step.components)
    assert "on only at small batch" in labels and str(gate) not in labels
    assert "pool" not in " ".join(c["label"] for c in step.components if "raft" in c["label"])
    body = " ".join(step.body.split())
    assert "batch × (γ + 1) is below it" in body and "ridge_batch | int}}" in body
    assert str(gate) not in body and "γ = 3" not in body and "four tokens" not in body
    best = Choice.objects.get(deep_dive__key="speculative", verdict="best")
    feedback = " ".join(best.feedback.split())
    # The moment states the gate as ridge / (gamma + 1) without naming gamma: its follow-up asks for the draft length.
    assert "batch" in best.text and "ridge_batch | int}} ÷ (γ + 1), the design's switch" in feedback
    assert "γ = 3" not in feedback and "four tokens" not in feedback
    assert not Step.objects.filter(walkthrough__key="build-the-design", title__icontains="load its own pool").exists()


def _default_ridge() -> float:
    from calculators import maths
    from calculators.definitions.decode_step import CALCULATOR as DECODE_STEP

    defaults = {p.name: p.default for p in DECODE_STEP.parameters}
    return maths.decode_step(**defaults).ridge_batch


# One meaning of "card" across the lab: a card is one GPU; the router chooses between replicas.
def test_a_card_is_a_gpu_and_routing_lessons_route_between_replicas():
    definition = [text for name, text in all_texts() if "a **card** is one GPU" in text]
    assert [name for name, _ in all_texts() if "a **card** is one GPU" in _] == ["load-balancing.yaml"]
    assert "**replica** is one running copy of the model" in definition[0]
    for name, text in all_texts():
        if name not in ("load-balancing.yaml", "cache-aware-routing.yaml") or text == definition[0]:
            continue
        if re.fullmatch(r"[a-z0-9-]+", text):  # keys keep their rows (and learners' answers)
            continue
        prose = re.sub(r"\{\{[^}]*\}\}|\{cards[^}]*\}", "", text)  # calculator parameters keep their names
        assert not re.search(r"\bcards?\b", prose, re.IGNORECASE), f"{name}: {prose[:120]}..."
    platform = " ".join(text for name, text in all_texts() if name == "llm-serving-platform.yaml")
    assert "one card is not swamped" not in platform and "one replica is not swamped" in platform


# Cached-input discounts rest on routing and on the memory hierarchy (tiered KV stores) together.
def test_cached_input_discounts_are_taught_as_routing_and_memory_tiers():
    mentions = [(name, text) for name, text in all_texts() if re.search(r"cached[- ]input", text, re.IGNORECASE)]
    # The texts that explain the price (a moment that only names the discount is left out).
    explained = [(name, text) for name, text in mentions if "price" in text]
    assert {name for name, _ in explained} == {"cache-aware-routing.yaml", "buying-the-fleet.yaml"}
    for name, text in explained:
        assert "not a feature of the memory system" not in text, name
        assert all(store in text for store in ("Mooncake", "LMCache", "Dynamo")), name
        assert "host memory" in text, name


def test_round_robin_is_taught_as_one_copy_per_replica_with_a_cold_tail_in_every_routing_lesson():
    for lesson in ("load-balancing.yaml", "cache-aware-routing.yaml"):
        body = " ".join(text for name, text in all_texts() if name == lesson)
        assert re.search(r"stay resident on (all of them|every replica)", body), lesson
        assert re.search(r"one copy (per|on each) replica", body), lesson
        assert "cold prefill" in body, lesson
    routing = " ".join(text for name, text in all_texts() if name == "cache-aware-routing.yaml")
    assert "nowhere else" not in routing


# Weak choices are mistakes a real candidate makes, not strawmen; best answers argue from numbers.
STRAWMEN = [
    r"Nowhere; it changes what the model says",
    r"Pause every request until enough memory frees up",
    r"No batching; one request at a time",
    r"One; keep the guess safe",
    r"It depends on the hot replica's GPU utilisation",
    r"a chip two generations old is never worth",  # and an A100 is one generation before the H100
]


@pytest.mark.parametrize("strawman", STRAWMEN)
def test_no_strawman_distractor_is_back(strawman):
    assert not [name for name, text in all_texts() if re.search(strawman, text)]


def test_the_batch_cap_distractor_and_the_router_answer_argue_from_numbers(content):
    from lessons.models import Choice

    def rendered(choice):
        return " ".join(re.sub(r"<[^>]+>", " ", choice.feedback_html).split())

    platform = Choice.objects.filter(deep_dive__section__lesson__slug="llm-serving-platform")
    cap = rendered(platform.get(deep_dive__key="batching", text__contains="cap the batch at 32"))
    # Roofline defaults (70B BF16, TP4, 2,048-token context): 12.1 ms at batch 32, 16.9 ms at 128.
    assert "12.1 ms" in cap and "16.9 ms" in cap and "7,593" in cap
    router = rendered(platform.get(deep_dive__key="routing", verdict="best"))
    assert "0.085 s" in router  # the prefill a cached 1,200-token opening saves on four H100s at 50% MFU
    assert not re.search(r"1\.0001|32 in early|weight 2|weight 3", router)


# Second expert review of the deep-dive lessons (issue 13 item 4).
def _lesson_texts(filename: str) -> list[str]:
    return [text for name, text in all_texts() if name == filename]


def test_the_bounded_load_move_bound_is_taught_as_an_upper_bound_and_the_shipping_list_is_real():
    """Mirrokni et al. prove an expected O(1/eps^2) moves per update: a bound, not 'about 1/eps^2' moves.

    brpc's consistent-hashing balancer has no load bound; Envoy's `hash_balance_factor` does.
    """
    body = " ".join(_lesson_texts("routing.yaml"))
    assert "about 1/ε²" not in body
    assert "O(1/ε²) keys in expectation" in body and "an upper bound" in body
    assert "brpc" not in body
    assert "Envoy (`hash_balance_factor`)" in body


def test_the_bounded_load_cap_is_shown_from_its_inputs_not_a_typed_product():
    """⌈1.2 × 25⌉ typed by hand hid where 25 came from; the walkthrough shows 1,200 ÷ 48 and the calculator's cap."""
    from calculators.maths import bounded_load
    from lessons.markup import expand_calcs

    routing = _lesson_texts("routing.yaml")
    assert not any("1.2 × 25" in text or "1.1 × 25" in text or "(1 + ε) × 25" in text for text in routing)
    # The envelope works ε = 0.1, so the prose's worked ε = 0.2 (a cap of 30) does not answer it.
    explanation = next(text for text in routing if text.startswith("⌈(1 + 0.1) × 1,200 ÷ 48⌉ = {{calc"))
    cap = bounded_load(48, 1200, 0.1, 480).cap_per_replica
    assert expand_calcs(explanation).endswith(f"= {cap}.")
    assert cap == 28


def test_the_moe_lesson_reads_671b_on_a_node_that_holds_it_and_sizes_h100s_as_software_sees_them():
    """671 GB of FP8 weights do not fit the ~612 GB an engine may use of eight H100s (84.94 GB each, not 80).

    So the per-step reads are priced on eight H200s (4.8 TB/s), where the model fits.
    """
    from lessons.markup import expand_calcs

    tp = _lesson_texts("tensor-parallelism.yaml")
    assert not any("0.9 × 640 GB" in text for text in tp)
    usable = expand_calcs("{{calc replica.kv_budget_bytes gpus=8 gpu_memory_gb=84.94 weights_gb=0 | GB}}")
    assert usable == "611.6 GB"
    sizing = next(text for text in tp if text.startswith("In FP8 the weights alone are 671 GB"))
    assert "eight-H200 node" in sizing and "weights_gb=0" in sizing
    reads = [text for text in tp if "params_b=671" in text]
    assert len(reads) == 2
    assert all("hbm_tb_s=4.8" in text and "H200" in text for text in reads)
    h200 = expand_calcs("{{calc decode-step.weights_ms params_b=671 bytes_per_param=1 tp=8 hbm_tb_s=4.8 | f2}}")
    assert h200 == "17.47"  # 671e9 B / 8 / 4.8e12 B/s


def test_128k_contexts_are_taught_on_llama_3_1_8b_whose_window_reaches_them():
    """Llama 3 8B was released with an 8,192-token window; the 128K window came with Llama 3.1 (same shape)."""
    kv = _lesson_texts("kv-allocation.yaml")
    long_context = [text for text in kv if re.search(r"128K|131,072", text)]
    assert long_context
    assert not any("Llama-3-8B" in text and "Llama-3.1-8B" not in text for text in long_context)
    assert any("8,192 tokens" in text for text in long_context)


def test_a_cross_family_draft_is_not_said_to_lose_most_acceptance():
    """Universal assisted generation (Hugging Face and Intel, 2024) drafts across tokenizers at 1.5-2x (batch 1)."""
    spec = _lesson_texts("speculative-decoding.yaml")
    assert not any("loses most acceptance" in text for text in spec)
    feedback = next(text for text in spec if "universal assisted generation" in text)
    assert "1.5× to 2×" in feedback and "vLLM expect one shared vocabulary" in feedback


def test_the_llm_d_guide_is_quoted_for_the_signals_it_names():
    """llm-d's workload-autoscaling guide names queue depth, in-flight requests and KV pressure, not TTFT."""
    body = next(text for text in _lesson_texts("autoscaling.yaml") if "llm-d" in text)
    assert "names the same three" not in body
    assert "queue depth, requests in flight and KV-cache pressure" in body


def test_the_long_prefill_states_that_attention_arithmetic_is_left_out():
    """2 x params x tokens ignores causal attention's ~2 n^2 d L FLOPs: +28% at 30,000 tokens on a 70B model."""
    layers, d_model, tokens, params = 80, 8192, 30_000, 70e9
    attention = 2 * tokens**2 * d_model * layers
    assert 0.2 < attention / (2 * params * tokens) < 0.3
    body = next(text for text in _lesson_texts("batching.yaml") if "prefill.ttft_s prompt_tokens=30000" in text)
    assert "leaves out attention's own arithmetic" in body and "roughly another quarter" in body


def test_the_batch_size_switch_is_named_for_the_engine_that_had_it():
    """`speculative_disable_by_batch_size` is vLLM V0's (vllm-project/vllm#5000); V1 support is not assumed."""
    feedback = next(text for text in _lesson_texts("speculative-decoding.yaml") if "disable_by_batch_size" in text)
    assert "V0 engine had `speculative_disable_by_batch_size`" in feedback
    assert "config has `disable_by_batch_size`" not in feedback


def test_the_verification_step_stand_in_reads_128_sequences_kv_and_does_five_times_the_arithmetic():
    """The lesson prices verification of 128 x (4 + 1) positions as decode-step batch=640 at mean context 410.

    That stand-in must read the KV of 128 sequences at 2,048 tokens (within 0.2%) and do five
    times the FLOPs of a plain step, and the result must cross the ridge while batch 128 does not.
    """
    from calculators.maths import decode_step

    def step(batch, context):
        return decode_step(70, 2, 327_680, batch, context, 4, 3.35, 989)

    plain, verify = step(128, 2048), step(640, 410)
    assert abs(verify.kv_ms / plain.kv_ms - 1) < 0.002
    assert verify.compute_ms == pytest.approx(5 * plain.compute_ms)
    assert plain.memory_bound and not verify.memory_bound
    body = next(text for text in _lesson_texts("speculative-decoding.yaml") if "decode-step.kv_ms batch=640" in text)
    assert "mean_context=410" in body and "reproduce 128 sequences' KV" in body


# Shrinking the bytes: facts checked against the DeepSeek papers, vLLM's and SGLang's docs.
def test_mla_is_taught_as_576_values_a_layer_copied_under_tensor_parallelism():
    """DeepSeek-V3 (61 layers, d_c 512, d_h^R 64) caches 70,272 B a token in BF16; TP cannot split the latent."""
    from lessons.markup import expand_calcs

    text = " ".join(_lesson_texts("shrinking-the-bytes.yaml"))
    assert expand_calcs("{{calc latent-kv.bytes_per_token | int}}") == "70,272"
    assert "latent of 512 values" in text and "576 values" in text and "61 layers" in text
    assert "Tensor parallelism cannot split the latent" in text and "data-parallel attention" in text
    assert "`num_key_value_heads` (128) describes heads rebuilt" in text  # the config's 128 is not what is cached


def test_fp8_on_an_a100_is_taught_as_weight_only():
    """FP8 arithmetic needs compute capability 8.9 (vLLM docs); an A100 (8.0) runs FP8 as W8A16 via FP8 Marlin."""
    text = " ".join(_lesson_texts("shrinking-the-bytes.yaml"))
    assert "An A100 has no FP8 tensor cores" in text and "compute capability 8.9 or later" in text
    assert "W8A16" in text and "FP8 Marlin" in text


def test_a_hybrid_window_model_is_taught_to_halve_long_request_kv_not_cap_it():
    from calculators import maths

    assert maths.windowed_kv(36, 18, 8, 64, 2, 128, 131_072).share_of_full > 0.5  # gpt-oss-120b's shape
    text = " ".join(_lesson_texts("shrinking-the-bytes.yaml"))
    assert "a saving of half, not a cap" in text and "hybrid KV cache manager" in text


# Third expert review (serving-lab audit).
def _rendered(feedback_html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", feedback_html).split())


def _choices(lesson: str, deep_dive: str):
    from lessons.models import Choice

    return Choice.objects.filter(deep_dive__key=deep_dive, deep_dive__section__lesson__slug=lesson)


def test_meta_fp8_405b_is_sized_at_its_real_487_gb_not_405():
    """Meta's FP8 checkpoint quantises only the MLP layers of blocks 2 to 125; attention and embeddings stay BF16."""
    from calculators import maths
    from calculators.definitions import assumptions
    from lessons.markup import expand_calcs

    assert pytest.approx(405.85, abs=0.01) == assumptions.LLAMA_31_405B_PARAMS / 1e9
    assert maths.kv_bytes_per_token(**assumptions.LLAMA_31_405B) == 516_096
    assert round(assumptions.LLAMA_31_405B_FP8_META_GB) == 487
    assert round(assumptions.LLAMA_31_405B_FP8_META_BYTES_PER_PARAM, 1) == 1.2
    assert round(assumptions.LLAMA_31_405B_FP8_ALL_LINEAR_GB) == 410
    body = " ".join(_lesson_texts("tensor-parallelism.yaml"))
    assert "405 GB of weights" not in body and "weights (405 GB)" not in body and "weights_gb=405 " not in body
    assert "weights_gb=487" in body and "487 GB" in body and "MLP" in body and "ModelOpt" in body
    # 0.9 x 8 x 84.94 - 487 = 124.6 GB over 4,096 x 516,096 B: 58 requests; 487.2 GB / 8 / 3.35 TB/s = 18.18 ms.
    assert (
        expand_calcs(
            "{{calc replica.requests_per_replica gpus=8 gpu_memory_gb=84.94 weights_gb=487 kv_bytes_per_token=516096 | int}}"
        )
        == "58"
    )
    assert expand_calcs("{{calc decode-step.weights_ms params_b=406 bytes_per_param=1.2 tp=8 | f2}}") == "18.18"
    assert "params_b=406 bytes_per_param=1.2" in body and "params_b=405 bytes_per_param=1 " not in body


def test_reserving_prompt_plus_max_tokens_is_taught_as_tensorrt_llms_no_evict_policy(content):
    reserve = _choices("llm-serving-platform", "kv-out-of-blocks").get(text__contains="prompt plus max_tokens")
    assert reserve.verdict == "acceptable"
    text = _rendered(reserve.feedback_html)
    assert "GUARANTEED_NO_EVICT" in text and "never pauses" in text and "capacity" in text


def test_round_robin_misses_about_half_under_skew_and_nine_in_ten_only_when_flat(content):
    from calculators.simulator import simulated_value

    def hit_rate(**changes):
        return simulated_value(
            "simulator-routing", "round_robin.hit_rate", {"preset": "cache-aware-routing", **changes}
        )

    # The lesson's case: 64 replicas, 200 prompt families, 20 resident per replica; Zipf 1.1, or all equal.
    skewed, flat = hit_rate(), hit_rate(zipf="0")
    assert 0.4 < skewed < 0.6 and flat < 0.15
    feedback = _rendered(_choices("load-balancing", "first-policy").get(text__startswith="Round robin").feedback_html)
    assert "roughly nine requests in ten miss" not in feedback
    assert f"{skewed:.1%}" in feedback and "about half miss" in feedback and "equally busy" in feedback


def test_the_tp4_moment_states_what_tp8_buys_and_does_not_give_the_answer_away(content):
    choices = _choices("llm-serving-platform", "tensor-parallel")
    best = choices.get(verdict="best")
    assert max(len(c.text) for c in choices) > len(best.text)
    assert "NVLink" not in best.text
    text = _rendered(best.feedback_html)
    # Roofline at batch 64: 13.65 ms at TP4, 6.83 ms at TP8; TP8's 471.6 GB of KV beats two TP4 replicas' 165.8 GB
    # each. Not 123 requests: the moment comes before the walkthrough step that asks for that number.
    assert "13.65" in text and "6.83" in text and "471.6 GB" in text and "123" not in text
    assert "450 GB/s each way" in text and "a little speed" not in text
    platform = " ".join(_lesson_texts("llm-serving-platform.yaml"))
    assert "900 GB/s per H100" not in platform


def test_the_kv_lesson_names_the_total_vllm_multiplies(client, content):
    from django.urls import reverse

    page = " ".join(re.sub(r"<[^>]+>", " ", whole_lesson(client, reverse("lesson", args=["kv-allocation"]))).split())
    assert "79.11 GiB, about 84.94 decimal GB" in page and "room for 123 requests of 4,096 tokens" in page
    assert not [t for name, t in all_texts() if "reports 81,559 MiB" in t or "reporting 85.52" in t]


def test_speculation_at_batch_128_is_a_slowdown_only_below_peak_with_a_costlier_draft(content):
    from calculators.definitions import spec_decode
    from calculators.registry import get_calculator

    calculator = get_calculator("spec-decode")
    peak = calculator.evaluate({"batch": "128", "draft_cost": "0.116"}).outputs
    half = calculator.evaluate({"batch": "128", "draft_cost": "0.223", "compute_efficiency": "0.5"}).outputs
    assert peak["verify_steps"] == pytest.approx(1.344, abs=0.001) and peak["speedup"] > 1.8
    assert half["verify_steps"] == pytest.approx(2.687, abs=0.001) and half["speedup"] < 1
    assert spec_decode.C_8B_AT_LARGE_BATCH == 0.223  # the c the lesson passes: the 8B draft's step at batch 128
    body = " ".join(_lesson_texts("speculative-decoding.yaml"))
    assert "tokens gained per round stop covering the cost" not in body
    assert "draft_cost=0.223 compute_efficiency=0.5" in body and "measure the speedup" in body
    section = next(t for t in _lesson_texts("speculative-decoding.yaml") if "Past the ridge a check costs" in t)
    assert "1.86x" in _rendered_calcs(section) and "0.94x" in _rendered_calcs(section)
    platform = " ".join(_lesson_texts("llm-serving-platform.yaml"))
    assert "below batch 73" not in platform and "first estimate" in platform


def _rendered_calcs(text: str) -> str:
    from lessons.markup import expand_calcs

    return expand_calcs(text)


def test_bounded_load_spread_is_taught_as_at_least_the_floor():
    from calculators import maths

    assert maths.bounded_load_spread(48, 1200, 0.2, 600) == (30, 20, 35)
    body = " ".join(_lesson_texts("routing.yaml"))
    assert "spreads over at least" in body and "replicas_if_others_first" in body
    assert "spreads over\n    {{calc bounded-load.replicas_for_family" not in body
    assert not re.search(r"spreads over \{\{calc bounded-load\.replicas_for_family", body)


def test_a_warm_pool_on_queue_depth_is_said_to_buy_nothing_in_this_run(content):
    from calculators.simulator import simulated_value

    def run(output, preset):
        return simulated_value("simulator-autoscaling", output, {"policy": "queue_depth", "preset": preset})

    assert run("slo_violation_minutes", "warm-pool") == run("slo_violation_minutes", "evening-spike")
    assert run("gpu_hours", "warm-pool") > run("gpu_hours", "evening-spike")
    best = _rendered(_choices("autoscaling", "read-the-day").get(verdict="best").feedback_html)
    assert "buys nothing in this run" in best and "takes it to" not in best


def test_tp16_is_said_to_add_almost_nothing_not_nothing():
    from lessons.markup import expand_calcs

    texts = _lesson_texts("kv-allocation.yaml")
    assert not [t for t in texts if "plan buys nothing" in t]
    best = next(t for t in texts if t.startswith("Two TP8 replicas give the same total memory"))
    # TP8: (0.9 x 8 x 84.94 - 140) GB / (32,768 x 327,680 B) = 43; TP16 stores each head twice:
    # (0.9 x 16 x 84.94 - 140) GB / (32,768 x 655,360 B) = 50.
    rendered = expand_calcs(best)
    assert "from 43 requests to 50" in " ".join(rendered.split()) and "almost nothing" in best


def test_the_fleet_lesson_counts_output_tokens_as_its_throughput_figures_do():
    body = " ".join(_lesson_texts("buying-the-fleet.yaml"))
    assert "Demand** is output tokens per month" in body
    assert "| 700 output tokens/s |" in body and "| 10,000 output tokens/s |" in body
    assert "| 700 tokens/s |" not in body and "at 700 tokens/s" not in body


# Fourth expert review: shrinking the bytes.
def _shrinking() -> dict:
    return yaml.safe_load((CONTENT / "shrinking-the-bytes.yaml").read_text(encoding="utf-8"))


def _dive(key: str) -> dict:
    return next(
        item["deep_dive"]
        for section in _shrinking()["sections"]
        for item in section.get("items") or []
        if item.get("deep_dive", {}).get("key") == key
    )


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_long_context_steps_are_priced_at_the_batch_the_replica_holds():
    """64 sequences of 32,768 tokens need 64 x 32,768 x 327,680 B = 687 GB of KV; four H100s hold about 15.

    Every 32K step is priced at the batch the replica calculator fits in BF16, where the KV read
    (12 ms) outweighs even the BF16 weights (10.45 ms), and FP8 KV still wins, mostly on memory.
    """
    from calculators import maths

    def fits(weights_gb=140, kv=327_680):
        return maths.replica(4, 84.94, weights_gb, 0.9, kv, 32_768).requests_per_replica

    def step(batch, bytes_per_param=2, kv=327_680):
        return maths.decode_step(70, bytes_per_param, kv, batch, 32_768, 4, 3.35, 989)

    held = fits()
    assert 64 * 32_768 * 327_680 > 0.9 * 4 * 84.94e9 and held < 20
    assert step(held).kv_ms > step(held).weights_ms  # the KV read outweighs even the BF16 weights
    assert step(held, kv=163_840).step_ms < step(held, bytes_per_param=1).step_ms
    assert fits(kv=163_840) > fits(weights_gb=70)
    body = " ".join(_lesson_texts("shrinking-the-bytes.yaml"))
    assert "64 sequences, 32,768 tokens" not in body and "64 at a time" not in body
    assert "hardly matter" not in body and "outweighs even the BF16 weights" in body
    long_steps = re.findall(r"\{\{calc decode-step\.\w+([^}|]*mean_context=32768[^}|]*)", body)
    assert len(long_steps) >= 8
    for params in long_steps:
        # The BF16 replica's batch, or (filled to what fits) the batch this step's precision holds.
        weights = 70 * float((re.search(r"bytes_per_param=([\d.]+)", params) or [0, 2])[1])
        kv = int((re.search(r"kv_bytes_per_token=(\d+)", params) or [0, 327_680])[1])
        batch = int(re.search(r"\bbatch=(\d+)", params).group(1))
        assert batch in (held, fits(weights, kv)), params


def test_the_ridge_distractor_at_batch_128_is_graded_weak():
    """At 128 sequences of 2,048 tokens the 4-bit step reads 9.02 ms against 4.53 ms of arithmetic: memory-bound."""
    from calculators import maths

    assert maths.decode_step(70, 0.5, 327_680, 128, 2048, 4, 3.35, 989).memory_bound
    ridge = next(c for c in _dive("batch-128-gain")["choices"] if "crossed the ridge" in c["text"])
    assert ridge["verdict"] == "weak"
    assert "Closer than it sounds" not in ridge["feedback"] and "memory-bound" in ridge["feedback"]


def test_faster_arithmetic_is_taught_as_eight_bit_weights_and_activations_fp8_or_int8():
    """H100 INT8 (1,979 TOPS) and FP8 both double dense BF16 (989); an A100's INT8 (624 TOPS) doubles its BF16 (312)."""
    body = _flat(" ".join(_lesson_texts("shrinking-the-bytes.yaml")))
    assert "Faster arithmetic needs FP8 weights" not in body
    assert "8-bit weights *and* activations (FP8 or INT8)" in body


def test_marlins_batch_range_is_said_to_be_measured_on_a100_class_gpus_with_machete_on_h100():
    """Marlin's README: Ampere or Ada, 'not yet optimized for Hopper'; vLLM tries Machete (sm_90) first for W4A16."""
    body = _flat(" ".join(_lesson_texts("shrinking-the-bytes.yaml")))
    marlin = re.search(r"\*\*Expanding 4-bit weights costs work\*\*[^*]*", body).group(0)
    assert "A100-class GPUs" in marlin and "not yet tuned for Hopper" in marlin and "Machete" in marlin


def test_the_4_bit_read_counts_the_bf16_output_layer_and_the_group_scales():
    """lm_head (128,256 x 8,192) stays BF16 in vLLM FP8 and AWQ/GPTQ checkpoints; group-128 scales and zeros add ~4%.

    On Llama-3-70B's shape the 4-bit read is about 37.7 GB, not 35: about 3.7x the BF16 step at batch 1, not 3.95x.
    """
    from calculators.definitions import assumptions
    from lessons.markup import calc_value

    assert round(assumptions.LLAMA_3_70B_SHAPE_PARAMS / 1e9, 1) == assumptions.LLAMA_3_70B_PARAMS_B == 70.6
    assert assumptions.LLAMA_3_70B_LM_HEAD_PARAMS == 128_256 * 8_192
    assert 37.5 < assumptions.LLAMA_3_70B_W4_READ_GB < 38
    body = " ".join(_lesson_texts("shrinking-the-bytes.yaml"))
    typed = re.search(r"params_b=70\.6 bytes_per_param=([\d.]+)", body)
    assert typed, "the realistic 4-bit read is priced with Llama-3-70B's published count"
    assert 70.6 * float(typed.group(1)) == pytest.approx(assumptions.LLAMA_3_70B_W4_READ_GB, rel=1e-3)
    lm_head = re.search(r"decode-step\.weights_ms params_b=([\d.]+) \|", body)
    assert float(lm_head.group(1)) == pytest.approx(assumptions.LLAMA_3_70B_LM_HEAD_PARAMS / 1e9, rel=5e-3)
    assert "`lm_head`" in body and "nominal 70 × 10⁹ weights" in body
    realistic = calc_value(f"decode-step.step_ms batch=1 params_b=70.6 bytes_per_param={typed.group(1)}")
    ratio = calc_value("decode-step.step_ms batch=1") / realistic
    assert 3.6 < ratio < 3.75
    (envelope,) = [t for t in _lesson_texts("shrinking-the-bytes.yaml") if t.startswith("Llama-3-70B (a nominal")]
    assert "group scales left out" not in envelope and "lm_head" in envelope


def test_a_hybrid_window_model_is_said_to_save_its_windowed_layers_share():
    """Half only for 1:1 alternation (gpt-oss); Gemma 3's five windowed layers to one global save about 5/6."""
    body = _flat(" ".join(_lesson_texts("shrinking-the-bytes.yaml")))
    assert "a hybrid halves it" not in body
    assert "a hybrid saves the windowed layers' share" in body


def test_the_shrinking_deep_dives_do_not_point_at_their_best_choice():
    """The technique, the caveat, the split verdict and the list of steps are not the best choice's alone."""
    deepseek = _dive("deepseek-kv")["choices"]
    assert [c for c in deepseek if c["verdict"] != "best" and "MLA" in c["text"]]
    next_lever = _dive("next-lever")["choices"]
    best = next(c for c in next_lever if c["verdict"] == "best")
    assert "after checking" not in best["text"]
    assert [c for c in next_lever if c["verdict"] != "best" and re.search(r"quality|evals?\b", c["text"])]
    a100 = _dive("a100-fp8")["choices"]
    assert len([c for c in a100 if c["text"].startswith("Half the memory")]) >= 2
    # Every distractor pairs a check with a rollout, as the best choice does.
    ship = [c for c in _dive("ship-it")["choices"] if c["verdict"] != "best"]
    assert all(re.search(r"\bship|canary|rolled out", c["text"]) for c in ship)


def test_the_multi_head_baseline_names_its_head_sizes():
    """DeepSeek-V3's heads have keys of 192 values (128 + 64 RoPE) and values of 128: 4,997,120 B a token per head.

    The DeepSeek-V2 paper's baseline takes d_h = 128 for both (3,997,696 B); the lesson says which is which.
    """
    from lessons.markup import expand_calcs

    assert expand_calcs("{{calc kv-cache.bytes_per_token layers=61 kv_heads=128 head_dim=160 | int}}") == "4,997,120"
    assert 61 * 128 * (192 + 128) * 2 == 4_997_120
    texts = _lesson_texts("shrinking-the-bytes.yaml")
    assert not [t for t in texts if "fifty-odd" in t]
    baseline = [t for t in texts if "layers=61 kv_heads=128 |" in t or "layers=61 kv_heads=128 head_dim=128" in t]
    assert all("paper" in t for t in baseline)
    true_shapes = [t for t in texts if "layers=61 kv_heads=128 head_dim=160" in t]
    assert len(true_shapes) >= 2 and all("192" in t for t in true_shapes)


def test_the_latent_copy_remedies_include_vllms_decode_context_parallelism():
    """vLLM's context-parallel guide: DeepSeek's MLA has one KV head, -tp 8 copies it 8x, -dcp 8 shards it by token."""
    copied = next(c for c in _dive("latent-under-tp")["choices"] if c["verdict"] == "acceptable")
    feedback = _flat(copied["feedback"])
    assert "decode context parallelism" in feedback and "by token" in feedback


def test_long_contexts_on_a_70b_are_taught_on_llama_3_1_70b():
    """Llama-3-70B was released with an 8,192-token window; 32K and 128K need Llama-3.1-70B (the same shape)."""
    from calculators.definitions import latent_kv

    texts = _lesson_texts("shrinking-the-bytes.yaml")
    long_context = [t for t in texts if re.search(r"128K|131,072|131072|32K|32,768|32768", t) and "Llama" in t]
    assert long_context
    assert all("Llama-3.1-70B" in t for t in long_context), [t[:80] for t in long_context]
    notes = " ".join(latent_kv.notes())
    assert "on Llama-3.1-70B" in notes and "on Llama-3-70B" not in notes


# Llama-2-70B uses grouped-query attention (its model card), and the GQA paper came before Llama 2:
# the 7B and 13B simply do not use it.
GQA_HISTORY_MYTHS = [r"predates\s+grouped-query", r"pre-GQA"]


@pytest.mark.parametrize("myth", GQA_HISTORY_MYTHS)
def test_no_lesson_says_a_llama_2_model_predates_gqa(myth):
    assert not [name for name, text in all_texts() if re.search(myth, text)]


def test_the_llama_2_13b_examples_say_only_its_70b_uses_gqa():
    for lesson in ("how-the-lab-works.yaml", "kv-allocation.yaml"):
        body = " ".join(_lesson_texts(lesson))
        assert "Llama-2-13B" in body and "in Llama 2 only the 70B" in body, lesson


def test_small_blocks_are_priced_per_engine_not_ruled_out(content):
    """vLLM's paged-attention kernels lose efficiency at tiny blocks; SGLang pages one token at a time by default."""
    body = " ".join(_lesson_texts("kv-allocation.yaml"))
    assert "settled on 16" not in body and "Tiny blocks cost the kernel" not in body
    feedback = _rendered(_choices("kv-allocation", "block-size").get(text__startswith="Go smaller").feedback_html)
    assert "SGLang" in feedback and "paged-attention kernels lose efficiency" in feedback
    assert "at most 15 tokens left to save" in feedback
    assert _choices("kv-allocation", "block-size").get(text__startswith="Go smaller").verdict == "weak"


def test_the_gpus_per_replica_moment_comes_before_the_design_that_answers_it(content):
    """The case study asked "how do you serve it?" (best: four GPUs) below a walkthrough that sizes "one 70B replica on
    four GPUs" and a design drawn with "4 × H100" (newcomer's finding): the moment now opens the sizing, and nothing
    a learner reads before it names a replica's GPUs."""
    from tests.content.test_no_giveaways import reading_order

    order = reading_order("llm-serving-platform")
    before = next(index for index, (where, _row, _text) in enumerate(order) if where == "DeepDive tensor-parallel")
    read = " ".join(text for _where, _row, text in order[:before]).lower()
    assert "four gpus" not in read and "4 × h100" not in read
    assert "four gpus" in " ".join(text for _where, _row, text in order[before:]).lower()  # the design says so, after


@pytest.mark.parametrize(
    ("bytes_per_token", "named"),
    [(2_621_440, "That counts all 64 query heads."), (163_840, "as if a token cached keys or values only")],
)
def test_the_tour_challenge_names_the_all_heads_slip(client, content, bytes_per_token, named):
    """Counting all 64 query heads (the tour's own weak choice) gave 17 requests, answered "Not within tolerance.
    Check each factor of your working." (newcomer's finding): the slips the lesson just taught are named."""
    from django.urls import reverse

    from calculators.registry import get_calculator
    from lessons.models import Challenge

    challenge = Challenge.objects.get(key="requests-at-your-context")
    page = client.get(challenge.get_absolute_url()).content.decode()
    tokens = int(re.search(r"<strong>([\d,]+) tokens</strong>", page).group(1).replace(",", ""))
    inputs = {"gpu_memory_gb": 84.94, "gpus": 4, "memory_utilization": 0.9, "weights_gb": 140, "context_tokens": tokens}
    all_heads = get_calculator("replica").evaluate({**inputs, "kv_bytes_per_token": bytes_per_token})
    url = reverse("answer-challenge", args=["how-the-lab-works", challenge.pk])
    value = str(all_heads.outputs["requests_per_replica"])
    html = client.post(url, {"value": value}, HTTP_HX_REQUEST="true").content.decode()
    assert named in html
