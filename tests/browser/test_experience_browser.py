"""The learner experience in a real browser: number entry with units, live counters, focus after Next,
a diagram read on a phone, and scroll regions that are tab stops only while they have something to scroll."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import describe, log_in
from tests.browser.narrow import layout_problems

SAMPLE = "/lessons/how-the-lab-works/"
CASE_STUDY_STEP = "/lessons/llm-serving-platform/walkthroughs/build-the-design/{}/"
CASE_STUDY_STEP_5 = CASE_STUDY_STEP.format(5)


@pytest.mark.django_db(transaction=True)
def test_a_number_with_a_unit_is_converted_and_the_counters_follow_the_answer(
    live_server, page, content, axe_violations, console_errors
):
    page.goto(live_server.url + SAMPLE + "?layer=2")
    progress = page.locator("#lesson-progress-line")
    expect(progress).to_contain_text(re.compile(r"0 of \d+ answered"))
    envelope = page.locator("#wt-size-the-cache")

    envelope.get_by_label("Your answer").fill("320 ms")  # the step asks for KiB
    envelope.get_by_role("button", name="Check").click()
    error = envelope.locator(".error[role='alert']")
    expect(error).to_have_text("“320 ms” is a time, but this question asks for a size in KiB.")
    expect(progress).to_contain_text(re.compile(r"0 of \d+ answered"))

    envelope.get_by_label("Your answer").fill("327.68 kB")  # the same size in decimal kB
    envelope.get_by_role("button", name="Check").click()
    feedback = page.locator("#wt-size-the-cache-feedback")
    expect(feedback).to_contain_text("Correct")
    expect(feedback).to_contain_text("You answered 320 KiB")
    expect(feedback).to_be_focused()
    # The header's counters and bar changed in the same response, without a reload.
    expect(progress).to_contain_text(re.compile(r"1 of \d+ answered · 10 of \d+ points"))
    assert int(page.locator("#lesson-progress").get_attribute("value")) > 0
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    assert [e for e in console_errors if "status of 422" not in e] == []  # 422: the refused "320 ms"


@pytest.mark.django_db(transaction=True)
def test_next_and_back_move_focus_to_the_new_steps_heading(live_server, page, content):
    page.goto(live_server.url + SAMPLE + "?layer=3")
    build = page.locator("#wt-grow-a-replica")
    build.locator("#wt-grow-a-replica-next").focus()
    page.keyboard.press("Enter")
    expect(build.locator(".step-count")).to_have_text("Step 2 of 5")
    expect(page.locator("#wt-grow-a-replica-step-title")).to_be_focused()
    page.locator("#wt-grow-a-replica-back").click()
    expect(page.locator("#wt-grow-a-replica .step-count")).to_have_text("Step 1 of 5")
    expect(page.locator("#wt-grow-a-replica-step-title")).to_be_focused()


@pytest.mark.django_db(transaction=True)
def test_next_to_a_step_removed_since_the_page_loaded_says_so_and_keeps_the_page(live_server, page, content):
    """The step's URL is a 404 now: htmx swaps nothing in, the page says what happened, and a reload shows the steps left."""
    from lessons.models import Step

    page.goto(live_server.url + SAMPLE + "?layer=3")
    build = page.locator("#wt-grow-a-replica")
    expect(build.locator(".step-count")).to_have_text("Step 1 of 5")
    Step.objects.get(walkthrough__key="grow-a-replica", order=2).delete()  # an author removes step 2 meanwhile
    url = page.url
    build.locator("#wt-grow-a-replica-next").click()
    error = page.locator("#request-error")
    expect(error).to_be_visible()
    expect(error).to_have_text(re.compile(r"^That is not here any more \(error 404\).*Reload the page"))
    expect(build.locator(".step-count")).to_have_text("Step 1 of 5")  # step 1 stays, not swapped for anything
    expect(build).not_to_have_attribute("aria-busy", "true")
    assert page.url == url  # no URL pushed for a step that is not there
    page.reload()
    expect(page.locator("#wt-grow-a-replica .step-count")).to_have_text("Step 1 of 4")
    expect(page.locator("#request-error")).to_be_hidden()


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [375, 1280])
def test_the_biggest_diagram_is_readable_on_a_phone_and_a_desktop(live_server, page, content, axe_violations, width):
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(live_server.url + CASE_STUDY_STEP_5)
    figure = page.locator("#wt-build-the-design figure.diagram")
    expect(figure).to_be_visible()
    texts = figure.locator("svg text")
    assert texts.count() > 20
    # Text is at least 12 px tall on screen at every width: 1:1 on a phone, scaled only a little to fit a desktop.
    heights = figure.evaluate("f => [...f.querySelectorAll('svg text')].map(t => t.getBoundingClientRect().height)")
    assert min(heights) >= 12, heights
    # No two texts overlap where they are drawn.
    boxes = figure.evaluate(
        "f => [...f.querySelectorAll('svg text')].map(t => { const r = t.getBoundingClientRect();"
        " return [r.left, r.top, r.right, r.bottom, t.textContent]; })"
    )
    clashes = [
        (a[4], b[4])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a[0] < b[2] - 1 and b[0] < a[2] - 1 and a[1] < b[3] - 1 and b[1] < a[3] - 1
    ]
    assert clashes == []
    # New parts are marked by more than colour: a dashed outline and bold text.
    new_box = figure.locator(".box.new rect").first
    assert new_box.evaluate("r => getComputedStyle(r).strokeDasharray") not in ("", "none")
    assert int(figure.locator(".box.new text").first.evaluate("t => getComputedStyle(t).fontWeight")) >= 700
    # Wider than the screen, the diagram scrolls in its own region; the page itself does not.
    assert page.evaluate("() => document.documentElement.scrollWidth") <= width
    region = figure.get_by_role("region")
    # Wider than its region, a shadow at the edge shows there is more to scroll to (compared with the region
    # drawn without it).
    if region.evaluate("r => r.scrollWidth > r.clientWidth"):
        with_hint = region.screenshot()
        region.evaluate("r => r.style.background = 'none'")
        assert region.screenshot() != with_hint
        region.evaluate("r => r.style.background = ''")
    if width == 375:
        assert region.evaluate("r => r.scrollWidth > r.clientWidth")
        region.focus()
        page.keyboard.press("ArrowRight")
        expect(region).to_be_focused()
    # The text alternative sits in a disclosure, closed until asked for.
    details = figure.locator("details")
    expect(details.locator(".meta, p").first).to_be_hidden()
    details.locator("summary").click()
    expect(details).to_contain_text("Connections already there")
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.django_db(transaction=True)
def test_the_outline_sits_beside_the_lesson_on_a_desktop_and_behind_a_button_on_a_phone(
    live_server, page, content, axe_violations
):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_server.url + SAMPLE)
    outline = page.get_by_role("navigation", name="Lesson outline")
    expect(outline).to_be_visible()  # no click needed on a wide screen
    assert outline.bounding_box()["x"] < page.locator("#lesson-title").bounding_box()["x"]  # beside, on the left
    expect(outline.get_by_role("link", name="Layer 1 · Skim")).to_be_visible()
    expect(outline.locator(".mark.mark-todo").first).to_contain_text("not started")
    # "Start" begins the reading, and each layer leads on to the next, on its own page.
    start = page.get_by_role("link", name="Start", exact=True)
    expect(start).to_have_attribute("href", SAMPLE + "?layer=1#layer-1")
    start.click()
    expect(page.get_by_role("link", name="Continue to layer 2 · Core")).to_be_visible()
    page.get_by_role("link", name="Continue to layer 2 · Core").click()
    assert page.url.endswith("?layer=2#layer-2")
    expect(page.locator("#wt-size-the-cache")).to_be_visible()
    expect(page.locator("#dd-kv-heads")).to_have_count(0)  # layer 1's items are on layer 1's page
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    # A focused outline link's ring (3 px outline 2 px out, 2 px halo) shows whole: the scrolling outline does not clip it.
    layer_link = page.get_by_role("navigation", name="Lesson outline").get_by_role("link").first
    layer_link.focus()
    room = layer_link.evaluate(
        "a => { const nav = a.closest('nav'), r = a.getBoundingClientRect(), n = nav.getBoundingClientRect();"
        " return Math.min(r.left - n.left, n.right - r.right, r.top - n.top); }"
    )
    assert room >= 5, room

    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(live_server.url + SAMPLE)
    outline = page.get_by_role("navigation", name="Lesson outline")
    expect(outline).to_be_hidden()
    # One tab stop, the disclosure's own button: the closed outline is no stop of its own on a phone.
    page.get_by_role("link", name="See results").focus()
    page.keyboard.press("Tab")
    expect(page.locator("details.outline > summary")).to_be_focused()
    page.keyboard.press("Enter")
    expect(outline).to_be_visible()
    page.keyboard.press("Tab")  # opened, the next stop is its first link, not the list around it
    expect(outline.get_by_role("link").first).to_be_focused()
    assert page.locator("#lesson-progress").bounding_box()["width"] >= 150  # the bar keeps its width on a phone
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.django_db(transaction=True)
def test_layer_pages_the_outline_marks_and_resume_follow_the_learner(live_server, page, content, axe_violations):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_server.url + SAMPLE)
    outline = page.get_by_role("navigation", name="Lesson outline")
    outline.get_by_role("link", name="Layer 2 · Core").click()
    expect(page.locator("#wt-size-the-cache")).to_be_visible()
    mark = page.locator("#mark-wt-size-the-cache")
    expect(mark).to_contain_text("not started")
    envelope = page.locator("#wt-size-the-cache")
    envelope.get_by_label("Your answer").fill("320 KiB")
    envelope.get_by_role("button", name="Check").click()
    expect(page.locator("#wt-size-the-cache-feedback")).to_contain_text("Correct")
    # The outline's mark for the walkthrough changed with the answer, without a reload.
    expect(mark).not_to_contain_text("not started")
    expect(mark).to_have_class(re.compile(r"mark-(done|partial)"))
    # So did the header's button: "Start" is now "Resume where you stopped", to this step.
    resume = page.get_by_role("link", name="Resume where you stopped")
    expect(resume).to_have_attribute("href", re.compile(r"/walkthroughs/size-the-cache/\d+/#wt-size-the-cache$"))
    expect(page.get_by_role("link", name="Start", exact=True)).to_have_count(0)
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    page.goto(live_server.url + SAMPLE)  # layer 1's page
    expect(page.locator("#wt-size-the-cache")).to_have_count(0)
    page.get_by_role("link", name="Resume where you stopped").click()
    expect(page.locator("#wt-size-the-cache")).to_be_visible()  # on the layer that holds it
    expect(page.locator("#wt-size-the-cache-feedback")).to_contain_text("Correct")
    page.get_by_role("navigation", name="Lesson outline").get_by_role("link", name="Layer 3 · Go deeper").click()
    expect(page.locator("#wt-grow-a-replica")).to_be_visible()
    expect(page.get_by_role("link", name=re.compile("Continue to layer"))).to_have_count(0)
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.django_db(transaction=True)
def test_the_results_tables_fit_a_phone(live_server, page, content):
    """At 375 px every column of the results page's tables shows without scrolling sideways:
    "1,220 / 1,530" may wrap at its slash, never inside a number."""
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}{SAMPLE}")
    page.locator(".item button[name='choice']").first.click()  # a learner with a score to show
    expect(page.locator("#announcer")).not_to_be_empty()
    page.goto(f"{live_server.url}/results/")
    assert layout_problems(page, "main table") == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_on_a_phone_the_results_lesson_names_read_on_one_line_in_a_real_table(
    live_server, page, content, scheme, axe_violations
):
    """At 375 px each lesson's name has a line of its own (it wrapped to three or four lines beside the numbers),
    the numbers sit under their column headings, nothing scrolls sideways, and Chromium's accessibility tree
    still holds a table: a row per lesson, its name a row header, its three numbers cells."""
    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}{SAMPLE}")
    page.locator(".item button[name='choice']").first.click()  # a learner with a score to show
    expect(page.locator("#announcer")).not_to_be_empty()
    page.goto(f"{live_server.url}/results/")
    region = page.get_by_role("region", name="Score per lesson")
    assert layout_problems(page, ".phone-fit table") == []
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    lines = region.locator("tbody th a").evaluate_all(
        "links => links.map((a) => [a.textContent, new Set([...a.getClientRects()].map((r) => Math.round(r.bottom))).size])"
    )
    assert len(lines) > 10 and all(count == 1 for _name, count in lines), lines
    # Each number right-aligned under its column's heading.
    edges = page.evaluate(
        """() => [...document.querySelectorAll('.phone-fit tr')].map((tr) =>
             [...tr.querySelectorAll('.num')].map((c) => Math.round(c.getBoundingClientRect().right)))"""
    )
    assert len({tuple(row) for row in edges}) == 1, edges

    cdp = page.context.new_cdp_session(page)
    tree = [n for n in cdp.send("Accessibility.getFullAXTree")["nodes"] if not n.get("ignored")]
    roles = [n["role"]["value"] for n in tree]
    assert roles.count("table") == 1 and roles.count("columnheader") == 4, roles
    lessons = len(lines)
    assert roles.count("row") == lessons + 1 and roles.count("rowheader") == lessons, roles
    assert roles.count("cell") == 3 * lessons, roles
    violations = axe_violations(page)
    assert violations == [], describe(violations)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [375, 1280])
