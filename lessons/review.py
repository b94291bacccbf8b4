"""Spaced review: a first answer schedules its item for the learner with FSRS (py-fsrs), and every
answer once it is due reschedules it (a retry before then is practice: ``schedule``).

A miss comes back after the first learning step (or the relearning step, once learnt), a first
partly right answer between the two learning steps, a first right answer after the second; then
the gaps grow with FSRS's stability. The pages state those gaps as the scheduler computes them
(``RETURNS``), so no figure is typed here. A review session (the review page, the API) quizzes each
due item afresh (see ``present``): its outcome, less any hints taken, sets the FSRS rating
(``review_rating``); it never writes an Answer, so lesson scores never change.
"""

from __future__ import annotations

from collections.abc import Container, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import reduce
from operator import or_

from django.db import IntegrityError, transaction
from django.db.models import Exists, F, OuterRef, Q, Subquery
from django.utils import timezone
from fsrs import Card, Rating, Scheduler

from interview.dates import gap_text
from lessons.links import generation_of, item_catalog, item_links
from lessons.models import ITEM_ID_FIELDS, Answer, Choice, ItemPractice, Lesson, Outcome, ReviewCard, item_key_of

SCHEDULER = Scheduler(
    learning_steps=(timedelta(minutes=10), timedelta(hours=4)),
    relearning_steps=(timedelta(minutes=10),),
    enable_fuzzing=False,
)
RATING = {Outcome.CORRECT: Rating.Good, Outcome.PARTIAL: Rating.Hard, Outcome.INCORRECT: Rating.Again}


@dataclass(frozen=True)
class Returns:
    """When an item comes back after its first answer, per outcome; after each right answer that follows;
    and after a miss once it is learnt: the scheduler's own gaps, written for people (interview.dates.gap_text),
    so the pages never say what the scheduler does not do."""

    miss: str
    partial: str
    right: str
    recalls: tuple[str, ...]  # the gaps after the next right answers, each given when the item came back
    relapse: str  # the gap after a miss once the item was learnt (the relearning step)

    @classmethod
    def of(cls, scheduler: Scheduler, recalls: int = 3) -> Returns:
        start = datetime(2000, 1, 1, tzinfo=UTC)  # any moment: the gaps do not depend on it

        def gap(card: Card, outcome: str) -> tuple[Card, str]:
            at = card.due
            card, _log = scheduler.review_card(card, RATING[outcome], review_datetime=at)
            return card, gap_text(card.due - at)

        card, right = gap(Card(due=start), Outcome.CORRECT)
        gaps = []
        for _ in range(recalls):
            card, text = gap(card, Outcome.CORRECT)
            gaps.append(text)
        return cls(
            miss=gap(Card(due=start), Outcome.INCORRECT)[1],
            partial=gap(Card(due=start), Outcome.PARTIAL)[1],
            right=right,
            recalls=tuple(gaps),
            relapse=gap(card, Outcome.INCORRECT)[1],
        )

    @property
    def text(self) -> str:
        """Return the schedule in three sentences, for the results and review pages."""
        return (
            f"After a first answer, a miss comes back in {self.miss}, a partly right one in {self.partial}, a right "
            f"one in {self.right}. Right every time after that, it comes back after {', then '.join(self.recalls)}, "
            f"and so on; a miss brings it back in {self.relapse} again, and the gaps then grow from a shorter start. "
            "A question whose answer opened a follow-up waits until you have answered the follow-up."
        )


RETURNS = Returns.of(SCHEDULER)
DUE_LIST_LIMIT = 50  # due items the review page ("Also due") and the review API list at most
DUE_ORDER = ("due", "pk")  # most overdue first; of equals, the oldest card


# ``card=UNREAD`` (the default): the caller has not read the item's review card, so ``schedule`` reads it. A caller
# that read the learner's state passes the card it found, None included: a first answer has none to read again.
UNREAD = object()


