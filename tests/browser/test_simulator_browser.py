"""The simulator in a real browser: htmx re-runs on change, focus stays, axe-core finds nothing, 375 px wide."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import describe

pytestmark = pytest.mark.django_db(transaction=True)

SMALL = "/simulator/?replicas=8&requests=1500&arrival_rps=10"


def test_changing_an_input_reruns_and_keeps_focus(page, live_server, console_errors, axe_violations):
    page.goto(f"{live_server.url}{SMALL}")
    busiest = page.locator('[data-output="busiest_share"] td').first
    expect(busiest).to_have_text("12.5%")
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    # Record whether the results say they are busy while the run is under way (it may be quick).
    page.evaluate(
        """() => { window.busySeen = false; new MutationObserver(() => {
             if (document.querySelector('#sim-result[aria-busy="true"]')) { window.busySeen = true; }
           }).observe(document.querySelector('.sim-layout'), {attributes: true, subtree: true}); }"""
    )
    replicas = page.get_by_label("Replicas", exact=True)  # its unit is its label: said once
    replicas.fill("4")
    replicas.press("Tab")  # a change event: after a 600 ms pause the form re-runs through htmx

    expect(busiest).to_have_text("25%")
    expect(page).to_have_url(re.compile(r"/simulator/\?.*replicas=4"))
    expect(page.locator("#announcer")).to_contain_text("Simulation updated. Highest hit rate:")
    assert page.evaluate("() => window.busySeen")
    expect(page.locator("#sim-result")).not_to_have_attribute("aria-busy", "true")
    expect(page.get_by_label("Decode slots per replica (requests)")).to_be_focused()  # only the results swapped
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    page.get_by_label("Hash affinity", exact=True).uncheck()
    expect(page.locator(".sim-table thead th")).to_have_count(5)  # Measure + four policies
    assert console_errors == []


def test_results_being_updated_keep_their_contrast(page, live_server, axe_violations):
    """While a run was under way its results were dimmed to 60%: axe-core found 54 contrast failures in them (a
    newcomer slowed the response to see it). They are marked busy without fading their text."""
    page.goto(f"{live_server.url}{SMALL}")
    # As site.js marks a request's target, with the busy look at once rather than fading in.
    page.locator("#sim-result").evaluate("result => { result.style.transition = 'none'; result.ariaBusy = 'true'; }")
    violations = axe_violations(page)
    assert violations == [], describe(violations)


def test_running_from_the_bottom_of_a_tall_form_brings_the_result_into_view(page, live_server):
    """At 1280 px the inputs run about 3,000 px beside the result: pressing Run at their foot changed nothing
    visible (the result, or its "Not run" error, was 2,500 px above). Focus now moves to the result's heading."""
    page.set_viewport_size({"width": 1280, "height": 800})
    page.goto(f"{live_server.url}{SMALL}")
    run = page.get_by_role("button", name="Run the simulation")
    page.get_by_label("Arrival rate", exact=False).first.fill("100000")
    run.scroll_into_view_if_needed()
    assert page.evaluate("() => window.scrollY") > 800  # the result's top is off the screen now
    run.click()
    heading = page.locator("#result-heading")
    expect(heading).to_be_focused()
    expect(heading).to_be_in_viewport()
    expect(page.locator("#sim-result")).to_contain_text("what the fleet's slots can serve")
    # A change while typing re-runs in place: focus stays in the form.
    replicas = page.get_by_label("Replicas", exact=True)
    replicas.fill("4")
    replicas.press("Tab")
    expect(page.get_by_label("Decode slots per replica (requests)")).to_be_focused()


def test_a_chart_table_the_learner_opened_stays_open_when_the_simulation_reruns(page, live_server):
    """The same script as the calculators': each chart's table keeps its state by its place among the charts."""
    page.goto(f"{live_server.url}{SMALL}")
    tables = page.locator("#sim-result .calc-chart details")
    expect(tables).to_have_count(3)
    tables.nth(1).locator("summary").click()
    page.get_by_label("Replicas", exact=True).fill("4")
    page.get_by_label("Replicas", exact=True).press("Tab")
    expect(page.locator('[data-output="busiest_share"] td').first).to_have_text("25%")  # re-run and swapped
    expect(tables.nth(1)).to_have_attribute("open", "")
    expect(tables.nth(0)).not_to_have_attribute("open", "")
    expect(tables.nth(2)).not_to_have_attribute("open", "")


