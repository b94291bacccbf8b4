"""Scores per lesson, per topic, the list of misses and the review count, from the learner's review cards."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import F, Value
from django.http import HttpRequest
from django.utils import timezone

from calculators.formatting import number
from lessons.links import ITEM_FIELDS, item_links
from lessons.models import (
    ITEM_ID_FIELDS,
    Challenge,
    DeepDive,
    Lesson,
    OpenQuestion,
    Outcome,
    ReviewCard,
    Step,
    item_key_of,
)
from lessons.pages import learner_filter
from lessons.scoring import Score, TopicScore, counts_toward_score
from lessons.services import follow_up_flags


@dataclass
class Results:
    lessons: list[tuple[Lesson, Score]]
    topics: list[TopicScore]
    misses: list[Miss]
    total: Score = field(default_factory=Score)
    due: int = 0  # items due for spaced review (lessons.review), in these lessons

    def score_for(self, lesson: Lesson) -> Score:
        return next((score for row, score in self.lessons if row.pk == lesson.pk), Score())


TopicRef = tuple[int, str, str]  # a topic as (order, slug, name): sorts as the results page lists topics


def gradable_items(
    lessons: list[Lesson], lookup: dict | None = None
) -> dict[int, list[tuple[tuple[str, int], TopicRef, int, bool, bool]]]:
    """Return, per lesson id, its graded items as (item key, topic, points, is a follow-up, reached).

    A follow-up is reached once an answer of the learner ``lookup`` selects (see ``learner_filter``)
    picked a choice leading to it (the reach rule, ``services.follow_up_flags``).
    One query: the four kinds of item read as one UNION ALL (a query each cost more to build
    than to run); the topic's name and order come in the same rows (a join).
    """
    ids = [lesson.pk for lesson in lessons]

    def rows(
        items, kind: str, topic: str = "topic", lesson: str = "section__lesson_id", is_follow_up=None, reached=None
    ):
        return (
            items.annotate(
                item_kind=Value(kind),
                item_topic=F(topic),
                item_topic_name=F(f"{topic}__name"),
                item_topic_order=F(f"{topic}__order"),
                item_lesson=F(lesson),
                follow_up_of=is_follow_up or Value(False),
                follow_up_reached=reached or Value(False),
            )
            .values_list(
                "item_kind",
                "pk",
                "item_topic",
                "item_topic_name",
                "item_topic_order",
                "points",
                "item_lesson",
                "follow_up_of",
                "follow_up_reached",
            )
            .order_by()
        )

    deep_dives = rows(
        DeepDive.objects.filter(section__lesson__in=ids),
        "deep_dive",
        **follow_up_flags(lookup),
    )
    steps = rows(
        Step.objects.filter(walkthrough__section__lesson__in=ids).exclude(calculator=""),
        "step",
        topic="walkthrough__topic",
        lesson="walkthrough__section__lesson_id",
    )
    challenges = rows(Challenge.objects.filter(section__lesson__in=ids), "challenge")
    questions = rows(OpenQuestion.objects.filter(section__lesson__in=ids), "open_question")
    items: dict[int, list] = defaultdict(list)
    for kind, pk, slug, name, order, points, lesson_id, is_follow_up, reached in deep_dives.union(
        steps, challenges, questions, all=True
    ):
        topic = (order or 0, slug or "", name or slug or "")  # an untopical step: first, unnamed
        items[lesson_id].append(((kind, pk), topic, points, bool(is_follow_up), bool(reached)))
    return items


@dataclass
class Miss:
    """A first answer that was not fully right, with where to try it again."""

    kind: str
    item_id: int
    title: str
    url: str
    outcome: str
    points: int
    max_points: int

    @property
    def verdict(self) -> str:
        """The miss as the results page says it: "Partly right, 5 of 10 points" (one lookup a row)."""
        return f"{Outcome(self.outcome).label}, {number(self.points)} of {number(self.max_points)} points"


def compute_results(request: HttpRequest, lessons: list[Lesson], *, with_misses: bool = True) -> Results:
    """Return the learner's results over ``lessons`` in a constant number of queries."""
    lookup = learner_filter(request)
    items = gradable_items(lessons, lookup)
    rows: list[dict] = []
    due = 0
    if lookup is not None:
        # One read of the learner's review cards serves the scores (each card names the item's
        # first answer), the count of items due for review and, with the items' fields, the misses.
        fields = (*ITEM_FIELDS, "due") if with_misses else (*ITEM_ID_FIELDS, "due")
        cards = ReviewCard.objects.filter(**lookup).order_by()
        cards = cards.values(
            *fields,
            first_id=F("first_answer_id"),
            points=F("first_answer__points"),
            outcome=F("first_answer__outcome"),
            max_points=F("first_answer__max_points"),
        )
        now = timezone.now()
        gradable = {key for lesson_items in items.values() for key, *_rest in lesson_items}
        for row in cards:
            if row["due"] <= now and item_key_of(row) in gradable:
                due += 1
            if row["first_id"] is not None:
                rows.append(row)
        rows.sort(key=lambda row: row["first_id"])  # oldest first answer first
    first_points = {item_key_of(row): row["points"] for row in rows}
    total = Score()
    lesson_rows = []
    topics: dict[TopicRef, TopicScore] = {}
    for lesson in lessons:
        score = Score()
        for key, topic, points, is_follow_up, reached in items.get(lesson.pk, []):
            answered = first_points.get(key)
            if counts_toward_score(is_follow_up, reached or answered is not None):
                score.add(points, answered)
                topics.setdefault(topic, TopicScore(topic=topic[1], label=topic[2])).add(points, answered)
        lesson_rows.append((lesson, score))
        total.add_score(score)
    misses = misses_among(rows, lessons) if with_misses else []
    topic_list = [topics[ref] for ref in sorted(topics)]
    return Results(lesson_rows, topic_list, misses, total, due)


def misses_among(rows: list[dict], lessons: list[Lesson]) -> list[Miss]:
    """Return the first answers among ``rows`` that were not fully right, in visible ``lessons``."""
    missed = (row for row in rows if row["outcome"] != Outcome.CORRECT)
    return [
        Miss(link.kind, link.item_id, truncate_words(link.title, 16), link.url, row["outcome"], row["points"],
             row["max_points"])
        for row, link in item_links(missed, lessons)
    ]  # fmt: skip


def truncate_words(text: str, count: int) -> str:
    words = text.split()
    return " ".join(words[:count]) + ("…" if len(words) > count else "")
