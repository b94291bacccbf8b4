"""Several instances, one truth: two servers on one database (and Redis) agree at once.

An instructor edits a lesson in the admin of instance A; instance B shows the edit on its very
next request (no waiting for a cache to expire), and the reverse; a learner signed in on A
answers through A and B at the same time, and every answer is kept. Used by `make bench`
(bench/run.py) and by tests/bench/test_instances.py. Only URLs and pages, no app modules.
"""

from __future__ import annotations

import contextlib
import re
import secrets
import threading
from collections.abc import Callable
from http.cookiejar import CookieJar
from urllib.error import HTTPError
from urllib.request import HTTPCookieProcessor, HTTPRedirectHandler, Request, build_opener

from bench import scale
from bench.forms import Form, answer_forms, parse_forms

READS = 4  # reads per check: with 2 workers per instance, each worker very likely answers one
ANSWERS_PER_INSTANCE = 12


class _KeepRedirects(HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None  # a redirect is returned as it is: the bench checks it


class Browser:
    """A cookie-keeping HTTP client; cookies of 127.0.0.1 go to every port, as a browser's would."""

    def __init__(self):
        self.cookies = CookieJar()
        self.opener = build_opener(HTTPCookieProcessor(self.cookies), _KeepRedirects)

    def cookie(self, name: str) -> str:
        return next((c.value for c in self.cookies if c.name == name), "")

    def send(self, url: str, body: str | None = None, headers: dict | None = None) -> tuple[int, str]:
        request = Request(url, data=body.encode() if body is not None else None, headers=headers or {})  # noqa: S310 - local
        if body is not None:
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        try:
            with self.opener.open(request, timeout=30) as response:
                return response.status, response.read().decode()
        except HTTPError as error:
            return error.code, error.read().decode(errors="replace")

    def submit(self, base: str, page: str, form: Form, changes: dict | None = None) -> int:
        """Post ``form`` (read from ``page``) as a person clicking its first button; return the status."""
        action = form.action or page
        token = {"csrfmiddlewaretoken": self.cookie("csrftoken")}
        status, _ = self.send(base + action, form.body(changes=token | (changes or {})))
        return status

    def log_in(self, base: str, path: str, username: str, password: str) -> None:
        self.send(base + path)  # sets the CSRF cookie
        _, html = self.send(base + path)
        form = next(f for f in parse_forms(html) if any(name == "password" for name in f.typed))
        status = self.submit(base, path, form, {"username": username, "password": password})
        if status != 302:
            raise AssertionError(f"logging in at {base}{path} as {username} answered {status}, not a redirect")


def _form_with(html: str, name: str) -> Form:
    return next(form for form in parse_forms(html) if any(field == name for field, _ in form.fields))


def edit(staff: Browser, base: str, lesson_slug: str, title: str, marker: str) -> tuple[str, str]:
    """Set the lesson's title and its first section's body through the admin at ``base``; return the old ones."""
    _, listing = staff.send(f"{base}/admin/lessons/lesson/?q={lesson_slug}")
    lesson_page = re.search(r'href="(/admin/lessons/lesson/\d+/change/)', listing).group(1)
    _, html = staff.send(base + lesson_page)
    lesson_form = _form_with(html, "title")
    old_title = dict(lesson_form.fields)["title"]
    section_page = next(link for link in lesson_form.links if re.match(r"/admin/lessons/section/\d+/change/", link))
    if (status := staff.submit(base, lesson_page, lesson_form, {"title": title})) != 302:
        raise AssertionError(f"saving the lesson in the admin at {base} answered {status}")
    _, html = staff.send(base + section_page)
    section_form = _form_with(html, "body")
    old_body = dict(section_form.fields)["body"]
    if (status := staff.submit(base, section_page, section_form, {"body": marker})) != 302:
        raise AssertionError(f"saving the section in the admin at {base} answered {status}")
    return old_title, old_body


def _reads(base: str, url: str, readers: list[Browser], shown: list[str], gone: list[str] = ()) -> list[str]:
    """Read ``url`` at ``base`` READS times; return a failure for each read that misses or still has a text."""
    failures = []
    for number in range(READS):
        status, html = readers[number % len(readers)].send(base + url)
        missing = [text for text in shown if text not in html]
        stale = [text for text in gone if text in html]
        if status != 200 or missing or stale:
            failures.append(f"read {number + 1} of {url} at {base}: status {status}, missing {missing}, stale {stale}")
    return failures


@contextlib.contextmanager
def _traffic(base: str, url: str):
    """Keep reading ``url`` at ``base`` meanwhile, as learners do: a worker that keeps content warm must still see edits."""
    stop = threading.Event()

    def read() -> None:
        reader = Browser()
        while not stop.is_set():
            reader.send(base + url)

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=60)


