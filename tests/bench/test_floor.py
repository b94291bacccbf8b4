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


def test_the_answer_floor_stores_an_answer_and_moves_the_learners_card_and_place(floor_urls, learner_user):
    """The least an answer costs: it writes what a real answer writes first (the answer, the card's latest answer
    and count, the learner's place), so its cost is a floor for the answer's, not a view that does nothing."""
    from lessons.models import Answer, Choice, LessonProgress, ReviewCard
    from tests.lessons.factories import answer_deep_dive, make_lesson

    lesson = make_lesson()
    client = Client()
    client.force_login(learner_user)
    assert answer_deep_dive(client, lesson, "dd-1", "weak").status_code == 303  # the card and place exist
    card = ReviewCard.objects.get()
    deep_dive, best = card.deep_dive, Choice.objects.get(deep_dive=card.deep_dive, verdict="best")
    url = f"/bench-floor/answer/{lesson.pk}/{deep_dive.pk}/"
    assert client.get(url).status_code == 405
    response = client.post(url, {"choice": best.pk})
    assert (response.status_code, response.content) == (200, b"<p>ok</p>")
    stored = Answer.objects.latest("pk")
    assert (stored.deep_dive, stored.choice, stored.is_first) == (deep_dive, best, False)
    card.refresh_from_db()
    assert (card.latest_answer, card.reviews, card.first_answer.choice.verdict) == (stored, 2, "weak")
    assert LessonProgress.objects.get(learner__user=learner_user, lesson=lesson).url == "/floor/"
    assert Client().post(url, {"choice": best.pk}).status_code == 403  # a visitor who is not signed in
