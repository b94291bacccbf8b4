"""The one rate-limit mechanism: counting, windows, concurrency, failing open, and its uses by pages and API."""

import logging
import threading
from datetime import UTC, datetime

import pytest
import time_machine
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from interview import ratelimit
from interview.accounts.tokens import create_token
from interview.visitors import client_address, visitor_key
from lessons.models import Answer, DeepDive
from tests.lessons.factories import make_lesson

# 15 s into a minute: a one-minute window ends 45 s later.
NOON = datetime(2026, 11, 30, 12, 0, 15, tzinfo=UTC)


@pytest.fixture(autouse=True)
def _stopped_clock(stopped_clock):
    """Every count in this module happens inside one window."""


@pytest.fixture
def lesson(db):
    return make_lesson()


def deep_dive_answer_urls(lesson) -> tuple[str, str, dict]:
    dd = DeepDive.objects.get(key="dd-1", section__lesson=lesson)
    choice = {"choice": dd.choices.get(verdict="best").pk}
    return f"/api/v1/deep-dives/{dd.pk}/answer/", f"/lessons/{lesson.slug}/deep-dives/{dd.pk}/answer/", choice


def test_rates_are_read_with_their_unit_and_bad_ones_refused():
    assert ratelimit.parse_rate("10/min") == ratelimit.Rate(10, 60)
    assert ratelimit.parse_rate("5/15min") == ratelimit.Rate(5, 900)
    assert ratelimit.parse_rate("100/h") == ratelimit.Rate(100, 3600)
    for bad in ("10", "ten/min", "10/fortnight", "10/0min", "/min"):
        with pytest.raises(ImproperlyConfigured, match="is not like"):
            ratelimit.parse_rate(bad)


def test_a_limit_allows_its_count_per_window_then_says_when_to_retry(settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "answers": "3/min"}
    with time_machine.travel(NOON, tick=False) as clock:
        hits = [ratelimit.hit("answers", "address:10.0.0.1") for _ in range(4)]
        assert [h.allowed for h in hits] == [True, True, True, False]
        assert hits[-1].retry_after == 45
        assert ratelimit.hit("answers", "address:10.0.0.2").allowed  # another visitor has their own count
        clock.shift(45)
        assert ratelimit.hit("answers", "address:10.0.0.1").allowed  # a new window


def together(count: int, action) -> list:
    """Run ``action`` in ``count`` threads released at once; return what each returned."""
    barrier = threading.Barrier(count)
    results = []

    def run():
        barrier.wait()
        try:
            results.append(action())
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_cannot_overshoot_a_limit(settings):
    """Threads released together against the configured cache (Redis when REDIS_URL is set)."""
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": "5/h"}
    allowed = together(16, lambda: ratelimit.hit("login", "10.9.9.9").allowed)
    assert sorted(allowed) == [False] * 11 + [True] * 5


@pytest.mark.django_db(transaction=True)
def test_concurrent_log_ins_from_one_address_stop_at_the_limit(settings, django_user_model):
    django_user_model.objects.create_user("ada", "ada@example.com", "correct-horse-battery")
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "login": "4/h"}
    codes = together(
        10, lambda: Client().post("/accounts/login/", {"username": "ada", "password": "wrong"}).status_code
    )
    assert sorted(codes) == [200] * 4 + [429] * 6


class RaisingCache:
    """Django's own Redis backend when Redis is down."""

    def __getattr__(self, name):
        def fail(*args, **kwargs):
            raise ConnectionError("Error 111 connecting to 127.0.0.1:6391. Connection refused.")

        return fail


