"""Items asked on their own (review, mock interviews) read right there: nothing points back at "above".

Review and mock interviews show an envelope step with its walkthrough's intro and the numbered
titles of the steps before it (services.step_setup_html), and a challenge or deep dive with its
own prompt alone. A text that leans on what came before it in the lesson ("the figure you worked
out above", "the previous step", "Same fleet and ε.") has nothing to lean on there; naming the
step ("(step 2)") reads right in both places.
"""

import re
from datetime import timedelta
from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from lessons.models import Step
from tests.lessons.factories import answer_steps_before

CONTENT = Path(__file__).resolve().parents[2] / "content" / "lessons"

BACK_REFERENCE = re.compile(
    r"""
    \b(?:above|earlier|previously)\s*(?:[.,;:)?!”"]|$)                           # "worked out above."
    | \b(?:previous|preceding|prior|last|earlier)\s+(?:step|answer|question|result|number|figure)s?\b
    | \byou(?:'ve|\s+have)?\s+(?:just\s+)?(?:worked\s+out|computed|calculated|found|derived|got|sized)\b
    | \bjust\s+(?:worked\s+out|computed|calculated|found|derived)\b
    | \bas\s+before\b
    | \b(?:Skim|Core|Deep)\s+layer\b                                           # "the formula from the Skim layer"
    | (?:^|[.!?;]\s+)same\b(?![^.!?;]*\bstep\s+\d)                     # "Same fleet and ε." naming no step
    """,
    re.IGNORECASE | re.VERBOSE,
)


def asked_alone() -> list[tuple[str, str]]:
    """Return (where, text) for every step body, challenge prompt and deep-dive prompt of the shipped lessons."""
    found = []
    for path in sorted(CONTENT.glob("*.yaml")):
        for section in yaml.safe_load(path.read_text(encoding="utf-8"))["sections"]:
            for item in section.get("items") or []:
                for kind, fields in item.items():
                    where = f"{path.stem}: {kind} {fields['key']!r}"
                    if kind == "walkthrough":
                        found += [(f"{where}, step {n}", s.get("body") or "") for n, s in enumerate(fields["steps"], 1)]
                    elif kind in ("challenge", "deep_dive"):
                        found.append((where, fields["prompt"]))
    return found


@pytest.mark.parametrize(
    "text",
    [
        "4,096 times the per-token figure you worked out above.",
        "weights, and the KV per token you worked out above) at 90% memory use",
        "Use the concurrency from the previous step.",
        "What do you tell them, reading the run above?”",
        "Same fleet and ε.",
        "Take the number you just computed.",
    ],
)
def test_the_check_catches_a_text_pointing_back(text):
    assert BACK_REFERENCE.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "The evening queue is above target, so it starts another replica.",
        "a gap above 32 and a ratio above 1.5",
        "Use the requests in flight at peak (step 2).",
        "The acceptance and draft length of step 1 (α = 0.8, γ = 4).",
        "the next request that starts the same way skips that prefill",
    ],
)
def test_the_check_lets_a_self_contained_text_through(text):
    assert not BACK_REFERENCE.search(text)


def test_no_step_body_or_prompt_points_back_at_what_came_before_it():
    texts = asked_alone()
    assert len(texts) > 100  # every lesson's steps and prompts were read
    pointing_back = [(where, " ".join(text.split())) for where, text in texts if BACK_REFERENCE.search(text)]
    assert pointing_back == []


@pytest.mark.django_db
def test_a_step_that_builds_on_an_earlier_one_reads_right_in_review(client, content, stopped_clock):
    """Autoscaling's third envelope step uses the second's answer: review numbers the step and lists step 2."""
    step = Step.objects.get(walkthrough__key="scale-envelope", order=3)
    answer_steps_before(client, step)  # steps 1 and 2 answered right: not due for days
    client.post(reverse("answer-step", args=["autoscaling", step.pk]), {"value": "1"})  # a miss: due in ten minutes
    stopped_clock.shift(timedelta(minutes=11))
    html = " ".join(client.get(reverse("review")).content.decode().split())
    assert f"Scale the pool: {step.title}" in html
    assert (
        "<p>This is step 3 of an example. Its earlier steps ask these questions; where this step needs one of their"
        " answers and does not give it, work it out yourself.</p><ol>"
        "<li>12 replicas average 9 waiting requests against a target of 4. How many replicas does the HPA ask for?</li>"
        "<li>Peak is 40 requests a second lasting 50 seconds each. How many are in flight?</li></ol>"
        "<p>Use the requests in flight at peak (step 2).</p>"
    ) in html
    assert "previous step" not in html


def test_a_question_about_a_run_carries_the_runs_table_when_asked_alone(content):
    """Routing's "Here are the three affinity policies on the same traffic..." is asked in review and mock
    interviews away from its section: the run's table is the question's own context, not the section's."""
    from lessons.models import DeepDive

    question = DeepDive.objects.get(key="read-the-policies")
    assert "<table" in question.context_html
    for policy in ("hash affinity", "bounded loads", "prefix-aware", "round robin"):
        assert policy in question.context_html
    assert "<table" not in question.section.body_html  # shown once on the lesson page, with the question


def test_a_question_that_reads_a_run_carries_the_run(content):
    """A deep dive asking what "the run" shows is asked alone in review and mock interviews: its own context
    gives the run's numbers (the section around it is not shown there)."""
    import re

    from django.utils.html import strip_tags

    from lessons.models import DeepDive

    reading = [
        dd for dd in DeepDive.objects.all() if re.search(r"\bthe (simulated )?run\b", strip_tags(dd.prompt_html))
    ]
    assert reading  # routing's read-the-policies, at least
    for dd in reading:
        assert re.search(r"\d", strip_tags(dd.context_html)), dd.key