def test_a_cards_content_sits_evenly_inside_it(live_server, page, content, width):
    """A card's heading starts at its top padding as its last line ends at its bottom padding, and its lines are
    spaced alike, whether they are text or a progress bar."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{live_server.url}{SAMPLE}")
    # The progress line keeps its distance from the buttons below it, as a paragraph does.
    gap = page.evaluate(
        "() => document.querySelector('.button-row').getBoundingClientRect().top"
        " - document.querySelector('#lesson-progress-line').getBoundingClientRect().bottom"
    )
    assert gap >= 12, gap
    page.locator(".item button[name='choice']").first.click()  # a topic with a mastery bar, the others not started
    expect(page.locator("#announcer")).not_to_be_empty()
    page.goto(f"{live_server.url}/results/")
    # Within a topic's card, its last line sits as far below a mastery bar as below "Not started.".
    spacing = page.evaluate(
        """() => [...document.querySelectorAll('.topic-grid .card')].map((card) => {
          const [, middle, last] = card.children;
          return Math.round(last.getBoundingClientRect().top - middle.getBoundingClientRect().bottom);
        })"""
    )
    assert len(spacing) > 2 and len(set(spacing)) == 1, spacing
    gaps = page.evaluate(
        """() => [...document.querySelectorAll('main .card')].map((card) => {
          const style = getComputedStyle(card), box = card.getBoundingClientRect();
          const first = card.firstElementChild.getBoundingClientRect(), last = card.lastElementChild.getBoundingClientRect();
          const below = Math.round(box.bottom - last.bottom - parseFloat(style.borderBottomWidth) - parseFloat(style.paddingBottom));
          // A card in a grid is stretched to its row's tallest: room below its last line is the row's, not a margin.
          return [Math.round(first.top - box.top - parseFloat(style.borderTopWidth) - parseFloat(style.paddingTop)),
                  card.parentElement.classList.contains('grid') ? Math.min(below, 0) : below];
        })"""
    )
    assert len(gaps) > 2 and all(gap == [0, 0] for gap in gaps), gaps


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [375, 1280])
def test_lesson_tables_keep_words_and_numbers_whole(live_server, page, content, width):
    """A lesson's table never splits "10,000" or "Goal" over two lines: a wide one scrolls sideways in its region."""
    page.set_viewport_size({"width": width, "height": 900})
    for path in ("/lessons/buying-the-fleet/?layer=1", "/lessons/load-balancing/?layer=2"):
        page.goto(f"{live_server.url}{path}")
        broken = [p for p in layout_problems(page, ".prose .table-scroll") if p.startswith("word broken")]
        assert broken == [], f"{path}: {broken}"


