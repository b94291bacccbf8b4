"""The one cache: authored content, read from the database once per content generation.

Every learner's page reads the same lessons, sections and items, and staff change them rarely (the
admin, ``load_content``, ``render_markup``). So what pages build from content alone is read once per
*generation* and kept in Django's cache (Redis in production, each process's memory otherwise), under
a key that names the generation:

- ``ContentGeneration`` holds a random token. Saving or deleting any content row replaces it, in the
  same transaction (the signal receivers connected by ``connect_signals``); ``load_content`` and
  ``render_markup``, which also write with ``update()``, replace it when they finish.
- Every read asks the database for the token first (one small query), then the cache for the content
  under it. An edit therefore shows on the very next request in every worker and every instance, and
  the entries of an old generation are never read again (they expire after ``TIMEOUT``).
- Only content is kept here, the lessons themselves with it (``visible_lessons``: a lesson's title or
  its being published is content too). What a learner did (answers, review cards, hints, draws, their
  place) is read from the database on every request.
- A request asks for the token once: each lesson ``visible_lessons`` returns carries the generation it
  was read in (``content_token``), and the reads that follow pass it to ``cached`` (``token=``), so the
  lesson and its sections and items come from the same generation.
- Without the cache (Redis down) a read builds the content from the database, as on a miss.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

import django
from django.core.cache import cache
from django.db.models.signals import post_delete, post_save

from lessons.models import (
    Challenge,
    ChecklistPoint,
    Choice,
    ContentGeneration,
    DeepDive,
    Lesson,
    OpenQuestion,
    Section,
    Step,
    Topic,
    Track,
    Walkthrough,
)

# The models whose rows are content: a save or a delete of any of them starts a new generation.
CONTENT_MODELS = (Topic, Track, Lesson, Section, DeepDive, Choice, Walkthrough, Step, Challenge, OpenQuestion,
                  ChecklistPoint)  # fmt: skip
TIMEOUT = 24 * 3600  # seconds an entry is kept; a new generation makes it unreachable long before that

# The packages whose code builds or shapes what is cached: the rows' models, the builders, the URLs they hold.
APP_PACKAGES = tuple(Path(__file__).resolve().parent.parent / name for name in ("lessons", "calculators", "interview"))


def source_digest(packages: Iterable[Path]) -> str:
    """Return a digest of every Python file under ``packages`` (names and contents): it changes with any release."""
    digest = hashlib.sha256()
    for package in packages:
        for path in sorted(package.rglob("*.py")):
            digest.update(str(path.relative_to(package.parent)).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


# Entries hold pickled model rows (models.ContentRow) and what the app's code built from them: a release (a
# field added or renamed, a builder or a URL changed, another Django) never reads entries an older one made.
SCHEMA = hashlib.sha256(f"{django.__version__}:{source_digest(APP_PACKAGES)}".encode()).hexdigest()[:12]

T = TypeVar("T")


def current_token() -> str:
    """Return the current generation's token (one query); "none" before any content was ever saved."""
    return ContentGeneration.objects.order_by("pk").values_list("token", flat=True).first() or "none"


def new_generation(**_signal_kwargs) -> None:
    """Start a new generation: every cached entry of the old one is stale from now on."""
    token = uuid.uuid4().hex
    if not ContentGeneration.objects.update(token=token):
        ContentGeneration.objects.create(token=token)


SIGNALS = ((post_save, "save"), (post_delete, "delete"))


def connect_signals(connect: bool = True) -> None:
    """Start a new generation whenever a content row is saved or deleted (LessonsConfig.ready).

    ``connect=False`` undoes it (a test that checks a writer starts its own generation).
    """
    for model in CONTENT_MODELS:
        for signal, what in SIGNALS:
            uid = f"content-generation-{what}-{model.__name__}"
            if connect:
                signal.connect(new_generation, sender=model, dispatch_uid=uid)
            else:
                signal.disconnect(sender=model, dispatch_uid=uid)


def cached(name: str, build: Callable[[], T], token: str | None = None) -> T:
    """Return what ``build()`` makes of the current content, from the cache when this generation has it.

    ``name`` tells the entries apart ("lesson-12", "graded-items"). Each call returns its own copy (the
    cache unpickles it), so a caller may annotate the rows it gets with one learner's state. ``token``:
    the generation already read in this request (a lesson's ``content_token``), else it is read now.
    """
    key = f"content:{SCHEMA}:{token or current_token()}:{name}"
    value = cache.get(key)
    if value is None:
        value = build()
        cache.set(key, value, TIMEOUT)
    return value


def visible_lessons(user) -> list[Lesson]:
    """Return the lessons ``user`` may see (drafts for staff only, as a preview), in order, with their track.

    From the cache, like the rest of the content: a page lists or shows lessons without a query of its
    own. Each lesson carries ``content_token``, the generation it was read in (see ``cached``).
    """
    token = current_token()
    lessons = cached("lessons", lambda: list(Lesson.objects.select_related("track")), token)
    staff = user.is_authenticated and user.is_staff
    visible = [lesson for lesson in lessons if lesson.published or staff]
    for lesson in visible:
        lesson.content_token = token
    return visible
