"""A whole short mock interview in a real browser: the clock's announcement, no feedback until the
scorecard, the history with its charts; axe-core finds nothing on any of the pages."""

import re
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import describe, tab_to
from tests.browser.narrow import layout_problems


@pytest.mark.django_db(transaction=True)
def test_a_short_interview_runs_to_its_scorecard(
    live_server, page, content, settings, time_machine, axe_violations, console_errors
):
    settings.INTERVIEW_BUDGET_SCALE = 1 / 9  # 45 minutes become 5
    settings.INTERVIEW_TIMER_POLL_SECONDS = 1
    time_machine.move_to(datetime(2026, 11, 30, 12, 0, tzinfo=UTC), tick=True)  # the server's clock
    page.goto(live_server.url + "/interviews/")
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    page.get_by_label("Scenario").select_option("llm-serving-platform")
    page.get_by_role("button", name="Start the interview").click()
    expect(page.get_by_role("heading", name="The clock")).to_be_visible()
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    # On a phone the phases fold away, so question 1 starts on the first screen.
    page.set_viewport_size({"width": 375, "height": 740})
    question_top = page.locator("#question-title").bounding_box()["y"]
    assert question_top < 740, question_top
    page.get_by_text(re.compile(r"^Total budget: \d+ minutes, in \d+ phases$")).click()
    expect(page.locator(".phases li").first).to_be_visible()
    page.set_viewport_size({"width": 1280, "height": 800})
    # Four minutes later (on the server's clock) the htmx clock says "one minute left", through its live region.
    expect(page.locator("#time-alert")).to_be_empty()
    time_machine.shift(timedelta(minutes=4, seconds=10))
    expect(page.locator("#time-alert")).to_have_text("One minute left.")
    expect(page.locator("#time-alert")).to_have_attribute("aria-live", "polite")
    time_machine.shift(-timedelta(minutes=4, seconds=10))  # back: the answers below are in time
    settings.INTERVIEW_TIMER_POLL_SECONDS = 600  # the pages from here on poll rarely

    # Finishing with questions left asks first; Keep going returns to the question.
    page.get_by_role("link", name="Finish early…").click()
    expect(page.get_by_role("heading", level=2)).to_contain_text("unanswered questions; they will score 0. Finish now?")
    assert page.url.endswith("/finish/")  # a plain address: no bare "?" of a GET form without fields
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    page.get_by_role("link", name="Keep going").click()
    expect(page.locator("#question")).to_be_visible()

    numbers = 0
    for _ in range(20):
        question = page.locator("#question")
        if not question.count():
            break
        if page.locator("#answer-value").count():
            # The unit ("in requests (you may write the unit)") is the field's help: under the box, spaced as
            # help text is (at 1280 px it sat beside the box, a space's width from it).
            page.wait_for_load_state()  # the stylesheet too
            gap, indent = page.evaluate(
                """() => { const box = document.getElementById("answer-value").getBoundingClientRect(),
                    hint = document.getElementById("answer-unit").getBoundingClientRect();
                    return [hint.top - box.bottom, hint.left - box.left]; }"""
            )  # in one go: the page may still be scrolling to the question
            assert gap >= 4 and indent == 0, (gap, indent)
            numbers += 1
            page.get_by_label("Your number").fill("110")
        elif page.locator("#answer-text").count():
            page.get_by_label("Your answer").fill("A gateway streams tokens, a router keeps prefix affinity.")
        elif page.locator("input[name=ticked]").count():
            page.locator("input[name=ticked]").first.check()
            violations = axe_violations(page)
            assert violations == [], describe(violations)
        else:
            page.locator("input[name=choice]").first.check()
        page.get_by_role("button", name="Answer and go on").click()
        expect(page.locator("main")).not_to_contain_text("Best ·")  # no verdict during the interview
    expect(page.locator("main")).to_contain_text("Every question is answered")
    assert numbers, "no number question was asked"
    page.get_by_role("button", name="Finish and see the scorecard").click()

    expect(page.get_by_role("heading", name=re.compile(r"^Overall: (Strong|Ready|Not yet)$"))).to_be_visible()
    # The page opens at the scorecard, focus on its heading (not the body, not the whole scorecard).
    expect(page.get_by_role("heading", name=re.compile("^Overall: "))).to_be_focused()
    table = page.get_by_role("table", name="Score by rubric dimension")
    for label in ("Requirements", "Estimation", "Design", "Trade-offs", "Communication", "Time management"):
        expect(table.get_by_role("rowheader", name=label)).to_be_visible()
    expect(page.locator("main")).to_contain_text("You covered 1 of the")
    page.get_by_text("The worked answer").first.click()
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    # At 375 px each of the scorecard's table rows is a card: nothing (captions included) sticks out or
    # scrolls sideways, no word is cut.
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    assert layout_problems(page, "#scorecard table") == []
    violations = axe_violations(page)  # the cards are still a table to a screen reader
    assert violations == [], describe(violations)
    meaning = page.locator('#scorecard td[data-label="What it means"]').first
    assert meaning.bounding_box()["width"] >= 250  # "What it means" reads in lines of words
    page.set_viewport_size({"width": 1280, "height": 800})

    page.get_by_role("link", name="Your attempts and trends").click()
    expect(page.get_by_role("img", name=re.compile("^Requirements by attempt"))).to_be_visible()
    expect(page.locator("main")).to_contain_text("One attempt so far: take another to see a trend.")
    expect(page.get_by_role("heading", name=re.compile("^Practise this"))).to_be_visible()
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    # At 1280 px every column of the attempts shows without scrolling ("Time management", "Band"), and the
    # start time keeps its date and its time whole (one line each).
    attempts = page.locator(".attempts-table").locator("xpath=..")
    assert attempts.evaluate("box => box.scrollWidth <= box.clientWidth"), attempts.evaluate("b => b.scrollWidth")
    started = page.locator(".attempts-table tbody time").first
    assert started.evaluate("t => new Set([...t.getClientRects()].map((r) => Math.round(r.bottom))).size") == 2
    page.set_viewport_size({"width": 375, "height": 800})
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 375
    scenario = page.locator(".attempts-table td.scenario").first.bounding_box()
    assert scenario["width"] >= 200  # the scenario's title reads in words, not a letter per line
    # The phases and the attempts: one card per row, every header readable ("Questions", "Attempt").
    assert layout_problems(page, "main table") == []
    # A clock poll still in flight when a form navigates away is cancelled by the browser: not an error.
    assert [error for error in console_errors if "/timer/" not in error] == []


