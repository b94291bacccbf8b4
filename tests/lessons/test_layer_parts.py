"""A layer of many items is shown in parts of whole sections (lessons.pages.LayerView.split)."""

import html
import re

import pytest
from django.urls import reverse

from lessons import content_cache
from lessons.models import DeepDive, Lesson, Section, Track
from lessons.pages import PART_ITEMS
from tests.lessons.factories import make_deep_dive

PER_SECTION = 5
SECTIONS = PART_ITEMS // PER_SECTION + 1  # one section more than the first part holds


@pytest.fixture
def long_lesson(db) -> Lesson:
    """A lesson whose one layer holds 25 deep dives, five to a section: parts of sections 1-4, then 5."""
    track = Track.objects.create(slug="t", title="Track")
    lesson = Lesson.objects.create(track=track, slug="long", title="Long", kind="concept", summary="s", published=True)
    for s in range(1, SECTIONS + 1):
        section = Section.objects.create(lesson=lesson, key=f"s{s}", layer=1, order=s, title=f"Section {s}")
        for d in range(1, PER_SECTION + 1):
            make_deep_dive(section, key=f"d{s}-{d}", order=d)
    return lesson


def get(client, url: str) -> str:
    response = client.get(url.split("#")[0])
    assert response.status_code == 200, url
    return response.content.decode()


def test_a_long_layer_shows_its_first_part_and_leads_to_the_next(client, long_lesson):
    page = get(client, long_lesson.get_absolute_url())
    assert 'id="dd-d4-5"' in page and 'id="dd-d5-1"' not in page  # sections 1 to 4 only
    assert "This layer is long, so it is shown over 2 pages, whole sections to a page. This is page 1." in page
    assert re.search(
        r'<a href="[^"]*section=s1#layer-1" aria-current="page">Page 1: “Section 1” to “Section 4”</a> '
        r'<span class="meta">\(this page: its items are marked in the outline\)</span>',
        page,
    )  # the page shown marks its items in the outline, sent again with each answer: no count to go stale
    assert '“Section 5”</a> <span class="meta">0 of 5 answered</span>' in page
    assert "0 of 25 answered" in page  # the score counts every part
    after = re.search(r'<a class="button" href="([^"]+)">Continue to page 2 of layer 1: “Section 5”</a>', page)
    second = get(client, html.unescape(after.group(1)))
    assert 'id="dd-d5-1"' in second and 'id="dd-d1-1"' not in second
    assert re.search(r'aria-current="page">Page 2: “Section 5”</a>', second)
    assert "Continue to" not in second  # the lesson's last page says so, and leads back to the list of pages
    assert 'The last page of this layer and of the lesson. <a href="#layer-1-pages">' in second
    assert 'id="layer-1-pages"' in second


def test_the_outline_lists_every_section_and_marks_the_items_of_the_part_shown(client, long_lesson):
    page = get(client, long_lesson.get_absolute_url())
    assert 'href="/lessons/long/?layer=1&amp;section=s5#sec-s5">Section 5</a>' in page
    assert 'id="mark-dd-d1-1"' in page and 'id="mark-dd-d5-1"' not in page
    second = get(client, "/lessons/long/?layer=1&section=s5")
    assert 'id="mark-dd-d5-1"' in second and 'id="mark-dd-d1-1"' not in second


def test_an_items_link_and_the_resume_button_land_on_the_part_holding_it(client, long_lesson):
    item = DeepDive.objects.select_related("section__lesson").get(key="d5-2")
    assert f'id="{item.anchor}"' in get(client, item.get_absolute_url())
    client.post(reverse("answer-deep-dive", args=["long", item.pk]), {"choice": item.choices.get(verdict="best").pk})
    page = get(client, long_lesson.get_absolute_url())
    resume = re.search(r'id="lesson-resume" href="([^"]+)">Resume where you stopped', page).group(1)
    assert html.unescape(resume) == "/lessons/long/?layer=1&section=s5#dd-d5-2"
    assert 'id="dd-d5-2-feedback"' in get(client, html.unescape(resume))
    assert (
        '“Section 5”</a> <span class="meta">1 of 5 answered</span>' in page
    )  # each other page says how many of its items are answered (right or missed: the outline tells)


def test_a_section_moved_to_another_layer_is_followed_and_one_gone_shows_the_layers_start(client, long_lesson):
    """A saved place or a bookmark names a section an author has since moved, or removed."""
    Section.objects.filter(key="s5").update(layer=2)
    content_cache.new_generation()  # a queryset update() starts none by itself
    response = client.get("/lessons/long/?layer=1&section=s5")
    assert response.status_code == 302 and response["Location"] == "/lessons/long/?layer=2&section=s5"
    page = get(client, "/lessons/long/?layer=1&section=gone")
    assert 'id="dd-d1-1"' in page and "This is page 1." not in page  # layer 1 now holds 20 items: one page


def test_a_section_asked_of_a_lesson_without_sections_is_no_error(client, db):
    track = Track.objects.create(slug="t", title="Track")
    Lesson.objects.create(track=track, slug="empty", title="Empty", kind="concept", summary="s", published=True)
    assert client.get("/lessons/empty/?section=x").status_code == 200


def test_a_walkthrough_step_and_a_refused_answer_show_the_part_holding_their_item(client, long_lesson):
    from lessons.models import Walkthrough

    late = Section.objects.get(key="s5")
    Walkthrough.objects.create(section=late, key="build", order=100, kind="build_up", title="Build it")
    from lessons.models import Step

    Step.objects.create(walkthrough=Walkthrough.objects.get(key="build"), order=1, title="First")
    page = get(client, reverse("walkthrough-step", args=["long", "build", 1]))
    assert 'id="wt-build"' in page and "This is page 2." in page
    item = DeepDive.objects.get(key="d5-2")
    refused = client.post(reverse("answer-deep-dive", args=["long", item.pk]), {"choice": 999999})
    assert refused.status_code == 400
    assert 'id="dd-d5-2"' in refused.content.decode() and "This is page 2." in refused.content.decode()


def test_a_part_is_not_opened_for_reading_alone(client, long_lesson):
    """Four sections of five items and a reading-only wrap-up: one part more would hold only the reading."""
    Section.objects.filter(key="s5").update(layer=2)
    Section.objects.create(lesson=long_lesson, key="wrap", layer=1, order=9, title="Wrap-up", body="Read me.")
    make_deep_dive(Section.objects.get(key="s4"), key="extra", order=9)  # 21 items: parts
    content_cache.new_generation()
    page = get(client, long_lesson.get_absolute_url())
    assert "This layer is long" not in page  # one part: the wrap-up stays with the items before it
    assert 'id="sec-wrap"' in page and 'id="dd-extra"' in page


def test_a_layer_of_few_items_is_one_page_without_parts(client, long_lesson):
    Section.objects.filter(key__in=["s2", "s3", "s4", "s5"]).update(layer=2)
    page = get(client, long_lesson.get_absolute_url())
    assert "shown in" not in page and 'id="dd-d1-5"' in page
    assert "Continue to layer 2" in page


def test_a_walkthrough_read_only_is_not_counted_as_done(client, long_lesson):
    """A build-up without graded steps asks nothing: it is neither done nor to do on the list of pages."""
    from lessons.models import Step, Walkthrough

    walkthrough = Walkthrough.objects.create(
        section=Section.objects.get(key="s5"), key="read", order=100, kind="build_up", title="Read it"
    )
    Step.objects.create(walkthrough=walkthrough, order=1, title="Only reading")
    page = get(client, long_lesson.get_absolute_url())
    assert '“Section 5”</a> <span class="meta">0 of 5 answered</span>' in page
