"""A newcomer works through the case study's layer 3 in a real browser and sees the score on the results page."""

import re

import pytest
from playwright.sync_api import expect

from lessons.models import Choice, DeepDive, Step
from lessons.services import expected_for
from tests.browser.conftest import button_text, describe

CASE = "/lessons/llm-serving-platform/"
MOMENTS = ["kv-memory", "batching", "speculative", "routing", "autoscaling"]  # layer 3's; tensor-parallel ends layer 2


def best_choice(key: str) -> Choice:
    return Choice.objects.select_related("follow_up").get(
        deep_dive__key=key, deep_dive__section__lesson__slug="llm-serving-platform", verdict="best"
    )


def best_text(key: str) -> str:
    return button_text(best_choice(key))


@pytest.mark.django_db(transaction=True)
def test_newcomer_works_through_layer_3_and_sees_the_score(live_server, page, content, axe_violations, console_errors):
    page.goto(live_server.url + CASE)
    # The call the numbers rest on ends layer 2: how many GPUs a 70B replica gets.
    page.get_by_role("navigation", name="Lesson outline").get_by_role("link", name=re.compile("^Layer 2")).click()
    expect(page.locator("#layer-2")).to_be_visible()
    page.locator("#dd-tensor-parallel").get_by_role(
        "button", name=re.compile(re.escape(best_text("tensor-parallel")))
    ).click()
    expect(page.locator("#dd-tensor-parallel-feedback")).to_contain_text("Best")
    page.get_by_role("navigation", name="Lesson outline").get_by_role("link", name="Layer 3 · Go deeper").click()
    expect(page.locator("#layer-3")).to_be_visible()

    # Size it up: three graded numbers, each computed by a calculator.
    steps = list(
        Step.objects.filter(walkthrough__key="size-it-up", walkthrough__section__lesson__slug="llm-serving-platform")
        .exclude(calculator="")
        .order_by("order")
    )
    assert len(steps) == 3
    envelope = page.locator("#wt-size-it-up")
    for number, step in enumerate(steps, start=1):
        expect(envelope.locator(".step-count")).to_have_text(f"Step {number} of 3")
        envelope = page.locator("#wt-size-it-up")
        envelope.get_by_label("Your answer").fill(f"{expected_for(step).value:.6g}")
        envelope.get_by_role("button", name="Check").click()
        expect(page.locator("#wt-size-it-up-feedback")).to_contain_text("Correct")
        expect(page.locator("#wt-size-it-up")).to_contain_text("The worked arithmetic")
        if number < 3:
            page.locator("#wt-size-it-up-next").click()

    # Build the high-level design: five steps, the diagram grows each time.
    build = page.locator("#wt-build-the-design")
    boxes = build.locator(".box").count()
    for number in range(2, 6):
        page.locator("#wt-build-the-design-next").click()
        expect(page.locator("#wt-build-the-design .step-count")).to_have_text(f"Step {number} of 5")
        grown = page.locator("#wt-build-the-design .box").count()
        assert grown > boxes
        boxes = grown

    # Five interview moments, each answered with its best approach; a best answer that opens a
    # follow-up question counts it at once, so the newcomer answers that too.
    follow_ups = []
    for key in MOMENTS:
        dive = page.locator(f"#dd-{key}")
        dive.get_by_role("button", name=re.compile(re.escape(best_text(key)))).first.click()
        expect(page.locator(f"#dd-{key}-feedback")).to_contain_text("Best")
        expect(page.locator("#announcer")).to_contain_text("Correct")
        opened = best_choice(key).follow_up
        if opened is not None:
            follow_ups.append(opened.key)
            page.locator(f"#dd-{opened.key}").get_by_role(
                "button", name=re.compile(re.escape(best_text(opened.key)))
            ).first.click()
            expect(page.locator(f"#dd-{opened.key}-feedback")).to_contain_text("Best")
    assert follow_ups  # the case study's best answers open follow-ups; this test answers them

    # Follow one support-bot request: six steps.
    for number in range(2, 7):
        page.locator("#wt-support-bot-request-next").click()
        expect(page.locator("#wt-support-bot-request .step-count")).to_have_text(f"Step {number} of 6")

    # Two open questions: write an answer, then tick the checklist points it made (here, all of them).
    for key in ("design-in-five-minutes", "replica-dies-mid-stream"):
        question = page.locator(f"#oq-{key}")
        question.get_by_label("Your answer, as you would say it in the interview").fill(
            "My whole answer, point by point."
        )
        question.get_by_role("button", name="Save, then see the checklist").click()
        boxes = page.locator(f"#oq-{key} .checklist input[type=checkbox]")
        expect(boxes.first).to_be_visible()  # the checklist came with the saved answer
        for index in range(boxes.count()):
            boxes.nth(index).check()
        page.locator(f"#oq-{key}").get_by_role("button", name="Score my answer").click()
        expect(page.locator(f"#oq-{key}-feedback")).to_contain_text("Correct · 10 of 10 points")

    violations = axe_violations(page)
    assert violations == [], describe(violations)

    page.get_by_role("link", name="Results", exact=True).click()
    row = page.locator("tr", has_text="Design an LLM serving platform")
    answered = 11 + len(follow_ups)  # layer 2's question, every item of layer 3, the follow-ups best answers opened
    expect(row).to_contain_text(f"{answered} / {answered}")
    expect(row).to_contain_text(f"{answered * 10} / {answered * 10}")
    for label in ("KV memory allocation", "Batching", "Tensor parallelism", "Speculative decoding", "Routing",
                  "Autoscaling"):  # fmt: skip
        expect(page.get_by_role("heading", name=label)).to_be_visible()
    assert DeepDive.objects.filter(key__in=[*MOMENTS, "tensor-parallel"]).count() == 6
    assert console_errors == []
