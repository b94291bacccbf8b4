"""Any saved or deleted content row marks its lesson as changed (pages and kept content are rebuilt).

The admin and ``load_content`` touch the lessons they change themselves; these signals
cover every other path (the shell, data migrations, tests), so nothing shows stale content.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager

from django.db import models
from django.db.models.signals import post_delete, post_save

from lessons.models import Challenge, Choice, DeepDive, Lesson, Section, Step, Track, Walkthrough

_paused = threading.local()


def lessons_of(obj) -> models.QuerySet:
    """Return the lessons a content row belongs to."""
    if isinstance(obj, Track):
        return Lesson.objects.filter(track=obj)
    if isinstance(obj, Lesson):
        return Lesson.objects.filter(pk=obj.pk)
    if isinstance(obj, Section):
        return Lesson.objects.filter(pk=obj.lesson_id)
    if isinstance(obj, Choice):
        return Lesson.objects.filter(sections__deepdives=obj.deep_dive_id)
    if isinstance(obj, Step):
        return Lesson.objects.filter(sections__walkthroughs=obj.walkthrough_id)
    return Lesson.objects.filter(sections=obj.section_id)


@contextmanager
def paused():
    """Leave the touching to the caller (a bulk write that touches each lesson once at the end)."""
    before = getattr(_paused, "on", False)
    _paused.on = True
    try:
        yield
    finally:
        _paused.on = before


def content_changed(sender, instance, **kwargs) -> None:
    if getattr(_paused, "on", False) or kwargs.get("raw"):
        return
    if isinstance(instance, Lesson):
        Lesson.forget_versions([instance.slug])  # saving it moved updated_at already
        return
    lessons_of(instance).touch()


def connect() -> None:
    for model in (Track, Lesson, Section, DeepDive, Choice, Walkthrough, Step, Challenge):
        post_save.connect(content_changed, sender=model, dispatch_uid=f"content-changed-save-{model.__name__}")
        post_delete.connect(content_changed, sender=model, dispatch_uid=f"content-changed-delete-{model.__name__}")