def scroll_regions_tabbed_to(page) -> list[str]:
    """Press Tab from the top of the page until focus leaves it; return the names of the scroll regions it stopped on."""
    page.evaluate("() => document.activeElement.blur()")
    names = []
    for _ in range(500):
        page.keyboard.press("Tab")
        stop = page.evaluate(
            "() => { const e = document.activeElement; return e === document.body ? null"
            " : e.matches('[data-scroll-region]') ? e.getAttribute('aria-label') : ''; }"
        )
        if stop is None:  # past the last stop
            return names
        if stop:
            names.append(stop)
    raise AssertionError("Tab never left the page")


def overflowing(regions) -> list[bool]:
    return regions.evaluate_all("rs => rs.map((r) => r.scrollWidth > r.clientWidth + 1)")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [1280, 375])
def test_a_scroll_region_is_a_tab_stop_only_while_it_has_something_to_scroll(
    live_server, page, content, axe_violations, console_errors, width
):
    """Step 1's two diagrams fit a desktop's column and are wider than a phone; the results table fits both."""
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(live_server.url + CASE_STUDY_STEP.format(1))
    diagrams = page.locator("figure.diagram [data-scroll-region]")
    names = diagrams.evaluate_all("rs => rs.map((r) => r.getAttribute('aria-label'))")
    assert len(names) == 2
    if width == 1280:
        assert overflowing(diagrams) == [False, False]
        assert diagrams.evaluate_all("rs => rs.map((r) => r.getAttribute('tabindex'))") == [None, None]
        assert scroll_regions_tabbed_to(page) == []
    else:
        assert overflowing(diagrams) == [True, True]
        assert diagrams.evaluate_all("rs => rs.map((r) => r.getAttribute('tabindex'))") == ["0", "0"]
        assert scroll_regions_tabbed_to(page) == names
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    page.goto(f"{live_server.url}/results/")
    table = page.get_by_role("region", name="Score per lesson")
    assert overflowing(table) == [False]  # it fits a phone too (its numbers wrap)
    assert table.get_attribute("tabindex") is None
    assert scroll_regions_tabbed_to(page) == []
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    # A chart's table, in a <details>: a stop once opened, if it is wider than the screen.
    page.goto(f"{live_server.url}/calculators/replica/")
    page.locator("figure.calc-chart summary").click()
    chart_table = page.locator("figure.calc-chart [data-scroll-region]")
    assert overflowing(chart_table) == [width == 375]
    if width == 375:
        expect(chart_table).to_have_attribute("tabindex", "0")
    else:
        expect(chart_table).not_to_have_attribute("tabindex", "0")
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    assert console_errors == []


