"""Item analysis for instructors: how learners' first answers fall on each item of a lesson.

Every figure is aggregated by the database in a fixed number of queries, whatever the number of
answers: the admin page and its CSV (lessons.admin.ItemAnalysisView) read it from here.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from django.db import connection
from django.db.models import Count, Q

from lessons.markup import plain_text
from lessons.models import Answer, Challenge, ChecklistPoint, Choice, DeepDive, Lesson, OpenQuestion, Outcome, Step

COMMON_WRONG_VALUES = 3  # per numeric item


@dataclass
class ChoiceRow:
    """A deep dive's choice (picked: learners who chose it) or an open question's checklist point (ticked)."""

    pk: int
    text: str
    verdict: str  # a choice's verdict, or "checklist point"
    picked: int = 0
    share: float = 0.0

    @property
    def point(self) -> bool:
        return self.verdict == CHECKLIST_POINT


CHECKLIST_POINT = "checklist point"


@dataclass
class ItemRow:
    """One graded item of a lesson, in lesson order, with how first answers fell on it."""

    kind: str  # "deep_dive" | "step" | "challenge" | "open_question"
    pk: int
    title: str
    answered: int = 0  # learners with a first answer: how far learners get through the lesson
    stopped_here: int = 0  # learners who answered the item before this one but not this one
    correct: int = 0
    discrimination: float | None = None  # point-biserial: right on this item vs score on the rest
    choices: list[ChoiceRow] = field(default_factory=list)  # a deep dive's choices, an open question's checklist
    wrong_values: list[tuple[float, int]] = field(default_factory=list)  # numeric: (value, learners), most common

    @property
    def share_correct(self) -> float:
        return self.correct / self.answered if self.answered else 0.0

    @property
    def everyone_right(self) -> bool:
        return self.answered > 0 and self.correct == self.answered


def items_in_order(lesson: Lesson) -> list[ItemRow]:
    """Return the lesson's graded items in reading order, with deep dives' choices and checklists (five queries)."""
    rows: list[tuple[tuple, ItemRow]] = []
    choices: dict[int, list[ChoiceRow]] = defaultdict(list)
    for choice in Choice.objects.filter(deep_dive__section__lesson=lesson).order_by("deep_dive_id", "order"):
        choices[choice.deep_dive_id].append(ChoiceRow(choice.pk, choice.text, choice.verdict))
    for dd in DeepDive.objects.filter(section__lesson=lesson).select_related("section"):
        row = ItemRow("deep_dive", dd.pk, f"{dd.key}: {plain_text(dd.prompt_html)}", choices=choices[dd.pk])
        rows.append(((dd.section.order, dd.order, 0), row))
    for step in (
        Step.objects.filter(walkthrough__section__lesson=lesson)
        .exclude(calculator="")
        .select_related("walkthrough__section")
    ):
        wt = step.walkthrough
        rows.append((
            (wt.section.order, wt.order, step.order),
            ItemRow("step", step.pk, f"{wt.key}, step {step.order}: {step.title}"),
        ))  # fmt: skip
    for ch in Challenge.objects.filter(section__lesson=lesson).select_related("section"):
        rows.append(((ch.section.order, ch.order, 0), ItemRow("challenge", ch.pk, f"{ch.key}: {ch.title}")))
    points: dict[int, list[ChoiceRow]] = defaultdict(list)
    for point in ChecklistPoint.objects.filter(question__section__lesson=lesson).order_by("question_id", "order"):
        points[point.question_id].append(ChoiceRow(point.pk, point.text, CHECKLIST_POINT))
    for oq in OpenQuestion.objects.filter(section__lesson=lesson).select_related("section"):
        row = ItemRow("open_question", oq.pk, f"{oq.key}: {plain_text(oq.prompt_html)}", choices=points[oq.pk])
        rows.append(((oq.section.order, oq.order, 0), row))
    return [row for _place, row in sorted(rows, key=lambda pair: pair[0])]


def analyse(lesson: Lesson) -> list[ItemRow]:
    """Return the lesson's items with first-answer counts, choice splits, discrimination and wrong values.

    Thirteen queries, whatever the number of items, answers and learners.
    """
    items = items_in_order(lesson)
    by_key = {(item.kind, item.pk): item for item in items}
    kinds = ("deep_dive", "step", "challenge", "open_question")
    ids = {kind: [i.pk for i in items if i.kind == kind] for kind in kinds}
    firsts = Answer.objects.filter(is_first=True).order_by()
    count = {"n": Count("pk"), "right": Count("pk", filter=Q(outcome=Outcome.CORRECT))}
    # Each kind read through its own foreign key's index; deep dives by choice, summed per item here.
    picked: dict[int | None, int] = {}
    for row in firsts.filter(deep_dive_id__in=ids["deep_dive"]).values("deep_dive_id", "choice_id").annotate(**count):
        item = by_key[("deep_dive", row["deep_dive_id"])]
        item.answered += row["n"]
        item.correct += row["right"]
        picked[row["choice_id"]] = row["n"]
    for kind in ("step", "challenge", "open_question"):
        for row in firsts.filter(**{f"{kind}_id__in": ids[kind]}).values(f"{kind}_id").annotate(**count):
            item = by_key[(kind, row[f"{kind}_id"])]
            item.answered, item.correct = row["n"], row["right"]
    ticked = checklist_ticks(ids["open_question"])
    for item in items:
        for choice in item.choices:
            choice.picked = (ticked if choice.point else picked).get(choice.pk, 0)
            choice.share = choice.picked / item.answered if item.answered else 0.0
    for (kind, pk), stats in discrimination(ids).items():
        by_key[(kind, pk)].discrimination = stats
    for (kind, pk), values in common_wrong_values(ids).items():
        by_key[(kind, pk)].wrong_values = values
    for previous, item in zip(items, items[1:]):
        item.stopped_here = max(previous.answered - item.answered, 0)
    return items


# SQL naming the item of an answer row ``a`` (see AboutItem): its kind and its id.
KIND_SQL = (
    "CASE WHEN a.deep_dive_id IS NOT NULL THEN 'deep_dive' WHEN a.step_id IS NOT NULL THEN 'step' "
    "WHEN a.challenge_id IS NOT NULL THEN 'challenge' ELSE 'open_question' END"
)
ID_SQL = "COALESCE(a.deep_dive_id, a.step_id, a.challenge_id, a.open_question_id)"


def _items_where(ids: dict[str, list[int]]) -> tuple[str, list[int]]:
    """Return the SQL condition selecting answers about ``ids``' items, and its parameters."""
    conditions, params = [], []
    for kind, pks in ids.items():
        if pks:
            conditions.append(f"a.{kind}_id IN ({', '.join(['%s'] * len(pks))})")
            params.extend(pks)
    return " OR ".join(conditions) or "1 = 0", params


