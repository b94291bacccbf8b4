"""The lesson outline and a layer's head in a real browser: follow-ups listed once opened, a long layer's
list of pages reached before the outline, and the case study's table of numbers on a phone."""

import re

import pytest
from playwright.sync_api import expect

from lessons.models import Choice, Lesson, Section, Track
from lessons.pages import PART_ITEMS
from tests.browser.conftest import button_text, describe
from tests.browser.narrow import layout_problems
from tests.lessons.factories import make_deep_dive

CASE = "/lessons/llm-serving-platform/"


@pytest.mark.django_db(transaction=True)
def test_a_follow_up_joins_the_outline_when_an_answer_opens_it(
    live_server, page, content, axe_violations, console_errors
):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_server.url + CASE + "?layer=3")
    outline = page.get_by_role("navigation", name="Lesson outline")
    leading = Choice.objects.select_related("follow_up").get(
        deep_dive__key="kv-memory", deep_dive__section__lesson__slug="llm-serving-platform", follow_up__isnull=False
    )
    follow_up = leading.follow_up.key
    listed = outline.locator(f"#outline-dd-{follow_up}")
    expect(listed).to_have_count(0)  # not opened: not listed
    # Choices are shown in each learner's own order: found by their text.
    page.locator("#dd-kv-memory").get_by_role("button", name=re.compile(re.escape(button_text(leading)))).click()
    expect(page.locator(f"#dd-{follow_up}")).to_be_visible()
    # The answer that opened it says the lesson's total now counts it, as the progress line shows at once.
    total = re.compile(r"\(\d+ questions, \d+ points\)\.$")
    expect(page.locator("#dd-kv-memory-feedback .opened-follow-up")).to_have_text(total)
    shown = page.locator("#dd-kv-memory-feedback .opened-follow-up").inner_text()
    counted = page.locator("#lesson-progress-line span").inner_text()  # "1 of 12 answered · 10 of 120 points"
    assert (
        re.search(r"of (\d+) answered · \d+ of (\d+) points", counted).groups()
        == re.search(r"\((\d+) questions, (\d+) points\)", shown).groups()
    )
    # Without a reload, the follow-up is listed under its deep dive, marked, told apart by its first words.
    nested = outline.locator("#outline-dd-kv-memory #outline-dd-" + follow_up)
    expect(nested.get_by_role("link")).to_have_text(re.compile(r"^Follow-up · KV memory allocation: You admit .+…$"))
    expect(nested.locator(".mark")).to_have_text("○ not started")
    assert leading.verdict == "best"
    expect(outline.locator("#mark-dd-kv-memory")).to_have_text("✓ answered")

    # A weak first answer to the follow-up: a miss to retry (results list it), marked so, not "✓ answered".
    weak = Choice.objects.filter(deep_dive=leading.follow_up, verdict="weak").first()
    page.locator(f"#dd-{follow_up}").get_by_role("button", name=re.compile(re.escape(button_text(weak)))).click()
    expect(page.locator(f"#dd-{follow_up}-feedback")).to_be_visible()
    expect(nested.locator(".mark")).to_have_text("↻ answered · missed")
    expect(nested.locator(".mark")).to_have_class("mark mark-missed")
    expect(outline.locator("#mark-dd-kv-memory")).to_have_text("✓ answered")
    expect(page.locator(f"#dd-{follow_up} .eyebrow").first).to_have_text(re.compile("^Follow-up · "))
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    page.reload()  # the next page load lists it the same way
    expect(outline.locator("#outline-dd-kv-memory #outline-dd-" + follow_up + " .mark")).to_have_text(
        "↻ answered · missed"
    )
    page.emulate_media(color_scheme="dark")  # the missed mark's amber band keeps its contrast in the dark
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    # A right retry: without a reload the mark says so (green band), no longer "↻ … missed" (read as "retry this").
    best = Choice.objects.get(deep_dive=leading.follow_up, verdict="best")
    page.locator(f"#dd-{follow_up}").get_by_role("button", name=re.compile(re.escape(button_text(best)))).click()
    mark = outline.locator(f"#mark-dd-{follow_up}")
    expect(mark).to_have_text("✓ answered · right on a retry")
    expect(mark).to_have_class("mark mark-retried")
    violations = axe_violations(page)  # the green band's contrast, dark
    assert violations == [], describe(violations)
    page.emulate_media(color_scheme="light")
    page.reload()
    expect(mark).to_have_text("✓ answered · right on a retry")
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    assert console_errors == []


