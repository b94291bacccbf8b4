"""A lesson's content rows, read once per lesson version and kept in process memory.

Pages and answers then read only the learner's rows. A version is a lesson's id and
last change (``Lesson.updated_at``); every content edit moves it (``LessonQuerySet.touch``
via the admin, ``load_content`` and the content signals in ``lessons.signals``), and a
worker notices within ``Lesson.VERSION_TTL_S`` seconds.

The rows are shared by every request of the process: treat them as read-only.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import NamedTuple

from django.core.cache import cache
from django.db.models import Exists, OuterRef
from django.http import Http404

from lessons import local
from lessons.models import Challenge, Choice, Lesson, Section, Step

Version = tuple[int, float]
_LOCK = threading.Lock()
_SNAPSHOTS: dict[str, LessonContent] = {}


@dataclass(frozen=True)
class LessonContent:
    version: Version
    lesson: Lesson
    sections: list[Section]
    choices: list[Choice]  # with their deep dive, in page order
    steps: list[Step]  # with their walkthrough, in page order
    challenges: list[Challenge]
    follow_ups: dict[int, set[int]] = field(default_factory=dict)  # deep dive -> every follow-up below it

    def choices_of(self, deep_dive_ids: set[int]) -> list[Choice]:
        return [c for c in self.choices if c.deep_dive_id in deep_dive_ids]

    def deep_dive_tree(self, pk: int) -> set[int]:
        """Return ``pk`` and every follow-up it can open (what its fragment may show)."""
        return {pk, *self.follow_ups.get(pk, ())}


class ContentVersion(NamedTuple):
    pk: int
    changed: float  # Lesson.updated_at as a timestamp
    published: bool
    ranged: bool  # challenges draw numbers per learner, so no page of it is shared


def version_cache_key(slug: str) -> str:
    return f"content-version:{slug}"


def content_version(slug: str) -> ContentVersion | None:
    """Return the lesson's version, from worker memory or the shared cache (a query on a miss)."""
    key = version_cache_key(slug)

    def load():
        version = cache.get(key)
        if version is None:
            ranged = Challenge.objects.filter(section__lesson=OuterRef("pk")).exclude(ranges={})
            row = (
                Lesson.objects.filter(slug=slug)
                .annotate(ranged=Exists(ranged))
                .values_list("pk", "updated_at", "published", "ranged")
                .first()
            )
            version = ContentVersion(row[0], row[1].timestamp(), row[2], row[3]) if row else ()
            cache.set(key, version, Lesson.VERSION_TTL_S)
        return version

    return local.version(key, load) or None


def visible_content(request, slug: str) -> LessonContent:
    """Return the content of a lesson the request may see (drafts only for staff), else raise Http404."""
    key = version_cache_key(slug)
    if slug not in _SNAPSHOTS and cache.get(key) is None:
        # Nothing kept yet (a new worker, an edit): the rows read carry the version, no query for it.
        snapshot = _keep(slug, _read(slug=slug))
        lesson = snapshot.lesson
        version = ContentVersion(*snapshot.version, lesson.published, any(c.ranges for c in snapshot.challenges))
        cache.set(key, version, Lesson.VERSION_TTL_S)
        local.versions.set(key, version)
    else:
        version = content_version(slug)
        if version is None:
            raise Http404("No such lesson.")
        snapshot = _content(slug, (version.pk, version.changed))
    if not version.published:
        user = getattr(request, "user", None)
        if user is None or not (user.is_authenticated and user.is_staff):
            raise Http404("No such lesson.")
    return snapshot


def content_of(lesson: Lesson) -> LessonContent:
    """Return the content of ``lesson`` as of the version the row carries."""
    return _content(lesson.slug, (lesson.pk, lesson.updated_at.timestamp()))


def _content(slug: str, version: Version) -> LessonContent:
    snapshot = _SNAPSHOTS.get(slug)
    if snapshot is not None and snapshot.version == version:
        return snapshot
    return _keep(slug, _read(pk=version[0]))


def _keep(slug: str, snapshot: LessonContent) -> LessonContent:
    with _LOCK:
        _SNAPSHOTS[slug] = snapshot
    return snapshot


def _read(**lesson) -> LessonContent:
    """Read a lesson's content rows (``pk=`` or ``slug=``) in four queries."""
    # The lesson row comes first (with its sections): rows changed after it are read again
    # once its version moves on.
    sections = list(
        Section.objects.filter(**{f"lesson__{k}": v for k, v in lesson.items()})
        .select_related("lesson__track")
        .order_by("order")
    )
    row = sections[0].lesson if sections else Lesson.objects.select_related("track").filter(**lesson).first()
    if row is None:  # no such lesson (or deleted since its version was read)
        raise Http404("No such lesson.")
    for section in sections:
        section.lesson = row
    pk = row.pk
    choices = list(
        Choice.objects.filter(deep_dive__section__lesson=pk)
        .select_related("deep_dive")
        .order_by("deep_dive__section__order", "deep_dive__order", "order")
    )
    below: dict[int, set[int]] = {}
    for choice in choices:
        if choice.follow_up_id:
            below.setdefault(choice.deep_dive_id, set()).add(choice.follow_up_id)
    return LessonContent(
        version=(pk, row.updated_at.timestamp()),
        lesson=row,
        sections=sections,
        choices=choices,
        steps=list(
            Step.objects.filter(walkthrough__section__lesson=pk)
            .select_related("walkthrough")
            .order_by("walkthrough__section__order", "walkthrough__order", "order")
        ),
        challenges=list(Challenge.objects.filter(section__lesson=pk).order_by("section__order", "order")),
        follow_ups={dd: _reachable(dd, below) for dd in below},
    )


def _reachable(start: int, below: dict[int, set[int]]) -> set[int]:
    seen: set[int] = set()
    todo = list(below.get(start, ()))
    while todo:
        pk = todo.pop()
        if pk not in seen and pk != start:
            seen.add(pk)
            todo.extend(below.get(pk, ()))
    return seen


def forget() -> None:
    """Drop all kept content: the next request reads it again."""
    with _LOCK:
        _SNAPSHOTS.clear()
