"""Bad input is a clear 4xx, never a 500: deep JSON, NUL characters, oversized bodies, unknown API paths.

Also: API errors are JSON (404, 413, 500) while pages keep their HTML error pages, and HEAD
answers like GET on every page.
"""

import json
from unittest import mock

import pytest
from django.template import loader
from django.test import Client
from django.urls import reverse

from interview.json_input import MAX_DEPTH, TOO_DEEP, json_problem
from lessons import api
from lessons.models import Challenge, DeepDive, Step
from tests.lessons.factories import make_lesson
from tests.lessons.test_admin import challenge_post, walkthrough_post

NESTED = "[" * 1000 + "]" * 1000  # 2 KB that Python's json module cannot parse without a RecursionError
NUL_MESSAGE = "Null characters are not allowed."


def nested(levels: int) -> list:
    value = []
    for _ in range(levels - 1):
        value = [value]
    return value


def test_json_problem_finds_deep_nesting_and_nul_characters_anywhere():
    assert json_problem(nested(MAX_DEPTH)) is None
    assert json_problem(nested(MAX_DEPTH + 1)) == TOO_DEEP
    assert json_problem(nested(100_000)) == TOO_DEEP  # a loop, so no RecursionError of its own
    assert json_problem({"a": [1, {"b": "fine"}]}) is None
    assert json_problem({"a": [1, {"b": "not\x00fine"}]}) == NUL_MESSAGE
    assert json_problem({"key\x00": 1}) == NUL_MESSAGE


@pytest.fixture
def lesson(db):
    return make_lesson()


def answer_urls() -> list[str]:
    return [
        reverse("api-deep-dive-answer", args=[DeepDive.objects.get(key="dd-1").pk]),
        reverse("api-step-answer", args=[Step.objects.exclude(calculator="").first().pk]),
        reverse("api-challenge-answer", args=[Challenge.objects.get().pk]),
    ]


def api_error(response, status: int) -> str:
    """Return the one message of a JSON API error after checking its status and shape."""
    assert response.status_code == status
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert body["errors"]["__all__"] == [body["detail"]]
    return body["detail"]


def test_deeply_nested_json_is_a_400_on_every_json_endpoint(client, lesson):
    for url in answer_urls():
        response = client.post(url, NESTED, content_type="application/json")
        assert "nested too deeply" in api_error(response, 400)


def test_a_nul_character_anywhere_in_a_json_body_is_a_400(client, lesson):
    deep_dive = DeepDive.objects.get(key="dd-1")
    url = reverse("api-deep-dive-answer", args=[deep_dive.pk])
    body = json.dumps({"choice": deep_dive.choices.first().pk, "note": ["fine", "not\u0000fine"]})
    assert "\\u0000" in body
    assert api_error(client.post(url, body, content_type="application/json"), 400) == NUL_MESSAGE
    assert not deep_dive.answer_set.exists()


