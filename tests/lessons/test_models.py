"""Database constraints that keep content and progress sound."""

import threading

import pytest
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.urls import reverse

from lessons.models import Answer, Choice, DeepDive, Learner, Section, Step
from lessons.services import answer_deep_dive
from tests.lessons.factories import make_lesson


def test_order_is_unique_within_a_parent(lesson):
    section = lesson.sections.get()
    with pytest.raises(IntegrityError), transaction.atomic():
        Section.objects.create(lesson=lesson, key="other", layer=1, order=section.order, title="Dup")
    dd = DeepDive.objects.get(key="dd-1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Choice.objects.create(deep_dive=dd, order=1, text="x", verdict="weak", feedback="y")


def test_verdict_must_be_a_fixed_choice(lesson):
    dd = DeepDive.objects.get(key="dd-1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Choice.objects.create(deep_dive=dd, order=9, text="x", verdict="great", feedback="y")


def test_numeric_step_needs_a_tolerance_above_zero(lesson):
    wt = lesson.sections.get().walkthroughs.get(key="size")
    with pytest.raises(IntegrityError), transaction.atomic():
        Step.objects.create(walkthrough=wt, order=9, title="x", calculator="replica", output="gpus", unit="GPUs",
                            tolerance=0)  # fmt: skip


def test_only_one_first_answer_per_learner_and_item(lesson):
    dd = DeepDive.objects.get(key="dd-1")
    learner = Learner.objects.create()
    fields = {"learner": learner, "deep_dive": dd, "outcome": "correct", "points": 10, "max_points": 10}
    Answer.objects.create(is_first=True, **fields)
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(is_first=True, **fields)
    Answer.objects.create(is_first=False, **fields)  # retries are fine


def test_answer_names_exactly_one_item(lesson):
    dd = DeepDive.objects.get(key="dd-1")
    step = Step.objects.filter(calculator="replica").get()
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(learner=Learner.objects.create(), deep_dive=dd, step=step, outcome="correct", points=1,
                              max_points=1)  # fmt: skip


def test_service_turns_a_lost_race_into_a_retry(lesson):
    dd = DeepDive.objects.get(key="dd-1")
    learner = Learner.objects.create()
    first = answer_deep_dive(learner, dd, dd.choices.get(verdict="best"))
    second = answer_deep_dive(learner, dd, dd.choices.get(verdict="weak"))
    assert (first.is_first, second.is_first) == (True, False)


@pytest.mark.django_db(transaction=True)
def test_double_submission_at_once_counts_once():
    """Two requests of one learner race to answer the same deep dive: one first answer is stored."""
    lesson = make_lesson()
    dd = DeepDive.objects.get(key="dd-1")
    best = dd.choices.get(verdict="best")
    browser = Client()
    browser.post(reverse("answer-deep-dive", args=[lesson.slug, dd.pk]), {"choice": best.pk})
    Answer.objects.all().delete()  # keep the session's learner, forget the answer
    cookie = browser.cookies
    barrier = threading.Barrier(2)
    statuses = []

    def submit():
        c = Client()
        c.cookies = cookie
        barrier.wait()
        statuses.append(c.post(reverse("answer-deep-dive", args=[lesson.slug, dd.pk]), {"choice": best.pk}).status_code)
        connection.close()

    threads = [threading.Thread(target=submit) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses == [303, 303]
    assert Answer.objects.filter(is_first=True).count() == 1
    assert Answer.objects.count() == 2
