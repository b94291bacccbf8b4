"""A Redis outage: pages, answers, sessions and the API keep working, /healthz says "degraded".

Each test starts a redis-server of its own on a free port (never the shared one) and stops
it mid-test; redis-server must be installed, as it is on the development machine and in CI.
"""

import shutil
import socket
import subprocess
import time

import pytest
import redis
from django.contrib.auth.models import User
from django.contrib.sessions.backends.cached_db import KEY_PREFIX as SESSION_CACHE_PREFIX
from django.core.cache import caches
from django.test import Client
from django.urls import reverse

from interview.settings import redis_cache
from lessons.models import Choice, DeepDive
from tests.lessons.factories import make_lesson

HTMX = {"HTTP_HX_REQUEST": "true"}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class RedisServer:
    """A throwaway redis-server that keeps nothing on disk and can be stopped and started again."""

    def __init__(self):
        self.binary = shutil.which("redis-server")
        if self.binary is None:
            pytest.fail("redis-server is not installed: the outage tests need it (apt-get install -y redis-server).")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process = None

    def start(self) -> None:
        command = [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        probe = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        for _ in range(100):  # readiness poll: up to about 5 s for the server to listen
            try:
                probe.ping()
                return
            except redis.ConnectionError:
                time.sleep(0.05)
        pytest.fail(f"redis-server did not start on port {self.port}")

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


@pytest.fixture
def private_redis(settings):
    """Point the cache (and cached_db sessions) at a private Redis, exactly as REDIS_URL would."""
    server = RedisServer()
    server.start()
    settings.CACHES = {"default": redis_cache(server.url)}  # the setting_changed signal resets caches
    settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
    yield server
    if server.process.poll() is None:
        server.stop()


@pytest.fixture
def silent_redis(settings):
    """A host that takes connections and never answers, as a hung Redis or a black-holed network does."""
    with socket.create_server(("127.0.0.1", 0)) as listener:  # never accepts: the kernel completes handshakes
        settings.CACHES = {"default": redis_cache(f"redis://127.0.0.1:{listener.getsockname()[1]}/0")}
        settings.SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
        yield


@pytest.fixture
def lesson(db):
    return make_lesson(deep_dives=6)


def deep_dive(number: int) -> DeepDive:
    return DeepDive.objects.get(key=f"dd-{number}")


def best_choice(dd: DeepDive) -> Choice:
    return dd.choices.get(verdict="best")


def use_the_site(client: Client, lesson, numbers: tuple[int, int, int]) -> None:
    """Read every kind of page and answer three deep dives: a form post, an htmx post, the API."""
    assert client.get("/").status_code == 200
    assert client.get(lesson.get_absolute_url()).status_code == 200
    by_form, by_htmx, by_api = (deep_dive(n) for n in numbers)
    url = reverse("answer-deep-dive", args=[lesson.slug, by_form.pk])
    response = client.post(url, {"choice": best_choice(by_form).pk}, follow=True)
    assert response.status_code == 200
    assert "Holds up." in response.content.decode()  # the page read after the redirect shows the feedback
    url = reverse("answer-deep-dive", args=[lesson.slug, by_htmx.pk])
    response = client.post(url, {"choice": best_choice(by_htmx).pk}, **HTMX)
    assert response.status_code == 200
    assert "Correct: 10 of 10 points" in response.content.decode()
    url = reverse("api-deep-dive-answer", args=[by_api.pk])
    response = client.post(url, {"choice": best_choice(by_api).pk}, content_type="application/json")
    assert response.status_code == 200
    assert response.json()["points"] == 10
    assert client.get("/results/").status_code == 200
    assert client.get("/api/v1/lessons/").status_code == 200


def answered(client: Client) -> int:
    """Return how many deep dives the client's learner has answered, read back through the API."""
    response = client.get("/api/v1/results/")
    assert response.status_code == 200
    return response.json()["total"]["answered"]


def test_the_site_keeps_serving_and_storing_answers_while_redis_is_down(private_redis, lesson):
    anonymous, signed_in = Client(), Client()
    User.objects.create_user("ada", "ada@example.com", "correct-horse-battery")
    assert signed_in.login(username="ada", password="correct-horse-battery")
    for client in (anonymous, signed_in):
        use_the_site(client, lesson, (1, 2, 3))
        assert answered(client) == 3
    assert Client().get("/healthz").json() == {"status": "ok", "database": "ok", "cache": "ok"}

    private_redis.stop()

    for client in (anonymous, signed_in):  # sessions begun before the outage are read from the database
        use_the_site(client, lesson, (4, 5, 6))
        assert answered(client) == 6
    newcomer = Client()  # a session created during the outage is saved to the database alone
    use_the_site(newcomer, lesson, (1, 2, 3))
    assert answered(newcomer) == 3
    late = Client()
    assert late.login(username="ada", password="correct-horse-battery")
    assert answered(late) == 6
    response = Client().get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "degraded", "database": "ok", "cache": "down"}


def test_the_cache_is_used_again_when_redis_comes_back_without_a_restart(private_redis, lesson):
    assert Client().get("/healthz").json()["cache"] == "ok"
    private_redis.stop()
    assert Client().get("/healthz").json()["cache"] == "down"
    use_the_site(Client(), lesson, (1, 2, 3))

    private_redis.start()  # same port, empty

    assert Client().get("/healthz").json() == {"status": "ok", "database": "ok", "cache": "ok"}
    client = Client()
    use_the_site(client, lesson, (4, 5, 6))
    session_key = client.cookies["sessionid"].value
    assert caches["default"].get(SESSION_CACHE_PREFIX + session_key) is not None  # cached in Redis again
    assert answered(client) == 3


def test_a_redis_that_never_answers_costs_its_socket_timeouts_not_minutes(silent_redis, lesson):
    started = time.monotonic()
    client = Client()
    assert client.get(lesson.get_absolute_url()).status_code == 200
    url = reverse("answer-deep-dive", args=[lesson.slug, deep_dive(1).pk])
    assert client.post(url, {"choice": best_choice(deep_dive(1)).pk}, **HTMX).status_code == 200
    assert answered(client) == 1
    assert Client().get("/healthz").json() == {"status": "degraded", "database": "ok", "cache": "down"}
    # A bound, not a measurement: each Redis call here gives up after 0.1 s (a few seconds in
    # all), while without the socket timeouts redis-py waits about a minute for each one.
    assert time.monotonic() - started < 30
