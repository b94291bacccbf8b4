"""The "Deep dives" track: one lesson per mission topic, and one on shrinking weights and KV, each with the counts
and the coverage issue 13 asks for."""

import re

import pytest

from lessons.models import Challenge, Choice, DeepDive, Lesson, OpenQuestion, Step
from tests.content.test_curriculum import follow_ups, items, lessons, texts

# slug: (order in the track, the topic its interview moments probe)
DEEP_DIVES = {
    "kv-allocation": (1, "kv_allocation"),
    "batching": (2, "batching"),
    "tensor-parallelism": (3, "tensor_parallel"),
    "speculative-decoding": (4, "speculative_decoding"),
    "routing": (5, "routing"),
    "autoscaling": (6, "autoscaling"),
    # Fewer bytes per weight and per token: quantised weights and compressed KV (migration 0023).
    "shrinking-the-bytes": (7, "compression"),
}
# What each lesson must at least cover (issue 13): a pattern per idea, found somewhere in its text.
COVERAGE = {
    "kv-allocation": {
        "bytes per token": r"bytes per token",
        "grouped-query attention": r"grouped-query attention",
        "paging and block tables": r"block table",
        "fragmentation": r"PagedAttention paper measured",
        "prefix caching in the same pool": r"no separate prefix store",
        "recompute": r"\*\*Recompute\*\*",
        "swap": r"\*\*Swap\*\*",
        "a CPU or SSD tier": r"host memory or SSD",
        "FP8 KV": r"FP8 KV",
        "4-bit KV": r"4-bit KV",
        "KV heads replicated past the head count": r"heads are\s+\*replicated\*",
        "128K tokens on an 8B model": r"128K-token \(131,072\) request on Llama-3\.1-8B",
        "80 GB reads 81,559 MiB": r"81,559 MiB",
    },
    "batching": {
        "static batching": r"\*\*Static batching\*\*",
        "continuous batching": r"\*\*Continuous batching\*\*",
        "the roofline and its ridge": r"the \*\*ridge\*\* of\s+the roofline",
        "step time from weight and KV reads": r"decode-step\.weights_ms.*decode-step\.kv_ms",
        "TTFT": r"time to first token",
        "TPOT": r"time per output token",
        "goodput under SLOs": r"\*\*Goodput\*\*",
        "chunked prefill": r"\*\*Chunked prefill\*\*",
        "disaggregation and shipping KV": r"The shipping is the bill",
    },
    "tensor-parallelism": {
        "tensor parallelism": r"\*\*Tensor parallelism \(TP\)\*\*",
        "pipeline parallelism": r"\*\*Pipeline parallelism \(PP\)\*\*",
        "expert parallelism": r"\*\*Expert parallelism \(EP\)\*\*",
        "NVLink against InfiniBand": r"NVLink against InfiniBand",
        "all-reduce cost": r"Its cost is mostly\s+latency",
        "TP8 in a node, PP across nodes for 405B": r"\*\*TP8 inside each node, PP2 across two nodes\.\*\*",
        "FP8 weights on fewer GPUs": r"\*\*FP8 weights on one node\.\*\*",
        "MoE active against total": r"\*\*Memory\*\* is set by the total",
    },
    "speculative-decoding": {
        "acceptance rate": r"accepted with probability α",
        "draft length": r"proposes γ tokens",
        "draft cost of an 8B draft": r"8B sibling",
        "vLLM's 1.5x came from a 0.5B draft": r"0\.5B draft",
        "EAGLE": r"\*\*EAGLE\*\*",
        "Medusa": r"\*\*Medusa\*\*",
        "multi-token prediction": r"\*\*Multi-token prediction\*\*",
        "verification crosses the ridge at large batch": r"what crosses the ridge is the speculative batch",
        "gating by batch size": r"disable_by_batch_size",
    },
    "routing": {
        "round robin": r"\*\*Round robin\*\*",
        "least loaded": r"\*\*Least loaded\*\*",
        "hash affinity": r"\*\*Hash affinity\*\*",
        "consistent hashing against mod N": r"rehash\.modulo_moved.*rehash\.consistent_moved",
        "bounded loads": r"\*\*bounded loads\*\*",
        "SGLang's imbalance rule": r"balance_abs_threshold.*balance_rel_threshold",
        "per-tenant fairness": r"Virtual Token Counter",
        "round robin keeps popular openings resident": r"its hits survive",
    },
    "autoscaling": {
        "queue depth": r"\*\*Queue depth\*\*",
        "KV use": r"\*\*KV cache use\*\*",
        "TTFT": r"\*\*Time to first token\*\*",
        "why not GPU utilisation": r"\*\*GPU utilisation\*\* is the number",
        "the HPA formula": r"current metric ÷ target⌉",
        "the HPA tolerance": r"\*\*tolerance\*\*",
        "cold start of 140 GB": r"load 140 GB of weights",
        "warm pools": r"\*\*Warm pools\*\*",
        "N+1 headroom": r"\*\*N \+ 1\*\*",
        "scale to zero": r"\*\*Scale to zero\*\*",
        "an offline batch tier": r"\*\*offline batch tier\*\*",
    },
    "shrinking-the-bytes": {
        "fewer bytes per weight make a faster decode step": r"fewer bytes per\s+weight make a faster step",
        "FP8 weights": r"\*\*FP8\*\* stores each weight in one byte",
        "4-bit weight-only: GPTQ and AWQ": r"\*\*GPTQ\*\*.*\*\*AWQ\*\*",
        "the KV read is untouched by quantised weights": r"\*\*The KV read is untouched\.\*\*",
        "compute-bound steps gain nothing": r"\*\*A compute-bound step does not care\.\*\*",
        "dequantisation costs (Marlin)": r"\*\*Expanding 4-bit weights costs work\*\*.*Marlin",
        "an A100 has no FP8 tensor cores": r"\*\*An A100 has no FP8 tensor cores\.\*\*",
        "a quality gate agreed in advance": r"agree the margin per task before running anything",
        "FP8 KV": r"\*\*FP8 KV\*\*",
        "MLA caches 512 + 64 values a layer": r"latent of 512 values.*576 values",
        "MLA is copied under tensor parallelism": r"Tensor parallelism cannot split the latent",
        "sliding-window attention": r"\*\*Sliding-window attention\*\*",
        "hybrid windowed and global layers": r"global ones still keep every token",
        "the engine must free windowed blocks": r"hybrid KV cache manager",
    },
}