def schedule(answer: Answer, now: datetime | None = None, card: ReviewCard | None | object = UNREAD) -> ReviewCard:
    """Reschedule the answered item for its learner (two queries; one when its ``card`` was read already).

    A retry before the item is due again is practice, not a recall: trying another approach to read
    its feedback, or the right one just after being shown it. It is counted (``reviews``, the latest
    answer) but leaves the schedule as the last graded recall set it: a deliberate wrong retry of an
    item answered right brought it back in ten minutes. A retry once the item is due is a recall.
    """
    now = now or timezone.now()
    fields = answer.item_fields
    row = ReviewCard.objects.filter(learner_id=answer.learner_id, **fields).first() if card is UNREAD else card
    values = {"latest_answer": answer, "recall_outcome": ""}  # this answer is the latest try now
    if answer.is_first or row is None or row.due <= now:
        state = Card.from_dict(row.card) if row else Card(due=now)
        state, _log = SCHEDULER.review_card(state, RATING[answer.outcome], review_datetime=now)
        values.update(card=state.to_dict(), due=state.due, last_outcome=answer.outcome)
    if answer.is_first:
        values["first_answer"] = answer
    if row is None:
        try:
            with transaction.atomic():
                return ReviewCard.objects.create(learner_id=answer.learner_id, **fields, **values)
        except IntegrityError:  # a concurrent answer created it; update that one
            row = ReviewCard.objects.get(learner_id=answer.learner_id, **fields)
    for name, value in values.items():
        setattr(row, name, value)
    row.reviews = F("reviews") + 1  # concurrent answers each count
    row.save(update_fields=[*values, "reviews"])
    return row


def review_rating(outcome: str, hints: int) -> Rating:
    """Return the FSRS rating of a review answer: a hint turns a recall into a hard one."""
    if outcome == Outcome.CORRECT and hints:
        return Rating.Hard
    return RATING[Outcome(outcome)]


def record_review(card: ReviewCard, outcome: str, hints: int = 0, now: datetime | None = None) -> ReviewCard:
    """Reschedule ``card`` from a review-session answer (no Answer row: scores never change)."""
    now = now or timezone.now()
    state, _log = SCHEDULER.review_card(Card.from_dict(card.card), review_rating(outcome, hints), review_datetime=now)
    card.card, card.due, card.last_outcome, card.hints_shown = state.to_dict(), state.due, outcome, 0
    card.recall_outcome = outcome  # the latest try (pages.ItemState.right_on_retry), until the next answer
    card.save(update_fields=["card", "due", "last_outcome", "hints_shown", "recall_outcome"])
    return card


@dataclass(frozen=True)
class DueItem:
    title: str
    lesson_title: str
    url: str
    due: datetime
    last_outcome: str
    reviews: int
    kind: str = ""  # one of ReviewCard.ITEM_KINDS: what the review answer's "type" names
    item_id: int = 0
    lesson_slug: str = ""

    @property
    def outcome_label(self) -> str:
        return Outcome(self.last_outcome).label


def reviewable_in(lessons) -> Q:
    """Return the condition that a card's item belongs to one of ``lessons``, is still graded, and may be asked.

    A step an author turned into prose (no calculator) asks nothing to review; its card stays. A deep dive
    waits while a follow-up its answer opened is unanswered (``follow_up_pending``).
    """
    ids = [lesson.pk for lesson in lessons]
    in_lessons = reduce(or_, (Q(**{f"{path}__in": ids}) for path in ReviewCard.LESSON_PATHS.values()))
    return in_lessons & ~Q(step__calculator="") & ~Q(follow_up_pending())


def follow_up_pending() -> Exists:
    """Return whether a card's deep dive has a follow-up its learner reached and has not answered yet.

    Asked again in review, the deep dive would show its verdicts and feedback, which the lesson page holds back
    until that follow-up is answered (pages.LessonData.waiting_for_follow_up): it joins the queue once it is.
    """
    answered = ReviewCard.objects.filter(
        learner=OuterRef("learner"), deep_dive=OuterRef("deep_dive"), first_answer__isnull=False
    )
    leading_here = Choice.objects.filter(deep_dive=OuterRef(OuterRef("deep_dive"))).values("follow_up")
    return Exists(
        ItemPractice.objects.filter(learner=OuterRef("learner"), reached=True, deep_dive__in=leading_here).exclude(
            Exists(answered)
        )
    )


