"""Spaced review: every answer reschedules its item for the learner with FSRS (py-fsrs).

A miss comes back in ten minutes (the first learning step, or the relearning step); a first
right answer in four hours (the second learning step), then, once learnt, after days and then
weeks as FSRS's stability grows. The pages say so in those words. A review session (the review page, the API) quizzes each due item afresh (see ``present``): its
outcome, less any hints taken, sets the FSRS rating (``review_rating``); it never writes an
Answer, so lesson scores never change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import reduce
from operator import or_

from django.db import IntegrityError, transaction
from django.db.models import Count, F, Min, OuterRef, Q, Subquery
from django.utils import timezone
from fsrs import Card, Rating, Scheduler

from lessons.links import item_links
from lessons.models import ITEM_ID_FIELDS, Answer, Lesson, Outcome, ReviewCard

SCHEDULER = Scheduler(
    learning_steps=(timedelta(minutes=10), timedelta(hours=4)),
    relearning_steps=(timedelta(minutes=10),),
    enable_fuzzing=False,
)
RATING = {Outcome.CORRECT: Rating.Good, Outcome.PARTIAL: Rating.Hard, Outcome.INCORRECT: Rating.Again}
DUE_LIST_LIMIT = 50  # due items the review page ("Also due") and the review API list at most
DUE_ORDER = ("due", "pk")  # most overdue first; of equals, the oldest card


def schedule(answer: Answer, now: datetime | None = None, card: ReviewCard | None = None) -> ReviewCard:
    """Reschedule the answered item for its learner (two queries; one when its ``card`` was read already)."""
    now = now or timezone.now()
    fields = answer.item_fields
    row = card if card is not None else ReviewCard.objects.filter(learner_id=answer.learner_id, **fields).first()
    state = Card.from_dict(row.card) if row else Card(due=now)
    state, _log = SCHEDULER.review_card(state, RATING[answer.outcome], review_datetime=now)
    values = {"card": state.to_dict(), "due": state.due, "last_outcome": answer.outcome, "latest_answer": answer}
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
    card.save(update_fields=["card", "due", "last_outcome", "hints_shown"])
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
    """Return the condition that a card's item belongs to one of ``lessons`` and is still graded.

    A step an author turned into prose (no calculator) asks nothing to review; its card stays.
    """
    ids = [lesson.pk for lesson in lessons]
    in_lessons = reduce(or_, (Q(**{f"{path}__in": ids}) for path in ReviewCard.LESSON_PATHS.values()))
    return in_lessons & ~Q(step__calculator="")


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


def schedule_summary(lookup: dict, lessons: list[Lesson], now: datetime | None = None) -> tuple[datetime | None, int]:
    """Return when the learner's next item not due yet comes back, and how many items are scheduled in all.

    Counted over the items ``due_items`` lists (visible lessons, still graded), in one aggregate query.
    """
    now = now or timezone.now()
    row = (
        ReviewCard.objects.filter(**lookup)
        .filter(reviewable_in(lessons))
        .aggregate(next_due=Min("due", filter=Q(due__gt=now)), scheduled=Count("pk"))
    )
    return row["next_due"], row["scheduled"]


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
        # The account's card keeps its schedule and latest answer (graded on the account's numbers).
        latest = kept.latest_answer_id or card.latest_answer_id
        ReviewCard.objects.filter(pk=kept.pk).update(reviews=kept.reviews + card.reviews, latest_answer_id=latest)
        card.delete()
    for kind in ReviewCard.ITEM_KINDS:
        first = Answer.objects.filter(
            learner_id=target_id, is_first=True, **{f"{kind}_id": OuterRef(f"{kind}_id")}
        ).values("pk")[:1]
        ReviewCard.objects.filter(learner_id=target_id, **{f"{kind}__isnull": False}).update(
            first_answer_id=Subquery(first)
        )