@pytest.mark.django_db(transaction=True)
def test_a_scroll_region_follows_swaps_and_the_window_width(live_server, page, content):
    """A region swapped in by htmx, or resized with the window, becomes a stop or stops being one.

    At 700 px the column (592 px) is too narrow to scale a diagram down, so a wide one scrolls."""
    page.set_viewport_size({"width": 700, "height": 800})
    page.goto(live_server.url + CASE_STUDY_STEP.format(2))
    diagram = page.locator("#wt-build-the-design [data-scroll-region]")
    expect(diagram).to_have_attribute("tabindex", "0")  # step 2 is wider than the column
    page.locator("#wt-build-the-design-back").click()
    expect(page.locator("#wt-build-the-design .step-count")).to_have_text("Step 1 of 5")
    expect(diagram).not_to_have_attribute("tabindex", "0")  # step 1, swapped in, fits
    page.set_viewport_size({"width": 375, "height": 800})
    expect(diagram).to_have_attribute("tabindex", "0")
    page.set_viewport_size({"width": 700, "height": 800})
    expect(diagram).not_to_have_attribute("tabindex", "0")
    page.locator("#wt-build-the-design-next").click()  # step 2 again, now on a desktop: scaled to fit the column
    expect(page.locator("#wt-build-the-design .step-count")).to_have_text("Step 2 of 5")
    expect(diagram).to_have_attribute("tabindex", "0")
    page.set_viewport_size({"width": 1280, "height": 800})
    expect(diagram).not_to_have_attribute("tabindex", "0")


