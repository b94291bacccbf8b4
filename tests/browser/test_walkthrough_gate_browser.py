"""A walkthrough step's address typed before the steps it starts from are answered, in a real browser: the page opens
at the step to answer, and its notice, focused, says why (a role="status" already on the page is not announced)."""

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import describe

STEP_2 = "/lessons/how-the-lab-works/walkthroughs/size-the-cache/2/"


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("width", [375, 1280])
def test_a_step_asked_for_too_early_opens_at_the_step_to_answer_with_its_notice_focused(
    live_server, page, content, axe_violations, console_errors, width
):
    page.set_viewport_size({"width": width, "height": 800})
    page.goto(live_server.url + STEP_2)
    assert page.url.endswith("/walkthroughs/size-the-cache/1/?opens=2#wt-size-the-cache")
    walkthrough = page.locator("#wt-size-the-cache")
    expect(walkthrough.locator(".step-count")).to_have_text("Step 1 of 2")
    notice = walkthrough.locator(".message-info")
    expect(notice).to_have_text(
        "Step 2 opens once the steps before it are answered: here is step 1, the first to answer."
    )
    expect(notice).to_be_focused()
    expect(notice).to_be_in_viewport()
    # Answered (wrong is enough), step 2 opens.
    walkthrough.get_by_label("Your answer").fill("1")
    walkthrough.get_by_role("button", name="Check").click()
    expect(page.locator("#wt-size-the-cache-feedback")).to_be_visible()
    page.locator("#wt-size-the-cache-next").click()
    expect(walkthrough.locator(".step-count")).to_have_text("Step 2 of 2")
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    assert console_errors == []
