"""Where an item lives: the URL that opens it, and the catalog of graded items that results and review list."""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import NamedTuple

from django.core.signals import setting_changed
from django.urls import get_script_prefix, reverse

from lessons import content_cache
from lessons.markup import plain_text
from lessons.models import (
    Challenge,
    Choice,
    DeepDive,
    Lesson,
    OpenQuestion,
    Step,
    Walkthrough,
    item_key_of,
    page_query,
)


@dataclass(frozen=True)
class ItemLink:
    kind: str  # one of AboutItem.ITEM_KINDS
    item_id: int
    title: str  # plain text
    url: str
    lesson: Lesson
    follow_up: bool = False  # a choice of another deep dive leads to it (its GradedItem.leading)


def url_maker(name: str, *args, variables: int = 1) -> Callable[..., str]:
    """Return a function giving ``name``'s URL for any values of the last arguments, reversed once.

    ``args`` are the fixed first arguments and ``variables`` how many follow them. A page that
    links every item (a lesson, the results) would otherwise reverse each link: that took more
    time than the rest of an item's rendering. The values must need no quoting (ids, keys).
    The path is reversed once per process (URLs do not change while it runs; a test that changes
    the URL settings gets it reversed again); the script prefix (a site mounted under a path) is
    the request's, read each time a maker is asked for.
    """
    head, tails = url_pattern(name, args, variables)
    prefix = get_script_prefix()
    return lambda *values: prefix + head + "".join(f"{value}{tail}" for value, tail in zip(values, tails, strict=True))


@functools.cache
def url_pattern(name: str, args: tuple, variables: int) -> tuple[str, list[str]]:
    """Return ``name``'s path after the script prefix, cut where its last ``variables`` arguments go."""
    markers = [f"424242424{n}" for n in range(variables)]  # each fits the int, slug and str converters
    rest = reverse(name, args=[*args, *markers])
    prefix = get_script_prefix()
    rest = rest[len(prefix) :] if rest.startswith(prefix) else rest
    tails = []
    for marker in reversed(markers):
        rest, tail = rest.rsplit(marker, 1)
        tails.insert(0, tail)
    return rest, tails


TopicRef = tuple[int, str, str]  # a topic as (order, slug, name): sorts as the results page lists topics


class GradedItem(NamedTuple):
    """What lists of items (results, review) need to know of one graded item, without reading it.

    A named tuple, not a dataclass: every results page unpickles the whole catalog from the content
    cache, and named tuples load in half the time.
    """

    lesson_id: int
    title: str  # plain text
    path: str  # the item's place after its lesson's URL: its layer's page (or its step's page), at its anchor
    topic: TopicRef
    points: int
    leading: tuple[int, ...] = ()  # the choices leading to a follow-up: it counts once reached
    parents: tuple[int, ...] = ()  # a follow-up: the deep dives whose choices lead to it


def drawn_under(pk: int, parent_of: Mapping[int, int]) -> int:
    """Return the deep dive that deep dive ``pk`` is drawn under: itself, unless a follow-up; then its parent's
    top-level deep dive, whatever section an author put the follow-up in (a loop of follow-ups stops the walk).

    ``parent_of`` maps each follow-up to the deep dive whose choice leads to it.
    """
    seen = {pk}
    while pk in parent_of and parent_of[pk] not in seen:
        pk = parent_of[pk]
        seen.add(pk)
    return pk


def generation_of(lessons: Iterable[Lesson]) -> str | None:
    """Return the content generation ``lessons`` were read in (content_cache.visible_lessons), if they carry it."""
    return next((getattr(lesson, "content_token", None) for lesson in lessons), None)


def item_catalog(token: str | None = None) -> dict[tuple[str, int], GradedItem]:
    """Return every graded item by its key (AboutItem.item_key), from the content cache (lessons/content_cache.py).

    ``token``: the generation this request read its lessons in (``Lesson.content_token``), if it has one.
    """
    return content_cache.cached("graded-items", read_item_catalog, token)


