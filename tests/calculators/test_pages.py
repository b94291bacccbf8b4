"""Calculator pages: the list, a full page, the htmx fragment, and errors beside the fields."""

import re
from html import unescape
from urllib.parse import urlencode

import pytest
from django.http import QueryDict
from django.urls import reverse

from calculators.formatting import input_text
from calculators.forms import CalculatorForm
from calculators.registry import CALCULATORS

HTMX = {"HTTP_HX_REQUEST": "true"}


def _page(client, slug, params=None, **headers):
    return client.get(reverse("calculators:detail", args=[slug]), params or {}, **headers)


def test_urls():
    assert reverse("calculators:index") == "/calculators/"
    assert reverse("calculators:detail", args=["fleet"]) == "/calculators/fleet/"


def test_index_lists_every_calculator(client):
    response = client.get(reverse("calculators:index"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "<h1>Calculators</h1>" in html
    for slug, calculator in CALCULATORS.items():
        assert f'href="/calculators/{slug}/"' in html
        assert calculator.purpose in html.replace("&#39;", "'")


@pytest.mark.parametrize("slug", list(CALCULATORS))
def test_every_calculator_page_renders(client, slug):
    response = _page(client, slug)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("<h1>") == 1
    for parameter in CALCULATORS[slug].parameters:
        assert f'name="{parameter.name}"' in html
    assert 'id="calc-result"' in html
    assert "Notes and sources" in html


def test_unknown_calculator_is_404(client):
    assert _page(client, "warp-drive").status_code == 404


def test_full_page_has_the_form_outputs_derivation_chart_and_notes(client):
    html = _page(client, "kv-cache").content.decode()
    assert html.startswith("<!doctype html>")
    assert 'hx-get="/calculators/kv-cache/"' in html
    assert 'hx-trigger="input changed delay:300ms, submit"' in html
    assert 'hx-target="#calc-result"' in html and 'hx-push-url="true"' in html
    assert '<label for="id_cache_gb">Cache size <span class="unit">(GB, decimal)</span></label>' in html
    assert 'min="0.001"' in html and 'step="any"' in html
    assert "393,216,000 B (393.2 MB, 375.0 MiB)" in html
    assert '<ol class="derivation-steps derivation">' in html
    assert 'role="img"' in html and "The chart as a table" in html
    assert "384 MB" in html  # the note explaining the source's slip
    assert "hx-swap-oob" not in html  # out-of-band pieces only go with fragments


def test_htmx_request_returns_only_the_fragment(client):
    response = _page(client, "replica", {"gpus": "8"}, **HTMX)
    assert response.status_code == 200
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="calc-result"')
    assert "<html" not in html and "<form" not in html
    assert "324 requests" in html
    assert '<div id="announcer" hx-swap-oob="innerHTML">Updated. Requests per replica: 324 requests.</div>' in html
    assert response["Vary"] and "HX-Request" in response["Vary"]


def test_history_restore_gets_the_full_page(client):
    response = _page(client, "replica", {"gpus": "8"}, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true")
    assert response.content.decode().startswith("<!doctype html>")


def test_inputs_in_the_url_fill_the_form(client):
    html = _page(client, "routing", {"cards": "16"}).content.decode()
    assert re.search(r'<input[^>]*name="cards"[^>]*value="16"|<input[^>]*value="16"[^>]*name="cards"', html)
    assert re.search(r'value="0.8"[^>]*name="hot_share"|name="hot_share"[^>]*value="0.8"', html)


def test_bad_input_shows_the_error_beside_the_field(client):
    response = _page(client, "kv-cache", {"layers": "0", "tokens": "abc"})
    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(
        r'id="id_layers_error" class="field-errors"><ul class="errorlist"><li>Must be at least 1 layer; got 0.', html
    )
    assert "“abc” is not a number." in html
    assert re.search(
        r'<input[^>]*aria-invalid="true"[^>]*id="id_layers"|<input[^>]*id="id_layers"[^>]*aria-invalid="true"', html
    )
    assert 'aria-describedby="id_layers_error id_layers_helptext"' in html
    assert "No result yet: 2 inputs need attention." in html
    assert '<a href="#id_layers">Layers</a>' in html


def test_bad_input_over_htmx_swaps_the_field_errors_out_of_band(client):
    html = _page(client, "kv-cache", {"layers": "nan"}, **HTMX).content.decode()
    assert '<div id="id_layers_error" hx-swap-oob="innerHTML"><ul class="errorlist"><li>NaN' in html
    assert '<div id="id_tokens_error" hx-swap-oob="innerHTML">' in html  # cleared when fixed
    assert "Not updated" in html


def test_domain_error_shows_beside_the_field(client):
    response = _page(client, "routing", {"cards": "4", "shards": "8"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "more replicas than the fleet has" in html


def test_the_routing_calculator_speaks_of_replicas_as_the_lessons_do(client):
    """In the lessons a card is one GPU and a router picks among replicas, which may span several GPUs;
    only the API's parameter name keeps "cards" (a fixed contract)."""
    from django.utils.html import strip_tags

    html = _page(client, "routing", {"shards": "2"}).content.decode()
    assert re.search(r'<label for="id_cards"[^>]*>Replicas', html)
    assert re.findall(r"\bcards?\b", strip_tags(html), re.IGNORECASE) == []
    listed = next(c for c in client.get("/api/v1/calculators/").json() if c["slug"] == "routing")
    described = [f"{p['help']} {p['unit']}" for p in listed["parameters"]] + [o["unit"] for o in listed["outputs"]]
    steps = client.get("/api/v1/calculators/routing/", {"shards": "2"}).json()["steps"]
    described += [f"{s['label']} {s['expression']} {s['unit']}" for s in steps]
    assert [text for text in described if re.search(r"\bcards?\b", text, re.IGNORECASE)] == []


def test_unknown_query_parameters_are_ignored_by_the_page(client):
    response = _page(client, "kv-cache", {"utm_source": "mail"})
    assert response.status_code == 200
    assert "No result yet" not in response.content.decode()


def test_preset_links_keep_the_other_inputs(client):
    html = _page(client, "kv-cache", {"tokens": "4096"}).content.decode()
    link = re.search(r'<a href="\?([^"]+)">Llama-3-8B, BF16</a>', html).group(1).replace("&amp;", "&")
    assert "layers=32" in link and "tokens=4096" in link and "cache_gb=8" in link


@pytest.mark.parametrize("slug", sorted(CALCULATORS))
def test_each_preset_link_is_the_learners_inputs_with_the_presets_values_over_them(client, slug):
    """The link keeps what the learner has in the form's order, with the preset's values over it: here one
    input typed wrong (shown at its default again) and another typed in full-width digits, kept as typed
    and encoded."""
    calculator = CALCULATORS[slug]
    first, second = calculator.parameters[:2]
    wide = input_text(second.default).translate(str.maketrans("0123456789", "０１２３４５６７８９"))  # its default
    typed = {first.name: "1 & é", second.name: wide}
    html = _page(client, slug, typed).content.decode()
    current = CalculatorForm(calculator, QueryDict(urlencode(typed))).current_values()
    assert current[second.name] == wide  # kept as typed, so the links must encode it
    presets = html.split('id="calc-presets"')[1].split("</ul>")[0]
    links = [unescape(query) for query in re.findall(r'<a href="\?([^"]+)">', presets)]
    expected = [
        urlencode({**current, **{name: input_text(value) for name, value in preset.values.items()}})
        for preset in calculator.presets
    ]
    assert links == expected


def test_checks_read_as_text_not_colour_only(client):
    html = _page(client, "fleet", {"owned_cards": "8000"}).content.decode()
    assert re.search(r'check-fail" data-output="idle_ok">\s*<dt>Idle at most 15%', html)
    assert "</span> Fail</dd>" in html and "</span> Pass</dd>" in html


def test_page_links_to_the_same_result_as_json(client):
    html = _page(client, "shed", {"paid_rps": "700"}).content.decode()
    assert "/api/v1/calculators/shed/?capacity_rps=1000&amp;paid_rps=700" in html
    # Said plainly; the API's parameter names stay in the API and its docs, not on the form.
    assert ">Get this result from the API</a> (JSON)" in html
    assert "API name" not in html and "names the API uses" not in html


def test_page_escapes_what_the_learner_typed(client):
    html = _page(client, "kv-cache", {"layers": "<script>alert(1)</script>"}).content.decode()
    assert "<script>alert(1)" not in html


def test_unstable_queue_reads_no_rather_than_fail(client):
    html = _page(client, "queue-wait", {"utilization": "0.8"}).content.decode()
    assert "</span> No: unstable</dd>" in html
    assert "none: the queue is unstable" in html


def test_a_parameter_whose_label_names_its_unit_shows_the_label_alone(client):
    html = _page(client, "kv-cache").content.decode()
    assert '<label for="id_layers">Layers</label>' in html  # not "Layers (layers)"
    assert '<label for="id_kv_heads">KV heads</label>' in html  # not "KV heads (heads)"
    assert '<label for="id_tokens">Prefix tokens</label>' in html
    assert '<span class="unit">(GB, decimal)</span>' in html  # a unit the label does not name stays
    html = _page(client, "routing").content.decode()
    assert '<label for="id_cards">Replicas</label>' in html


def test_a_page_whose_notes_cite_the_course_notes_says_what_they_are(client):
    """ "The course notes' 384 MB" named a document the site never introduced: a newcomer could not tell what it was."""
    kv = client.get(reverse("calculators:detail", args=["kv-cache"])).content.decode()
    assert "course notes" in kv
    assert "“The course notes” are the interview-prep notes this lab's lessons started from." in kv
    shed = client.get(reverse("calculators:detail", args=["shed"])).content.decode()
    assert "course notes" not in shed  # no such figure on this page: no sentence about them
