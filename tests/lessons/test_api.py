"""The learner API: reading lessons without leaks, answering, results, CSRF, tokens, schema."""

import json
import threading

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from interview.accounts.tokens import create_token
from lessons import content_cache
from lessons.models import Answer, Challenge, DeepDive, Step
from lessons.services import FOLLOW_UP_NOT_REACHED
from tests.lessons.factories import answer_steps_before, make_lesson


def walk(data):
    """Yield every key and string in a JSON document."""
    if isinstance(data, dict):
        for key, value in data.items():
            yield key
            yield from walk(value)
    elif isinstance(data, list):
        for value in data:
            yield from walk(value)
    else:
        yield data


def test_lesson_list_and_detail(api, lesson):
    listing = api.get("/api/v1/lessons/").json()
    assert [row["slug"] for row in listing] == ["sample"]
    assert listing[0]["progress"] == {"answered": 0, "total": 4, "points": 0, "max_points": 40}
    detail = api.get("/api/v1/lessons/sample/").json()
    assert detail["layers"] == [{"number": 2, "label": "Core", "minutes": 4}]
    kinds = [item["type"] for item in detail["sections"][0]["items"]]
    assert kinds == ["deep_dive", "walkthrough", "walkthrough", "challenge"]


def test_a_step_not_open_yet_gives_its_title_only(api, lesson):
    """The page shows a walkthrough's step 2 once step 1 is answered (its body starts from step 1's answer); the API
    gave every step's body at once. A step not open yet is its id, number and title, locked, until then."""
    Step.objects.filter(title="Preamble size").update(body="Each replica holds 110 requests (step 1).")
    content_cache.new_generation()

    def size_steps():
        items = api.get("/api/v1/lessons/sample/").json()["sections"][0]["items"]
        return next(item for item in items if item.get("title") == "Size it")["steps"]

    second = size_steps()[1]
    assert second == {"id": second["id"], "number": 2, "title": "Preamble size", "locked": True}
    assert size_steps()[0]["locked"] is False
    first = Step.objects.get(title="Requests per replica")
    api.post(f"/api/v1/steps/{first.pk}/answer/", {"value": 1}, format="json")  # wrong: it opens step 2 all the same
    second = size_steps()[1]
    assert second["locked"] is False and second["body"] == "Each replica holds 110 requests (step 1)."


def test_detail_reveals_no_verdict_feedback_or_expected_answer_before_answering(api, lesson):
    text = json.dumps(api.get("/api/v1/lessons/sample/").json())
    assert "verdict" not in text
    assert "Holds up." not in text  # a choice's feedback
    assert "expected" not in text
    assert "Budget over per-request KV." not in text  # a step's explanation


def test_answer_a_deep_dive_then_its_feedback_appears(api, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    best = dd.choices.get(verdict="best")
    response = api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": best.pk}, format="json")
    assert response.status_code == 200
    body = response.json()
    assert body == {"outcome": "correct", "points": 10, "max_points": 10, "is_first": True, "hints_taken": 0,
                    "verdict": "best", "feedback": "Holds up.", "feedback_html": "<p>Holds up.</p>",
                    "follow_up": None, "follow_up_waiting": False}  # fmt: skip
    detail = api.get("/api/v1/lessons/sample/").json()
    dive = detail["sections"][0]["items"][0]
    assert {c["verdict"] for c in dive["choices"]} == {"best", "weak", "acceptable"}


def test_answer_a_step_and_a_challenge(api, lesson):
    step = Step.objects.get(title="Requests per replica")
    body = api.post(f"/api/v1/steps/{step.pk}/answer/", {"value": 110}, format="json").json()
    assert body["outcome"] == "correct"
    assert body["expected"] == 110
    assert body["steps"][-1]["value"] == 110
    challenge = Challenge.objects.get()
    detail = api.get("/api/v1/lessons/sample/").json()
    shown = detail["sections"][0]["items"][3]
    from calculators.registry import get_calculator

    expected = get_calculator("kv-cache").evaluate(shown["inputs"]).outputs["copies_per_cache"]
    body = api.post(f"/api/v1/challenges/{challenge.pk}/answer/", {"value": expected}, format="json").json()
    assert body["outcome"] == "correct"


@pytest.mark.parametrize(
    ("payload", "field"),
    [({}, "choice"), ({"choice": "x"}, "choice"), ({"choice": 999999}, "choice")],
)
def test_bad_deep_dive_answers_are_400_with_field_errors(api, lesson, payload, field):
    dd = DeepDive.objects.get(key="dd-1")
    response = api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", payload, format="json")
    assert response.status_code == 400
    assert field in response.json()["errors"]
    assert not Answer.objects.exists()


@pytest.mark.parametrize("value", ["abc", "NaN", "Infinity", None, "", True, "393 /", "1 MB/", "1 ·"])
def test_bad_numbers_are_400(api, lesson, value):
    step = Step.objects.get(title="Requests per replica")
    response = api.post(f"/api/v1/steps/{step.pk}/answer/", {"value": value}, format="json")
    assert response.status_code == 400
    assert "value" in response.json()["errors"]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('{"value": 1' + "0" * 400 + "}", "Enter a finite number."),  # an integer too large for a float
        ('{"value": "5 \\ud800"}', "Surrogate characters are not allowed"),  # a lone surrogate, escaped in JSON
        ('{"value": "5 degC"}', "“degC” is not a unit this lab knows"),
    ],
)
def test_numbers_no_float_or_reply_can_hold_are_400_and_the_scored_answer_is_still_to_come(api, lesson, body, message):
    """Each was a 500: float() overflowed, the reply could not encode the surrogate it quoted, pint refused degC."""
    step = Step.objects.get(title="Requests per replica")
    url = f"/api/v1/steps/{step.pk}/answer/"
    refused = api.post(url, body, content_type="application/json")
    assert refused.status_code == 400
    assert message in refused.json()["errors"]["value"][0]
    assert not Answer.objects.exists()
    assert api.post(url, {"value": "100"}, format="json").json()["is_first"] is True


