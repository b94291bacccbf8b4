"""Set up `make bench`'s data through the app's own pages and write the plan of what wrk requests.

Run by bench/run.py with the settings the server uses (``python -m bench.prepare PLAN.json``):
migrate, load the content with the two generated lessons (bench/scale.py), sign learners in,
give them histories by answering the forms of lesson pages as a learner does, and count the
queries of each target. It reads no module of the app but one model, through ``apps``, to copy
retries into the 10,000-answer history (answering 10,000 times over HTTP would take minutes).
"""

from __future__ import annotations

import copy
import io
import json
import re
import sys
import tempfile
from html import unescape
from pathlib import Path

import django

from bench import scale
from bench.forms import Form, answer_forms, parse_forms

CASE_STUDY = "/lessons/llm-serving-platform/"  # the richest shipped lesson: walkthroughs, deep dives, a challenge
CALCULATOR_PAGE = "/calculators/kv-cache/"
CALCULATOR_API = "/api/v1/calculators/kv-cache/?tokens=1200&cache_gb=8"
FLOOR_GET, FLOOR_POST, FLOOR_ANSWER = "/bench-floor/get/", "/bench-floor/post/", "/bench-floor/answer/"
STATIC = "/static/bench-ceiling.html"
BIG_HISTORY = 10_000
ANSWERERS = 16  # learners the answer target rotates over, so first answers keep coming during the run
FLOOR_LEARNERS = 4  # the answer floor's own learners (bench/floor_urls.py)
PASSWORD = "bench-password-0123456789"
TRANSACTION = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")


def lesson_url(deep_dives: int) -> str:
    return f"/lessons/{scale.lesson_slug(deep_dives)}/"


def sign_in(username: str):
    """Return a test client signed in as a new account (Django's own test login, no password check)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    user = get_user_model().objects.create_user(username)  # no password: hashing one costs a third of a second
    client = Client()
    client.force_login(user)
    return client


def get_html(client, url: str) -> str:
    response = client.get(url)
    if response.status_code != 200:
        sys.exit(f"GET {url} answered {response.status_code}")
    return response.content.decode()


def lesson_forms(client, url: str, walkthroughs: bool = True) -> list[Form]:
    """Return the answer forms a learner reaches from a lesson page: its layers' pages (and their walkthrough steps)."""
    pages, seen, forms = [url], {url}, {}
    while pages:
        html = get_html(client, pages.pop(0))
        for form in answer_forms(html):
            forms.setdefault(form.action, form)
        # The outline's layers, and the parts of a long layer (pages.LayerView.split)
        for link in re.findall(r'href="(/lessons/[^"#]+\?layer=\d+(?:&amp;section=[^"#]+)?)#layer-\d+"', html):
            link = unescape(link)
            if link.startswith(url) and link not in seen:
                seen.add(link)
                pages.append(link)
        if walkthroughs:
            for link in re.findall(r'href="(/lessons/[^"#]+/walkthroughs/[^"#]+)', html):
                if link.startswith(url) and link not in seen:
                    seen.add(link)
                    pages.append(link)
    return list(forms.values())


def answer(client, form: Form, pick: int = 0):
    response = client.post(
        form.action, form.body(pick), content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true"
    )
    if response.status_code != 200:
        sys.exit(f"POST {form.action} answered {response.status_code}: {response.content[:300]!r}")
    return response


def answer_everything(client, urls: list[str]) -> list[Form]:
    """Answer every item reachable from the lessons once, follow-ups included; return their forms in order."""
    answered: dict[str, Form] = {}
    for url in urls:
        # Answers open more: a follow-up appears once its parent is answered, a walkthrough's next step once the step
        # before it that asks for a number is (its Next link), so the pages are read again until nothing is new.
        for _ in range(12):
            new = [form for form in lesson_forms(client, url) if form.action not in answered]
            for form in new:
                answer(client, form)
                answered[form.action] = form
            if not new:
                break
    return list(answered.values())


def retry_everything(client, forms: list[Form]) -> None:
    for form in forms:
        answer(client, form, pick=1)


def answer_half(client, forms: list[Form]) -> None:
    """Answer every other form (a learner halfway through a lesson page)."""
    for form in forms[::2]:
        answer(client, form, pick=steady_pick(form, 0))


def answer_target(forms: list[Form], answerers: list) -> list[tuple[object, Form, str]]:
    """Return the answer target's requests, (learner, form, body): each learner answers each form in turn, a pick
    apart, so wrk sends first answers and retries, and every one is answered 200."""
    return [
        (client, form, form.body(pick=steady_pick(form, index + n)))
        for index, form in enumerate(forms)
        for n, client in enumerate(answerers)
    ]


