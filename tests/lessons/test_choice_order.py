"""Shuffled choices: each learner's own stable order, the same on the page, in fragments and in the API."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from lessons.models import Challenge, Choice, DeepDive
from tests.lessons.factories import make_lesson

HTMX = {"HTTP_HX_REQUEST": "true"}
DEEP_DIVES = 10  # three choices each: two learners' orders all agree with odds of 6**-10


@pytest.fixture
def lesson(db):
    return make_lesson(deep_dives=DEEP_DIVES)


def fragment_order(html: str) -> list[int]:
    """Return the choice ids in the order the HTML shows their buttons."""
    return [int(pk) for pk in re.findall(r'name="choice" value="(\d+)"', html)]


def page_order(client, lesson) -> list[int]:
    return fragment_order(client.get(lesson.get_absolute_url()).content.decode())


def answer(client, dd, choice_pk) -> str:
    url = reverse("answer-deep-dive", args=[dd.section.lesson.slug, dd.pk])
    return client.post(url, {"choice": choice_pk}, **HTMX).content.decode()


def authored_order(lesson) -> list[int]:
    choices = Choice.objects.filter(deep_dive__section__lesson=lesson)
    return list(choices.order_by("deep_dive__order", "order").values_list("pk", flat=True))


def api_order(client, lesson) -> list[int]:
    data = client.get(f"/api/v1/lessons/{lesson.slug}/").json()
    items = [item for section in data["sections"] for item in section["items"] if item["type"] == "deep_dive"]
    return [choice["id"] for item in items for choice in item["choices"]]


def test_each_learner_keeps_an_order_of_their_own(lesson):
    learner, other_learner = Client(), Client()
    first_visit = page_order(learner, lesson)
    assert page_order(learner, lesson) == first_visit  # a reload shows the same order
    assert sorted(first_visit) == sorted(authored_order(lesson))
    assert page_order(other_learner, lesson) != first_visit
    assert first_visit != authored_order(lesson)


def test_an_account_sees_its_order_on_every_device(lesson, learner_user):
    laptop, phone = Client(), Client()
    laptop.force_login(learner_user)
    phone.force_login(learner_user)
    assert page_order(laptop, lesson) == page_order(phone, lesson)
    assert page_order(laptop, lesson) != page_order(Client(), lesson)


def test_the_answer_fragment_keeps_the_page_order(client, lesson):
    order = page_order(client, lesson)
    assert order != authored_order(lesson)
    dd = DeepDive.objects.get(key="dd-1")
    own = [pk for pk in order if pk in set(dd.choices.values_list("pk", flat=True))]
    html = answer(client, dd, own[-1])
    assert fragment_order(html) == own
    assert page_order(client, lesson) == order


def test_the_api_lists_choices_in_the_page_order(client, lesson):
    order = page_order(client, lesson)
    assert order != authored_order(lesson)
    assert api_order(client, lesson) == order


def test_a_pinned_deep_dive_keeps_the_authored_order_for_everyone(lesson):
    DeepDive.objects.update(keep_choice_order=True)
    for learner in (Client(), Client()):
        assert page_order(learner, lesson) == authored_order(lesson)
        assert api_order(learner, lesson) == authored_order(lesson)


def test_a_first_visit_has_the_visitors_own_order_and_answering_keeps_it(lesson):
    """The order is the visitor's from the first view: answering must not move the choices."""
    Challenge.objects.all().delete()  # no numbers drawn: the shuffled choices alone call for a session
    visitor = Client()
    first = page_order(visitor, lesson)
    assert "sessionid" in visitor.cookies
    assert first != authored_order(lesson)
    dd = DeepDive.objects.get(key="dd-1")
    html = answer(visitor, dd, dd.choices.get(verdict="best").pk)
    assert fragment_order(html) == [pk for pk in first if pk in set(dd.choices.values_list("pk", flat=True))]
    assert page_order(visitor, lesson) == first
    assert api_order(visitor, lesson) == first


def test_a_lesson_whose_choices_are_all_pinned_gives_a_visitor_no_session(lesson):
    Challenge.objects.all().delete()
    DeepDive.objects.update(keep_choice_order=True)
    visitor = Client()
    assert page_order(visitor, lesson) == authored_order(lesson)
    assert "sessionid" not in visitor.cookies
