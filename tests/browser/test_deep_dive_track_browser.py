"""Each deep-dive lesson worked through in a real browser: layer by layer, every interview
moment answered with its best approach (follow-ups appear and are answered too), every envelope step
and challenge answered with the calculators' numbers, and every answer still there on a second visit."""

import pytest
from django.conf import settings
from playwright.sync_api import expect

from lessons.models import Challenge, Choice, DeepDive, Step, Walkthrough
from lessons.services import challenge_draw, expected_for
from tests.browser.conftest import describe
from tests.content.test_deep_dives import DEEP_DIVES

pytestmark = pytest.mark.django_db(transaction=True)


def answer_deep_dives(page, slug: str, layer: int) -> list[str]:
    """Answer every deep dive on the layer's page with its best approach, follow-ups as they appear."""
    answered: list[str] = []
    while True:
        shown = [dd for dd in DeepDive.objects.filter(section__lesson__slug=slug, section__layer=layer)
                 if dd.key not in answered and page.locator(f"#dd-{dd.key}").count()]  # fmt: skip
        if not shown:
            return answered
        for dd in shown:
            best = Choice.objects.get(deep_dive=dd, verdict="best")
            page.locator(f'#dd-{dd.key} button[name="choice"][value="{best.pk}"]').click()
            expect(page.locator(f"#dd-{dd.key}-feedback")).to_contain_text("Best")
            answered.append(dd.key)


def answer_envelopes(page, slug: str, layer: int) -> int:
    """Answer every numeric step of the layer's envelope walkthroughs, moving on with Next."""
    asked = 0
    envelopes = Walkthrough.objects.filter(section__lesson__slug=slug, section__layer=layer, kind="envelope")
    for walkthrough in envelopes:
        steps = list(Step.objects.filter(walkthrough=walkthrough).order_by("order"))
        box = page.locator(f"#wt-{walkthrough.key}")
        for number, step in enumerate(steps, start=1):
            expect(box.locator(".step-count")).to_have_text(f"Step {number} of {len(steps)}")
            if step.calculator:
                box.get_by_label("Your answer").fill(f"{expected_for(step).value:.6g}")
                box.get_by_role("button", name="Check").click()
                expect(page.locator(f"#wt-{walkthrough.key}-feedback")).to_contain_text("Correct")
                asked += 1
            if number < len(steps):
                page.locator(f"#wt-{walkthrough.key}-next").click()
    return asked


def answer_challenges(page, slug: str, layer: int) -> list[str]:
    """Answer every challenge on the layer's page with the numbers drawn for this visitor."""
    session_key = next(c["value"] for c in page.context.cookies() if c["name"] == settings.SESSION_COOKIE_NAME)
    keys = []
    for challenge in Challenge.objects.filter(section__lesson__slug=slug, section__layer=layer):
        drawn = challenge_draw(f"session:{session_key}", challenge)["inputs"]
        card = page.locator(f"#ch-{challenge.key}")
        card.get_by_label("Your answer").fill(f"{expected_for(challenge, drawn).value:.8g}")
        card.get_by_role("button", name="Check").click()
        expect(page.locator(f"#ch-{challenge.key}-feedback")).to_contain_text("Correct")
        keys.append(challenge.key)
    return keys


@pytest.mark.parametrize("slug", sorted(DEEP_DIVES))
def test_a_learner_works_through_each_deep_dive_lesson(live_server, page, content, slug, axe_violations):
    page.goto(f"{live_server.url}/lessons/{slug}/")
    deep_dives, numbers, challenges = [], 0, []
    for layer in (1, 2, 3):
        page.goto(f"{live_server.url}/lessons/{slug}/?layer={layer}")
        expect(page.locator("h1")).to_be_visible()
        deep_dives += answer_deep_dives(page, slug, layer)
        numbers += answer_envelopes(page, slug, layer)
        challenges += answer_challenges(page, slug, layer)
    assert len(deep_dives) >= 6 and numbers >= 3 and len(challenges) == 3, (deep_dives, numbers, challenges)
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    # A second visit shows every answer kept, layer by layer.
    for layer in (1, 2, 3):
        page.goto(f"{live_server.url}/lessons/{slug}/?layer={layer}")
        for key in DeepDive.objects.filter(section__lesson__slug=slug, section__layer=layer, key__in=deep_dives)\
                .values_list("key", flat=True):  # fmt: skip
            expect(page.locator(f"#dd-{key}-feedback")).to_contain_text("Best")
        for key in Challenge.objects.filter(section__lesson__slug=slug, section__layer=layer)\
                .values_list("key", flat=True):  # fmt: skip
            expect(page.locator(f"#ch-{key}-feedback")).to_contain_text("Correct")