def steady_pick(form: Form, pick: int) -> int:
    """Return the first pick from ``pick`` on that leaves its deep dive open to retries.

    An approach that is not the best and opens a follow-up makes its deep dive wait for that follow-up: no other try
    (409) until it is answered. The answer target retries the case study's forms over and over, without the
    follow-ups, so its learners never pick those approaches (the model is read through ``apps``, as in
    ``grow_history``).
    """
    from django.apps import apps

    choices = apps.get_model("lessons", "Choice").objects
    for candidate in range(pick, pick + max(len(form.buttons), 1)):
        name, value = form.buttons[candidate % len(form.buttons)] if form.buttons else ("", "")
        if name != "choice" or not value.isdigit():
            return candidate
        if not choices.filter(pk=int(value), follow_up__isnull=False).exclude(verdict="best").exists():
            return candidate
    return pick


def last_answer_pk() -> int:
    from django.apps import apps

    return apps.get_model("lessons", "Answer").objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def grow_history(first_pk: int, retries_from_pk: int, total: int) -> int:
    """Copy the retries answered after ``retries_from_pk`` until the history since ``first_pk`` holds ``total``."""
    from django.apps import apps

    answers = apps.get_model("lessons", "Answer").objects
    retries = list(answers.filter(pk__gt=retries_from_pk))
    have = answers.filter(pk__gt=first_pk).count()
    copies = []
    for index in range(total - have):
        row = copy.copy(retries[index % len(retries)])
        row.pk = None
        copies.append(row)
    answers.bulk_create(copies, batch_size=1000)
    return answers.filter(pk__gt=first_pk).count()


