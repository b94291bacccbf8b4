"""Load validated lesson files into the database, idempotently, keeping rows (and learners' answers) in place."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet

from lessons import content_cache, services
from lessons.content.validate import DEFAULT_POINTS, ContentError, LessonSpec
from lessons.models import (
    Answer,
    Challenge,
    ChecklistPoint,
    Choice,
    DeepDive,
    InterviewItem,
    Lesson,
    OpenQuestion,
    Section,
    Step,
    Track,
    Walkthrough,
)

ORDER_BUMP = 10000  # moves rows out of the way so reordering never trips a unique order


def content_dir() -> Path:
    return Path(getattr(settings, "CONTENT_DIR", settings.BASE_DIR / "content"))


@dataclass
class LoadReport:
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    lessons: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (
            f"{len(self.lessons)} lesson(s): {self.created} created, {self.updated} updated, "
            f"{self.deleted} deleted, {self.unchanged} unchanged"
        )
        if self.skipped:
            text += f"; {len(self.skipped)} file(s) unchanged since the last load were left as they are"
        return text


def upsert(report: LoadReport, model, lookup: dict, values: dict, create: dict | None = None):
    """Create or update one row, counting what changed; return the row.

    Rows whose ``order`` was moved out of the way by ORDER_BUMP and comes back to
    the same value count as unchanged.
    """
    row = model.objects.filter(**lookup).first()
    if row is None:
        report.created += 1
        return model.objects.create(**(create if create is not None else lookup), **values)
    changed = []
    for name, value in values.items():
        old = getattr(row, name)
        if name == "order" and old >= ORDER_BUMP:
            old -= ORDER_BUMP
            setattr(row, name, value)
            if old == value:
                row.save(update_fields=["order"])
                continue
        if old != value:
            changed.append(name)
            setattr(row, name, value)
    if changed:
        row.save(update_fields=sorted(set(changed) | ({"order"} if "order" in values else set())))
        report.updated += 1
    else:
        report.unchanged += 1
    return row


ANSWERS_OF = {
    Choice: "choice__in",
    DeepDive: "deep_dive__in",
    Walkthrough: "step__walkthrough__in",
    Challenge: "challenge__in",
    Step: "step__in",
    OpenQuestion: "open_question__in",
}
ITEM_MODELS = (DeepDive, Walkthrough, Challenge, OpenQuestion)


def delete_missing(report: LoadReport, queryset, *, file: str = "", prune: bool = True) -> None:
    """Delete rows the file no longer has; refuse when learners' answers would go with them."""
    if not prune and queryset.model in ANSWERS_OF:
        answered = Answer.objects.filter(**{ANSWERS_OF[queryset.model]: queryset}).count()
        if queryset.model is not Choice:  # an item drawn in a mock interview is part of that attempt
            answered += InterviewItem.objects.filter(**{ANSWERS_OF[queryset.model]: queryset}).count()
        if answered:
            names = ", ".join(sorted(str(getattr(row, "key", None) or row) for row in queryset))
            raise ContentError(
                file,
                f"{queryset.model._meta.verbose_name} {names}",
                f"is no longer in the file but learners gave {answered} answer(s) to it (mock interviews "
                "included); put it back, or load with --prune to delete it and those answers",
            )
    _count, by_model = queryset.delete()
    report.deleted += by_model.get(queryset.model._meta.label, 0)


def save_fields(row, **values) -> None:
    """Save ``values`` on ``row`` through save(), which also renders its Markdown to the stored HTML."""
    for name, value in values.items():
        setattr(row, name, value)
    row.save(update_fields=list(values))


def ask_values(ask: dict | None) -> dict:
    if not ask:
        return {"calculator": "", "inputs": {}, "output": "", "scale": 1.0, "unit": "", "tolerance": None,
                "tolerance_kind": "relative", "partial_band": None, "slips": [], "points": DEFAULT_POINTS}  # fmt: skip
    return {k: ask[k] for k in (
        "calculator", "inputs", "output", "scale", "unit", "tolerance", "tolerance_kind", "partial_band", "slips",
        "points",
    )}  # fmt: skip


@transaction.atomic
def write(tracks: list[dict], specs: list[LessonSpec], *, force: bool = False, prune: bool = False) -> LoadReport:
    """Write validated tracks and lessons; rows keep their ids so learners' answers survive edits.

    A lesson whose file has not changed since it was last loaded is left alone (``force``
    reloads it), so edits made in the admin survive restarts until the file itself changes.
    """
    report = LoadReport()
    write_all(report, tracks, specs, force, prune)
    content_cache.new_generation()  # rows written with update() send no signal (lessons/content_cache.py)
    return report