def waits_for_follow_up(status: int, html: str) -> bool:
    """Return whether a response refused another try of a deep dive whose follow-up waits (services.FOLLOW_UP_FIRST)."""
    return status == 409 and "Answer the follow-up your answer opened first" in html


def check(
    base_a: str,
    base_b: str,
    staff: tuple[str, str],
    learner: tuple[str, str],
    count_answers: Callable[[], int],
    lesson_slug: str = "llm-serving-platform",
) -> list[str]:
    """Run the three checks against two instances; return what failed (nothing when they agree)."""
    failures = []
    url = f"/lessons/{lesson_slug}/"
    staff_browser, learner_browser, visitor = Browser(), Browser(), Browser()
    staff_browser.log_in(base_a, "/admin/login/", *staff)
    learner_browser.log_in(base_a, "/accounts/login/", *learner)
    readers = [visitor, learner_browser]

    # Edit through A, read through B at once; put it back through B, read through A at once.
    token = secrets.token_hex(4)
    title, body = f"Edited lesson {token}", f"Edited section {token}, in *Markdown*."
    with _traffic(base_b, url):
        old_title, old_body = edit(staff_browser, base_a, lesson_slug, title, body)
    failures += _reads(base_b, url, readers, [title, f"Edited section {token}, in <em>Markdown</em>."])
    with _traffic(base_a, url):
        # The session from A's log-in is valid on B too: sessions live in the shared database (or Redis).
        edit(staff_browser, base_b, lesson_slug, old_title, old_body)
    failures += _reads(base_a, url, readers, [], gone=[title, f"Edited section {token}"])

    # Answer through both at the same time, signed in once (on A): every answer must be kept.
    # A lesson page shows one layer; the questions may all be on layers 2 and 3.
    forms = [form for page in scale.layer_pages(url) for form in answer_forms(learner_browser.send(base_b + page)[1])]
    if not forms:
        return [*failures, f"no answer form on {url} at {base_b} for the signed-in learner"]
    before = count_answers()
    statuses: list[tuple[int, str]] = []
    known = {form.action for form in forms}

    def answer_through(base: str, offset: int) -> None:
        """Answer the forms in turn, the two instances one form apart, so they answer the same items at once, and a
        follow-up as soon as an answer opens it, as a learner does on the page."""
        headers = {"X-CSRFToken": learner_browser.cookie("csrftoken"), "HX-Request": "true"}
        for number in range(ANSWERS_PER_INSTANCE):
            queue = [forms[(number + offset) % len(forms)]]
            while queue:
                form = queue.pop(0)
                status, html = learner_browser.send(base + form.action, form.body(pick=number), headers)
                statuses.append((status, html))
                opened = [new for new in answer_forms(html) if new.action not in known]
                known.update(new.action for new in opened)
                queue += opened

    threads = [threading.Thread(target=answer_through, args=(base, n)) for n, base in enumerate((base_a, base_b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    kept = count_answers() - before
    answered = sum(status == 200 for status, _html in statuses)
    # A deep dive takes no other try while a follow-up an answer opened waits (a 409 saying so): refused by rule,
    # not lost, when the other instance opened it a moment before. Any other refusal is a failure.
    refused = [status for status, html in statuses if status != 200 and not waits_for_follow_up(status, html)]
    if refused or kept != answered or answered < ANSWERS_PER_INSTANCE:
        failures.append(
            f"answered {len(statuses)} times through both instances: {answered} accepted, {len(refused)} refused "
            f"({sorted(set(refused))}), {kept} answers kept"
        )
    return failures
