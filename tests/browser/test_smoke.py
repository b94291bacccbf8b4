"""The home page in a real browser: htmx present, keyboard navigation, no axe-core violations."""

import pytest

from tests.browser.conftest import describe


@pytest.mark.django_db(transaction=True)
def test_home_page_loads_with_htmx_keyboard_nav_and_no_axe_violations(
    live_server, page, axe_violations, console_errors
):
    page.goto(live_server.url + "/")
    assert "Serving Interview Lab" in page.title()
    assert page.evaluate("() => typeof window.htmx") == "object"
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.textContent.trim()") == "Skip to content"
    focused = []
    for _ in range(6):
        page.keyboard.press("Tab")
        focused.append(page.evaluate("() => document.activeElement.textContent.trim()"))
    assert {"Lessons", "Calculators", "Results"} <= set(focused)
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    assert console_errors == []
