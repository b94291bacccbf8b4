"""Item analysis: how learners' first answers fall on each item, for instructors (page and CSV)."""

import csv
import io

import numpy as np
import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from lessons.models import Answer, DeepDive, Learner, Step
from tests.lessons.factories import make_lesson, make_open_question


@pytest.fixture
def lesson(db):
    return make_lesson(deep_dives=2)


def answer(browser, lesson, dd_key, verdict):
    dd = DeepDive.objects.get(key=dd_key)
    pick = dd.choices.get(verdict=verdict)
    assert browser.post(reverse("answer-deep-dive", args=[lesson.slug, dd.pk]), {"choice": pick.pk}).status_code == 303


def step_answer(browser, lesson, value):
    step = Step.objects.get(title="Requests per replica")
    assert browser.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": value}).status_code == 303


def test_instructors_see_how_first_answers_fall_and_download_them(instructor_client, lesson):
    # Four learners: two strong (best on both), two weak; dd-2's acceptable choice is never picked.
    plan = [("best", "best", "110"), ("best", "best", "110"), ("weak", "weak", "55"), ("best", "weak", "55")]
    for first, second, value in plan:
        browser = Client()
        answer(browser, lesson, "dd-1", first)
        answer(browser, lesson, "dd-2", second)
        step_answer(browser, lesson, value)
    answer(browser, lesson, "dd-1", "weak")  # a retry: only first answers count
    url = reverse("admin:lessons_item_analysis", args=[lesson.pk])
    html = instructor_client.get(url).content.decode()
    assert "Item analysis: Lesson sample" in html
    assert "Most common wrong answers: 55.0 (2)" in html
    assert "nobody picks it" in html
    rows = list(csv.DictReader(io.StringIO(instructor_client.get(url, {"format": "csv"}).content.decode())))
    items = {row["item"].split(":")[0]: row for row in rows if not row["choice"]}
    assert (items["dd-1"]["first answers"], items["dd-1"]["right"]) == ("4", "3")
    picks = {(r["item"].split(":")[0], r["verdict"]): r["picked"] for r in rows if r["choice"]}
    assert picks[("dd-2", "acceptable")] == "0" and picks[("dd-2", "best")] == "2"
    # Discrimination of dd-2: right on it vs the share of points earned on everything else.
    firsts = list(Answer.objects.filter(is_first=True).values("learner_id", "deep_dive__key", "outcome", "points",
                                                                "max_points"))  # fmt: skip
    right, rest = [], []
    for learner in {a["learner_id"] for a in firsts}:
        mine = [a for a in firsts if a["learner_id"] == learner]
        item = next(a for a in mine if a["deep_dive__key"] == "dd-2")
        others = [a for a in mine if a is not item]
        right.append(item["outcome"] == "correct")
        rest.append(sum(a["points"] for a in others) / sum(a["max_points"] for a in others))
    expected = np.corrcoef(np.array(right, dtype=float), np.array(rest))[0, 1]
    assert float(items["dd-2"]["discrimination"]) == pytest.approx(expected, abs=1e-3)
    assert items["size, step 1"]["common wrong values"] == "55 (2)"


def test_the_analysis_is_for_staff_only(client, learner_user, lesson):
    client.force_login(learner_user)
    response = client.get(reverse("admin:lessons_item_analysis", args=[lesson.pk]))
    assert response.status_code == 302 and "login" in response["Location"]


def test_the_analysis_reads_a_constant_number_of_queries(instructor_client, lesson, django_assert_num_queries):
    url = reverse("admin:lessons_item_analysis", args=[lesson.pk])
    dd = DeepDive.objects.get(key="dd-1")
    choices = list(dd.choices.all())

    question = make_open_question(lesson.sections.get())
    points = list(question.checklist.values_list("pk", flat=True))

    def add_learners(count):
        learners = Learner.objects.bulk_create([Learner() for _ in range(count)])
        Answer.objects.bulk_create(
            Answer(learner=learner, deep_dive=dd, choice=choices[n % 3], outcome="correct", points=10, max_points=10,
                   is_first=True)
            for n, learner in enumerate(learners)
        )  # fmt: skip
        Answer.objects.bulk_create(
            Answer(learner=learner, open_question=question, ticked=points[: 1 + n % 3], outcome="partial", points=5,
                   max_points=10, is_first=True)
            for n, learner in enumerate(learners)
        )  # fmt: skip

    add_learners(2)
    instructor_client.get(url)  # the session and permissions are read once
    with CaptureQueriesContext(connection) as few:  # how many depends on the database and session store
        instructor_client.get(url)
    add_learners(200)
    with django_assert_num_queries(len(few.captured_queries)):
        html = instructor_client.get(url).content.decode()
    assert "202" in html
    assert "Point 1 a strong answer makes.: ticked by 202 (100%) <strong>everyone covers it</strong>" in html


def test_instructors_see_which_checklist_points_open_answers_cover(instructor_client, lesson):
    question = make_open_question(lesson.sections.get())
    points = list(question.checklist.values_list("pk", flat=True))
    write = reverse("write-open-question", args=[lesson.slug, question.pk])
    tick = reverse("answer-open-question", args=[lesson.slug, question.pk])
    # Three learners: all cover point 1, two cover point 2, one point 3, nobody point 4.
    browsers = [Client() for _ in range(3)]
    for browser, ticked in zip(browsers, [points[:1], points[:2], points[:3]], strict=True):
        assert browser.post(write, {"text": "Drain it and retry elsewhere."}).status_code == 303
        assert browser.post(tick, {"point": ticked}).status_code == 303
    browsers[0].post(write, {"text": "Again, better."})
    browsers[0].post(tick, {"point": points})  # a second answer: only first answers count
    url = reverse("admin:lessons_item_analysis", args=[lesson.pk])
    html = instructor_client.get(url).content.decode()
    assert "Point 1 a strong answer makes.: ticked by 3 (100%) <strong>everyone covers it</strong>" in html
    assert "Point 2 a strong answer makes.: ticked by 2 (67%)</li>" in html
    assert "Point 4 a strong answer makes.: ticked by 0 (0%) <strong>nobody covers it</strong>" in html
    rows = list(csv.DictReader(io.StringIO(instructor_client.get(url, {"format": "csv"}).content.decode())))
    item = next(r for r in rows if r["kind"] == "open_question" and not r["choice"])
    assert item["first answers"] == "3"
    ticks = {r["choice"]: (r["verdict"], r["picked"], r["share picked"]) for r in rows if r["kind"] == "open_question"}
    assert ticks["Point 3 a strong answer makes."] == ("checklist point", "1", "0.333")
    assert ticks["Point 4 a strong answer makes."] == ("checklist point", "0", "0.000")
