"""Scores per lesson, per topic and the list of misses, computed from stored first answers."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from django.db.models import Exists, OuterRef
from django.http import HttpRequest

from lessons.links import ITEM_FIELDS, item_link
from lessons.models import Answer, Challenge, Choice, DeepDive, Lesson, Outcome, Step, Topic
from lessons.pages import learner_filter


@dataclass
class Score:
    points: int = 0
    max_points: int = 0
    answered: int = 0
    total: int = 0

    @property
    def percent(self) -> int:
        return round(100 * self.points / self.max_points) if self.max_points else 0

    @property
    def progress(self) -> int:
        return round(100 * self.answered / self.total) if self.total else 0


@dataclass
class TopicScore(Score):
    topic: str = ""

    @property
    def label(self) -> str:
        return Topic(self.topic).label if self.topic in Topic.values else self.topic

    @property
    def mastery(self) -> float:
        """Points earned over points available among answered items, 0 to 1."""
        return self.points / self.answered_max if self.answered_max else 0.0

    answered_max: int = 0


@dataclass
class Results:
    lessons: list[tuple[Lesson, Score]]
    topics: list[TopicScore]
    misses: list[Miss]
    total: Score = field(default_factory=Score)

    def score_for(self, lesson: Lesson) -> Score:
        return next((score for row, score in self.lessons if row.pk == lesson.pk), Score())


def gradable_items(lessons: list[Lesson]) -> dict[int, list[tuple[str, int, str, int]]]:
    """Return, per lesson id, its graded items as (kind, id, topic, points); follow-ups excluded."""
    ids = [lesson.pk for lesson in lessons]
    items: dict[int, list] = defaultdict(list)
    is_follow_up = Exists(Choice.objects.filter(follow_up=OuterRef("pk")))
    for dd in (
        DeepDive.objects.filter(section__lesson__in=ids)
        .annotate(is_follow_up=is_follow_up)
        .values("pk", "topic", "points", "section__lesson_id", "is_follow_up")
    ):
        if not dd["is_follow_up"]:
            items[dd["section__lesson_id"]].append(("dd", dd["pk"], dd["topic"], dd["points"]))
    for step in (
        Step.objects.filter(walkthrough__section__lesson__in=ids)
        .exclude(calculator="")
        .values("pk", "walkthrough__topic", "points", "walkthrough__section__lesson_id")
    ):
        items[step["walkthrough__section__lesson_id"]].append(
            ("step", step["pk"], step["walkthrough__topic"], step["points"])
        )
    for ch in Challenge.objects.filter(section__lesson__in=ids).values("pk", "topic", "points", "section__lesson_id"):
        items[ch["section__lesson_id"]].append(("ch", ch["pk"], ch["topic"], ch["points"]))
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
    def outcome_label(self) -> str:
        return Outcome(self.outcome).label


def compute_results(request: HttpRequest, lessons: list[Lesson], *, with_misses: bool = True) -> Results:
    """Return the learner's results over ``lessons`` in a constant number of queries."""
    items = gradable_items(lessons)
    lookup = learner_filter(request)
    rows: list[dict] = []
    if lookup is not None:
        rows = list(
            Answer.objects.filter(**lookup, is_first=True)
            .order_by("created_at")
            .values(
                "deep_dive_id", "step_id", "challenge_id", "points", "max_points", "outcome",
                "deep_dive__topic", "deep_dive__section__lesson_id",
            )
        )  # fmt: skip
    first = {}
    for row in rows:
        kind, pk = ("dd", row["deep_dive_id"]) if row["deep_dive_id"] else (
            ("step", row["step_id"]) if row["step_id"] else ("ch", row["challenge_id"])
        )  # fmt: skip
        first[kind, pk] = row

    total = Score()
    lesson_rows = []
    topics: dict[str, TopicScore] = {}
    for lesson in lessons:
        score = Score()
        counted = set()
        for kind, pk, topic, points in items.get(lesson.pk, []):
            counted.add((kind, pk))
            topic_score = topics.setdefault(topic, TopicScore(topic=topic))
            score.total += 1
            score.max_points += points
            topic_score.total += 1
            topic_score.max_points += points
            answer = first.get((kind, pk))
            if answer is not None:
                score.answered += 1
                score.points += answer["points"]
                topic_score.answered += 1
                topic_score.points += answer["points"]
                topic_score.answered_max += answer["max_points"]
        # Answered follow-ups add to what the lesson offered.
        for (kind, pk), answer in first.items():
            if kind == "dd" and (kind, pk) not in counted and answer["deep_dive__section__lesson_id"] == lesson.pk:
                topic = answer["deep_dive__topic"]
                topic_score = topics.setdefault(topic, TopicScore(topic=topic))
                for s in (score, topic_score):
                    s.total += 1
                    s.answered += 1
                    s.points += answer["points"]
                    s.max_points += answer["max_points"]
                topic_score.answered_max += answer["max_points"]
        lesson_rows.append((lesson, score))
        for name in ("points", "max_points", "answered", "total"):
            setattr(total, name, getattr(total, name) + getattr(score, name))
    misses = load_misses(lookup, lessons) if with_misses and lookup is not None else []
    topic_list = sorted(topics.values(), key=lambda t: Topic.values.index(t.topic) if t.topic in Topic.values else 99)
    return Results(lesson_rows, topic_list, misses, total)


def load_misses(lookup: dict, lessons: list[Lesson]) -> list[Miss]:
    """Return the learner's missed first answers in the given lessons, oldest first (one query)."""
    visible = {lesson.pk: lesson for lesson in lessons}
    rows = (
        Answer.objects.filter(**lookup, is_first=True)
        .exclude(outcome=Outcome.CORRECT)
        .order_by("created_at")
        .values("outcome", "points", "max_points", *ITEM_FIELDS)
    )
    misses = []
    for row in rows:
        link = item_link(row, visible)
        if link is not None:
            title = truncate_words(link.title, 16)
            misses.append(
                Miss(link.kind, link.item_id, title, link.url, row["outcome"], row["points"], row["max_points"])
            )
    return misses


def truncate_words(text: str, count: int) -> str:
    words = text.split()
    return " ".join(words[:count]) + ("…" if len(words) > count else "")