def focused_id(page) -> str:
    return page.evaluate("() => document.activeElement.id")


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [375, 1280])
def test_answering_with_the_keyboard_moves_focus_to_the_next_question(live_server, page, content, settings, width):
    """After "Answer and go on" focus lands on the new question's heading (a screen reader reads it out),
    not on the page, with its phase and position line in view; a fresh interview starts at the top of the
    page with focus on its first question's heading."""
    settings.INTERVIEW_TIMER_POLL_SECONDS = 600  # no clock swap during the test
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(live_server.url + "/interviews/")
    page.get_by_label("Scenario").select_option("buying-the-fleet")
    page.get_by_role("button", name="Start the interview").click()
    heading = page.locator("#question-title")
    expect(heading).to_be_visible()
    # First arrival: focus on question 1's heading (described by its phase and position), not on the page,
    # and the page is not scrolled (the clock above it stays in view).
    expect(heading).to_be_focused()
    expect(heading).to_have_accessible_description(re.compile("question 1 of \\d+$"))
    assert page.evaluate("() => window.scrollY") == 0

    for position in (2, 3, 4):  # two approaches picked with Space, then a number typed and sent with Enter
        before = heading.inner_text()
        if page.locator("#answer-value").count():
            page.get_by_label("Your number").focus()
            page.keyboard.type("abc")  # refused: the message beside the field, which keeps "abc" and has focus
            page.keyboard.press("Enter")
            field = page.get_by_label("Your number")
            expect(field).to_be_focused()
            expect(field).to_have_value("abc")
            expect(page.locator("#question form [role=alert]")).to_be_in_viewport()
            page.keyboard.press("Control+a")
            page.keyboard.type("110")
            page.keyboard.press("Enter")
        else:
            page.locator("input[name=choice]").first.focus()
            page.keyboard.press("Space")
            page.keyboard.press("Tab")
            expect(page.get_by_role("button", name="Answer and go on")).to_be_focused()
            page.keyboard.press("Enter")
        expect(page.locator("#question .eyebrow")).to_contain_text(f"question {position} of")
        expect(heading).not_to_have_text(before)
        expect(heading).to_be_focused()
        assert focused_id(page) == "question-title"
        assert page.evaluate("() => document.activeElement.tagName") == "H2"
        expect(heading).to_have_accessible_description(re.compile(f"question {position} of \\d+$"))
        expect(heading).to_be_in_viewport()
        expect(page.locator("#question-position")).to_be_in_viewport(ratio=1)  # the whole line, above it


