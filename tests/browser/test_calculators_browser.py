"""Calculators in a real browser: live recomputation with htmx, and axe-core finds nothing."""

import re

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import describe

pytestmark = pytest.mark.django_db(transaction=True)


def test_changing_an_input_updates_the_result_the_chart_and_the_url(page, live_server, console_errors):
    page.goto(f"{live_server.url}/calculators/replica/")
    requests = page.locator('[data-output="requests_per_replica"] dd')
    expect(requests).to_have_text("110 requests")
    chart_before = page.locator("#calc-result svg desc").text_content()

    gpus = page.get_by_label("GPUs per replica")
    gpus.fill("8")

    expect(requests).to_have_text("324 requests")
    expect(page.locator("#calc-result svg desc")).not_to_have_text(chart_before)
    expect(page.locator("#calc-result svg desc")).to_contain_text("324 requests")
    expect(page).to_have_url(re.compile(r"/calculators/replica/\?.*gpus=8"))
    expect(page.locator("#announcer")).to_have_text("Updated. Requests per replica: 324 requests.")
    expect(gpus).to_be_focused()  # only the result region was swapped
    assert console_errors == []


def test_the_chart_table_stays_open_across_recalculations_and_focus_stays_where_it_was(
    page, live_server, console_errors, axe_violations
):
    """htmx swaps the whole result: "The chart as a table" stays open if the learner opened it, through
    a result with errors too, and a recalculation landing while the table's summary has focus keeps it there."""
    page.goto(f"{live_server.url}/calculators/replica/")
    requests = page.locator('[data-output="requests_per_replica"] dd')
    table = page.locator("#calc-result .calc-chart details")
    summary = page.locator("#calc-result .calc-chart summary")
    summary.click()
    expect(table).to_have_attribute("open", "")
    gpus = page.get_by_label("GPUs per replica")
    gpus.fill("8")
    expect(requests).to_have_text("324 requests")  # swapped
    expect(table).to_have_attribute("open", "")
    expect(table.get_by_role("table")).to_be_visible()
    expect(gpus).to_be_focused()
    gpus.fill("0")  # an error: the result has no chart
    expect(page.locator("#id_gpus_error")).not_to_be_empty()
    expect(table).to_have_count(0)
    gpus.fill("4")
    expect(requests).to_have_text("110 requests")
    expect(table).to_have_attribute("open", "")
    # The learner moved on to the table's summary while their last edit was still to be sent.
    summary.focus()
    gpus.evaluate("input => { input.value = '8'; input.dispatchEvent(new Event('input', {bubbles: true})); }")
    expect(requests).to_have_text("324 requests")
    expect(table).to_have_attribute("open", "")
    expect(summary).to_be_focused()
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    # Closed by the learner, it stays closed.
    summary.press("Enter")
    expect(table).not_to_have_attribute("open", "")
    gpus.fill("4")
    expect(requests).to_have_text("110 requests")
    expect(table).not_to_have_attribute("open", "")
    assert [error for error in console_errors if "status of 422" not in error] == []  # the refused value's 422


def test_a_bad_value_shows_its_error_and_recovers(page, live_server):
    page.goto(f"{live_server.url}/calculators/kv-cache/")
    layers = page.get_by_label("Layers")
    layers.fill("0")
    expect(page.locator("#id_layers_error")).to_have_text("Must be at least 1 layer; got 0.")
    expect(layers).to_have_attribute("aria-invalid", "true")
    layers.fill("32")
    expect(page.locator("#id_layers_error")).to_have_text("")
    expect(layers).not_to_have_attribute("aria-invalid", "true")
    expect(page.locator('[data-output="bytes_per_token"] dd')).to_contain_text("131,072 B")


def test_back_and_forward_show_the_inputs_that_go_with_the_result_or_the_error(page, live_server):
    """Each address is the server's page for its inputs: htmx keeps no snapshots (they held the
    inputs as first served, beside another input's result or error), it reloads."""
    page.goto(f"{live_server.url}/calculators/kv-cache/")
    layers = page.get_by_label("Layers")
    layers.fill("0")
    expect(page.locator("#id_layers_error")).to_have_text("Must be at least 1 layer; got 0.")
    layers.fill("64")
    expect(page).to_have_url(re.compile(r"layers=64"))
    expect(page.locator('[data-output="bytes_per_token"] dd')).to_contain_text("262,144 B")
    page.go_back()
    expect(page).to_have_url(re.compile(r"layers=0"))
    expect(page.locator("#id_layers_error")).to_have_text("Must be at least 1 layer; got 0.")
    expect(page.get_by_label("Layers")).to_have_value("0")
    page.go_forward()
    expect(page).to_have_url(re.compile(r"layers=64"))
    expect(page.get_by_label("Layers")).to_have_value("64")
    expect(page.locator('[data-output="bytes_per_token"] dd')).to_contain_text("262,144 B")
    expect(page.locator("#calc-result")).not_to_have_attribute("aria-busy", "true")


