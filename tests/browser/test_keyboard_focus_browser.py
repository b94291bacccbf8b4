"""The lesson page with the keyboard only: after each swap focus lands where the next Tab continues,
on the hint just taken, on a number input refused as invalid, on the saved written answer."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import tab_to

SAMPLE = "/lessons/how-the-lab-works/"


def focused_text(page) -> str:
    return page.evaluate("() => document.activeElement.textContent.trim()")


def press_enter_on(locator) -> None:
    locator.focus()
    locator.press("Enter")


@pytest.mark.django_db(transaction=True)
def test_a_hint_taken_with_the_keyboard_takes_focus_and_tab_goes_on_to_the_approaches(live_server, page, content):
    page.goto(live_server.url + SAMPLE)
    dive = page.locator("#dd-kv-heads")
    press_enter_on(dive.get_by_role("button", name="Take hint 1 of 2 (costs 2 points)"))
    hint = dive.locator(".hint")
    expect(hint).to_contain_text("Count what the cache keeps for one token")
    expect(hint).to_be_focused()
    page.keyboard.press("Tab")
    expect(dive.get_by_role("button", name=re.compile("Take hint 2 of 2"))).to_be_focused()
    page.keyboard.press("Tab")
    expect(dive.locator(".choice-button").first).to_be_focused()  # not skipped: the approaches come next

    # A step's hint, then a challenge's: the same.
    page.goto(live_server.url + SAMPLE + "?layer=2")
    step = page.locator("#wt-size-the-cache")
    press_enter_on(step.get_by_role("button", name=re.compile("Take hint 1 of 2")))
    expect(step.locator(".hint")).to_be_focused()
    expect(step.locator(".hint")).to_contain_text("Multiply 2 × 80 × 8 × 128 × 2")
    page.goto(live_server.url + SAMPLE + "?layer=3")
    challenge = page.locator("#ch-requests-at-your-context")
    press_enter_on(challenge.get_by_role("button", name=re.compile("Take hint 1 of 2")))
    expect(challenge.locator(".hint")).to_be_focused()
    page.keyboard.press("Tab")
    expect(challenge.get_by_role("button", name=re.compile("Take hint 2 of 2"))).to_be_focused()


@pytest.mark.django_db(transaction=True)
def test_an_invalid_number_moves_focus_to_the_input_it_describes(live_server, page, content):
    page.goto(live_server.url + SAMPLE + "?layer=2")
    step = page.locator("#wt-size-the-cache")
    error = step.locator("#wt-size-the-cache-value-error")
    step.locator("#wt-size-the-cache-value").fill("abc")
    press_enter_on(step.get_by_role("button", name="Check"))  # a first answer, refused
    expect(error).to_contain_text("Enter a number")  # swapped in
    field = step.locator("#wt-size-the-cache-value")
    expect(field).to_be_focused()
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_accessible_description(re.compile("^Enter a number"))

    field.fill("1")
    press_enter_on(step.get_by_role("button", name="Check"))  # a wrong first answer
    expect(step.locator("#wt-size-the-cache-feedback")).to_be_focused()
    step.get_by_label("Your answer (retry, not scored)").fill("abc")
    press_enter_on(step.get_by_role("button", name="Check"))  # an invalid retry
    expect(error).to_contain_text("Enter a number")
    field = step.get_by_label("Your answer (retry, not scored)")
    expect(field).to_be_focused()
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(field).to_have_accessible_description(re.compile("^Enter a number"))


@pytest.mark.django_db(transaction=True)
def test_the_saved_written_answer_shows_focus_as_a_feedback_box_does(live_server, page, content):
    page.goto(live_server.url + SAMPLE)
    question = page.locator("#oq-explain-kv-bytes")
    question.get_by_label("Your answer, as you would say it in the interview").fill("Keys and values, per layer.")
    # Clicked, not keyed: the outline must not depend on :focus-visible's guess, as a feedback box's does not.
    question.get_by_role("button", name="Save, then see the checklist").click()
    written = question.locator("#oq-explain-kv-bytes-written")
    expect(written).to_be_focused()
    expect(written).to_have_css("outline-style", "solid")
    expect(written).to_have_css("outline-width", "3px")


@pytest.mark.django_db(transaction=True)
def test_resetting_progress_with_the_keyboard_lands_focus_on_the_confirmation(live_server, page, content):
    """The results page that follows a reset opened with focus on the page: a screen reader started at the top,
    the keyboard too. Focus is on the message saying what was deleted."""
    page.goto(live_server.url + "/results/reset/")
    tab_to(page, page.get_by_label("Yes, delete all my answers"))
    page.keyboard.press("Space")
    page.keyboard.press("Tab")
    expect(page.get_by_role("button", name="Reset progress")).to_be_focused()
    with page.expect_navigation():
        page.keyboard.press("Enter")
    expect(page.get_by_role("heading", level=1)).to_have_text("Your results")
    message = page.get_by_role("status").filter(has_text="Progress reset: 0 answers deleted.")
    expect(message).to_be_focused()
    assert page.evaluate("() => document.activeElement.id") == "messages"
