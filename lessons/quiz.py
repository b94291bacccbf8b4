"""A review session: each due item quizzed afresh, graded, rescheduled; lesson scores never change.

``present`` shows a due item as if new: a deep dive's choices shuffled with a seed of this
review (not the learner's lesson order), a challenge's numbers drawn anew from its ranges, no
earlier verdict. ``grade`` marks the answer; ``lessons.review.record_review`` reschedules the
card. The review page (lessons.views) and the API (lessons.api) both go through here.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction
from django.utils import timezone
from django.utils.html import escape

from calculators.formatting import amount
from lessons import review, scoring, services
from lessons.forms import NumberForm
from lessons.markup import drawn_prompt, plain_text, truncate_words
from lessons.models import Challenge, ChecklistPoint, Choice, DeepDive, Lesson, OpenQuestion, ReviewCard, Step

SUMMARY_KEY = "review_summary"  # the session's tally: reviewed, recalled, and each item's next due date


@dataclass
class Quiz:
    """One due item as a review session shows it."""

    kind: str  # one of AboutItem.ITEM_KINDS
    card: ReviewCard
    item: object
    lesson: Lesson
    prompt_html: str  # the question, as the interviewer asks it
    body_html: str = ""  # what is said around it: a deep dive's context, a step's body
    choices: list[Choice] = field(default_factory=list)
    inputs: dict = field(default_factory=dict)
    unit: str = ""
    hints_html: list[str] = field(default_factory=list)
    checklist: list[ChecklistPoint] = field(default_factory=list)

    @property
    def item_id(self) -> int:
        return self.item.pk

    @property
    def title(self) -> str:
        return truncate_words(plain_text(self.prompt_html), 35)

    def hints_counted(self, count: int) -> int:
        """Return how many hints ``count`` hints shown stand for now: at most the hints the item has.

        The one place that decides it, for the page, the API and the grade alike: an author may have
        removed hints since the card counted them, and a hint no longer there helps no recall.
        """
        return max(0, min(count, len(self.hints_html), scoring.MAX_HINTS))


@dataclass(frozen=True)
class Graded:
    outcome: str
    feedback_html: str
    answer_html: str  # what a right answer is, shown after grading
    card: ReviewCard
    reviewed_at: datetime  # the moment the card was rescheduled from ("comes back in 10 minutes")
    hinted: bool = False  # a hint was shown: a right recall counts as Hard and comes back sooner

    @property
    def recalled(self) -> bool:
        return self.outcome == "correct"

    @property
    def outcome_label(self) -> str:
        label = {"correct": "Recalled", "partial": "Partly recalled", "incorrect": "Not recalled"}[self.outcome]
        return f"{label} with a hint" if self.hinted and self.outcome == "correct" else label


class QuizError(ValueError):
    """An answer the session cannot grade (a missing or foreign choice, not a number...): say why."""


class AlreadyReviewed(QuizError):
    """The card is not due (any more): a second submit of the same answer, or another tab, got there first."""

    def __init__(self):
        super().__init__("That item was already reviewed; it comes back when it is due again.")


def review_seed(identity: str | None, quiz_card: ReviewCard, item, purpose: str) -> int:
    """Return a seed for this learner, item and review: it changes each time the card is rescheduled."""
    return services.seed_for(identity, item, f"review-{purpose}:{quiz_card.due.isoformat()}")


def next_card(lookup: dict, lessons: list[Lesson]) -> ReviewCard | None:
    """Return the learner's most overdue card in ``lessons``, the oldest card of equals (one query)."""
    cards = ReviewCard.objects.filter(**lookup, due__lte=timezone.now()).filter(review.reviewable_in(lessons))
    return cards.order_by(*review.DUE_ORDER).first()


def card_for(lookup: dict, lessons: list[Lesson], kind: str, pk: int) -> ReviewCard | None:
    """Return the learner's card of one item in ``lessons``, if they have one."""
    if kind not in ReviewCard.ITEM_KINDS:
        return None
    return ReviewCard.objects.filter(**lookup, **{f"{kind}_id": pk}).filter(review.reviewable_in(lessons)).first()


def present(card: ReviewCard, identity: str | None) -> Quiz:
    """Return the card's item as a fresh question (a few queries: one item, its choices or checklist)."""
    kind, pk = card.item_key
    if kind == "deep_dive":
        dd = DeepDive.objects.select_related("section__lesson").get(pk=pk)
        choices = list(dd.choices.all())
        if not dd.keep_choice_order:
            random.Random(review_seed(identity, card, dd, "order")).shuffle(choices)
        return Quiz(kind, card, dd, dd.section.lesson, dd.prompt_html, dd.context_html, choices=choices,
                    hints_html=dd.hints_html)  # fmt: skip
    if kind == "step":
        step = Step.objects.select_related("walkthrough__section__lesson").get(pk=pk)
        prompt = f"{escape(step.walkthrough.title)}: {escape(step.title)}"
        earlier = Step.objects.filter(walkthrough=step.walkthrough_id, order__lt=step.order).order_by("order")
        body = services.step_setup_html(step, [(title, None) for title in earlier.values_list("title", flat=True)])
        return Quiz(kind, card, step, step.walkthrough.section.lesson, prompt, body, unit=step.unit,
                    hints_html=step.hints_html)  # fmt: skip
    if kind == "challenge":
        ch = Challenge.objects.select_related("section__lesson").get(pk=pk)
        inputs = services.draw_inputs(ch, review_seed(identity, card, ch, "draw")) if ch.ranges else {}
        return Quiz(kind, card, ch, ch.section.lesson, escape(ch.title), str(drawn_prompt(ch, inputs)), inputs=inputs,
                    unit=ch.unit, hints_html=ch.hints_html)  # fmt: skip
    question = OpenQuestion.objects.select_related("section__lesson").get(pk=pk)
    return Quiz(kind, card, question, question.section.lesson, question.prompt_html,
                checklist=list(question.checklist.all()))  # fmt: skip


