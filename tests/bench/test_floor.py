"""The bench-only floors `make bench` divides every target's cost by (bench/floor_urls.py)."""

import pytest
from django.test import Client, override_settings


@pytest.fixture
def floor_urls():
    with override_settings(ROOT_URLCONF="bench.floor_urls"):
        yield


def test_the_get_floor_answers_a_visitor_and_a_signed_in_learner(floor_urls, learner_user):
    client = Client()
    assert client.get("/bench-floor/get/").content == b"<p>visitor</p>"
    client.force_login(learner_user)
    assert client.get("/bench-floor/get/").content == b"<p>signed in</p>"
    assert client.post("/bench-floor/get/").status_code == 405


def test_the_post_floor_needs_a_signed_in_learner_and_a_csrf_token(floor_urls, learner_user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner_user)
    assert client.post("/bench-floor/post/").status_code == 403  # no CSRF token
    client.get("/")  # sets the CSRF cookie
    response = client.post("/bench-floor/post/", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value)
    assert response.status_code == 200
    assert response.content == b"<p>ok</p>"
    assert client.get("/bench-floor/post/").status_code == 405


def test_the_post_floor_refuses_a_visitor_who_is_not_signed_in(floor_urls, db):
    assert Client().post("/bench-floor/post/").status_code == 403


def test_the_real_pages_are_still_served_beside_the_floors(floor_urls, db):
    assert Client().get("/healthz").status_code == 200