@pytest.mark.parametrize("value", [-5, -0.5, "-5", "-5 MB"])
def test_a_negative_number_is_a_400_and_the_scored_answer_is_still_to_come(api, lesson, value):
    """JSON numbers skipped the parser's rules: -5 was graded Missed and used up the scored answer."""
    step = Step.objects.get(title="Preamble size")  # asks for MB
    answer_steps_before(api, step)
    url = f"/api/v1/steps/{step.pk}/answer/"
    refused = api.post(url, {"value": value}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"errors": {"value": ["Enter a number of 0 or more: no answer here is negative."]}}
    assert not Answer.objects.filter(step=step).exists()
    assert api.post(url, {"value": 393.216}, format="json").json()["outcome"] == "correct"
    assert Answer.objects.get(step=step).is_first


def test_a_step_not_open_yet_is_not_graded_through_the_api(api, lesson):
    """Step 2 answered before step 1 was graded, and a wrong answer earned its worked arithmetic, which starts from
    step 1's answer. It is refused (409) as the page refuses it, nothing stored, until step 1 is answered."""
    step = Step.objects.get(title="Preamble size")
    url = f"/api/v1/steps/{step.pk}/answer/"
    refused = api.post(url, {"value": 1}, format="json")
    assert refused.status_code == 409
    assert api.post(url, {"value": "lots"}, format="json").status_code == 409  # whatever the value, as the page
    assert refused.json()["errors"] == {
        "step": ["Answer the steps before this one first: its text and hints start from their answers."]
    }
    assert not Answer.objects.exists()
    answer_steps_before(api, step, 1)  # wrong, which opens step 2 all the same
    assert api.post(url, {"value": 1}, format="json").json()["is_first"] is True


def test_an_api_step_answer_reads_the_learners_state_once(api, lesson):
    """The step's answer read the learner's state (practice rows and review cards) to know the step is open, then
    read it again for the hints owed (the first answer, the practice row) and the review card, and tried a retry's
    doomed first-answer insert: 19 statements for a first answer, 18 for a retry (SQLite, savepoints included).
    The state read once is reused, as the page's answer does; the hints taken are still paid and a retry is one."""
    from django.test.utils import CaptureQueriesContext

    step = Step.objects.get(title="Preamble size")
    step.hints = ["Step 1 gave 110: multiply."]
    step.save()
    answer_steps_before(api, step)
    assert api.post(f"/api/v1/steps/{step.pk}/hint/").status_code == 200
    url = f"/api/v1/steps/{step.pk}/answer/"
    counts = []
    for value, first in ((1, True), (393.216, False)):
        with CaptureQueriesContext(connection) as ctx:
            body = api.post(url, {"value": value}, format="json").json()
        assert (body["is_first"], body["hints_taken"]) == (first, 1 if first else 0)
        sql = [q["sql"] for q in ctx.captured_queries]
        assert not [q for q in sql if q.startswith('SELECT 1 AS "a" FROM "lessons_answer"')]  # hints_to_pay's
        assert sum(q.startswith('SELECT "lessons_itempractice"') for q in sql) == 1
        assert sum(q.startswith('SELECT "lessons_reviewcard"') for q in sql) == 1  # a first answer's "none" reused too
        assert not [q for q in sql if q.startswith("ROLLBACK TO SAVEPOINT")]  # no doomed first-answer insert
        counts.append(len(sql))
    assert counts[0] <= 16 and counts[1] <= 12, counts


