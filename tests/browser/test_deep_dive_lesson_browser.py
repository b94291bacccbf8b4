"""A learner works through the KV memory allocation deep-dive lesson in a real browser: a branching deep dive,
the envelope walkthrough (one slip caught), and a challenge with numbers drawn for them."""

import re

import pytest
from django.conf import settings
from playwright.sync_api import expect

from lessons.models import Challenge, Choice, Step
from lessons.services import challenge_draw, expected_for
from tests.browser.conftest import button_text, describe

LESSON = "kv-allocation"


def best_text(key: str) -> str:
    choice = Choice.objects.get(deep_dive__key=key, deep_dive__section__lesson__slug=LESSON, verdict="best")
    return button_text(choice)


@pytest.mark.django_db(transaction=True)
def test_learner_works_through_the_kv_allocation_lesson(live_server, page, content, axe_violations, console_errors):
    page.goto(f"{live_server.url}/lessons/{LESSON}/")
    expect(page.get_by_role("heading", name="KV memory allocation", level=1)).to_be_visible()

    # A deep dive whose best answer leads to a follow-up, which appears only after the answer.
    expect(page.locator("#dd-block-size")).to_have_count(0)
    page.locator("#dd-slab-waste").get_by_role("button", name=re.compile(re.escape(best_text("slab-waste")))).click()
    expect(page.locator("#dd-slab-waste-feedback")).to_contain_text("Best")
    expect(page.locator("#announcer")).to_contain_text("Correct")
    follow_up = page.locator("#dd-block-size")
    expect(follow_up).to_be_visible()
    follow_up.get_by_role("button", name=re.compile(re.escape(best_text("block-size")))).click()
    expect(page.locator("#dd-block-size-feedback")).to_contain_text("Best")

    # On through the layers, a page each, to the envelope in layer 3.
    page.get_by_role("link", name=re.compile("Continue to layer 2")).click()
    expect(page.locator("#dd-slab-waste")).to_have_count(0)
    page.get_by_role("link", name=re.compile("Continue to layer 3")).click()

    # The envelope: step 1 answered right, step 2 answered in GiB, which gets its own feedback.
    steps = list(
        Step.objects.filter(walkthrough__key="long-context-envelope", walkthrough__section__lesson__slug=LESSON)
        .exclude(calculator="")
        .order_by("order")
    )
    assert len(steps) >= 3
    envelope = page.locator("#wt-long-context-envelope")
    envelope.get_by_label("Your answer").fill(f"{expected_for(steps[0]).value:.6g}")
    envelope.get_by_role("button", name="Check").click()
    expect(page.locator("#wt-long-context-envelope-feedback")).to_contain_text("Correct")
    page.locator("#wt-long-context-envelope-next").click()
    expect(page.locator("#wt-long-context-envelope .step-count")).to_have_text(f"Step 2 of {len(steps)}")
    gib = expected_for(steps[1]).value * 1e9 / 2**30
    page.locator("#wt-long-context-envelope").get_by_label("Your answer").fill(f"{gib:.4g}")
    page.locator("#wt-long-context-envelope").get_by_role("button", name="Check").click()
    expect(page.locator("#wt-long-context-envelope-feedback")).to_contain_text("That is GiB")

    # A challenge with numbers drawn for this visitor's session.
    challenge = Challenge.objects.get(key="bytes-per-token-gqa", section__lesson__slug=LESSON)
    session_key = next(c["value"] for c in page.context.cookies() if c["name"] == settings.SESSION_COOKIE_NAME)
    drawn = challenge_draw(f"session:{session_key}", challenge)["inputs"]
    card = page.locator("#ch-bytes-per-token-gqa")
    expect(card).to_contain_text(f"{drawn['layers']} layers")
    card.get_by_label("Your answer").fill(f"{expected_for(challenge, drawn).value:.8g}")
    card.get_by_role("button", name="Check").click()
    expect(page.locator("#ch-bytes-per-token-gqa-feedback")).to_contain_text("Correct")

    violations = axe_violations(page)
    assert violations == [], describe(violations)

    # Come back later: every answer is still there.
    page.goto(f"{live_server.url}/lessons/{LESSON}/")
    expect(page.locator("#dd-block-size-feedback")).to_contain_text("Best")
    page.get_by_role("navigation", name="Lesson outline").get_by_role("link", name=re.compile("Layer 3")).click()
    expect(page.locator("#ch-bytes-per-token-gqa-feedback")).to_contain_text("Correct")
    expect(page.locator("#lesson-progress")).not_to_have_attribute("value", "0")
    assert console_errors == []