class SilentCache:
    """django-redis with IGNORE_EXCEPTIONS when Redis is down: every call answers None."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


@pytest.mark.parametrize("broken", [RaisingCache(), SilentCache()], ids=["raises", "answers-none"])
def test_limits_fail_open_with_a_warning_when_the_cache_is_down(broken, lesson, settings, monkeypatch, caplog):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "answers": "1/min", "api_anon": "1/min", "login": "1/min"}
    monkeypatch.setattr(ratelimit, "cache", broken)
    api_url, page_url, choice = deep_dive_answer_urls(lesson)
    with caplog.at_level(logging.WARNING, logger="interview.ratelimit"):
        assert [Client().post(page_url, choice).status_code for _ in range(2)] == [303, 303]
        assert [APIClient().post(api_url, choice, format="json").status_code for _ in range(2)] == [200, 200]
        assert [APIClient().get("/api/v1/lessons/").status_code for _ in range(2)] == [200, 200]
        bad_login = {"username": "ada", "password": "wrong"}
        assert [Client().post("/accounts/login/", bad_login).status_code for _ in range(2)] == [200, 200]
    assert Answer.objects.count() == 4
    assert any("not checked" in record.getMessage() for record in caplog.records)


def test_limits_come_back_with_the_cache(lesson, settings, monkeypatch):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "answers": "1/min"}
    _api_url, page_url, choice = deep_dive_answer_urls(lesson)
    with monkeypatch.context() as patched:
        patched.setattr(ratelimit, "cache", RaisingCache())
        assert Client().post(page_url, choice).status_code == 303
    assert [Client().post(page_url, choice).status_code for _ in range(2)] == [303, 429]


@pytest.mark.parametrize("first", ["api", "page"])
def test_anonymous_answers_through_the_api_and_the_page_from_one_address_both_work(first, lesson):
    """Two visitors behind one address, one using the API and one the page (a 500 once)."""
    api_url, page_url, choice = deep_dive_answer_urls(lesson)
    by_api = lambda: APIClient().post(api_url, choice, format="json").status_code  # noqa: E731
    by_page = lambda: Client().post(page_url, choice).status_code  # noqa: E731
    codes = [by_api(), by_page()] if first == "api" else [by_page(), by_api()]
    assert sorted(codes) == [200, 303]
    assert Answer.objects.count() == 2


def test_answers_share_one_budget_whether_through_the_page_or_the_api(lesson, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "answers": "2/min"}
    api_url, page_url, choice = deep_dive_answer_urls(lesson)
    with time_machine.travel(NOON, tick=False):
        assert APIClient().post(api_url, choice, format="json").status_code == 200
        assert Client().post(page_url, choice).status_code == 303
        over_page = Client().post(page_url, choice)
        over_api = APIClient().post(api_url, choice, format="json")
    assert over_page.status_code == 429
    assert over_page["Retry-After"] == "45"
    assert "Try again in 45 seconds" in over_page.content.decode()
    assert over_api.status_code == 429
    assert over_api["Retry-After"] == "45"
    assert over_api.json()["errors"]["__all__"][0].startswith("Request was throttled.")
    assert Answer.objects.count() == 2


def test_a_signed_in_learner_answers_on_their_own_budget_not_their_addresses(lesson, learner_user, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "answers": "1/min"}
    _api_url, page_url, choice = deep_dive_answer_urls(lesson)
    assert Client().post(page_url, choice).status_code == 303  # an anonymous neighbour on the same address
    signed_in = Client()
    signed_in.force_login(learner_user)
    assert [signed_in.post(page_url, choice).status_code for _ in range(2)] == [303, 429]


def test_an_account_has_one_answers_budget_for_its_session_and_its_tokens(lesson, learner_user, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "answers": "2/min"}
    api_url, page_url, choice = deep_dive_answer_urls(lesson)
    browser = Client(REMOTE_ADDR="10.0.0.1")
    browser.force_login(learner_user)
    script = APIClient(REMOTE_ADDR="10.0.0.2")
    script.credentials(HTTP_AUTHORIZATION=f"Token {create_token(learner_user, 'script')[1]}")
    assert browser.post(page_url, choice).status_code == 303
    assert script.post(api_url, choice, format="json").status_code == 200
    assert script.post(api_url, choice, format="json").status_code == 429
    assert browser.post(page_url, choice).status_code == 429


def test_api_requests_are_limited_per_address_anonymously_and_per_account_with_a_token(learner_user, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "api_anon": "2/min", "api_user": "3/min"}
    anonymous = APIClient()
    assert [anonymous.get("/api/v1/calculators/").status_code for _ in range(3)] == [200, 200, 429]
    _token, key = create_token(learner_user, "rates")
    script = APIClient()
    script.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert [script.get("/api/v1/calculators/").status_code for _ in range(4)] == [200, 200, 200, 429]


def test_client_address_ignores_forwarded_for_unless_behind_a_proxy(settings):
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.7")
    settings.NUM_PROXIES = 0
    assert client_address(request) == "10.0.0.1"
    settings.NUM_PROXIES = 1
    assert client_address(request) == "192.0.2.7"  # what the proxy saw; "6.6.6.6" is the client's own claim
    assert client_address(RequestFactory().get("/", REMOTE_ADDR="10.0.0.1")) == "10.0.0.1"


def test_visitor_key_is_the_account_when_signed_in_else_the_address(learner_user):
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1")
    request.user = learner_user
    assert visitor_key(request) == f"user:{learner_user.pk}"
    request.user = AnonymousUser()
    assert visitor_key(request) == "address:10.0.0.1"


@pytest.mark.parametrize(
    ("seconds", "words"),
    [(1, "1 second"), (59, "59 seconds"), (60, "about 1 minute"), (662, "about 11 minutes"),
     (3569, "about 59 minutes"), (3585, "about 1 hour"), (7200, "about 2 hours")],
)  # fmt: skip
def test_waits_are_told_in_words_minutes_past_a_minute(seconds, words):
    assert ratelimit.wait_in_words(seconds) == words


def test_the_generic_429_page_tells_the_wait_in_minutes(lesson, settings):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "answers": "1/h"}
    _api_url, page_url, choice = deep_dive_answer_urls(lesson)
    Client().post(page_url, choice)
    refused = Client().post(page_url, choice)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "3585"
    assert "Try again in about 1 hour" in refused.content.decode()


def test_a_request_counted_in_a_window_already_open_costs_one_cache_round_trip(monkeypatch, settings, stopped_clock):
    """Every API request is counted (Redis in production): the window's first makes the counter, the rest
    only add to it."""
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "api_anon": "5/min"}
    calls = []
    real = ratelimit.cache

    class Counting:
        def __getattr__(self, name):
            calls.append(name)
            return getattr(real, name)

    monkeypatch.setattr(ratelimit, "cache", Counting())
    first = ratelimit.hit("api_anon", "address:203.0.113.9")
    assert first.allowed and calls == ["incr", "add"]
    calls.clear()
    for _ in range(4):
        assert ratelimit.hit("api_anon", "address:203.0.113.9").allowed
    assert calls == ["incr"] * 4
    assert not ratelimit.hit("api_anon", "address:203.0.113.9").allowed  # the sixth in the window