def read_item_catalog() -> dict[tuple[str, int], GradedItem]:
    """Read every graded item of every lesson in five queries (see ``item_catalog``)."""

    def topic(row: dict, prefix: str = "topic") -> TopicRef:
        slug = row[prefix]
        return (row[f"{prefix}__order"] or 0, slug or "", row[f"{prefix}__name"] or slug or "")  # untopical: first

    topic_fields = ("topic", "topic__order", "topic__name")
    leading: dict[int, list[int]] = defaultdict(list)
    parents: dict[int, set[int]] = defaultdict(set)
    parent_of: dict[int, int] = {}  # a follow-up: its parent, the last in page order (as build_lesson_page draws it)
    links = Choice.objects.filter(follow_up__isnull=False).order_by(
        "deep_dive__section__order", "deep_dive__order", "deep_dive_id", "order"
    )
    for choice, deep_dive, follow_up in links.values_list("pk", "deep_dive_id", "follow_up_id"):
        leading[follow_up].append(choice)
        parents[follow_up].add(deep_dive)
        parent_of[follow_up] = deep_dive
    catalog = {}
    placed = ("pk", "key", "points", "section__lesson_id", "section__layer", "section__key", *topic_fields)
    # The items a section holds, found on their layer's page; each with the field its title comes from
    # (a prompt's HTML, stripped to plain text, or a plain title). A follow-up is found on the page of the
    # deep dive it is drawn under (drawn_under).
    for kind, model, title in (("deep_dive", DeepDive, "prompt_html"), ("challenge", Challenge, "title"),
                               ("open_question", OpenQuestion, "prompt_html")):  # fmt: skip
        rows = {row["pk"]: row for row in model.objects.order_by().values(*placed, title)}
        for pk, row in rows.items():
            page = rows[drawn_under(pk, parent_of)] if kind == "deep_dive" else row
            catalog[kind, pk] = GradedItem(
                row["section__lesson_id"], plain_text(row[title]) if title.endswith("_html") else row[title],
                f"{page_query(page['section__layer'], page['section__key'])}#{model.anchor_for(row['key'])}", topic(row), row["points"],
                tuple(sorted(leading[pk])) if kind == "deep_dive" else (),
                tuple(sorted(parents[pk])) if kind == "deep_dive" else (),
            )  # fmt: skip
    steps = Step.objects.exclude(calculator="").order_by()
    walkthrough_topic = ("walkthrough__topic", "walkthrough__topic__order", "walkthrough__topic__name")
    for row in steps.values("pk", "title", "order", "points", "walkthrough__key", "walkthrough__section__lesson_id",
                            *walkthrough_topic):  # fmt: skip
        key = row["walkthrough__key"]
        catalog["step", row["pk"]] = GradedItem(
            row["walkthrough__section__lesson_id"], row["title"],
            f"walkthroughs/{key}/{row['order']}/#{Walkthrough.anchor_for(key)}", topic(row, "walkthrough__topic"),
            row["points"],
        )  # fmt: skip
    return catalog


def item_links(
    rows: Iterable[dict], lessons: Iterable[Lesson], catalog: dict[tuple[str, int], GradedItem] | None = None
) -> Iterator[tuple[dict, ItemLink]]:
    """Yield each row (with the item id fields, ITEM_ID_FIELDS) whose graded item is in one of ``lessons``,
    with the item's link (``catalog``: the item catalog, when the caller has it already)."""
    visible = {lesson.pk: lesson for lesson in lessons}
    catalog = item_catalog(generation_of(visible.values())) if catalog is None else catalog
    lesson_url = url_maker("lesson")
    for row in rows:
        key = item_key_of(row)
        item = catalog.get(key)
        lesson = visible.get(item.lesson_id) if item else None
        if lesson is not None:
            url = lesson_url(lesson.slug) + item.path
            yield row, ItemLink(key[0], key[1], item.title, url, lesson, bool(item.leading))


def forget_url_makers(*, setting: str, **kwargs) -> None:
    if setting in ("ROOT_URLCONF", "FORCE_SCRIPT_NAME"):
        url_pattern.cache_clear()


setting_changed.connect(forget_url_makers)
