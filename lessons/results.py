"""Scores per lesson, per topic and the list of misses, computed from stored first answers."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef
from django.http import HttpRequest

from lessons.links import ITEM_FIELDS, item_links
from lessons.models import (
    ITEM_ID_FIELDS,
    Answer,
    Challenge,
    Choice,
    DeepDive,
    Lesson,
    Outcome,
    Step,
    item_key_of,
)
from lessons.pages import learner_filter
from lessons.scoring import Score, TopicScore, counts_toward_score


@dataclass
class Results:
    lessons: list[tuple[Lesson, Score]]
    topics: list[TopicScore]
    misses: list[Miss]
    total: Score = field(default_factory=Score)

    def score_for(self, lesson: Lesson) -> Score:
        return next((score for row, score in self.lessons if row.pk == lesson.pk), Score())


TopicRef = tuple[int, str, str]  # a topic as (order, slug, name): sorts as the results page lists topics


def gradable_items(lessons: list[Lesson]) -> dict[int, list[tuple[tuple[str, int], TopicRef, int, bool]]]:
    """Return, per lesson id, its graded items as (item key, topic, points, is a follow-up).

    The topic's name and order come in the same rows (a join), so topics cost no query of their own.
    """
    ids = [lesson.pk for lesson in lessons]
    items: dict[int, list] = defaultdict(list)
    is_follow_up = Exists(Choice.objects.filter(follow_up=OuterRef("pk")))
    for dd in (
        DeepDive.objects.filter(section__lesson__in=ids)
        .annotate(is_follow_up=is_follow_up)
        .values("pk", *TOPIC_FIELDS, "points", "section__lesson_id", "is_follow_up")
    ):
        items[dd["section__lesson_id"]].append(
            (("deep_dive", dd["pk"]), topic_ref(dd), dd["points"], dd["is_follow_up"])
        )
    for step in (
        Step.objects.filter(walkthrough__section__lesson__in=ids)
        .exclude(calculator="")
        .values("pk", *(f"walkthrough__{name}" for name in TOPIC_FIELDS), "points", "walkthrough__section__lesson_id")
    ):
        items[step["walkthrough__section__lesson_id"]].append(
            (("step", step["pk"]), topic_ref(step, "walkthrough__"), step["points"], False)
        )
    for ch in Challenge.objects.filter(section__lesson__in=ids).values(
        "pk", *TOPIC_FIELDS, "points", "section__lesson_id"
    ):
        items[ch["section__lesson_id"]].append((("challenge", ch["pk"]), topic_ref(ch), ch["points"], False))
    return items


TOPIC_FIELDS = ("topic", "topic__name", "topic__order")


def topic_ref(row: dict, prefix: str = "") -> TopicRef:
    """Return the (order, slug, name) of the topic a ``values()`` row names (an untopical step: last, unnamed)."""
    slug = row[f"{prefix}topic"] or ""
    return (row[f"{prefix}topic__order"] or 0, slug, row[f"{prefix}topic__name"] or slug)


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
    def outcome_label(self) -> str:
        return Outcome(self.outcome).label


def compute_results(request: HttpRequest, lessons: list[Lesson], *, with_misses: bool = True) -> Results:
    """Return the learner's results over ``lessons`` in a constant number of queries."""
    items = gradable_items(lessons)
    lookup = learner_filter(request)
    rows: list[dict] = []
    if lookup is not None:
        # One read of the first answers serves the scores and, with the items' fields, the misses.
        # Sorted here rather than by the database: unordered, it reads the first answers
        # through their partial indexes instead of every retry.
        fields = (*ITEM_FIELDS, "outcome", "max_points") if with_misses else ITEM_ID_FIELDS
        rows = list(Answer.objects.filter(**lookup, is_first=True).order_by().values(*fields, "points", "pk"))
        rows.sort(key=lambda row: row["pk"])  # oldest first
    first_points = {item_key_of(row): row["points"] for row in rows}
    total = Score()
    lesson_rows = []
    topics: dict[TopicRef, TopicScore] = {}
    for lesson in lessons:
        score = Score()
        for key, topic, points, is_follow_up in items.get(lesson.pk, []):
            answered = first_points.get(key)
            if counts_toward_score(is_follow_up, answered is not None):
                score.add(points, answered)
                topics.setdefault(topic, TopicScore(topic=topic[1], label=topic[2])).add(points, answered)
        lesson_rows.append((lesson, score))
        total.add_score(score)
    misses = misses_among(rows, lessons) if with_misses else []
    topic_list = [topics[ref] for ref in sorted(topics)]
    return Results(lesson_rows, topic_list, misses, total)


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
