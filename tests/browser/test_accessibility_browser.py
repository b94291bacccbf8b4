"""axe-core finds no violations on any page a learner can open: every lesson, calculator and account page."""

import pytest

from calculators.registry import CALCULATORS
from lessons.models import Lesson
from tests.browser.conftest import describe


@pytest.mark.django_db(transaction=True)
def test_every_page_has_zero_axe_violations(live_server, page, content, axe_violations, console_errors):
    urls = ["/", "/results/", "/results/reset/", "/calculators/", "/accounts/login/", "/accounts/signup/",
            "/accounts/password/reset/"]  # fmt: skip
    urls += [lesson.get_absolute_url() for lesson in Lesson.objects.all()]
    urls += [f"/calculators/{slug}/" for slug in CALCULATORS]
    failures = {}
    for url in urls:
        page.goto(live_server.url + url)
        violations = axe_violations(page)
        if violations:
            failures[url] = describe(violations)
    assert failures == {}
    assert console_errors == []


@pytest.mark.django_db(transaction=True)
def test_dark_scheme_and_narrow_screen_have_no_violations(live_server, browser, content, axe_violations):
    context = browser.new_context(color_scheme="dark", viewport={"width": 360, "height": 740})
    page = context.new_page()
    for url in ("/", "/lessons/llm-serving-platform/", "/calculators/routing/"):
        page.goto(live_server.url + url)
        violations = axe_violations(page)
        assert violations == [], f"{url}: {describe(violations)}"
        overflow = page.evaluate("() => document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 1, f"{url} scrolls sideways by {overflow}px at 360px"
    context.close()
