"""The simulator pages: GET parameters in the URL, the htmx fragment, errors beside the fields, presets."""

import re
from html import unescape

import pytest
from django.urls import reverse

from calculators.simulator import AUTOSCALING, ROUTING
from calculators.simulator_charts import POLICY_LABELS

HTMX = {"HTTP_HX_REQUEST": "true"}
SMALL = {"replicas": "8", "requests": "1500", "arrival_rps": "10"}


def _routing(client, params=None, **headers):
    return client.get(reverse("simulator:routing"), params or {}, **headers)


def _cell(html: str, output: str) -> list[str]:
    row = re.search(rf'<tr data-output="{output}">(.*?)</tr>', html, re.S).group(1)
    return re.findall(r'<td class="num">(.*?)</td>', row)


def test_urls_and_navigation(client):
    assert reverse("simulator:routing") == "/simulator/"
    assert reverse("simulator:autoscaling") == "/simulator/autoscaling/"
    html = client.get("/calculators/").content.decode()
    assert '<a href="/simulator/">Simulator</a>' in html
    page = _routing(client, SMALL).content.decode()
    assert '<a href="/simulator/" aria-current="page">Simulator</a>' in page


def test_routing_page_compares_every_policy_side_by_side(client):
    response = _routing(client, SMALL)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.startswith("<!doctype html>")
    assert html.count("<h1>") == 1
    for policy in ROUTING.choice.options:
        assert f'<th scope="col">{POLICY_LABELS[policy]}</th>' in html
        assert f'value="{policy}"' in html and "checked" in html
    assert len(_cell(html, "hit_rate")) == 5
    assert _cell(html, "busiest_share")[0] == "12.5%"  # round robin over 8 replicas
    # Every control is a labelled field that carries its value in the URL (a plain GET form).
    assert 'method="get" action="/simulator/"' in html
    for parameter in ROUTING.parameters:
        assert f'<label for="id_{parameter.name}">' in html
        assert f'name="{parameter.name}"' in html
    assert 'name="replicas" value="8"' in html
    # Charts with text alternatives.
    assert html.count('role="img"') == 3
    assert html.count("The chart as a table") == 3
    for title in ("Prefix-cache hit rate against cache size", "Requests per replica", "Time to first token"):
        assert title in html
    assert 'href="/api/v1/simulator/routing/?' in html


def test_parameters_in_the_url_change_the_run(client):
    eight = _routing(client, SMALL).content.decode()
    four = _routing(client, {**SMALL, "replicas": "4", "policies": "round_robin"}).content.decode()
    assert _cell(four, "busiest_share") == ["25%"]
    assert _cell(eight, "busiest_share")[0] == "12.5%"
    assert '<th scope="col">Hash affinity</th>' not in four
    # Both ways of naming several policies work: repeated keys (checkboxes) and a comma list (links).
    repeated = client.get(
        "/simulator/?replicas=8&requests=1500&arrival_rps=10&policies=hash&policies=round_robin"
    ).content.decode()
    listed = _routing(client, {**SMALL, "policies": "hash,round_robin"}).content.decode()
    assert _cell(repeated, "hit_rate") == _cell(listed, "hit_rate")
    # A space after the comma, as a person types it, names the same policies (the API accepts it too).
    spaced = _routing(client, {**SMALL, "policies": "hash, round_robin"}).content.decode()
    assert _cell(spaced, "hit_rate") == _cell(listed, "hit_rate")