@pytest.mark.django_db(transaction=True)
def test_the_header_links_take_two_rows_on_a_phone(live_server, page, content, django_user_model):
    """A visitor's links (Review among them) take two rows at 375 px; signed in, the account's name and
    "Log out" share a row, however long the name, so neither is left alone on one."""
    page.set_viewport_size({"width": 375, "height": 800})
    # Rows: an item starts a new one when it sits below the one before it.
    rows_js = (
        "() => [...document.querySelectorAll('.nav-list > li')].map((li) => li.getBoundingClientRect())"
        ".filter((r, i, all) => i === 0 || r.top >= all[i - 1].bottom).length"
    )
    # The centres of the account item's two links (a link and the log-out button when signed in).
    account_js = (
        "() => [...document.querySelectorAll('.nav-account > a, .nav-account button')]"
        ".map((e) => { const r = e.getBoundingClientRect(); return Math.round(r.top + r.height / 2); })"
    )
    page.goto(live_server.url + "/")
    assert page.evaluate(rows_js) == 2
    login, signup = page.evaluate(account_js)
    assert abs(login - signup) <= 3
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    django_user_model.objects.create_user("jordan_lee734", password="correct-horse-battery")
    log_in(page, live_server.url, "jordan_lee734", "correct-horse-battery")
    page.goto(live_server.url + "/")
    name, log_out = page.evaluate(account_js)
    assert abs(name - log_out) <= 3, (name, log_out)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375