def hints_shown(quiz: Quiz, asked) -> int:
    """Return how many hints to show: what the learner asked for, within what there are, and never fewer
    than the card's ``hints_shown`` (what was shown already since it was last graded) while the item
    still has them (``Quiz.hints_counted``).

    Raising the number is recorded on the card (one UPDATE), so the answer is rated on the hints the
    server showed, whatever the form or API request says.
    """
    try:
        wanted = int(asked or 0)
    except (TypeError, ValueError):
        wanted = 0
    shown = quiz.hints_counted(wanted)
    if shown > quiz.card.hints_shown:
        ReviewCard.objects.filter(pk=quiz.card.pk, hints_shown__lt=shown).update(hints_shown=shown)
        quiz.card.hints_shown = shown
    return quiz.hints_counted(max(shown, quiz.card.hints_shown))


def grade(quiz: Quiz, data, hints: int = 0) -> Graded:
    """Grade a review answer (``data``: choice, value, or text and points) and reschedule the card.

    Raises QuizError, with a message for the learner, when the answer cannot be graded, and
    AlreadyReviewed when the card is not due (it was graded already).
    """
    if quiz.kind == "deep_dive":
        picked = next((c for c in quiz.choices if str(c.pk) == str(data.get("choice"))), None)
        if picked is None:
            raise QuizError("Pick one of the approaches.")
        best = next(c for c in quiz.choices if c.verdict == "best")
        outcome = services.VERDICT_OUTCOME[picked.verdict]
        feedback = f"<p><strong>You chose:</strong> {picked.text_html}</p>{picked.feedback_html}"
        answer = (
            "" if picked == best else f"<p><strong>The best approach:</strong> {best.text_html}</p>{best.feedback_html}"
        )
    elif quiz.kind == "open_question":
        chosen = {str(v) for v in data.get("points", [])}
        known = {str(p.pk) for p in quiz.checklist}
        if chosen - known:
            raise QuizError("Tick only this question's checklist points.")
        graded = scoring.checklist_grade(len(chosen), len(quiz.checklist))
        outcome, feedback = graded.outcome, f"<p>{escape(graded.message)}</p>"
        answer = (
            "<ul class='checklist'>"
            + "".join(
                f"<li class='{'covered' if str(p.pk) in chosen else 'missed'}'>"
                f"<span class='verdict'>{'Covered' if str(p.pk) in chosen else 'Not covered'}:</span> {p.text_html}</li>"
                for p in quiz.checklist
            )
            + "</ul>"
        )
    else:
        form = NumberForm({"value": data.get("value", "")}, unit=quiz.unit)
        if not form.is_valid():
            raise QuizError(" ".join(e for errors in form.errors.values() for e in errors))
        expected, result = services.grade_number(quiz.item, form.cleaned_data["value"], quiz.inputs or None)
        outcome = result.outcome
        given = escape(amount(form.cleaned_data["value"], quiz.unit, 6))  # in the question's unit, as lessons echo it
        feedback = f"<p><strong>You answered:</strong> {given}</p><p>{escape(result.message)}</p>"
        answer = (
            f"<p>The answer is <strong>{escape(amount(expected.value, quiz.unit))}</strong>. "
            f'<a href="{quiz.item.get_absolute_url()}">Open it in its lesson</a> for its worked arithmetic.</p>'
        )
    now = timezone.now()
    with transaction.atomic():  # graded and rescheduled once, however many times the answer is posted
        due = ReviewCard.objects.select_for_update().filter(pk=quiz.card.pk, due__lte=now).first()
        if due is None:
            raise AlreadyReviewed
        shown = quiz.hints_counted(max(hints, due.hints_shown))  # hints shown, not claimed, that are still there
        card = review.record_review(due, outcome, shown, now=now)
    return Graded(outcome, feedback, answer, card, now, hinted=shown > 0)


def tally(session, quiz: Quiz, graded: Graded) -> dict:
    """Add a graded review to the session's summary and return it."""
    summary = session.get(SUMMARY_KEY) or {"reviewed": 0, "recalled": 0, "items": []}
    summary["reviewed"] += 1
    summary["recalled"] += int(graded.recalled)
    summary["items"] = [
        *summary["items"][-49:],
        {
            "title": quiz.title,
            "outcome": graded.outcome,
            "label": graded.outcome_label,
            "due": graded.card.due.isoformat(),
        },
    ]
    session[SUMMARY_KEY] = summary
    return summary
