"""A learner in a real browser: answers a deep dive, steps through a build-up, answers an envelope step,
and sees the results page change."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import describe

SAMPLE = "/lessons/how-the-lab-works/"


@pytest.mark.django_db(transaction=True)
def test_learner_works_through_the_sample_lesson(live_server, page, content, axe_violations, console_errors):
    page.goto(live_server.url + "/results/")
    expect(page.locator("#total-title + p")).to_contain_text("0 of")

    page.goto(live_server.url + SAMPLE)
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    # A deep dive: pick the best approach; feedback swaps in, is announced and takes focus.
    dive = page.locator("#dd-kv-heads")
    dive.get_by_role("button", name=re.compile("only the 8 shared key-value heads")).click()
    feedback = page.locator("#dd-kv-heads-feedback")
    expect(feedback).to_contain_text("Best")
    expect(feedback).to_be_focused()
    expect(page.locator("#announcer")).to_contain_text("Correct: 10 of 10 points")
    dive.locator("details summary").first.click()  # compare another approach's feedback
    expect(dive.locator("details[open]")).to_have_count(1)

    # On to layer 2, its own page.
    page.get_by_role("link", name=re.compile("Continue to layer 2")).click()
    # An envelope step: a number is graded, then the arithmetic is revealed.
    envelope = page.locator("#wt-size-the-cache")
    envelope.get_by_label("Your answer").fill("320")
    envelope.get_by_role("button", name="Check").click()
    expect(page.locator("#wt-size-the-cache-feedback")).to_contain_text("Correct")
    expect(page.locator("#wt-size-the-cache")).to_contain_text("The worked arithmetic")

    # On to layer 3.
    page.get_by_role("link", name=re.compile("Continue to layer 3")).click()
    # A build-up walkthrough: step forward with the keyboard; the diagram grows.
    build = page.locator("#wt-grow-a-replica")
    expect(build.locator(".step-count")).to_have_text("Step 1 of 5")
    build.locator("#wt-grow-a-replica-next").focus()
    page.keyboard.press("Enter")
    expect(page.locator("#wt-grow-a-replica .step-count")).to_have_text("Step 2 of 5")
    expect(page.locator("#wt-grow-a-replica .box.new")).to_have_count(2)
    expect(page.locator("#wt-grow-a-replica figcaption")).to_contain_text("KV pool A")
    expect(page.locator("#wt-grow-a-replica-step-title")).to_be_focused()  # the new step's heading
    assert "/walkthroughs/grow-a-replica/2/" in page.url
    page.locator("#wt-grow-a-replica-back").click()
    expect(page.locator("#wt-grow-a-replica .step-count")).to_have_text("Step 1 of 5")

    # The results page reflects both answers.
    page.goto(live_server.url + "/results/")
    expect(page.locator("#total-title + p")).to_contain_text("20 of")
    expect(page.get_by_role("heading", name="KV memory allocation")).to_be_visible()
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    assert console_errors == []
