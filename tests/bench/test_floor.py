"""The bench-only floor URL that `make bench` measures next to the answer (bench/floor_urls.py)."""

import sys
from pathlib import Path

import pytest
from django.test import Client, override_settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))


@pytest.fixture
def floor_urls():
    with override_settings(ROOT_URLCONF="floor_urls"):
        yield


def test_the_floor_needs_a_signed_in_learner_and_a_csrf_token(floor_urls, learner_user):
    client = Client(enforce_csrf_checks=True)
    assert client.post("/bench-floor/").status_code == 403  # no CSRF token
    client.force_login(learner_user)
    client.get("/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    response = client.post("/bench-floor/", HTTP_X_CSRFTOKEN=token)
    assert response.status_code == 200
    assert response.content == b"<p>ok</p>"
    assert client.get("/bench-floor/").status_code == 405


def test_the_floor_refuses_a_visitor_who_is_not_signed_in(floor_urls, db):
    assert Client().post("/bench-floor/").status_code == 403


def test_the_real_pages_are_still_served_beside_it(floor_urls, db):
    assert Client().get("/healthz").status_code == 200
