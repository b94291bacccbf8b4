"""Where an answered item lives: its title and the URL that opens it (its layer's page), from one row of values()."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from django.urls import reverse
from django.utils.html import strip_tags

from lessons.models import Challenge, DeepDive, Lesson, OpenQuestion, Walkthrough, item_key_of

# The fields item_link() reads; add them to a values() query over Answer or ReviewCard.
ITEM_FIELDS = (
    "deep_dive_id", "deep_dive__prompt_html", "deep_dive__key", "deep_dive__section__lesson_id", "deep_dive__section__layer",
    "step_id", "step__title", "step__order", "step__walkthrough__key", "step__walkthrough__section__lesson_id",
    "challenge_id", "challenge__title", "challenge__key", "challenge__section__lesson_id", "challenge__section__layer",
    "open_question_id", "open_question__prompt_html", "open_question__key", "open_question__section__lesson_id",
    "open_question__section__layer",
)  # fmt: skip


@dataclass(frozen=True)
class ItemLink:
    kind: str  # one of AboutItem.ITEM_KINDS
    item_id: int
    title: str  # plain text
    url: str
    lesson: Lesson


def url_maker(name: str, *args, variables: int = 1) -> Callable[..., str]:
    """Reverse ``name`` once and return a function giving its URL for any values of the last arguments.

    ``args`` are the fixed first arguments and ``variables`` how many follow them. A page that
    links every item (a lesson, the results) would otherwise reverse each link: that took more
    time than the rest of an item's rendering. The values must need no quoting (ids, keys).
    """
    markers = [f"424242424{n}" for n in range(variables)]  # each fits the int, slug and str converters
    rest = reverse(name, args=[*args, *markers])
    parts = []
    for marker in reversed(markers):
        rest, tail = rest.rsplit(marker, 1)
        parts.insert(0, tail)
    head = rest
    return lambda *values: head + "".join(f"{value}{tail}" for value, tail in zip(values, parts, strict=True))


def item_links(rows: Iterable[dict], lessons: Iterable[Lesson]) -> Iterator[tuple[dict, ItemLink]]:
    """Yield each row whose item is in one of ``lessons``, with the item's link."""
    visible = {lesson.pk: lesson for lesson in lessons}
    lesson_url = url_maker("lesson")
    for row in rows:
        link = item_link(row, visible, lesson_url)
        if link is not None:
            yield row, link


def item_link(row: dict, visible: dict[int, Lesson], lesson_url: Callable[[object], str]) -> ItemLink | None:
    """Return the item's link, or None when its lesson is not among ``visible``."""
    kind, pk = item_key_of(row)
    if kind == "deep_dive":
        lesson = visible.get(row["deep_dive__section__lesson_id"])
        title = strip_tags(row["deep_dive__prompt_html"])
        anchor = f"?layer={row['deep_dive__section__layer']}#{DeepDive.anchor_for(row['deep_dive__key'])}"
    elif kind == "step":
        lesson = visible.get(row["step__walkthrough__section__lesson_id"])
        title = row["step__title"]
        key = row["step__walkthrough__key"]
        anchor = f"walkthroughs/{key}/{row['step__order']}/#{Walkthrough.anchor_for(key)}"
    elif kind == "challenge":
        lesson = visible.get(row["challenge__section__lesson_id"])
        title = row["challenge__title"]
        anchor = f"?layer={row['challenge__section__layer']}#{Challenge.anchor_for(row['challenge__key'])}"
    else:
        lesson = visible.get(row["open_question__section__lesson_id"])
        title = strip_tags(row["open_question__prompt_html"])
        anchor = f"?layer={row['open_question__section__layer']}#{OpenQuestion.anchor_for(row['open_question__key'])}"
    if lesson is None:
        return None
    return ItemLink(kind, pk, title, lesson_url(lesson.slug) + anchor, lesson)
