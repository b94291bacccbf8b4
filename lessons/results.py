"""Scores per lesson, per topic, the list of misses and the review count, from the learner's review cards."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import F
from django.http import HttpRequest
from django.utils import timezone

from calculators.formatting import number
from lessons import review
from lessons.links import TopicRef, generation_of, item_catalog, item_links
from lessons.markup import truncate_words
from lessons.models import (
    ITEM_ID_FIELDS,
    ItemPractice,
    Lesson,
    Outcome,
    ReviewCard,
    item_key_of,
)
from lessons.pages import learner_filter
from lessons.scoring import Score, TopicScore, counts_toward_score, is_miss, right_on_retry


@dataclass
class Results:
    lessons: list[tuple[Lesson, Score]]
    topics: list[TopicScore]
    misses: list[Miss]
    total: Score = field(default_factory=Score)
    due: int = 0  # items due for spaced review (lessons.review), in these lessons
    next_due: datetime | None = None  # when the first item not due yet comes back

    def score_for(self, lesson: Lesson) -> Score:
        return next((score for row, score in self.lessons if row.pk == lesson.pk), Score())


@dataclass
class Miss:
    """A first answer that was not fully right, with where to try it again."""

    kind: str
    item_id: int
    title: str
    url: str
    lesson: Lesson
    outcome: str
    points: int
    max_points: int
    follow_up: bool = False  # it follows another question (one of whose choices leads to it): said with it
    right_on_retry: bool = False  # the latest answer is right: the miss keeps its row (the first answer scored)

    @property
    def verdict(self) -> str:
        """The miss as the results page says it: "Partly right, 5 of 10 points" (one lookup a row), and
        "Missed, 0 of 10 points · right on a retry" once the latest answer is right (as the lesson's outline says)."""
        retried = " · right on a retry" if self.right_on_retry else ""
        return f"{Outcome(self.outcome).label}, {number(self.points)} of {number(self.max_points)} points{retried}"


def reached_follow_ups(lookup: dict) -> set[tuple[str, int]]:
    """Return the item keys of the follow-ups the learner ``lookup`` reached (one query)."""
    rows = ItemPractice.objects.filter(**lookup, reached=True, deep_dive__isnull=False).order_by()
    return {("deep_dive", pk) for pk in rows.values_list("deep_dive_id", flat=True)}


def compute_results(request: HttpRequest, lessons: list[Lesson], *, with_misses: bool = True) -> Results:
    """Return the learner's results over ``lessons`` in a constant number of queries.

    The graded items come from the item catalog (content, cached); the learner's answers from one
    read of their review cards (each names the item's first answer, which scores) and one of the
    follow-ups they reached (the reach rule).
    """
    lookup = learner_filter(request)
    visible = {lesson.pk for lesson in lessons}
    catalog = {key: item for key, item in item_catalog(generation_of(lessons)).items() if item.lesson_id in visible}
    # The follow-ups the learner reached (the reach rule, services.reach), among those the catalog has.
    reached = set() if lookup is None else reached_follow_ups(lookup)
    rows: list[dict] = []
    schedule = review.Schedule()
    if lookup is not None:
        cards = ReviewCard.objects.filter(**lookup).order_by()
        # A miss got right since is said beside it: the latest try's outcome (a review recall since the latest
        # answer, else that answer's), read only for the list of misses.
        latest = {"latest_outcome": F("latest_answer__outcome"), "recalled": F("recall_outcome")} if with_misses else {}
        cards = cards.values(
            *ITEM_ID_FIELDS,
            "due",
            first_id=F("first_answer_id"),
            points=F("first_answer__points"),
            outcome=F("first_answer__outcome"),
            max_points=F("first_answer__max_points"),
            **latest,
        )
        cards = list(cards)
        rows = [row for row in cards if row["first_id"] is not None]
        rows.sort(key=lambda row: row["first_id"])  # oldest first answer first
    first_points = {item_key_of(row): (row["points"], row["max_points"]) for row in rows}
    if lookup is not None:
        # Deep dives whose follow-up is reached and unanswered wait, as the review queue leaves them out.
        waiting = review.waiting_parents(reached - first_points.keys(), catalog)
        due_cards = (row for row in cards if item_key_of(row) not in waiting) if waiting else cards
        schedule = review.schedule_of(due_cards, catalog, timezone.now())
    scores = {lesson.pk: Score() for lesson in lessons}
    topics: dict[TopicRef, TopicScore] = {}
    for key, item in catalog.items():
        answered, answered_max = first_points.get(key, (None, None))
        opened = answered is not None or key in reached
        if counts_toward_score(bool(item.leading), opened):
            scores[item.lesson_id].add(item.points, answered, answered_max)
            topic = topics.get(item.topic)
            if topic is None:
                topic = topics[item.topic] = TopicScore(topic=item.topic[1], label=item.topic[2])
            topic.add(item.points, answered, answered_max)
    total = Score()
    for score in scores.values():
        total.add_score(score)
    misses = misses_among(rows, lessons, catalog) if with_misses else []
    topic_list = [topics[ref] for ref in sorted(topics)]
    return Results(
        [(lesson, scores[lesson.pk]) for lesson in lessons], topic_list, misses, total, schedule.due, schedule.next_due
    )


def misses_among(rows: list[dict], lessons: list[Lesson], catalog: dict) -> list[Miss]:
    """Return the first answers among ``rows`` that were not fully right, in visible ``lessons``; each says
    whether its latest answer is right (pages.ItemState.right_on_retry, as the lesson's outline marks it)."""
    missed = (row for row in rows if is_miss(row["outcome"]))
    return [
        Miss(link.kind, link.item_id, truncate_words(link.title, 16), link.url, link.lesson, row["outcome"],
             row["points"], row["max_points"], link.follow_up, right_on_retry(row["outcome"], row["recalled"] or row["latest_outcome"]))
        for row, link in item_links(missed, lessons, catalog)
    ]  # fmt: skip