def count_queries(client, method: str, url: str, body: str = "", warm: bool = True) -> int:
    """Return the queries one request makes (transaction control left out), after a warm-up request."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    def send():
        if method == "GET":
            return client.get(url)
        return client.post(url, body, content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true")

    if warm:
        send()
    with CaptureQueriesContext(connection) as context:
        response = send()
    if response.status_code != 200:
        sys.exit(f"{method} {url} answered {response.status_code}")
    return len([q for q in context.captured_queries if not q["sql"].startswith(TRANSACTION)])


def cookie(client) -> str:
    from django.conf import settings

    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def prepare(run_id: str) -> dict:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client, override_settings

    call_command("migrate", interactive=False, verbosity=0)
    with tempfile.TemporaryDirectory(prefix="sil-bench-content-") as content:
        call_command("load_content", dir=scale.write_content(Path(content)), stdout=io.StringIO())
    call_command("collectstatic", interactive=False, verbosity=0)

    lessons = sorted(set(re.findall(r'href="(/lessons/[^/"]+/)"', get_html(Client(), "/"))))
    shipped = [url for url in lessons if "/lessons/bench-" not in url]

    # Learners halfway through the case study (and the generated lessons); the first is "the" partial learner.
    answerers = [sign_in(f"bench-{run_id}-partial-{n}") for n in range(ANSWERERS)]
    partial = answerers[0]
    case_forms = lesson_forms(partial, CASE_STUDY, walkthroughs=False)
    for client in answerers:
        answer_half(client, case_forms)
    # The answer floor's own learners, halfway through as the answerers are: what it writes (retries, their place)
    # must not change the learners the lesson and answer targets measure.
    floor_learners = [sign_in(f"bench-{run_id}-floor-{n}") for n in range(FLOOR_LEARNERS)]
    for client in floor_learners:
        answer_half(client, case_forms)
    answer_half(partial, lesson_forms(partial, lesson_url(scale.SMALL)))
    answer_half(partial, lesson_forms(partial, lesson_url(scale.LARGE))[:20])

    # A learner who answered everything and retried it once; another grown from the same to 10,000 answers.
    full = sign_in(f"bench-{run_id}-full")
    forms = answer_everything(full, shipped)
    retry_everything(full, forms)
    big = sign_in(f"bench-{run_id}-big")
    first_pk = last_answer_pk()
    for form in forms:  # the same path through the lessons as the full learner's
        answer(big, form)
    retries_from = last_answer_pk()
    retry_everything(big, forms)
    big_answers = grow_history(first_pk, retries_from, BIG_HISTORY)

    # One CSRF cookie and its masked token serve every signed-in request (Django ties neither to the session).
    page = get_html(partial, CASE_STUDY)
    csrf_cookie = f"{settings.CSRF_COOKIE_NAME}={partial.cookies[settings.CSRF_COOKIE_NAME].value}"
    csrf_token = next(
        value for form in parse_forms(page) for name, value in form.fields if name == "csrfmiddlewaretoken"
    )
    anonymous_size = len(Client().get(CASE_STUDY).content)

    def get(url, client=None):
        return [{"method": "GET", "path": url, "cookie": f"{cookie(client)}; {csrf_cookie}" if client else ""}]

    def get_layers(url, client=None):  # the lesson's layer pages in turn
        return [request for page in scale.layer_pages(url) for request in get(page, client)]

    def count_layers(client, url):  # the most queries any layer's page makes
        return max(count_queries(client, "GET", page) for page in scale.layer_pages(url))

    answer_requests = [
        {"method": "POST", "path": form.action, "cookie": f"{cookie(client)}; {csrf_cookie}", "body": body}
        for client, form, body in answer_target(case_forms, answerers)
    ]
    from django.apps import apps

    case_study = apps.get_model("lessons", "Lesson").objects.get(slug=CASE_STUDY.strip("/").rpartition("/")[2])
    floor_answer = [  # each of its learners answers each deep dive they answered halfway through: a card to update
        {
            "method": "POST",
            "path": f"{FLOOR_ANSWER}{case_study.pk}/{deep_dive}/",
            "cookie": f"{cookie(client)}; {csrf_cookie}",
            "body": form.body(pick=n),
        }
        for form in case_forms[::2]
        for deep_dive in re.findall(r"/deep-dives/(\d+)/answer/$", form.action)
        for n, client in enumerate(floor_learners)
    ]
    requests = {
        "static": get(STATIC),
        "floor_get": get(FLOOR_GET),
        "floor_get_signed_in": get(FLOOR_GET, partial),
        "floor_post": [{"method": "POST", "path": FLOOR_POST, "cookie": f"{cookie(partial)}; {csrf_cookie}"}],
        "floor_answer": floor_answer,
        "lesson_anonymous": get_layers(CASE_STUDY),
        "lesson_signed_in": get_layers(CASE_STUDY, partial),
        "answer": answer_requests,
        "results_full_history": get("/results/", full),
        "calculator_page": get(CALCULATOR_PAGE),
        "calculator_api": get(CALCULATOR_API),
        "lesson_200_deep_dives": get(lesson_url(scale.LARGE), partial),
        "lesson_10k_answers": get_layers(CASE_STUDY, big),
        "results_10k_answers": get("/results/", big),
        "lesson_signed_in_300": get_layers(CASE_STUDY, partial),
    }

    # Queries: counted in this process with the server's settings, each after one warm-up request.
    with override_settings(ROOT_URLCONF="bench.floor_urls"):
        floor_client = Client()
        floor_client.cookies.load(csrf_cookie)
        partial.cookies.load(csrf_cookie)
        queries = {
            "floor_get": count_queries(floor_client, "GET", FLOOR_GET),
            "floor_get_signed_in": count_queries(partial, "GET", FLOOR_GET),
            "floor_post": count_queries(partial, "POST", FLOOR_POST),
            "floor_answer": count_queries(
                floor_learners[0], "POST", floor_answer[0]["path"], floor_answer[0]["body"], warm=False
            ),
        }
    answerer = answerers[1]
    queries |= {
        "lesson_anonymous": count_layers(Client(), CASE_STUDY),
        "lesson_signed_in": count_layers(partial, CASE_STUDY),
        # A first answer (an item the learner skipped), then a retry of the same item.
        "answer_first": count_queries(answerer, "POST", case_forms[1].action, case_forms[1].body(), warm=False),
        "answer_retry": count_queries(answerer, "POST", case_forms[1].action, case_forms[1].body(pick=1), warm=False),
        "results_full_history": count_queries(full, "GET", "/results/"),
        "calculator_page": count_queries(Client(), "GET", CALCULATOR_PAGE),
        "calculator_api": count_queries(Client(), "GET", CALCULATOR_API),
        "lesson_2_deep_dives": count_queries(partial, "GET", lesson_url(scale.SMALL)),
        "lesson_200_deep_dives": count_queries(partial, "GET", lesson_url(scale.LARGE)),
        "lesson_10k_answers": count_layers(big, CASE_STUDY),
        "results_10k_answers": count_queries(big, "GET", "/results/"),
    }
    queries["answer"] = max(queries["answer_first"], queries["answer_retry"])
    queries["lesson_signed_in_300"] = queries["lesson_signed_in"]
    # Accounts for the "several instances, one truth" step, which logs in through the pages.
    accounts = {"staff": [f"bench-{run_id}-staff", PASSWORD], "learner": [f"bench-{run_id}-learner", PASSWORD]}
    get_user_model().objects.create_superuser(accounts["staff"][0], password=PASSWORD)
    get_user_model().objects.create_user(accounts["learner"][0], password=PASSWORD)
    return {
        "accounts": accounts,
        "requests": requests,
        "csrf_token": csrf_token,
        "queries": queries,
        "anonymous_lesson_bytes": anonymous_size,
        "history": {"partial_items": len(case_forms), "answerers": ANSWERERS, "big_answers": big_answers},
    }


def count_answers() -> int:
    """Return how many answers the database holds (the one truth both instances write to)."""
    from django.apps import apps

    return apps.get_model("lessons", "Answer").objects.count()


def main() -> None:
    """``python -m bench.prepare PLAN.json RUN_ID`` writes the plan; ``... count-answers`` prints the count."""
    django.setup()
    if sys.argv[1] == "count-answers":
        print(count_answers())
    else:
        Path(sys.argv[1]).write_text(json.dumps(prepare(sys.argv[2])))


if __name__ == "__main__":
    main()