@pytest.mark.django_db(transaction=True)
def test_the_clock_counts_down_each_second_between_polls(live_server, page, content, settings):
    """The clock read "45:00 (when this was shown)" for fifteen seconds at a time: a timed interview shows a
    running countdown. The browser's clock is a fake one here, moved on by the test."""
    settings.INTERVIEW_TIMER_POLL_SECONDS = 600  # no poll during the test: the page counts alone
    page.clock.install()
    page.goto(live_server.url + "/interviews/")
    page.get_by_label("Scenario").select_option("buying-the-fleet")
    page.get_by_role("button", name="Start the interview").click()
    clock = page.get_by_role("timer")

    def seconds() -> int:
        minutes, secs = clock.inner_text().split(":")
        return int(minutes) * 60 + int(secs)

    start = seconds()
    assert 44 * 60 < start <= 45 * 60
    expect(page.locator("#interview-timer")).to_contain_text("(minutes:seconds).")
    page.clock.run_for(65_000)
    assert start - 66 <= seconds() <= start - 64


@pytest.mark.django_db(transaction=True)
def test_finishing_early_with_the_keyboard_lands_focus_on_the_scorecard(live_server, page, content, settings):
    """Finish, then "Finish now" on the page that asks first: the scorecard opens with focus on its heading,
    "Overall: …" (the address's #band-title), so a screen reader starts at the outcome, not at the top of the page.
    Focus was on the whole scorecard, about 3,200 px tall on a phone: its ring outlined all of it."""
    settings.INTERVIEW_TIMER_POLL_SECONDS = 600
    page.goto(live_server.url + "/interviews/")
    page.get_by_label("Scenario").select_option("buying-the-fleet")
    page.get_by_role("button", name="Start the interview").click()
    expect(page.locator("#question-title")).to_be_focused()
    tab_to(page, page.get_by_role("link", name="Finish early…"))
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=2)).to_contain_text("Finish now?")
    # The confirmation opens on its question (read first), and Finish now is the next Tab stop.
    expect(page.locator("#finish-title")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Finish now")).to_be_focused()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    heading = page.get_by_role("heading", name=re.compile("^Overall: "))
    expect(heading).to_be_focused()
    assert page.evaluate("() => document.activeElement.id") == "band-title"
    expect(heading).to_be_in_viewport()
    # The focus ring is the heading's, one line high, not the scorecard's.
    assert heading.bounding_box()["height"] < 100


@pytest.mark.django_db(transaction=True)
def test_an_answer_sent_again_lands_focus_on_the_already_answered_message(live_server, page, content, settings):
    """A second tab still on question 1 answers it again: the page says it was already answered and focus is
    on that message (it went to the next question's heading, the message left above, unread)."""
    settings.INTERVIEW_TIMER_POLL_SECONDS = 600
    page.goto(live_server.url + "/interviews/")
    page.get_by_label("Scenario").select_option("buying-the-fleet")
    page.get_by_role("button", name="Start the interview").click()
    expect(page.locator("#question-title")).to_be_focused()
    other = page.context.new_page()  # a second tab on the same question
    other.goto(page.url)
    for tab in (page, other):
        tab.bring_to_front()
        tab.locator("input[name=choice]").first.focus()
        tab.keyboard.press("Space")
        tab.keyboard.press("Tab")
        with tab.expect_navigation():
            tab.keyboard.press("Enter")
    expect(page.locator("#question-position")).to_contain_text("question 2 of")
    message = other.get_by_role("status").filter(
        has_text="That question was already answered, so this second answer was not recorded; here is the next one."
    )
    expect(message).to_be_focused()
    expect(message).to_be_in_viewport()
    expect(other.locator("#question-position")).to_contain_text("question 2 of")  # the next question, below it