def waiting_parents(pending: Iterable[tuple[str, int]], catalog: dict) -> set[tuple[str, int]]:
    """Return the item keys of the deep dives that lead to the ``pending`` follow-ups (reached, not answered):
    the rule of ``follow_up_pending`` read off what the results page has already read (no query)."""
    return {("deep_dive", parent) for key in pending if key in catalog for parent in catalog[key].parents}


def due_items(lookup: dict, lessons: list[Lesson], now: datetime | None = None) -> list[DueItem]:
    """Return the learner's items due in visible lessons, most overdue first, then the oldest card (one query).

    At most DUE_LIST_LIMIT of them.
    """
    now = now or timezone.now()
    rows = (
        ReviewCard.objects.filter(**lookup, due__lte=now)
        .filter(reviewable_in(lessons))
        .order_by(*DUE_ORDER)
        .values("due", "last_outcome", "reviews", *ITEM_ID_FIELDS)[:DUE_LIST_LIMIT]
    )
    return [
        DueItem(
            link.title,
            link.lesson.title,
            link.url,
            row["due"],
            row["last_outcome"],
            row["reviews"],
            link.kind,
            link.item_id,
            link.lesson.slug,
        )
        for row, link in item_links(rows, lessons)
    ]


@dataclass(frozen=True)
class Schedule:
    """A learner's spaced review over some lessons: how many items are due, when the next one comes back."""

    due: int = 0  # items due now
    next_due: datetime | None = None  # when the first item not due yet comes back
    scheduled: int = 0  # items with a card in all (due or not)


def schedule_of(rows: Iterable[dict], catalog: Container[tuple[str, int]], now: datetime) -> Schedule:
    """Return the schedule of the cards ``rows`` (``due`` and the item id fields) whose item is in ``catalog``.

    ``catalog``: the graded items of the lessons counted (lessons.links.item_catalog, narrowed to them). The
    results page passes the cards it read for scores; the review page reads them with ``schedule_summary``.
    """
    due, next_due, scheduled = 0, None, 0
    for row in rows:
        if item_key_of(row) not in catalog:
            continue
        scheduled += 1
        if row["due"] <= now:
            due += 1
        elif next_due is None or row["due"] < next_due:
            next_due = row["due"]
    return Schedule(due, next_due, scheduled)


def schedule_summary(lookup: dict, lessons: list[Lesson], now: datetime | None = None) -> Schedule:
    """Return the learner's schedule over the items ``due_items`` lists (visible lessons, still graded): one query."""
    visible = {lesson.pk for lesson in lessons}
    catalog = {key for key, item in item_catalog(generation_of(lessons)).items() if item.lesson_id in visible}
    rows = ReviewCard.objects.filter(**lookup).filter(reviewable_in(lessons)).order_by().values("due", *ITEM_ID_FIELDS)
    return schedule_of(rows, catalog, now or timezone.now())


def merge_cards(source_id: int, target_id: int) -> None:
    """Move a learner's cards to another learner; where both have one, keep the target's schedule.

    The kept card counts both learners' tries. Call it once the answers are merged: each card
    then names the target's first answer to its item.
    """
    targets = {card.item_key: card for card in ReviewCard.objects.filter(learner_id=target_id)}
    for card in ReviewCard.objects.filter(learner_id=source_id):
        kept = targets.get(card.item_key)
        if kept is None:
            ReviewCard.objects.filter(pk=card.pk).update(learner_id=target_id)
            continue
        # The account's card keeps its schedule and latest answer (graded on the account's numbers), and the
        # review recall given since that answer: both from the card that supplies the latest answer.
        source = kept if kept.latest_answer_id else card
        ReviewCard.objects.filter(pk=kept.pk).update(
            reviews=kept.reviews + card.reviews,
            latest_answer_id=source.latest_answer_id,
            recall_outcome=source.recall_outcome,
        )
        card.delete()
    for kind in ReviewCard.ITEM_KINDS:
        first = Answer.objects.filter(
            learner_id=target_id, is_first=True, **{f"{kind}_id": OuterRef(f"{kind}_id")}
        ).values("pk")[:1]
        ReviewCard.objects.filter(learner_id=target_id, **{f"{kind}__isnull": False}).update(
            first_answer_id=Subquery(first)
        )
