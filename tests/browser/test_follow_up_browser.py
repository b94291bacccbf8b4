"""A weak answer that opens a follow-up, in a real browser: the deep dive waits for the follow-up (no other try, no
reveal), and the follow-up's answer frees it at once, with focus and the announcement on the follow-up's feedback."""

import re

import pytest
from playwright.sync_api import expect

from lessons.models import Choice
from tests.browser.conftest import button_text, describe

LESSON = "/lessons/how-the-lab-works/"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_deep_dive_waits_for_its_follow_up_and_opens_when_it_is_answered(
    live_server, page, content, axe_violations, console_errors, scheme
):
    page.emulate_media(color_scheme=scheme)
    page.set_viewport_size({"width": 375, "height": 800})
    weak = Choice.objects.select_related("follow_up").get(
        deep_dive__key="kv-heads", verdict="weak", follow_up__isnull=False
    )
    follow_up = weak.follow_up
    page.goto(live_server.url + LESSON)
    parent = page.locator("#dd-kv-heads")
    parent.get_by_role("button", name=re.compile(re.escape(button_text(weak)))).click()
    expect(page.locator(f"#dd-{follow_up.key}")).to_be_visible()
    note = parent.locator("p.meta", has_text="The interviewer follows up first.")
    expect(note).to_be_visible()
    # The parent's approaches are not offered again, nor revealed, nor its feedback shown, while the follow-up waits.
    expect(parent.locator("#dd-kv-heads-feedback .prose")).to_have_count(0)
    expect(parent.locator("> form button[name=choice]")).to_have_count(0)
    expect(parent.get_by_role("button", name="Show all approaches")).to_have_count(0)
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    best = Choice.objects.get(deep_dive=follow_up, verdict="best")
    page.locator(f"#dd-{follow_up.key}").get_by_role("button", name=re.compile(re.escape(button_text(best)))).click()
    feedback = page.locator(f"#dd-{follow_up.key}-feedback")
    expect(feedback).to_contain_text("Best")
    expect(feedback).to_be_focused()
    expect(page.locator("#announcer")).to_contain_text("Correct")
    # Without a reload, the parent takes a try again and offers every approach.
    expect(note).to_have_count(0)
    expect(parent.locator("#dd-kv-heads-feedback .prose")).to_be_visible()  # its feedback, now
    expect(parent.get_by_role("button", name="Show all approaches")).to_be_visible()
    expect(parent.locator("> form button[name=choice]")).to_have_count(
        Choice.objects.filter(deep_dive=weak.deep_dive).count()
    )
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    assert console_errors == []