def test_a_value_typed_with_a_unit_is_converted_to_the_items_unit(api, lesson):
    step = Step.objects.get(title="Preamble size")  # asks for MB
    answer_steps_before(api, step)
    url = f"/api/v1/steps/{step.pk}/answer/"
    refused = api.post(url, {"value": "393 ms"}, format="json")
    assert refused.status_code == 400
    assert refused.json() == {"errors": {"value": ["“393 ms” is a time, but this question asks for a size in MB."]}}
    body = api.post(url, {"value": "375 MiB"}, format="json").json()
    assert body["outcome"] == "correct"
    assert body["value"] == pytest.approx(393.216)
    assert Answer.objects.get(step=step).value == pytest.approx(393.216)


def test_unknown_item_is_404(api, lesson):
    assert api.post("/api/v1/deep-dives/999999/answer/", {"choice": 1}, format="json").status_code == 404
    assert api.get("/api/v1/lessons/nope/").status_code == 404


def test_csrf_is_enforced_for_anonymous_session_posts(lesson):
    browser = APIClient(enforce_csrf_checks=True)
    dd = DeepDive.objects.get(key="dd-1")
    response = browser.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.first().pk}, format="json")
    assert response.status_code == 403
    assert "CSRF" in response.json()["detail"]
    browser.get("/")  # the page sets the CSRF cookie, as a browser session would
    token = browser.cookies["csrftoken"].value
    ok = browser.post(
        f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.first().pk}, format="json",
        HTTP_X_CSRFTOKEN=token,
    )  # fmt: skip
    assert ok.status_code == 200


def test_token_authenticated_script_answers_as_its_account(lesson, learner_user):
    _token, key = create_token(learner_user, "script")
    script = APIClient(enforce_csrf_checks=True)
    script.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    dd = DeepDive.objects.get(key="dd-1")
    response = script.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.first().pk}, format="json")
    assert response.status_code == 200
    assert Answer.objects.get().learner.user == learner_user
    assert script.get("/api/v1/results/").json()["total"]["answered"] == 1


def test_revoked_or_wrong_token_is_refused(lesson, learner_user):
    script = APIClient()
    script.credentials(HTTP_AUTHORIZATION="Token sil_not-a-real-key")
    assert script.get("/api/v1/results/").status_code == 401


def test_results(api, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.get(verdict="weak").pk}, format="json")
    results = api.get("/api/v1/results/").json()
    assert results["total"] == {"answered": 1, "total": 4, "points": 0, "max_points": 40}
    assert results["topics"][0]["topic"] == "kv_allocation"
    assert results["misses"][0]["retry_url"].endswith("/lessons/sample/?layer=2&section=core#dd-dd-1")
    assert results["misses"][0]["right_on_retry"] is False
    # A right retry leaves the miss (the first answer scored 0) and says it was got right since, as the page does.
    api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.get(verdict="best").pk}, format="json")
    again = api.get("/api/v1/results/").json()
    assert again["total"]["points"] == 0 and [m["id"] for m in again["misses"]] == [dd.pk]
    assert again["misses"][0]["right_on_retry"] is True


def test_openapi_schema_validates_without_warnings(db):
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", "/dev/null")


def test_schema_and_docs_are_served_locally(client, db):
    assert client.get("/api/schema/").status_code == 200
    docs = client.get("/api/docs/").content.decode()
    assert "swagger" in docs.lower()
    assert "cdn" not in docs.lower()