def lesson_text(slug: str) -> str:
    return " ".join(" ".join(texts(lessons()[slug])).split())


def test_the_track_has_one_lesson_per_topic_in_order():
    found = {slug: data["order"] for slug, data in lessons().items() if data["track"] == "deep-dives"}
    assert found == {slug: order for slug, (order, _) in DEEP_DIVES.items()}


@pytest.mark.parametrize("slug", sorted(DEEP_DIVES))
def test_each_lesson_has_three_layers_six_moments_and_two_branches(slug):
    lesson = lessons()[slug]
    assert {section["layer"] for section in lesson["sections"]} == {1, 2, 3}
    dives = items(lesson, "deep_dive")
    assert len(dives) >= 6
    assert len({d["key"] for d in dives if any(c.get("follow_up") for c in d["choices"])}) >= 2
    leading = [d for d in dives if d["key"] not in follow_ups(lesson)]
    assert {d["topic"] for d in leading} == {DEEP_DIVES[slug][1]}


@pytest.mark.parametrize("slug", sorted(DEEP_DIVES))
def test_each_lesson_has_an_envelope_of_three_graded_steps_three_drawn_challenges_and_an_open_question(slug):
    lesson = lessons()[slug]
    (envelope,) = [w for w in items(lesson, "walkthrough") if w["kind"] == "envelope"]
    assert sum(1 for step in envelope["steps"] if step.get("ask", {}).get("calculator")) >= 3
    challenges = items(lesson, "challenge")
    assert len(challenges) == 3
    assert all(challenge["ask"].get("ranges") for challenge in challenges)
    (question,) = items(lesson, "open_question")
    assert len(question["checklist"]) >= 5


@pytest.mark.parametrize("slug", sorted(DEEP_DIVES))
def test_each_lesson_covers_what_the_issue_lists(slug):
    text = lesson_text(slug)
    missing = [idea for idea, pattern in COVERAGE[slug].items() if not re.search(pattern, text)]
    assert missing == []


@pytest.mark.django_db
def test_every_deep_dive_lesson_loads_with_its_items(content):
    for slug in DEEP_DIVES:
        lesson = Lesson.objects.get(slug=slug)
        assert lesson.track.slug == "deep-dives" and lesson.published
        assert DeepDive.objects.filter(section__lesson=lesson).count() == len(items(lessons()[slug], "deep_dive"))
        assert Choice.objects.filter(deep_dive__section__lesson=lesson, follow_up__isnull=False).count() >= 2
        assert Step.objects.filter(walkthrough__section__lesson=lesson).exclude(calculator="").count() >= 3
        assert Challenge.objects.filter(section__lesson=lesson).exclude(ranges={}).count() == 3
        assert OpenQuestion.objects.filter(section__lesson=lesson).count() == 1