def test_a_json_body_over_the_upload_limit_is_a_json_413_and_saves_nothing(client, lesson, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    deep_dive = DeepDive.objects.get(key="dd-1")
    url = reverse("api-deep-dive-answer", args=[deep_dive.pk])
    body = json.dumps({"choice": deep_dive.choices.first().pk, "padding": "x" * 2000})
    assert "larger than 1000 bytes" in api_error(client.post(url, body, content_type="application/json"), 413)
    form = {"choice": deep_dive.choices.first().pk, "padding": "x" * 2000}
    assert "larger than 1000 bytes" in api_error(client.post(url, form), 413)
    assert not deep_dive.answer_set.exists()


def test_unknown_api_paths_are_a_json_404_and_pages_keep_the_html_one(client, db):
    for path in ("/api/v1/nothing-here/", "/api/v2/lessons/", "/api/"):
        assert api_error(client.get(path), 404) == "No API endpoint at this address."
    page = client.get("/nothing-here/")
    assert page.status_code == 404
    assert page["Content-Type"].startswith("text/html")
    assert "Page not found" in page.content.decode()


def test_a_server_error_in_the_api_is_a_json_500_and_on_a_page_the_html_one(db):
    client = Client(raise_request_exception=False)
    with mock.patch.object(api.ResultsView, "get", side_effect=RuntimeError("boom")):
        detail = api_error(client.get("/api/v1/results/"), 500)
    assert "boom" not in detail
    assert "logged" in detail
    with mock.patch("interview.views.static", side_effect=RuntimeError("boom")):
        page = client.get("/favicon.ico")
    assert page.status_code == 500
    assert "Something went wrong" in page.content.decode()


def test_the_500_page_renders_with_no_context_at_all():
    """Django's server_error renders 500.html with no request, so no context processor runs: no user,
    no csrf_input, no layout. The page needs none of them (it is Jinja2's, as the other pages are)."""
    template = loader.get_template("500.html")
    assert type(template.backend).__name__ == "Jinja2"
    html = template.render()
    assert "Something went wrong" in html
    assert '<a href="/">Back to the lessons</a>' in html


def test_a_nul_character_in_the_admin_autocomplete_or_search_is_a_400_with_a_message(instructor_client, lesson):
    autocomplete = "/admin/autocomplete/?app_label=lessons&model_name=choice&field_name=follow_up&term=%00"
    for url in (autocomplete, reverse("admin:lessons_lesson_changelist") + "?q=%00"):
        response = instructor_client.get(url)
        assert response.status_code == 400
        assert NUL_MESSAGE in response.content.decode()


def test_a_nul_character_in_a_query_parameter_of_the_api_is_a_json_400(client, db):
    assert api_error(client.get("/api/v1/calculators/kv-cache/?layers=%00"), 400) == NUL_MESSAGE


def test_a_nul_character_in_a_cookie_is_a_400_not_a_database_error(client, db):
    # A quoted cookie value may spell NUL as the octal escape \000: plain ASCII that every server lets through.
    response = client.get("/", HTTP_COOKIE='sessionid="abcdefgh\\000ijklmnopqrstuvwxyz012345"')
    assert response.status_code == 400
    assert NUL_MESSAGE in response.content.decode()


def test_nul_characters_in_admin_json_fields_are_form_errors_and_nothing_is_saved(instructor_client, lesson):
    challenge = Challenge.objects.get()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    for changes in ({"hints": '["a\\u0000b"]'}, {"ranges": '{"cache_gb\\u0000": [4, 40, 4]}'}):
        response = instructor_client.post(url, challenge_post(challenge, **changes))
        assert response.status_code == 200  # the form again, with the error beside the field
        assert NUL_MESSAGE in response.content.decode()
    challenge.refresh_from_db()
    assert challenge.hints == [] and challenge.ranges == {"cache_gb": [4, 40, 4]}

    walkthrough = lesson.sections.get().walkthroughs.get(key="build")
    walkthrough.steps.all().delete()
    step = {"order": 1, "title": "A", "components": '[{"key": "fe", "label": "F\\u0000E", "col": 0, "row": 0}]'}
    url = reverse("admin:lessons_walkthrough_change", args=[walkthrough.pk])
    response = instructor_client.post(url, walkthrough_post(walkthrough, [step]))
    assert response.status_code == 200
    assert NUL_MESSAGE in response.content.decode()
    assert not walkthrough.steps.exists()


def test_deeply_nested_json_in_an_admin_field_is_a_form_error(instructor_client, lesson):
    challenge = Challenge.objects.get()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    response = instructor_client.post(url, challenge_post(challenge, hints=NESTED))
    assert response.status_code == 200
    assert "nested too deeply" in response.content.decode()
    challenge.refresh_from_db()
    assert challenge.hints == []


PAGES = ["/", "lesson", "/results/", "/results/reset/", "/review/", "/accounts/signup/", "/accounts/login/",
         "/calculators/", "/calculators/kv-cache/", "/healthz"]  # fmt: skip


@pytest.mark.parametrize("path", PAGES)
def test_head_answers_like_get(client, lesson, path):
    path = lesson.get_absolute_url() if path == "lesson" else path
    get, head = client.get(path), client.head(path)
    assert head.status_code == get.status_code == 200
    assert head["Content-Type"] == get["Content-Type"]
    assert head.content == b""
