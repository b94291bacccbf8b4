"""Spaced review: answers schedule their items; misses come back sooner than right answers."""

from datetime import UTC, datetime, timedelta

import pytest
from django.urls import reverse

from lessons.models import Answer, DeepDive, Learner, ReviewCard
from lessons.review import due_items, schedule
from tests.lessons.factories import answer_deep_dive as answer
from tests.lessons.factories import make_lesson

START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


@pytest.fixture
def lesson(db):
    return make_lesson(deep_dives=2)


@pytest.fixture
def clock(time_machine):
    """The wall clock, stopped at START; tests move it on with ``clock.shift(...)``."""
    time_machine.move_to(START, tick=False)
    return time_machine


def test_a_miss_comes_back_sooner_than_a_right_answer(client, lesson, clock):
    answer(client, lesson, "dd-1", "weak")
    answer(client, lesson, "dd-2", "best")
    missed = ReviewCard.objects.get(deep_dive__key="dd-1")
    right = ReviewCard.objects.get(deep_dive__key="dd-2")
    assert missed.due == START + timedelta(minutes=10)
    assert right.due > START + timedelta(hours=1)
    assert missed.last_outcome == "incorrect"


def test_retries_reschedule_the_same_card(client, lesson, clock):
    answer(client, lesson, "dd-1", "weak")
    first_due = ReviewCard.objects.get().due
    clock.shift(timedelta(minutes=1))
    answer(client, lesson, "dd-1", "best")
    card = ReviewCard.objects.get()
    assert card.reviews == 2
    assert card.due > first_due


def test_review_page_lists_due_items_with_links(client, lesson, clock):
    answer(client, lesson, "dd-1", "weak")
    clock.shift(timedelta(minutes=9))
    assert "Nothing is due right now" in client.get(reverse("review")).content.decode()
    clock.shift(timedelta(minutes=2))  # the miss comes back ten minutes after the answer
    html = client.get(reverse("review")).content.decode()
    assert f'href="{lesson.get_absolute_url()}#dd-dd-1"' in html
    assert "Last answer: missed" in html
    results = client.get(reverse("results")).content.decode()
    assert "1 item due for review" in results


def test_schedule_is_computed_from_the_answer_time(lesson):
    learner = Learner.objects.create()
    dd = DeepDive.objects.get(key="dd-1")
    now = START
    missed = Answer.objects.create(learner=learner, deep_dive=dd, outcome="incorrect", points=0, max_points=10)
    card = schedule(missed, now=now)
    assert card.due == now + timedelta(minutes=10)
    assert [item.title for item in due_items({"learner": learner}, [lesson], now=now + timedelta(minutes=11))] == [
        "How? (dd-1)"
    ]


def test_reset_and_merge_carry_the_cards(client, lesson, learner_user):
    answer(client, lesson, "dd-1", "weak")
    client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery"})
    assert ReviewCard.objects.get().learner.user == learner_user
    client.post(reverse("reset-progress"), {"confirm": "yes"})
    assert not ReviewCard.objects.exists()


def test_review_api(lesson, learner_user, clock):
    from rest_framework.test import APIClient

    from interview.accounts.tokens import create_token

    _token, key = create_token(learner_user, "review")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    dd = DeepDive.objects.get(key="dd-1")
    api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.get(verdict="weak").pk}, format="json")
    assert api.get("/api/v1/review/").json() == []
    clock.shift(timedelta(minutes=11))
    [item] = api.get("/api/v1/review/").json()
    assert item["title"] == "How? (dd-1)"
    assert item["url"].endswith("/lessons/sample/#dd-dd-1")


def test_due_count_and_review_list_agree_when_a_lesson_is_unpublished(client, lesson, clock):
    other = make_lesson(slug="other", deep_dives=1)
    answer(client, lesson, "dd-1", "weak")
    answer(client, other, "dd-1", "weak")
    clock.shift(timedelta(minutes=11))
    Lesson = type(lesson)
    Lesson.objects.filter(pk=other.pk).update(published=False)
    assert "1 item due for review" in client.get(reverse("results")).content.decode()
    assert client.get(reverse("review")).content.decode().count('class="card"') == 1


def test_home_page_points_a_returning_learner_at_what_is_due(client, lesson, clock):
    answer(client, lesson, "dd-1", "weak")
    assert "due for review" not in client.get("/").content.decode()
    clock.shift(timedelta(minutes=11))
    assert "1 due for review" in client.get("/").content.decode()