def test_a_preset_link_fills_the_fields(page, live_server):
    page.goto(f"{live_server.url}/calculators/kv-cache/?tokens=2048")
    page.get_by_role("link", name="Llama-2-13B, BF16 (no GQA)").click()
    expect(page.get_by_label("KV heads")).to_have_value("40")
    expect(page.get_by_label("Prefix tokens")).to_have_value("2048")


@pytest.mark.parametrize("path", ["/calculators/", "/calculators/queue-wait/", "/calculators/fleet/?owned_cards=8000"])
def test_calculator_pages_have_no_axe_violations(page, live_server, axe_violations, path):
    page.goto(f"{live_server.url}{path}")
    violations = axe_violations(page)
    assert violations == [], describe(violations)


def test_a_page_with_errors_has_no_axe_violations(page, live_server, axe_violations):
    page.goto(f"{live_server.url}/calculators/routing/?cards=4&shards=8")
    violations = axe_violations(page)
    assert violations == [], describe(violations)


def test_dark_mode_has_no_axe_violations(browser, live_server, axe_violations):
    context = browser.new_context(color_scheme="dark")
    page = context.new_page()
    page.goto(f"{live_server.url}/calculators/spec-decode/")
    violations = axe_violations(page)
    context.close()
    assert violations == [], describe(violations)


def test_on_a_phone_a_chart_table_wider_than_its_box_shows_an_edge_to_scroll_to(page, live_server):
    """The KV-cache table's byte counts run past a 375 px screen: "750.0 M" was cut with nothing to say the
    table scrolls. A shadow at the edge shows there is more (compared with the region drawn without it)."""
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"{live_server.url}/calculators/kv-cache/")
    details = page.locator(".calc-chart details")
    details.locator("summary").click()
    region = details.get_by_role("region")
    assert region.evaluate("r => r.scrollWidth > r.clientWidth")
    region.scroll_into_view_if_needed()
    with_hint = region.screenshot()
    region.evaluate("r => r.style.background = 'none'")
    assert region.screenshot() != with_hint


# Each chart text's rendered size (its font-size in the chart's units, times the scale of the viewBox) and the
# texts sticking out of the picture.
_CHART_TEXT = """svg => {
  const box = svg.getBoundingClientRect();
  const scale = box.width / svg.viewBox.baseVal.width;
  return [...svg.querySelectorAll('text')].map(t => {
    const r = t.getBoundingClientRect();
    const out = r.left < box.left - 0.5 || r.right > box.right + 0.5 || r.top < box.top - 0.5 || r.bottom > box.bottom + 0.5;
    return {text: t.textContent, px: parseFloat(getComputedStyle(t).fontSize) * scale, out};
  });
}"""


@pytest.mark.parametrize("width", [375, 360, 470, 500, 620])
def test_chart_text_reads_at_12_px_on_a_phone_and_stays_inside_the_chart(page, live_server, width):
    """The viewBox (420 units) scales down to a phone's column, about 300 px: every chart text still renders at
    12 px or more, and none runs past the picture's edges (it read at 8.7 px). Nor at more than 18 px on a wider
    phone (the phone's larger text read at 23 px at 620 px wide: code review's finding)."""
    page.set_viewport_size({"width": width, "height": 800})
    pages = ["decode-step", "queue-wait", "spec-decode", "kv-cache", "token-cost", "routing", "fleet", "replica"]
    pages = [f"/calculators/{slug}/" for slug in pages] + ["/simulator/?replicas=8&requests=1500&arrival_rps=10"]
    for path in pages:
        page.goto(live_server.url + path)
        charts = page.locator("svg.chart")
        assert charts.count(), path
        for chart in charts.all():
            texts = chart.evaluate(_CHART_TEXT)
            assert texts, path
            small = [f"{t['text']}: {t['px']:.1f} px" for t in texts if t["px"] < 12]
            assert small == [], path
            large = [f"{t['text']}: {t['px']:.1f} px" for t in texts if t["px"] > 18]
            assert large == [], path
            assert [t["text"] for t in texts if t["out"]] == [], path