def test_htmx_gets_the_result_fragment_with_an_announcement(client):
    response = _routing(client, SMALL, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="sim-result"')
    assert "<h1>" not in html and "<form" not in html
    assert '<div id="announcer" hx-swap-oob="innerHTML">Simulation updated. Highest hit rate:' in html
    assert "HX-Request" in response["Vary"]
    full = _routing(client, SMALL).content.decode()
    assert 'aria-live="polite"' in full and 'id="announcer"' in full
    assert 'hx-get="/simulator/"' in full and 'hx-target="#sim-result"' in full and 'hx-push-url="true"' in full


def test_bad_values_are_shown_beside_their_fields_and_nothing_runs(client):
    response = _routing(client, {"requests": "500000", "replicas": "x", "policies": "hash,random"})
    assert response.status_code == 400
    html = unescape(response.content.decode())
    assert "Not run: 3 inputs need attention." in html
    assert '<li><a href="#id_policies_0">Policies</a>: ' in html  # the problem list links each input
    assert "Must be at most 100,000 requests; got 500000." in html
    assert "“x” is not a number." in html
    assert "random" in html
    assert 'data-output="hit_rate"' not in html
    refused = _routing(client, {"requests": "0"}, **HTMX)
    assert refused.status_code == 422  # htmx swaps it (base.html's htmx-config)
    fragment = refused.content.decode()
    assert 'id="id_requests_error" hx-swap-oob="innerHTML"' in fragment
    assert "Not run: check the inputs marked with errors." in fragment


def test_presets_reproduce_the_lessons_scenarios(client):
    html = unescape(_routing(client, SMALL).content.decode())
    links = re.findall(r'<li><a href="(/simulator/\?[^"]+)">([^<]+)</a></li>', html)
    assert len(links) == len(ROUTING.presets)
    href = {label: url for url, label in links}[ROUTING.preset("cache-aware-routing").label]
    assert "cache_copies=20" in href and "preamble_tokens=1200" in href  # from the kv-cache calculator
    response = client.get(href.replace("replicas=64", "replicas=64&requests=2000"))
    assert response.status_code == 200
    assert 'name="cache_copies" value="20"' in response.content.decode()


def test_hot_family_preset_gives_the_hot_family_its_share():
    from calculators.simulation import family_shares

    preset = ROUTING.preset("hot-family").values
    assert family_shares(preset["families"], preset["zipf"])[0] == pytest.approx(0.8, abs=1e-3)


def test_autoscaling_page_compares_the_three_policies(client):
    response = client.get(reverse("simulator:autoscaling"), {"spike_minutes": "20"})
    assert response.status_code == 200
    html = response.content.decode()
    for policy in AUTOSCALING.choice.options:
        assert f'<th scope="col">{POLICY_LABELS[policy]}</th>' in html
    assert len(_cell(html, "slo_violation_minutes")) == 3
    assert _cell(html, "cost_usd")[0].startswith("$")
    # The page speaks in words: measures, policies and inputs carry no API names (the API link keeps them).
    assert "SLO-violating minutes" in html and "GPU-hours" in html and '<th scope="row">Cost</th>' in html
    assert "api-name" not in html and "API name" not in html and "<code>queue_depth</code>" not in html
    # Help texts name the policies as the page does, in sentence case.
    for help_text in ("Queue depth policy: requests per replica", "KV use policy: busy share", "TTFT policy: p99"):
        assert help_text in html
    assert not re.search(r"(queue_depth|kv_use|ttft) policy", html)
    assert "Get this run from the API" in html
    assert "Replicas and demand over the day" in html
    assert 'name="spike_minutes" value="20"' in html
    assert 'href="/api/v1/simulator/autoscaling/?' in html and "policy=queue_depth" in html
    fragment = client.get(reverse("simulator:autoscaling"), {"min_replicas": "9", "max_replicas": "3"}, **HTMX)
    assert fragment.status_code == 422
    text = unescape(fragment.content.decode())
    assert "The minimum replicas cannot exceed the maximum." in text
    assert "Not run" in text


def test_the_replicas_field_is_not_labelled_replicas_twice(client):
    html = _routing(client, SMALL).content.decode()
    assert '<label for="id_replicas">Replicas</label>' in html
    assert "(replicas)" not in html


def test_the_bounded_load_slack_is_labelled_as_the_number_it_takes(client):
    """ε runs from 0.05 to 10: a label saying "fraction, 0–1" told learners a wrong range."""
    html = _routing(client).content.decode()
    assert "Bounded-load slack (ε)" in html
    assert "Bounded-load slack (fraction" not in html


def test_an_overloaded_pools_waits_read_in_seconds(client):
    """Two replicas at 9 requests a second (1.47× their slots) queue for over a minute: the table said "73,724 ms"
    (newcomer's finding), then "1.23 min" beside "36,803 ms" in one row (the re-check): seconds, in every cell."""
    html = _routing(client, {**SMALL, "replicas": "2", "arrival_rps": "9", "policies": "round_robin"}).content.decode()
    (wait,) = _cell(html, "queue_wait_p99_ms")
    assert wait.endswith(" s") and float(wait.removesuffix(" s").replace(",", "")) >= 60, wait
    for row in ("queue_wait_mean_ms", "ttft_p50_ms", "ttft_p99_ms"):
        assert all(cell.endswith(" s") and "," not in cell for cell in _cell(html, row)), row
    # The TTFT chart's table writes the same p99 as the results table (it wrote it in ms).
    (p99,) = _cell(html, "ttft_p99_ms")
    ttft_table = html.split("Time to first token: distribution", 1)[1]
    assert f"<td>{p99}</td>" in ttft_table or f'<td class="num">{p99}</td>' in ttft_table, p99


def test_the_hit_rate_chart_names_your_cache_size_under_its_tick_not_on_the_lines(client):
    """ "yours" was written beside the marker at the top of the plot, where the best policies' lines run near 100%,
    and sat on them (newcomer's finding). The tick of your cache size says it; the marker line stays."""
    html = _routing(client, {**SMALL, "cache_copies": "4"}).content.decode()
    chart = re.search(r'<svg[^>]*aria-labelledby="chart-sim-hits-title[^"]*".*?</svg>', html, re.S).group(0)
    assert re.search(r'class="chart-tick" text-anchor="middle">4 \(yours\)</text>', chart)
    assert 'class="chart-marker"' in chart and ">yours</text>" not in chart