@pytest.fixture
def long_lesson(db) -> Lesson:
    """A lesson whose one layer holds 25 deep dives, five to a section: shown over two pages."""
    track = Track.objects.create(slug="t", title="Track")
    lesson = Lesson.objects.create(track=track, slug="long", title="Long", kind="concept", summary="s", published=True)
    for s in range(1, PART_ITEMS // 5 + 2):
        section = Section.objects.create(lesson=lesson, key=f"s{s}", layer=1, order=s, title=f"Section {s}")
        for d in range(1, 6):
            make_deep_dive(section, key=f"d{s}-{d}", order=d)
    return lesson


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [375, 1280])
def test_a_long_layers_list_of_pages_comes_before_the_outline(live_server, page, long_lesson, width, axe_violations):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(live_server.url + long_lesson.get_absolute_url())
    pages = page.get_by_role("navigation", name="Pages of layer 1")
    page.get_by_role("link", name="See results").focus()
    page.keyboard.press("Tab")
    expect(pages.get_by_role("link", name=re.compile("^Page 1: "))).to_be_focused()
    page.keyboard.press("Tab")
    expect(pages.get_by_role("link", name=re.compile("^Page 2: "))).to_be_focused()
    page.keyboard.press("Tab")  # then the outline: its skip link and links beside the lesson, its button on a phone
    if width == 1280:
        expect(page.get_by_role("link", name="Skip the outline")).to_be_focused()
        page.keyboard.press("Tab")
    first_stop = "details.outline nav a" if width == 1280 else "details.outline > summary"
    expect(page.locator(first_stop).first).to_be_focused()
    heading, listed = page.locator("#layer-1-title").bounding_box(), pages.bounding_box()
    assert heading["y"] < listed["y"]  # under the layer's heading, as before
    if width == 1280:  # the outline stays in its column on the left, from the top
        outline = page.locator("details.outline").bounding_box()
        assert outline["x"] + outline["width"] < heading["x"] and outline["y"] < heading["y"]
    else:
        assert layout_problems(page, ".layer-head") == []
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_desktop_the_keyboard_skips_the_open_outline_to_the_first_question(
    live_server, page, content, scheme, axe_violations
):
    """The outline is open beside the lesson, some thirty tab stops. "Skip to layer 3" is the second Tab stop,
    after "Skip to content" (past the site's header, the lesson's and the outline); a keyboard that went through
    the lesson's header meets "Skip the outline" before the outline's links. Each shows while focused."""
    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_server.url + CASE + "?layer=3")
    to_layer, past_outline = (page.get_by_role("link", name=name) for name in ("Skip to layer 3", "Skip the outline"))
    expect(to_layer).not_to_be_in_viewport()  # out of sight until the keyboard reaches it
    assert past_outline.bounding_box()["width"] <= 1
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Tab")
    expect(to_layer).to_be_focused()
    shown = to_layer.bounding_box()
    assert shown["width"] > 50 and shown["y"] >= 0 and shown["x"] >= 0, shown  # in view at the top, as the other one
    expect(to_layer).to_be_in_viewport(ratio=1)
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    page.keyboard.press("Enter")
    # Focus moves with the view (not left on the page): a screen reader reads the layer's heading out.
    heading = page.locator("#layer-3-title")
    expect(heading).to_be_focused()
    expect(heading).to_be_in_viewport()
    page.keyboard.press("Tab")  # the note on the question layer 2 still holds, whose answer this layer gives away
    expect(page.get_by_role("link", name="Answer it first, in layer 2")).to_be_focused()
    page.keyboard.press("Tab")  # then the layer's first question, past every outline link
    focused = page.evaluate_handle("document.activeElement")
    assert focused.evaluate("e => !e.closest('details.outline') && !!e.closest('section.layer')")
    assert focused.evaluate("e => !!e.closest('.item')"), focused.evaluate("e => e.outerHTML.slice(0, 200)")
    # Through the headers instead: the lesson header's last stop, then the outline's own skip link, over the outline.
    page.get_by_role("link", name="See results").focus()
    page.keyboard.press("Tab")
    expect(past_outline).to_be_focused()
    shown, outline = past_outline.bounding_box(), page.locator("details.outline").bounding_box()
    assert shown["width"] > 50 and shown["y"] >= 0 and shown["x"] < outline["x"] + outline["width"]  # over the outline
    page.keyboard.press("Enter")
    expect(heading).to_be_focused()


@pytest.mark.django_db(transaction=True)
def test_on_a_phone_there_is_no_outline_to_skip(live_server, page, content):
    """The outline is closed behind its button on a phone (one tab stop): the second Tab stop is the site's name."""
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(live_server.url + CASE + "?layer=3")
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("link", name="Serving Interview Lab")).to_be_focused()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_skipping_the_outline_of_a_long_layer_focuses_its_first_sections_heading(
    live_server, page, long_lesson, scheme, axe_violations
):
    """On a page of a long layer (its list of pages comes before the outline) the skip lands on the page's
    first section: its heading has focus, shown by the focus ring, the same in the dark."""
    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_server.url + long_lesson.get_absolute_url())
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")  # "Skip to content", then this one
    expect(page.get_by_role("link", name="Skip to layer 1")).to_be_focused()
    page.keyboard.press("Enter")
    heading = page.get_by_role("heading", name="Section 1", exact=True)
    expect(heading).to_be_focused()
    expect(heading).to_be_in_viewport()
    ring = heading.evaluate("h => [getComputedStyle(h).outlineStyle, parseFloat(getComputedStyle(h).outlineWidth)]")
    assert ring == ["solid", 3], ring  # :focus-visible's ring, not hidden
    page.keyboard.press("Tab")  # then the section's first question
    expect(page.locator("#sec-s1 .item .choice-button").first).to_be_focused()
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.django_db(transaction=True)
def test_the_case_studys_numbers_fit_a_phone(live_server, page, content, axe_violations):
    """At 375 px the table of numbers shows whole, no word split, and its box has nothing to scroll."""
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(live_server.url + CASE + "?layer=2#sec-the-numbers")
    table = page.locator("#sec-the-numbers .table-scroll")
    expect(table).to_contain_text("gpu_memory_utilization")
    assert layout_problems(page, "#sec-the-numbers .table-scroll") == []
    expect(table).not_to_have_attribute("tabindex", "0")  # site.js: a tab stop only while it overflows
    violations = axe_violations(page)
    assert violations == [], describe(violations)
