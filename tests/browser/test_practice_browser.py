"""Practice in a real browser: a weak first answer keeps the best approach's feedback hidden until asked,
an open question is written then ticked, and a review session grades a recall and reschedules it."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from lessons.models import DeepDive, ReviewCard
from tests.browser.conftest import describe
from tests.browser.narrow import layout_problems

SAMPLE = "/lessons/how-the-lab-works/"
BEST_FEEDBACK = "The cache grows with layers"  # from the best choice of kv-heads


@pytest.mark.django_db(transaction=True)
def test_think_before_the_reveal_an_open_question_and_a_review(
    live_server, page, content, axe_violations, console_errors
):
    page.goto(live_server.url + SAMPLE)
    dive = page.locator("#dd-kv-heads")
    dive.get_by_role("button", name=re.compile("one cached vector per KV head")).click()  # the weak approach
    feedback = page.locator("#dd-kv-heads-feedback")
    expect(feedback).to_contain_text("Weak")
    expect(feedback).to_be_focused()
    expect(page.locator("#announcer")).to_contain_text("Missed: 0 of 10 points")
    expect(dive).not_to_contain_text(BEST_FEEDBACK)  # the best approach's feedback stays hidden
    expect(dive.locator(".compare")).to_have_count(0)
    expect(dive.get_by_role("group", name="Try again (recorded, not scored)")).to_be_visible()
    page.reload()
    expect(page.locator("#dd-kv-heads")).not_to_contain_text(BEST_FEEDBACK)  # nor after a reload
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    page.locator("#dd-kv-heads").get_by_role("button", name="Show all approaches").click()
    expect(page.locator("#announcer")).to_contain_text("Every approach is shown.")
    compare = page.locator("#dd-kv-heads .compare")
    expect(compare).to_be_visible()
    compare.locator("summary", has_text="only the 8 shared key-value heads").click()
    expect(compare).to_contain_text(BEST_FEEDBACK)

    # An open question: write first, then tick the checklist; the ticked share scores.
    question = page.locator("#oq-explain-kv-bytes")
    question.get_by_label("Your answer, as you would say it in the interview").fill(
        "Every token keeps its keys and values for each layer, so memory grows with the conversation."
    )
    question.get_by_role("button", name="Save, then see the checklist").click()
    checklist = page.locator("#oq-explain-kv-bytes .checklist input[type=checkbox]")
    expect(checklist).to_have_count(3)
    checklist.nth(0).check()
    checklist.nth(1).check()
    page.locator("#oq-explain-kv-bytes").get_by_role("button", name="Score my answer").click()
    expect(page.locator("#oq-explain-kv-bytes-feedback")).to_contain_text("Partly right · 7 of 10 points")
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    # In review, the written answer saved lands focus on it (it dropped to the page), kept on a reload.
    ReviewCard.objects.filter(open_question__key="explain-kv-bytes").update(due=timezone.now() - timedelta(days=9))
    ReviewCard.objects.exclude(open_question__key="explain-kv-bytes").update(due=timezone.now() + timedelta(days=9))
    page.goto(live_server.url + "/review/")
    page.get_by_label("Your answer, as you would say it").fill("Keys and values per layer, per token.")
    page.get_by_role("button", name="Save, then see the checklist").click()
    expect(page.locator("#review-written")).to_be_focused()
    page.reload()
    expect(page.locator(".review-item blockquote")).to_have_text("Keys and values per layer, per token.")
    ReviewCard.objects.update(due=timezone.now() + timedelta(days=9))  # the review below finds only its own

    # The missed deep dive is due (as ten minutes later): the review asks it afresh and grades a recall.
    ReviewCard.objects.filter(deep_dive__key="kv-heads").update(due=timezone.now() - timedelta(minutes=1))
    DeepDive.objects.filter(key="kv-heads").update(hints=["Count heads."], hints_html=["<p>Count heads.</p>"])
    page.goto(live_server.url + "/review/")
    expect(page.locator("#quiz-prompt")).to_contain_text("bytes of KV cache")
    expect(page.locator("main")).not_to_contain_text("Weak")  # no earlier verdict on screen
    order = page.locator(".review-item .choice-button").all_inner_texts()
    page.get_by_role("button", name="Take hint 1 of 1").click()  # htmx: the hints region swaps, the page stays
    hint = page.locator("#review-hints .hint").last
    expect(hint).to_contain_text("Count heads.")
    expect(hint).to_be_focused()
    assert page.url == live_server.url + "/review/"  # no reload
    assert page.locator(".review-item .choice-button").all_inner_texts() == order
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    page.get_by_role("button", name=re.compile("only the 8 shared key-value heads")).click()
    result = page.locator("#review-result")
    expect(result).to_contain_text("Recalled with a hint")  # it comes back sooner than a recall unaided
    expect(result).to_contain_text("It comes back on")
    expect(page.locator("#summary-title + p")).to_have_text("1 reviewed · 1 recalled")
    # On a phone the session's table reads in whole words ("Result", "Recalled"), one card per question.
    page.set_viewport_size({"width": 375, "height": 800})
    assert layout_problems(page, "#summary-title ~ table") == []
    page.set_viewport_size({"width": 1280, "height": 800})
    page.get_by_role("button", name="Finish this session").click()  # the page says what the session held
    expect(page.locator("#messages")).to_have_text("Review session finished: 1 reviewed, 1 recalled.")
    expect(page.locator("main")).to_contain_text("Nothing is due right now. The next item comes back on")
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    card = ReviewCard.objects.get(deep_dive__key="kv-heads")
    assert card.due > timezone.now() + timedelta(hours=1) and card.last_outcome == "correct"
    page.goto(live_server.url + "/results/")
    expect(page.locator("#total-title + p")).to_contain_text("7 of")  # the review left the 0 points as they were
    expect(page.locator("#review-title + p")).to_contain_text("The next item comes back on")
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    assert console_errors == []
