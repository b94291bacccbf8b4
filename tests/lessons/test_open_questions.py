"""Open questions: authored in files and the admin, answered in writing, scored by the checklist ticked."""

import pytest
import yaml
from django.core.management import CommandError, call_command

from lessons import services
from lessons.models import Answer, ChecklistPoint, ItemPractice, Learner, Lesson, OpenQuestion
from tests.lessons.test_content import SAMPLE, edit, load

REPLICA_DIES = "replica-dies-mid-stream"


def test_every_case_study_and_simulation_lesson_has_an_open_question(content):
    for lesson in Lesson.objects.filter(kind__in=["case_study", "simulation"]):
        questions = OpenQuestion.objects.filter(section__lesson=lesson)
        assert questions.exists(), lesson.slug
        for question in questions:
            assert question.checklist.count() >= 2


def test_a_checklist_of_one_point_is_refused_naming_the_item(content_copy, db):
    def shrink(data):
        item = data["sections"][0]["items"][-1]["open_question"]
        item["checklist"] = item["checklist"][:1]

    edit(content_copy, SAMPLE, shrink)
    with pytest.raises(CommandError, match=r"open_question 'explain-kv-bytes': checklist must list 2 to 12"):
        load(content_copy)
    assert not OpenQuestion.objects.exists()


def test_more_than_three_hints_are_refused(content_copy, db):
    edit(content_copy, SAMPLE, lambda d: d["sections"][0]["items"][0]["deep_dive"].update(hints=["a", "b", "c", "d"]))
    with pytest.raises(CommandError, match="at most 3 hints"):
        load(content_copy)


def test_an_edited_checklist_keeps_its_rows_and_exports_as_written(content_copy, db, tmp_path):
    load(content_copy)
    before = list(ChecklistPoint.objects.filter(question__key="explain-kv-bytes").values_list("pk", flat=True))

    def reword(data):
        item = data["sections"][0]["items"][-1]["open_question"]
        item["checklist"][1] = "Bytes per token multiply keys and values, layers, KV heads, head size and value size."

    edit(content_copy, SAMPLE, reword)
    load(content_copy)
    after = list(ChecklistPoint.objects.filter(question__key="explain-kv-bytes").order_by("order"))
    assert [p.pk for p in after] == before
    assert after[1].text_html.startswith("Bytes per token multiply")
    call_command("export_content", dir=tmp_path / "out", verbosity=0)
    exported = yaml.safe_load((tmp_path / "out" / "lessons" / f"{SAMPLE}.yaml").read_text())
    assert exported["sections"][0]["items"][-1]["open_question"]["checklist"][1].startswith("Bytes per token")


def test_the_ticked_share_is_the_score_and_the_draft_is_used_up(content):
    question = OpenQuestion.objects.get(key=REPLICA_DIES)
    checklist = list(question.checklist.all())
    learner = Learner.objects.create()
    services.save_draft(learner, question, "Drain it, retry elsewhere.")
    assert ItemPractice.objects.get(learner=learner, open_question=question).draft == "Drain it, retry elsewhere."
    answer = services.answer_open_question(learner, question, checklist, checklist[:3], "Drain it, retry elsewhere.")
    assert (answer.outcome, answer.points, answer.max_points, answer.is_first) == ("partial", 5, 10, True)
    assert answer.ticked == sorted(p.pk for p in checklist[:3])
    assert ItemPractice.objects.get(learner=learner, open_question=question).draft == ""
    retry = services.answer_open_question(learner, question, checklist, checklist, "Better.", answered_before=True)
    assert (retry.outcome, retry.points, retry.is_first) == ("correct", 10, False)
    assert Answer.objects.filter(learner=learner, open_question=question).count() == 2


def open_question_form(section, points):
    data = {
        "section": section.pk, "key": "walk-me", "order": 50, "topic": "routing", "prompt": "Walk me through it.",
        "points": 10, "checklist-TOTAL_FORMS": len(points), "checklist-INITIAL_FORMS": 0,
        "checklist-MIN_NUM_FORMS": 0, "checklist-MAX_NUM_FORMS": 1000,
    }  # fmt: skip
    for i, text in enumerate(points):
        data[f"checklist-{i}-order"] = i + 1
        data[f"checklist-{i}-text"] = text
    return data


