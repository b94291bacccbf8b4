"""Where an answered item lives: its title and the URL that opens it, from one row of values()."""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.html import strip_tags

from lessons.markup import render_inline
from lessons.models import Challenge, DeepDive, Lesson, Walkthrough, item_key_of

# The fields item_link() reads; add them to a values() query over Answer or ReviewCard.
ITEM_FIELDS = (
    "deep_dive_id", "deep_dive__prompt", "deep_dive__key", "deep_dive__section__lesson_id",
    "step_id", "step__title", "step__order", "step__walkthrough__key", "step__walkthrough__section__lesson_id",
    "challenge_id", "challenge__title", "challenge__key", "challenge__section__lesson_id",
)  # fmt: skip


@dataclass(frozen=True)
class ItemLink:
    kind: str  # "deep_dive" | "step" | "challenge"
    item_id: int
    title: str  # plain text
    url: str
    lesson: Lesson


def item_link(row: dict, visible: dict[int, Lesson]) -> ItemLink | None:
    """Return the item's link, or None when its lesson is not among ``visible``."""
    kind, pk = item_key_of(row)
    if kind == "deep_dive":
        lesson = visible.get(row["deep_dive__section__lesson_id"])
        title = strip_tags(render_inline(row["deep_dive__prompt"]))
        anchor = "#" + DeepDive.anchor_for(row["deep_dive__key"])
    elif kind == "step":
        lesson = visible.get(row["step__walkthrough__section__lesson_id"])
        title = row["step__title"]
        key = row["step__walkthrough__key"]
        anchor = f"walkthroughs/{key}/{row['step__order']}/#{Walkthrough.anchor_for(key)}"
    else:
        lesson = visible.get(row["challenge__section__lesson_id"])
        title = row["challenge__title"]
        anchor = "#" + Challenge.anchor_for(row["challenge__key"])
    if lesson is None:
        return None
    return ItemLink(kind, pk, title, lesson.get_absolute_url() + anchor, lesson)