def write_all(report: LoadReport, tracks: list[dict], specs: list[LessonSpec], force: bool, prune: bool) -> None:
    Track.objects.filter(slug__in=[t["slug"] for t in tracks]).update(order=F("order") + ORDER_BUMP)
    for track in tracks:
        upsert(report, Track, {"slug": track["slug"]}, {k: track[k] for k in ("title", "summary", "order")})
    track_ids = dict(Track.objects.values_list("slug", "id"))
    digests = dict(
        Lesson.objects.filter(slug__in=[s.lesson["slug"] for s in specs]).values_list("slug", "source_digest")
    )
    changed = [spec for spec in specs if force or digests.get(spec.lesson["slug"]) != spec.digest]
    report.skipped = [spec.lesson["slug"] for spec in specs if spec not in changed]
    Lesson.objects.filter(slug__in=[s.lesson["slug"] for s in changed]).update(order=F("order") + ORDER_BUMP)
    for spec in changed:
        write_lesson(report, spec, track_ids, prune)
        Lesson.objects.filter(slug=spec.lesson["slug"]).update(source_digest=spec.digest)
        report.lessons.append(spec.lesson["slug"])


def write_lesson(report: LoadReport, spec: LessonSpec, track_ids: dict[str, int], prune: bool = False) -> None:
    values = dict(spec.lesson)
    values["track_id"] = track_ids[values.pop("track")]
    slug = values.pop("slug")
    lesson = upsert(report, Lesson, {"slug": slug}, values)
    Section.objects.filter(lesson=lesson).update(order=F("order") + ORDER_BUMP)
    for model in ITEM_MODELS:
        model.objects.filter(section__lesson=lesson).update(order=F("order") + ORDER_BUMP)
    kept: dict[type, list[int]] = {model: [] for model in (*ITEM_MODELS, Section)}
    follow_ups: list[tuple[Choice, str, bool]] = []
    for section_order, section_spec in enumerate(spec.sections, start=1):
        section = upsert(
            report,
            Section,
            {"lesson": lesson, "key": section_spec["key"]},
            {"order": section_order, **{k: section_spec[k] for k in ("layer", "title", "minutes", "body")}},
        )
        kept[Section].append(section.pk)
        for item_order, (kind, fields) in enumerate(section_spec["items"], start=1):
            if kind == "deep_dive":
                row = write_deep_dive(report, lesson, section, item_order, fields, follow_ups, spec.file, prune)
                kept[DeepDive].append(row.pk)
            elif kind == "walkthrough":
                row = write_walkthrough(report, lesson, section, item_order, fields, spec.file, prune)
                kept[Walkthrough].append(row.pk)
            elif kind == "open_question":
                row = write_open_question(report, lesson, section, item_order, fields, spec.file)
                kept[OpenQuestion].append(row.pk)
            else:
                row = write_challenge(report, lesson, section, item_order, fields)
                kept[Challenge].append(row.pk)
    deep_dive_ids = dict(DeepDive.objects.filter(section__lesson=lesson).values_list("key", "id"))
    pointed = []
    for choice, key, created in follow_ups:
        if choice.follow_up_id != deep_dive_ids.get(key):
            Choice.objects.filter(pk=choice.pk).update(follow_up_id=deep_dive_ids.get(key))
            report.updated += 0 if created else 1  # a new choice's link is part of creating it
            pointed.append(choice.pk)
    services.reach_through(pointed)  # learners who picked a choice reach the follow-up it leads to now
    for model in ITEM_MODELS:
        missing = model.objects.filter(section__lesson=lesson).exclude(pk__in=kept[model])
        delete_missing(report, missing, file=spec.file, prune=prune)
    delete_missing(report, Section.objects.filter(lesson=lesson).exclude(pk__in=kept[Section]))


def item_row(report: LoadReport, model, lesson: Lesson, section: Section, order: int, key: str, values: dict):
    """Upsert an item by its key within the lesson (it may move between sections)."""
    values = {"section_id": section.pk, "order": order, **values}
    return upsert(report, model, {"section__lesson": lesson, "key": key}, values, create={"key": key})


def match_rows(
    existing: list, texts: list[str], field: str, same_place: Callable[[object, int], bool] | None = None
) -> tuple[list, list]:
    """Pair each text in the file with a row by its ``field``: the same text first, then the most similar.

    A choice (by its text), a walkthrough step (by its title) or a checklist point (by its text): inserting,
    removing or reordering them keeps every answer on the row it was given to, and a row whose wording was
    edited keeps its answers. A text reworded past recognition (under 0.6 alike) takes the row left over in its
    place when ``same_place(row, index)`` says it is the same (a choice: the same verdict). Returns the pairing
    (None: a new row) and the rows left over.
    """
    remaining = sorted(existing, key=lambda row: row.order)
    places = list(remaining)
    matched: list = []
    for text in texts:
        row = next((r for r in remaining if getattr(r, field) == text), None)
        if row is not None:
            remaining.remove(row)
        matched.append(row)
    # A reworded text is still mostly the same words: pair the most similar texts first.
    pairs = sorted(
        (
            (difflib.SequenceMatcher(None, getattr(row, field), texts[i]).ratio(), i, row)
            for i, matched_row in enumerate(matched)
            if matched_row is None
            for row in remaining
        ),
        key=lambda pair: -pair[0],
    )
    for ratio, index, row in pairs:
        if ratio >= 0.6 and matched[index] is None and row in remaining:
            matched[index] = row
            remaining.remove(row)
    for index, place in enumerate(places[: len(matched)] if same_place else ()):
        if matched[index] is None and place in remaining and same_place(place, index):
            matched[index] = place
            remaining.remove(place)
    return matched, remaining