def discrimination(ids: dict[str, list[int]]) -> dict[tuple[str, int], float | None]:
    """Return each item's point-biserial correlation between being right on it and the rest of the score.

    A learner's rest score is the share of points earned on their other first answers (every
    lesson); learners with no other answer are left out. Sums come from the database (one query);
    the correlation is Pearson's on them: r = (nΣxy − ΣxΣy) / √((nΣx² − (Σx)²)(nΣy² − (Σy)²)).
    """
    where, params = _items_where(ids)
    table = Answer._meta.db_table
    sql = f"""
        WITH totals AS (
            SELECT learner_id, SUM(points) AS earned, SUM(max_points) AS possible
            FROM {table} WHERE is_first = %s GROUP BY learner_id
        ), firsts AS (
            SELECT {KIND_SQL} AS kind, {ID_SQL} AS item_id,
                   CASE WHEN a.outcome = 'correct' THEN 1.0 ELSE 0.0 END AS x,
                   (t.earned - a.points) * 1.0 / (t.possible - a.max_points) AS y
            FROM {table} a JOIN totals t ON t.learner_id = a.learner_id
            WHERE a.is_first = %s AND t.possible > a.max_points AND ({where})
        )
        SELECT kind, item_id, COUNT(*), SUM(x), SUM(y), SUM(y * y), SUM(x * y) FROM firsts GROUP BY kind, item_id
    """  # noqa: S608 (names are the model's; values are parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, [True, True, *params])
        rows = cursor.fetchall()
    found = {}
    for kind, pk, *sums in rows:
        n, sx, sy, syy, sxy = (float(v) for v in sums)  # PostgreSQL sums numerics as Decimal
        spread = (n * sx - sx * sx) * (n * syy - sy * sy)
        found[(kind, pk)] = (n * sxy - sx * sy) / math.sqrt(spread) if n > 1 and spread > 1e-12 else None
    return found


def common_wrong_values(ids: dict[str, list[int]]) -> dict[tuple[str, int], list[tuple[float, int]]]:
    """Return, per numeric item, its most common wrong first answers with how many learners gave each (one query)."""
    numeric = {"step": ids.get("step", []), "challenge": ids.get("challenge", [])}
    where, params = _items_where(numeric)
    table = Answer._meta.db_table
    sql = f"""
        SELECT kind, item_id, value, n FROM (
            SELECT kind, item_id, value, n,
                   ROW_NUMBER() OVER (PARTITION BY kind, item_id ORDER BY n DESC, value) AS place
            FROM (
                SELECT {KIND_SQL} AS kind, {ID_SQL} AS item_id, a.value, COUNT(*) AS n
                FROM {table} a
                WHERE a.is_first = %s AND a.outcome <> 'correct' AND a.value IS NOT NULL AND ({where})
                GROUP BY 1, 2, a.value
            ) counted
        ) ranked
        WHERE place <= %s ORDER BY kind, item_id, place
    """  # noqa: S608 (names are the model's; values are parameters)
    found: dict[tuple[str, int], list[tuple[float, int]]] = defaultdict(list)
    with connection.cursor() as cursor:
        cursor.execute(sql, [True, *params, COMMON_WRONG_VALUES])
        for kind, pk, value, n in cursor.fetchall():
            found[(kind, pk)].append((float(value), n))
    return found


def checklist_ticks(question_ids: list[int]) -> dict[int, int]:
    """Return, per checklist point of these open questions, how many first answers ticked it (one query).

    An answer keeps its ticked points as a JSON list of ids; the database unpacks the lists and counts.
    """
    where, params = _items_where({"open_question": question_ids})
    table = Answer._meta.db_table
    if connection.vendor == "postgresql":
        elements = "CROSS JOIN LATERAL jsonb_array_elements_text(a.ticked) AS point(value)"
    else:  # SQLite
        elements = "CROSS JOIN json_each(a.ticked) AS point"
    sql = f"""
        SELECT CAST(point.value AS INTEGER), COUNT(*) FROM {table} a {elements}
        WHERE a.is_first = %s AND ({where})
        GROUP BY 1
    """  # noqa: S608 (names are the model's; values are parameters)
    with connection.cursor() as cursor:
        cursor.execute(sql, [True, *params])
        return dict(cursor.fetchall())
