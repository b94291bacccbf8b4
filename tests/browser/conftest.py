"""Real-browser fixtures: Debian's Chromium driven by pytest-playwright, and axe-core."""

import html
import os
from pathlib import Path

import pytest

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless=new",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium is missing at {CHROMIUM}: run `make test` (it installs it) or apt-get install chromium.")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_ARGS}


@pytest.fixture
def console_errors(page):
    """Collect console errors and failed requests; a test can assert there are none."""
    errors: list[str] = []
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("requestfailed", lambda req: _request_failed(errors, req))
    return errors


def _request_failed(errors: list[str], request) -> None:
    """Record a request that failed, except one the page cancelled itself by navigating away.

    Leaving a page at once (as a quick test does) aborts its pending loads ("net::ERR_ABORTED");
    a missing file is a 404 response, not a failed request, so aborts hide nothing broken.
    """
    if request.failure != "net::ERR_ABORTED":
        errors.append(f"failed: {request.url} ({request.failure})")


@pytest.fixture
def axe_violations():
    """Return a function that runs axe-core on the page and returns its violations."""

    def run(page) -> list[dict]:
        # evaluate() goes through DevTools, so the site's CSP (script-src 'self') does not block it.
        if not page.evaluate("() => typeof window.axe !== 'undefined'"):
            page.evaluate(AXE.read_text(encoding="utf-8"))
        return page.evaluate("async () => (await window.axe.run(document)).violations")

    return run


def describe(violations: list[dict]) -> str:
    return "\n".join(f"{v['id']}: {v['help']} -> {[n['target'] for n in v['nodes']]}" for v in violations)


def button_text(choice) -> str:
    """Return the start of what a choice's button shows: its rendered Markdown (typographic apostrophes), not the source."""
    from django.utils.html import strip_tags

    return html.unescape(strip_tags(choice.text_html)).split("\n")[0][:40]


def log_in(page, server_url: str, username: str, password: str) -> None:
    """Log in through the log-in page, as a learner does, and wait for the page it leads to."""
    page.goto(server_url + "/accounts/login/")
    page.fill("#id_username", username)
    page.fill("#id_password", password)
    with page.expect_navigation():
        page.keyboard.press("Enter")


def tab_to(page, locator, limit: int = 40) -> None:
    """Press Tab, as a keyboard user does, until ``locator`` has focus."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        if locator.evaluate("e => e === document.activeElement"):
            return
    raise AssertionError(f"{limit} Tabs did not reach {locator}")