def test_an_instructor_authors_an_open_question_with_its_checklist(instructor_client, db):
    from django.urls import reverse

    from tests.lessons.factories import make_lesson

    section = make_lesson(deep_dives=0).sections.get()
    url = reverse("admin:lessons_openquestion_add")
    response = instructor_client.post(url, open_question_form(section, ["Only one point."]))
    assert "An open question needs 2 to 12 checklist points; this one has 1." in response.content.decode()
    assert not OpenQuestion.objects.exists()
    response = instructor_client.post(url, open_question_form(section, ["Drain it.", "Retry **elsewhere**."]))
    assert response.status_code == 302
    question = OpenQuestion.objects.get(key="walk-me")
    assert [p.text_html for p in question.checklist.all()] == ["Drain it.", "Retry <strong>elsewhere</strong>."]


def test_the_admin_refuses_a_checklist_point_written_twice_as_a_content_file_does(instructor_client, db):
    """Two identical points saved in the admin (a content file refuses them): a learner ticked the same point twice."""
    from django.urls import reverse

    from tests.lessons.factories import make_lesson

    section = make_lesson(deep_dives=0).sections.get()
    url = reverse("admin:lessons_openquestion_add")
    data = open_question_form(section, ["Drain the replica.", "Retry elsewhere.", "Drain  the replica."])
    html = instructor_client.post(url, data).content.decode()
    assert "The checklist repeats a point: “Drain the replica.”. Each point must say something of its own." in html
    assert not OpenQuestion.objects.exists()
    data["checklist-2-text"] = "Page the owner."
    assert instructor_client.post(url, data).status_code == 302
    assert OpenQuestion.objects.get().checklist.count() == 3


def test_one_point_written_of_the_rows_offered_says_how_many_are_needed(instructor_client, db):
    """The add page offers two checklist rows; writing one left the other "This field is required.", which
    never said that two points are the minimum."""
    import re

    from django.urls import reverse

    from tests.lessons.factories import make_lesson

    section = make_lesson(deep_dives=0).sections.get()
    url = reverse("admin:lessons_openquestion_add")
    page = instructor_client.get(url).content.decode()
    management = dict(re.findall(r'name="(checklist-[A-Z_]+)" value="(\d+)"', page))
    assert management["checklist-TOTAL_FORMS"] == "2"  # the two rows the page offers
    orders = dict(re.findall(r'name="(checklist-\d-order)" value="(\d+)"', page))
    data = {**open_question_form(section, ["Only one point."]), **management, **orders, "checklist-1-text": ""}
    html = instructor_client.post(url, data).content.decode()
    assert "An open question needs 2 to 12 checklist points; this one has 1." in html
    assert "This field is required." not in html
    assert not OpenQuestion.objects.exists()


def test_one_save_reports_a_shared_position_and_too_many_checklist_points_together(instructor_client, db):
    from django.urls import reverse

    from tests.lessons.factories import make_lesson

    section = make_lesson(deep_dives=0).sections.get()
    data = open_question_form(section, [f"Point {n}." for n in range(1, 14)])
    data["checklist-12-order"] = 1  # the thirteenth point in the first one's position
    response = instructor_client.post(reverse("admin:lessons_openquestion_add"), data)
    assert list(response.context["inline_admin_formsets"][0].formset.non_form_errors()) == [
        "Please correct the duplicate data for order.",
        "An open question needs 2 to 12 checklist points; this one has 13.",
    ]
    assert not OpenQuestion.objects.exists()


def test_the_admin_refuses_a_fourth_hint_on_a_deep_dive(instructor_client, db):
    from django.urls import reverse

    from tests.lessons.factories import make_lesson

    dd = make_lesson().sections.get().deepdives.get()
    data = {
        "section": dd.section_id, "key": dd.key, "order": dd.order, "topic": dd.topic_id, "prompt": dd.prompt,
        "points": 10, "hints": '["a", "b", "c", "d"]', "choices-TOTAL_FORMS": 0, "choices-INITIAL_FORMS": 0,
        "choices-MIN_NUM_FORMS": 0, "choices-MAX_NUM_FORMS": 1000,
    }  # fmt: skip
    response = instructor_client.post(reverse("admin:lessons_deepdive_change", args=[dd.pk]), data)
    assert "Hints may hold at most 3 hints, not 4." in response.content.decode()