@pytest.mark.parametrize(
    "walkthrough, stated",
    [
        ("long-context-envelope", ["32 layers, 8 KV heads, head dimension 128"]),  # kv-allocation
        ("step-envelope", ["140 GB", "4.8 TB/s", "989 dense BF16 TFLOPS", "96 sequences"]),  # batching
        ("spec-envelope", ["α = 0.7", "γ = 3"]),  # speculative decoding
    ],
)
def test_an_envelope_step_asked_alone_states_what_it_sizes(content, walkthrough, stated):
    """Asked alone (review, interviews), every step of these envelopes shows the model and hardware (or the
    draft's acceptance and length) its numbers need: the walkthrough's intro gives them (expert review)."""
    from lessons.services import step_setup_html

    steps = Step.objects.filter(walkthrough__key=walkthrough)
    assert steps
    for step in steps:
        earlier = step.walkthrough.steps.filter(order__lt=step.order).values_list("title", flat=True)
        setup = step_setup_html(step, [(title, None) for title in earlier])
        for text in stated:
            assert text in setup, (walkthrough, step.order, text)


def test_no_walkthrough_intro_promises_feedback_after_each_answer():
    """A mock interview shows an envelope's intro beside "No feedback until the end": an intro that promises
    the derivation after each answer contradicts it (the lesson page shows it anyway, unasked)."""
    promises = re.compile(r"(?:derivation|working|arithmetic)\s+(?:appears|is shown|follows)\s+after", re.I)
    found = []
    for path in sorted(CONTENT.glob("*.yaml")):
        for section in yaml.safe_load(path.read_text(encoding="utf-8"))["sections"]:
            for item in section.get("items", []):
                intro = (item.get("walkthrough") or {}).get("intro", "")
                if promises.search(intro):
                    found.append(f"{path.name}: {item['walkthrough']['key']}")
    assert found == []


# Where an item sits in its lesson ("the walkthrough in the next layer", "the challenge at the end of this
# lesson", "the tables above"): review and mock interviews show the item alone, with no lesson around it.
LESSON_POSITION = re.compile(
    r"""
    \b(?:next|previous|earlier|later|last|first|following)\s+(?:layer|section|lesson)s?\b
    | \bthis\s+(?:lesson|section|layer|page)\b
    | \bthe\s+lesson's\b
    | \b(?:walkthrough|challenge|deep\s+dive|tables?|charts?|sections?|figures?)\s+(?:above|below)\b
    | \b(?:walkthrough|challenge|deep\s+dive|section)\s+(?:in|at)\s+the\s+(?:next|previous|end|start)\b
    | \bas\s+we\s+(?:saw|showed|found|computed)\b
    | \bin\s+the\s+(?:Skim|Core|Go\s+deeper)\b
    """,
    re.IGNORECASE | re.VERBOSE,
)
NOT_TEXT = {"key", "topic", "kind", "calculator", "output", "unit", "tolerance_kind", "follow_up", "verdict"}


def item_texts(fields, where: str):
    """Yield (where, text) for every string an item shows: feedback, hints, explanations, checklist points..."""
    if isinstance(fields, dict):
        for name, value in fields.items():
            if name not in NOT_TEXT:
                yield from item_texts(value, f"{where}.{name}")
    elif isinstance(fields, list):
        for n, value in enumerate(fields, 1):
            yield from item_texts(value, f"{where}.{n}")
    elif isinstance(fields, str):
        yield where, fields


def shown_alone() -> list[tuple[str, str]]:
    """Return (where, text) for everything of the shipped lessons' items that review or an interview shows."""
    found = []
    for path in sorted(CONTENT.glob("*.yaml")):
        for section in yaml.safe_load(path.read_text(encoding="utf-8"))["sections"]:
            for item in section.get("items") or []:
                for kind, fields in item.items():
                    steps = fields.get("steps") or [] if kind == "walkthrough" else []
                    if kind == "walkthrough" and not any(step.get("ask") for step in steps):
                        # Review and interviews show an intro with a step that asks a number (quiz.py,
                        # interviews.number_view); a walkthrough asking none shows it only in its lesson.
                        fields = {name: value for name, value in fields.items() if name != "intro"}
                    found += item_texts(fields, f"{path.stem}: {kind} {fields['key']!r}")
    return found


@pytest.mark.parametrize(
    "text",
    [
        "Step 1 of the walkthrough in the next layer has you multiply it out.",
        "The challenge at the end of this lesson takes the step an interviewer takes next.",
        "on eight H100s under tensor parallelism 8 (the tables above use four)",
        "Use the lesson's assumption that a used A100 serves 0.45 × an H100's tokens.",
        "As we saw in the Core layer, the cache grows with layers.",
    ],
)
def test_the_position_check_catches_a_text_pointing_into_the_lesson(text):
    assert LESSON_POSITION.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "The next question is what c your draft really has.",
        "Expect the follow-up about a spike month.",
        "a gap above 32 and a ratio above 1.5",
        "Megatron-style tensor parallelism needs two all-reduces per layer in the forward pass",
        "the next request that starts the same way skips that prefill",
    ],
)
def test_the_position_check_lets_an_item_that_stands_alone_through(text):
    assert not LESSON_POSITION.search(text)


def test_no_item_points_at_its_place_in_the_lesson():
    """Choice feedback, hints, explanations, checklist points and step texts name the idea, not where it sits."""
    texts = shown_alone()
    assert len(texts) > 1000
    pointing = [(where, " ".join(text.split())) for where, text in texts if LESSON_POSITION.search(text)]
    assert pointing == []