@pytest.mark.django_db(transaction=True)
def test_twenty_concurrent_answers_from_different_learners_all_land():
    lesson = make_lesson()
    dd = DeepDive.objects.get(key="dd-1")
    best = dd.choices.get(verdict="best")
    barrier = threading.Barrier(20)
    codes = []

    def learner():
        c = Client()
        barrier.wait()
        codes.append(c.post(f"/lessons/{lesson.slug}/deep-dives/{dd.pk}/answer/", {"choice": best.pk}).status_code)
        connection.close()

    threads = [threading.Thread(target=learner) for _ in range(20)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert codes == [303] * 20
    assert Answer.objects.filter(is_first=True).count() == 20


def test_api_text_has_calculator_numbers_filled_in(api, lesson):
    section = lesson.sections.get()
    section.body = "A token of KV is {{calc kv-cache.bytes_per_token | int}} bytes."
    section.save()
    body = api.get("/api/v1/lessons/sample/").json()["sections"][0]["body"]
    assert body == "A token of KV is 327,680 bytes."


def test_other_authorization_schemes_do_not_skip_csrf(lesson):
    browser = APIClient(enforce_csrf_checks=True)
    browser.get("/")
    dd = DeepDive.objects.get(key="dd-1")
    response = browser.post(
        f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.first().pk}, format="json",
        HTTP_AUTHORIZATION="Bogus x",
    )  # fmt: skip
    assert response.status_code == 403
    assert not Answer.objects.exists()


def test_an_htmx_request_cannot_poison_the_shared_first_visit_page(lesson):
    Client().get("/lessons/sample/", HTTP_HX_REQUEST="true")
    html = Client().get("/lessons/sample/").content.decode()
    assert html.count('id="announcer"') == 1


def test_long_query_string_on_a_walkthrough_step_is_fine(client, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    client.post(f"/lessons/sample/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.first().pk})
    response = client.get("/lessons/sample/walkthroughs/build/2/?q=" + "x" * 500)
    assert response.status_code == 200


def test_authored_html_in_api_text_is_sanitised_in_the_html_twin(api, lesson):
    dive = DeepDive.objects.get(key="dd-1")
    dive.prompt = 'How? <script>alert(1)</script><img src=x onerror="alert(2)">'
    dive.save()
    dive = api.get("/api/v1/lessons/sample/").json()["sections"][0]["items"][0]
    assert "<script" not in dive["prompt_html"]
    assert "onerror" not in dive["prompt_html"]


@pytest.fixture
def follow(lesson):
    """A follow-up that dd-1's weak choice leads to."""
    from tests.lessons.factories import make_deep_dive

    dd = DeepDive.objects.get(key="dd-1")
    follow = make_deep_dive(dd.section, key="dd-follow", order=60)
    weak = dd.choices.get(verdict="weak")
    weak.follow_up = follow
    weak.save()
    return follow


def test_the_api_refuses_a_follow_up_not_yet_reached(api, lesson, follow):
    dd = DeepDive.objects.get(key="dd-1")
    weak = dd.choices.get(verdict="weak")
    url = f"/api/v1/deep-dives/{follow.pk}/answer/"
    response = api.post(url, {"choice": follow.choices.first().pk}, format="json")
    assert response.status_code == 409
    # Like every API error that is not about a field the client sent: "detail" to show, "errors" to parse.
    assert response.json() == {"detail": FOLLOW_UP_NOT_REACHED, "errors": {"deep_dive": [FOLLOW_UP_NOT_REACHED]}}
    assert not Answer.objects.exists()
    assert api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": weak.pk}, format="json").json()["follow_up"]
    assert api.post(url, {"choice": follow.choices.first().pk}, format="json").status_code == 200
    assert Answer.objects.filter(deep_dive=follow).count() == 1


def test_a_follow_up_answered_before_may_be_answered_again_through_the_api_as_on_the_page(api, lesson, follow):
    """The page and the API apply one rule: a follow-up is open once reached, and stays open once answered."""
    from lessons.models import ItemPractice

    dd = DeepDive.objects.get(key="dd-1")
    weak = dd.choices.get(verdict="weak")
    api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": weak.pk}, format="json")
    url = f"/api/v1/deep-dives/{follow.pk}/answer/"
    assert api.post(url, {"choice": follow.choices.first().pk}, format="json").status_code == 200
    ItemPractice.objects.filter(deep_dive=follow).update(reached=False)  # as if the flag had been lost
    assert api.post(url, {"choice": follow.choices.first().pk}, format="json").status_code == 200
    assert Answer.objects.filter(deep_dive=follow).count() == 2
