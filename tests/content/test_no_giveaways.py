"""No lesson hands over a question's answer in the prose or feedback a learner reads before it.

A lesson is read top to bottom: a section's body, then its items (a deep dive's prompt, choices and the
feedback of each choice, a walkthrough's steps with their hints and explanations). Whatever comes earlier
in that order may teach the formula and the principle, but not the very number an envelope step asks for,
nor the verdict a deep dive asks the learner to reach.
"""

import html
import re

import pytest

from lessons.models import Lesson
from lessons.services import expected_for
from tests.content.test_curriculum import lessons


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
    value, unit = expected_for(step).value, step.unit
    forms = {f"{value:.2f} {unit}", f"{value:.1f} {unit}"}
    if value >= 100 or abs(value - round(value)) < 1e-9:
        forms.add(f"{value:,.0f} {unit}")
    if unit == "%":
        forms = {form.replace(" %", "%") for form in forms}
    if unit in {"KiB", "MiB", "GiB", "kB", "MB", "GB"}:
        raw = value / step.scale
        forms.add(f"{raw:,.0f} bytes")
    return forms


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
    ("load-balancing", "work-the-example", ["24.09 points"]),
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