def test_errors_and_the_autoscaling_page_are_accessible_on_a_phone(page, live_server, axe_violations):
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/simulator/?requests=0")
    expect(page.locator("#id_requests_error")).to_contain_text("Must be at least 1 request; got 0.")
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    page.goto(f"{live_server.url}/simulator/autoscaling/")
    expect(page.locator('[data-output="slo_violation_minutes"] td')).to_have_count(3)
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    # Nothing but the tables' own scroll boxes is wider than the phone, and the three policies' table fits.
    overflow = page.evaluate("() => document.documentElement.scrollWidth")
    assert overflow <= 375
    region = page.get_by_role("region", name="Results by policy")
    assert region.evaluate("box => box.scrollWidth <= box.clientWidth")
    ttft = page.get_by_role("columnheader", name="TTFT").bounding_box()
    assert ttft["x"] + ttft["width"] <= 375
    assert "API name" not in page.content()
    # The charts' text reads at 12 px or more on the phone, and the lines' names sit in a legend off the lines.
    chart = page.get_by_role("img", name=re.compile("^Replicas and demand over the day"))
    assert _chart_text_problems(chart) == []
    assert "kv_use policy" not in page.content()
    expect(page.get_by_text("KV use policy: busy share of slots")).to_be_visible()
    chart.scroll_into_view_if_needed()
    # The routing charts too, with five policies and the longest names.
    page.goto(f"{live_server.url}{SMALL}")
    for name in ("^Prefix-cache hit rate", "^Time to first token"):
        chart = page.get_by_role("img", name=re.compile(name))
        assert _chart_text_problems(chart) == [], name


def test_the_scroll_hint_stays_in_view_beside_a_table_wider_than_a_phone(page, live_server, axe_violations):
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}{SMALL}")  # five policies: wider than the phone
    region = page.get_by_role("region", name="Results by policy")
    hint = page.get_by_text(re.compile(r"scroll.*sideways", re.I))
    assert region.evaluate("box => box.scrollWidth > box.clientWidth")
    expect(hint).to_be_visible()
    hint.evaluate("line => line.scrollIntoView({block: 'center'})")
    for scrolled in (0, 10_000):  # at the table's start, and scrolled to its last policy
        region.evaluate("(box, left) => { box.scrollLeft = left; }", scrolled)
        expect(hint).to_be_in_viewport(ratio=1)  # whole, on the phone's screen
    # Right above the table: wherever the table's top is on screen, so is the hint.
    assert 0 <= region.bounding_box()["y"] - (hint.bounding_box()["y"] + hint.bounding_box()["height"]) < 40
    # A screen reader hears it with the table's region, which the hint describes.
    expect(region).to_have_accessible_description("Scroll the table sideways for every policy.")
    violations = axe_violations(page)
    assert violations == [], describe(violations)

    # On a desktop the table fits: no hint, and the region is not described as scrolling.
    page.set_viewport_size({"width": 1280, "height": 900})
    expect(hint).to_be_hidden()
    expect(region).to_have_accessible_description("")

    # Nor on a phone when the table fits (three autoscaling policies): the hint shows only with something to scroll.
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/simulator/autoscaling/")
    region = page.get_by_role("region", name="Results by policy")
    assert region.evaluate("box => box.scrollWidth <= box.clientWidth")
    expect(page.get_by_text(re.compile(r"scroll.*sideways", re.I))).to_be_hidden()
    expect(region).to_have_accessible_description("")


def _chart_text_problems(chart) -> list[str]:
    """Return the chart's texts rendered under 12 px, past the picture's edges, or on top of a line."""
    return chart.evaluate(
        """svg => {
             const box = svg.getBoundingClientRect();
             const scale = box.width / svg.viewBox.baseVal.width;
             const lines = [...svg.querySelectorAll('polyline')].map(l => l.getBoundingClientRect());
             const problems = [];
             for (const t of svg.querySelectorAll('.chart-tick, .chart-point-label')) {
               const r = t.getBoundingClientRect();
               const px = parseFloat(getComputedStyle(t).fontSize) * scale;
               if (px < 12) problems.push(`${t.textContent}: ${px.toFixed(1)} px`);
               if (r.width && (r.left < box.left - 0.5 || r.right > box.right + 0.5)) problems.push(`${t.textContent}: cut`);
               if (t.matches('.chart-point-label') && lines.some(l =>
                   r.top < l.bottom && r.bottom > l.top && r.left < l.right && r.right > l.left)) {
                 problems.push(`${t.textContent}: on a line`);
               }
             }
             return problems;
           }"""
    )
