"""Under the Content-Security-Policy, htmx, the admin and the API docs still work with no violations."""

import re

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import expect


@pytest.mark.django_db(transaction=True)
def test_admin_works_under_the_policy(live_server, page, content, console_errors):
    User.objects.create_superuser("boss", "boss@example.com", "a-long-pass-phrase")
    page.goto(live_server.url + "/admin/login/?next=/admin/lessons/deepdive/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill("a-long-pass-phrase")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("heading", name="Select deep dive to change")).to_be_visible()
    page.get_by_role("link", name="kv-heads", exact=True).click()
    expect(page.locator("#choices-group")).to_be_visible()
    assert [e for e in console_errors if "Content Security Policy" in e or "Refused" in e] == []


@pytest.mark.django_db(transaction=True)
def test_api_docs_render_locally_under_the_policy(live_server, page, console_errors):
    requests = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(live_server.url + "/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Serving Interview Lab API")
    assert all(url.startswith(live_server.url) or url.startswith("data:") for url in requests), requests
    assert [e for e in console_errors if "Content Security Policy" in e or "Refused" in e] == []


@pytest.mark.django_db(transaction=True)
def test_lesson_and_calculator_pages_log_no_errors_while_used(live_server, page, content, console_errors):
    """htmx injects no inline styles (blocked by the policy) and typing does not log aborted requests."""
    page.goto(live_server.url + "/lessons/how-the-lab-works/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    page.goto(live_server.url + "/calculators/kv-cache/")
    tokens = page.locator("#id_tokens")
    tokens.fill("")
    # Pauses longer than the 300 ms debounce: each keystroke starts a request while the last may still run.
    for digit in "40960":
        tokens.press(digit)
        page.wait_for_timeout(350)
    expect(page).to_have_url(re.compile(r"tokens=40960"))
    expect(page.locator("#announcer")).to_contain_text("Updated.")
    assert console_errors == []


@pytest.mark.django_db(transaction=True)
def test_an_answer_after_walkthrough_next_and_back_logs_no_policy_error(live_server, page, content, console_errors):
    """htmx settles no ``style`` attribute after a swap (an inline style the policy refuses)."""
    page.goto(live_server.url + "/lessons/how-the-lab-works/?layer=2")
    # htmx's default settles ``style`` too: an element that had an empty style gets it set inline again.
    assert "style" not in page.evaluate("htmx.config.attributesToSettle")
    envelope = page.locator("#wt-size-the-cache")
    envelope.get_by_label("Your answer").fill("300 KiB")  # partly right: a swap with feedback, and step 2 opens
    envelope.get_by_role("button", name="Check").click()
    expect(envelope.locator(".feedback, .error").first).to_be_visible()
    envelope.locator("#wt-size-the-cache-next").click()
    expect(envelope.locator(".step-count")).to_contain_text("Step 2 of")
    envelope.locator("#wt-size-the-cache-back").click()
    expect(envelope.locator(".step-count")).to_contain_text("Step 1 of")
    envelope.get_by_label("Your answer").fill("320 KiB")
    envelope.get_by_role("button", name="Check").click()
    expect(envelope).to_contain_text("Correct")
    assert [e for e in console_errors if "Content Security Policy" in e or "style" in e] == []
