"""No lesson hands over a question's answer in the prose or feedback a learner reads before it.

A lesson is read top to bottom: a section's body, then its items (a deep dive's prompt, choices and the
feedback of each choice, a walkthrough's steps with their hints and explanations). Whatever comes earlier
in that order may teach the formula and the principle, but not the very number an envelope step asks for,
nor the verdict a deep dive asks the learner to reach.
"""

import html
import itertools
import math
import re
from pathlib import Path

import pytest

from calculators.registry import get_calculator
from lessons.markup import CALC_PATTERN, parse_reference
from lessons.models import Challenge, Lesson
from lessons.services import expected_for
from tests.content.test_curriculum import lessons

CONTENT = Path(__file__).resolve().parents[2] / "content" / "lessons"


def _plain(fragment: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", fragment)).split())


def reading_order(slug: str) -> list[tuple[str, object, str]]:
    """Return (where, row, shown text) for everything in the lesson, in the order a learner meets it."""
    lesson = Lesson.objects.get(slug=slug)
    found = []
    for section in lesson.sections.order_by("order"):
        found.append((f"section {section.key}", section, _plain(section.body_html)))
        items = [
            *section.deepdives.all(),
            *section.walkthroughs.all(),
            *section.challenges.all(),
            *section.openquestions.all(),
        ]
        for item in sorted(items, key=lambda item: item.order):
            name = f"{type(item).__name__} {item.key}"
            if hasattr(item, "choices"):
                found.append((name, item, _plain(item.prompt_html + " " + item.context_html)))
                for choice in item.choices.order_by("order"):
                    found.append(
                        (
                            f"{name}, choice {choice.order}",
                            choice,
                            _plain(choice.text_html + " " + choice.feedback_html),
                        )
                    )
            elif hasattr(item, "steps"):
                found.append((name, item, _plain(item.intro_html)))
                for step in item.steps.order_by("order"):
                    found.append((f"{name}, step {step.order}", step, _plain(step.title + " " + step.body_html)))
                    after = " ".join([*step.hints_html, step.explanation_html])
                    found.append((f"{name}, step {step.order} (after answering)", None, _plain(after)))
            else:
                found.append((name, item, _plain(getattr(item, "prompt_html", ""))))
    return found


def answer_forms(step) -> set[str]:
    """The ways an envelope step's expected answer would be printed: in its unit, and as raw bytes."""
    return value_forms(expected_for(step).value, step.unit, step.scale)


def value_forms(value: float, unit: str, scale: float = 1.0) -> set[str]:
    """The ways ``value`` (in ``unit``) would be printed: as the calculator formats print it, and as raw bytes."""
    forms = {f"{value:.2f} {unit}", f"{value:.1f} {unit}"}
    if value >= 100 or abs(value - round(value)) < 1e-9:
        forms.add(f"{value:,.0f} {unit}")
    if unit == "%":
        forms.add(f"{value:.4f} %")  # the pct4 format: 80.3125%
        forms = {form.replace(" %", "%") for form in forms}
    if unit in {"KiB", "MiB", "GiB", "kB", "MB", "GB"}:
        raw = value / scale
        forms.add(f"{raw:,.0f} bytes")
    return forms


def printed_in(forms: set[str], shown: str) -> list[str]:
    return [form for form in forms if re.search(rf"(?<![\d.,]){re.escape(form)}(?![\d])", shown)]


@pytest.mark.parametrize("slug", sorted(lessons()))
def test_no_envelope_step_is_answered_earlier_in_its_lesson(content, slug):
    seen: list[tuple[str, str]] = []
    for where, row, text in reading_order(slug):
        if row is not None and type(row).__name__ == "Step" and row.calculator:
            forms = answer_forms(row)
            earlier = [
                (place, form)
                for place, shown in seen
                for form in forms
                if re.search(rf"(?<![\d.,]){re.escape(form)}", shown)
            ]
            assert earlier == [], f"{slug}, {where}: its answer is printed earlier, in {earlier}"
        seen.append((where, text))


def text_before(slug: str, item_key: str) -> str:
    """Everything shown before the item ``item_key`` (a deep dive's or walkthrough's key) in the lesson."""
    shown = []
    for where, row, text in reading_order(slug):
        if getattr(row, "key", None) == item_key and not where.startswith("section"):
            return " ".join(shown)
        shown.append(text)
    raise AssertionError(f"{item_key} is not in {slug}")


# (lesson, the question, what the text before it used to hand over)
VERDICTS_LEFT_TO_THE_QUESTION = [
    # The GQA question: the 64-head figure it quotes, and how many 4K requests the replica really holds.
    ("kv-allocation", "gqa-sizing", ["2,621,440", "eight times more", "room for 123"]),
    # Reserving max_tokens up front: the measured waste and the paging fix it asks for.
    ("kv-allocation", "slab-waste", ["20.4%", "38.2%", "block table"]),
    ("kv-allocation", "reserve-prefix", ["no separate prefix store"]),
    ("kv-allocation", "preempt-choice", ["over-admission", "admission limit is too high"]),
    # TP16 for KV room: that heads are replicated past the head count, so per-GPU KV stops falling.
    ("kv-allocation", "tp16-for-kv", ["replicated", "no KV room per GPU"]),
    # The 8B 128K sizing question comes after the envelope that works its figures, not after the figures.
    ("kv-allocation", "long-context-envelope", ["42.9 GB", "3 such requests", "KV problem before"]),
    ("kv-allocation", "long-context-envelope", ["128.0 KiB", "131,072 bytes"]),
    ("how-the-lab-works", "size-the-cache", ["320.0 KiB", "327,680 bytes", "131,072 bytes"]),
    ("autoscaling", "hpa-did-nothing", ["4.3 against 4", "no change"]),
    ("autoscaling", "lost-node", ["It does not cover a node dying"]),
    ("tensor-parallelism", "serve-405b", ["TP8 inside each node", "FP8 weights on one node"]),
    # One node for 405B: the answer is FP8, and serve-405b's feedback once announced "whether you need two nodes".
    ("tensor-parallelism", "fp8-405b", ["FP8", "two nodes at all"]),
    # Shortening the 128-sequence step: the section body once named the answer ("the lever is an FP8 KV cache").
    ("shrinking-the-bytes", "next-lever", ["the lever is an FP8"]),
    ("load-balancing", "work-the-example", ["24.09 points"]),
    # Routing: the 40 -> 50 resize and its cold prefills, what losing a replica moves, the 1/N caveat a weak
    # choice rests on, and "very small values risk churn" (the weak choice of pick-epsilon).
    ("routing", "scale-out-remap", ["80%", "all at the same moment", "resized precisely because it was busy"]),
    ("routing", "warm-after-resize", ["Losing one replica of 48", "moves only that replica's keys"]),
    ("routing", "spill-copies", ["only if each opening lives on one replica"]),
    ("routing", "pick-epsilon", ["risk churn"]),
    # Speculative decoding: the teammate's case worked through (alpha 0.8, gamma 4), the 8B draft's c,
    # the batch-128 verdict and "the best gamma falls with it".
    ("speculative-decoding", "tokens-per-pass", ["3.36", "2.80x", "2.10x"]),
    ("speculative-decoding", "draft-cost", ["0.15"]),
    ("speculative-decoding", "slower-at-peak", ["what crosses the ridge", "640 in all", "1.86x", "0.94x"]),
    ("speculative-decoding", "acceptance-fell", ["the best γ falls"]),
    # The 70B's own per-token figure (and a request's size from it) is the GQA question's to give.
    ("kv-allocation", "gqa-sizing", ["327,680", "320.0 KiB", "1.3 GB"]),
]


@pytest.mark.parametrize("slug, key, giveaways", VERDICTS_LEFT_TO_THE_QUESTION)
def test_the_text_before_a_question_leaves_its_answer_to_the_learner(content, slug, key, giveaways):
    before = text_before(slug, key)
    found = [giveaway for giveaway in giveaways if giveaway in before]
    assert found == [], f"{slug}: before {key!r} the learner already reads {found}"


def test_what_was_moved_after_the_questions_is_still_taught(content):
    """Leaving the answer to the question must not drop it from the lesson: it follows the question."""
    kv = " ".join(text for _, _, text in reading_order("kv-allocation"))
    for taught in ["20.4% to 38.2%", "block table", "no separate prefix store", "over-admission", "replicated"]:
        assert taught in kv
    tp = " ".join(text for _, _, text in reading_order("tensor-parallelism"))
    assert "TP8 inside each node" in tp and "FP8 weights on one node" in tp


def test_the_routing_envelope_states_the_opening_its_first_step_asks_about(content):
    section = Lesson.objects.get(slug="routing").sections.get(key="envelope")
    step = section.walkthroughs.get(key="affinity-envelope").steps.get(order=1)
    assert "1,500-token opening" in step.title
    assert "1,500-token opening per tenant" in _plain(section.body_html)


# An envelope's answer that is exactly half or double a figure printed before it is a rescaling, not
# a calculation (the TP8 envelope once halved layer 1's TP4 figures).
SCALED_ENVELOPES = [("batching", "step-envelope"), ("tensor-parallelism", "tp-envelope")]


def scaled_forms(value: float, unit: str, scale: float) -> set[str]:
    """How a figure half or double ``value`` would be printed, with its unit or bare (``73 tokens a second``)."""
    forms = set()
    for scaled in (value / 2, value * 2):
        forms |= value_forms(scaled, unit, scale) | {f"{scaled:.2f}"}
        if scaled >= 10:
            forms.add(f"{scaled:,.0f}")
    if abs(value - round(value)) < 1e-9:  # a whole count, rounded down: half of 59 is 29 too
        forms |= value_forms(value * 2 + 1, unit, scale) | {f"{value * 2 + 1:,.0f}"}
    return forms


@pytest.mark.parametrize("slug, key", SCALED_ENVELOPES)
def test_no_envelope_step_is_half_or_double_a_figure_printed_earlier(content, slug, key):
    before = text_before(slug, key)
    steps = [
        step
        for section in Lesson.objects.get(slug=slug).sections.all()
        for walkthrough in section.walkthroughs.filter(key=key)
        for step in walkthrough.steps.exclude(calculator="")
    ]
    assert steps
    for step in steps:
        value = expected_for(step).value
        found = printed_in(scaled_forms(value, step.unit, step.scale), before)
        assert found == [], f"{slug}, {key} step {step.order}: {value:g} is half or double {found}, printed earlier"


def challenge_answers(challenge: Challenge):
    """Yield (drawn inputs, expected answer) for every draw the challenge's ranges allow."""
    names = sorted(challenge.ranges)
    grids = []
    for name in names:
        low, high, step = challenge.ranges[name]
        count = int((high - low) / step + 1e-9) + 1
        grids.append([round(low + step * i, 10) for i in range(count)])
    for values in itertools.product(*grids):
        drawn = dict(zip(names, values, strict=True))
        yield drawn, expected_for(challenge, drawn).value


# (lesson, challenge): numbers a learner may be drawn must not be ones the lesson already printed.
DRAWN_AWAY_FROM_PRINTED = [
    ("how-the-lab-works", "requests-at-your-context"),
    ("kv-allocation", "requests-at-context"),
    ("batching", "step-time"),
    ("batching", "replica-throughput"),
    ("tensor-parallelism", "fp8-replica"),
    ("speculative-decoding", "expected-tokens"),
    ("routing", "openings-that-fit"),
]


@pytest.mark.parametrize("slug, key", DRAWN_AWAY_FROM_PRINTED)
def test_no_draw_of_a_challenge_gives_a_number_its_lesson_prints(content, slug, key):
    challenge = Challenge.objects.get(key=key, section__lesson__slug=slug)
    shown = " ".join(text for where, _, text in reading_order(slug) if where != f"Challenge {key}")
    for drawn, value in challenge_answers(challenge):
        forms = value_forms(value, challenge.unit, challenge.scale)
        if challenge.tolerance_kind == "nominal":
            forms |= {f"{value:,.0f} {word}" for word in ("requests", "of them", "such requests")}
            forms.add(f"room for {value:,.0f}")
            forms.add(f"fits {value:,.0f}")
        if challenge.unit == "ms":
            forms |= {f"{value:.2f} ms"}
        if challenge.unit == "tokens/s":
            forms |= {f"{value:,.0f} tokens", f"{value:,.0f}."}
        if challenge.unit == "tokens":
            forms |= {f"{value:.4f}"}  # the f4 format an explanation prints E with
        if challenge.unit == "openings":
            forms |= {f"holds {value:,.0f}", f"{value:,.0f} of them"}
        found = printed_in(forms, shown)
        assert found == [], f"{slug}, {key}: the draw {drawn} gives {found}, printed in the lesson"


def printed_before(slug: str, key: str, calculator: str, output: str) -> list[tuple[str, dict]]:
    """Return (source, inputs) for each ``{{calc calculator.output ...}}`` the lesson's file prints before the
    item ``key``, its inputs with the calculator's defaults filled in."""
    text = (CONTENT / f"{slug}.yaml").read_text(encoding="utf-8")
    before = text[: text.index(f"key: {key}\n")]
    found = []
    for match in CALC_PATTERN.finditer(before):
        slug, name, params = parse_reference(match["ref"])
        if (slug, name) == (calculator, output):
            found.append((" ".join(match.group(0).split()), get_calculator(calculator).evaluate(params).inputs))
    return found


def same_inputs(one: dict, other: dict) -> bool:
    return one.keys() == other.keys() and all(math.isclose(one[name], other[name]) for name in one)


def drawn_challenges() -> list[tuple[str, str]]:
    """Return (lesson, challenge) for every shipped challenge with ranges."""
    return [
        (slug, item["challenge"]["key"])
        for slug, lesson in sorted(lessons().items())
        for section in lesson["sections"]
        for item in section.get("items") or []
        if "challenge" in item and item["challenge"]["ask"].get("ranges")
    ]


@pytest.mark.parametrize("slug, key", drawn_challenges())
def test_no_draw_of_a_challenge_asks_the_worked_example_printed_before_it(content, slug, key):
    """A draw with the very inputs of a figure the lesson printed earlier (the same calculator and output) asks
    the worked example again: speculative decoding's α = 0.8, γ = 4 once came up in its speedup challenge."""
    challenge = Challenge.objects.get(key=key, section__lesson__slug=slug)
    printed = printed_before(slug, key, challenge.calculator, challenge.output)
    found = [
        (drawn, source)
        for drawn, _ in challenge_answers(challenge)
        for source, inputs in printed
        if same_inputs(expected_for(challenge, drawn).inputs, inputs)
    ]
    assert found == [], f"{slug}, {key}: draws that ask a figure printed before them: {found}"


def test_every_shipped_section_states_its_reading_time():
    """A section without minutes falls back to one minute, which a section holding a walkthrough is not."""
    from tests.content.test_curriculum import lessons as lesson_files

    missing = [
        f"{slug}: {section['key']}"
        for slug, lesson in lesson_files().items()
        for section in lesson["sections"]
        if "minutes" not in section
    ]
    assert missing == []