def write_children(
    report: LoadReport,
    rows: QuerySet,
    parent: dict,
    wanted: list[dict],
    field: str,
    *,
    file: str,
    prune: bool,
    creation_order: Callable[[list], list] | None = None,
    same_place: Callable[[object, int], bool] | None = None,
) -> list[tuple]:
    """Write one parent's rows in the file's order: a deep dive's choices, a walkthrough's steps, a checklist.

    ``rows`` are the parent's rows now, ``parent`` the field a new row takes (``{"deep_dive": row}``), ``wanted``
    the values of each row in the file, paired with the rows by ``field`` (match_rows). Rows left over are
    deleted (delete_missing: refused when learners answered them, unless ``prune``). ``creation_order``
    reorders the (number, (values, row)) pairs before any is written (a choice's key must not rank it);
    ``same_place``: see match_rows.
    Returns (row, created) for each of ``wanted``, in its order.
    """
    rows.update(order=F("order") + ORDER_BUMP)
    matched, leftover = match_rows(list(rows), [values[field] for values in wanted], field, same_place)
    delete_missing(report, rows.filter(pk__in=[row.pk for row in leftover]), file=file, prune=prune)
    numbered = list(enumerate(zip(wanted, matched, strict=True), start=1))
    written: dict[int, tuple] = {}
    for number, (values, row) in creation_order(numbered) if creation_order else numbered:
        if row is None:
            written[number] = (rows.model.objects.create(**parent, order=number, **values), True)
            report.created += 1
            continue
        if row.order != number + ORDER_BUMP or any(getattr(row, k) != v for k, v in values.items()):
            report.updated += 1
        else:
            report.unchanged += 1
        save_fields(row, order=number, **values)
        written[number] = (row, False)
    if len(written) != len(wanted):
        raise ValueError(f"creation_order dropped {len(wanted) - len(written)} of the rows to write")
    return [written[number] for number in range(1, len(wanted) + 1)]


def write_deep_dive(report, lesson, section, order, fields, follow_ups, file: str, prune: bool) -> DeepDive:
    deep_dive = item_row(
        report, DeepDive, lesson, section, order, fields["key"],
        {"topic_id": fields["topic"], **{k: fields[k] for k in ("prompt", "context", "points", "keep_choice_order", "hints")}},
    )  # fmt: skip
    choices = [{k: choice[k] for k in ("text", "verdict", "feedback")} for choice in fields["choices"]]
    order = partial(Choice.creation_order, deep_dive_key=deep_dive.key)  # keys that do not rank them
    # A choice reworded past recognition keeps its answers when it keeps its place and its verdict.
    same_place = lambda row, index: row.verdict == choices[index]["verdict"]  # noqa: E731
    rows = write_children(report, Choice.objects.filter(deep_dive=deep_dive), {"deep_dive": deep_dive}, choices,
                          "text", file=file, prune=prune, creation_order=order, same_place=same_place)  # fmt: skip
    for choice, (row, created) in zip(fields["choices"], rows, strict=True):
        follow_ups.append((row, choice["follow_up"], created))
    return deep_dive


def write_walkthrough(report, lesson, section, order, fields, file: str, prune: bool) -> Walkthrough:
    walkthrough = item_row(
        report, Walkthrough, lesson, section, order, fields["key"],
        {"topic_id": fields["topic"] or None, **{k: fields[k] for k in ("kind", "title", "intro")}},
    )  # fmt: skip
    steps = [
        {**{k: step[k] for k in ("title", "body", "hints", "explanation", "components", "connections")},
         **ask_values(step["ask"])}
        for step in fields["steps"]
    ]  # fmt: skip
    # Steps are paired with their rows by title (a step inserted before others moved every answer onto the
    # question before it when they were paired by position).
    write_children(report, Step.objects.filter(walkthrough=walkthrough), {"walkthrough": walkthrough}, steps, "title",
                   file=file, prune=prune)  # fmt: skip
    walkthrough.lay_out_diagram()  # again: deleted steps take their parts with them
    return walkthrough


def write_challenge(report, lesson, section, order, fields) -> Challenge:
    values = {"topic_id": fields["topic"], **{k: fields[k] for k in ("title", "prompt", "hints", "explanation")}}
    values.update(ask_values(fields["ask"]))
    values["ranges"] = fields["ask"]["ranges"]
    return item_row(report, Challenge, lesson, section, order, fields["key"], values)


def write_open_question(report, lesson, section, order, fields, file: str) -> OpenQuestion:
    """Upsert an open question; its checklist points keep their rows by text (answers name them by id)."""
    question = item_row(
        report,
        OpenQuestion,
        lesson,
        section,
        order,
        fields["key"],
        {"topic_id": fields["topic"], **{k: fields[k] for k in ("prompt", "points")}},
    )
    points = [{"text": text} for text in fields["checklist"]]
    # Answers name checklist points by id in a list, not by a key: a point the file dropped goes (prune or not).
    write_children(report, ChecklistPoint.objects.filter(question=question), {"question": question}, points, "text",
                   file=file, prune=True)  # fmt: skip
    return question
