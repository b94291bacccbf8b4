"""The API's practice flows: think before the reveal, hints that cost, open questions."""

from lessons.models import Answer, DeepDive, Step
from tests.lessons.factories import make_open_question


def first_deep_dive(api):
    return api.get("/api/v1/lessons/sample/").json()["sections"][0]["items"][0]


def test_a_weak_first_answer_keeps_the_other_verdicts_hidden_until_revealed(api, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    weak = dd.choices.get(verdict="weak")
    body = api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": weak.pk}, format="json").json()
    assert body["feedback"] == "Wastes 60-80%."
    dive = first_deep_dive(api)
    assert dive["all_shown"] is False
    verdicts = {c["id"]: c.get("verdict") for c in dive["choices"]}
    assert verdicts[weak.pk] == "weak"
    assert [v for pk, v in verdicts.items() if pk != weak.pk] == [None, None]
    assert "Holds up." not in str(dive)
    response = api.post(f"/api/v1/deep-dives/{dd.pk}/reveal/")
    assert response.status_code == 200
    assert {c["verdict"] for c in response.json()["choices"]} == {"best", "acceptable", "weak"}
    dive = first_deep_dive(api)
    assert dive["all_shown"] is True and "Holds up." in str(dive)


def test_reveal_before_answering_is_a_409(api, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    response = api.post(f"/api/v1/deep-dives/{dd.pk}/reveal/")
    assert response.status_code == 409
    assert "Answer first" in response.json()["detail"]


def test_a_wrong_number_hides_the_answer_until_the_second_try(api, lesson):
    step = Step.objects.get(title="Requests per replica")
    first = api.post(f"/api/v1/steps/{step.pk}/answer/", {"value": 50}, format="json").json()
    assert "expected" not in first and "steps" not in first
    second = api.post(f"/api/v1/steps/{step.pk}/answer/", {"value": 51}, format="json").json()
    assert second["expected"] > 0 and second["steps"]
    assert second["is_first"] is False


def test_a_hint_through_the_api_costs_the_first_answer(api, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    dd.hints = ["Fragmentation.", "Blocks."]
    dd.save()
    hints = first_deep_dive(api)["hints"]
    assert (hints["hints"], hints["total"], hints["next_cost"]) == ([], 2, 2)
    assert "20%" in hints["rule"]  # the rule, before taking one
    body = api.post(f"/api/v1/deep-dives/{dd.pk}/hint/").json()
    assert (body["hints"], body["total"], body["next_cost"]) == (["Fragmentation."], 2, 2)
    best = dd.choices.get(verdict="best")
    answer = api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": best.pk}, format="json").json()
    assert (answer["points"], answer["hints_taken"]) == (8, 1)
    body = api.post(f"/api/v1/deep-dives/{dd.pk}/hint/").json()
    assert (body["hints"], body["next_cost"]) == (["Fragmentation.", "Blocks."], 0)  # answered: free


def test_an_open_question_through_the_api(api, lesson):
    question = make_open_question(lesson.sections.get())
    item = next(
        i for i in api.get("/api/v1/lessons/sample/").json()["sections"][0]["items"] if i["type"] == "open_question"
    )
    assert "checklist" not in item  # only after writing
    response = api.post(f"/api/v1/open-questions/{question.pk}/answer/", {"points": []}, format="json")
    assert response.status_code == 409
    assert api.post(f"/api/v1/open-questions/{question.pk}/write/", {"text": ""}, format="json").status_code == 400
    body = api.post(f"/api/v1/open-questions/{question.pk}/write/", {"text": "Retry elsewhere."}, format="json").json()
    ids = [p["id"] for p in body["checklist"]]
    assert len(ids) == 4
    bad = api.post(f"/api/v1/open-questions/{question.pk}/answer/", {"points": [0]}, format="json")
    assert bad.status_code == 400 and "points" in bad.json()["errors"]
    body = api.post(f"/api/v1/open-questions/{question.pk}/answer/", {"points": ids[:2]}, format="json").json()
    assert (body["outcome"], body["points"], body["ticked"], body["text"]) == (
        "partial",
        5,
        ids[:2],
        "Retry elsewhere.",
    )
    assert Answer.objects.get(open_question=question).is_first