def times_broken(page) -> list[str]:
    """Return the dates and times (<time>) on the page that are split over two lines."""
    return page.evaluate(
        "() => [...document.querySelectorAll('main time')].filter((t) =>"
        " new Set([...t.getClientRects()].map((r) => Math.round(r.bottom))).size > 1).map((t) => t.textContent)"
    )


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [375, 1280])
def test_a_new_token_takes_focus_and_the_token_table_fits(live_server, page, django_user_model, width):
    """Created with the keyboard, the new key's box has focus; the table fits a phone, "Revoke" and dates whole."""
    django_user_model.objects.create_user("ada", "ada@example.com", "correct-horse-battery")
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, live_server.url, "ada", "correct-horse-battery")
    page.goto(live_server.url + "/accounts/")
    page.get_by_label("Name").fill("a script with a long name")
    page.keyboard.press("Enter")
    expect(page.locator("#new-token")).to_be_focused()
    table = page.get_by_role("table", name="API tokens")
    expect(table.get_by_role("button", name=re.compile("^Revoke"))).to_be_in_viewport()
    assert times_broken(page) == []
    if width == 375:
        assert layout_problems(page, "main table") == []
    # The "Create a token" card's heading starts at its padding, as every card's first line does.
    above = page.evaluate(
        "() => { const h = [...document.querySelectorAll('main .card h3')].find((e) => e.textContent === 'Create a token');"
        " const card = h.closest('.card'), style = getComputedStyle(card);"
        " return Math.round(h.getBoundingClientRect().top - card.getBoundingClientRect().top"
        " - parseFloat(style.borderTopWidth) - parseFloat(style.paddingTop)); }"
    )
    assert above == 0, above
    page.get_by_role("button", name=re.compile("^Revoke")).focus()
    page.once("dialog", lambda dialog: dialog.accept())
    page.keyboard.press("Enter")
    expect(page.locator("#messages")).to_be_focused()
    expect(page.locator("#messages")).to_contain_text("Token revoked")


@pytest.mark.django_db(transaction=True)
def test_back_to_a_lesson_page_shows_the_answers_given_on_it(live_server, page, content, django_user_model):
    """The browser's Back button fetches a lesson page again: it showed it as first loaded, the answer missing.

    Signed in, as the learner who found it: a visitor's first answer sets the session cookie, and the changed
    cookie (Vary: Cookie) kept the stale copy from being used.
    """
    django_user_model.objects.create_user("back", password="a-long-password-1")
    log_in(page, live_server.url, "back", "a-long-password-1")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(live_server.url + SAMPLE + "?layer=2")
    progress = page.locator("#lesson-progress")
    before = progress.text_content()
    envelope = page.locator("#wt-size-the-cache")
    envelope.get_by_label("Your answer").fill("320 KiB")
    envelope.get_by_role("button", name="Check").click()
    expect(page.locator("#wt-size-the-cache-feedback")).to_contain_text("Correct")
    expect(progress).not_to_have_text(before)
    after = progress.text_content()
    page.get_by_role("link", name=re.compile("^Continue to layer 3")).click()
    expect(page.locator("#wt-grow-a-replica")).to_be_visible()
    page.go_back()
    expect(page.locator("#wt-size-the-cache-feedback")).to_contain_text("Correct")
    expect(page.locator("#lesson-progress")).to_have_text(after)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [375, 1280])
def test_check_sits_beside_the_answer_box_with_the_unit_and_error_under_both(live_server, page, content, width):
    """Check was aligned with the unit line under the box, lower than the box it checks."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(live_server.url + SAMPLE + "?layer=2")
    envelope = page.locator("#wt-size-the-cache")
    box, check = envelope.get_by_label("Your answer"), envelope.get_by_role("button", name="Check")
    widths = (box.bounding_box()["width"], check.bounding_box()["width"])
    for typed in ("", "abc"):  # as loaded, then refused with a message under the box
        if typed:
            box.fill(typed)
            check.click()
            expect(envelope.locator(".error")).to_contain_text("Enter a number")
            expect(box).to_have_value(typed)  # kept, to mend rather than type again
        field, button = box.bounding_box(), check.bounding_box()
        assert abs((field["y"] + field["height"] / 2) - (button["y"] + button["height"] / 2)) <= 2, (field, button)
        assert button["x"] >= field["x"] + field["width"]  # beside it, on its right
        assert (field["width"], button["width"]) == widths  # the message below sizes neither
        unit = envelope.locator(".number-form .unit").bounding_box()
        assert unit["y"] >= field["y"] + field["height"]  # the unit line under the box
