"""Mock interviews: the API contract, the server's clock, the scorecard, the pages without JavaScript."""

import random
import re
from datetime import timedelta
from html import unescape

import pytest
from django.contrib.auth.models import AnonymousUser, User
from django.contrib.sessions.backends.db import SessionStore
from django.test import Client
from django.urls import reverse
from django.utils.html import escape
from rest_framework.test import APIClient

from lessons import interviews, services
from lessons.models import (
    Challenge,
    ChecklistPoint,
    Choice,
    DeepDive,
    Interview,
    InterviewItem,
    Learner,
    Lesson,
    OpenQuestion,
    Step,
    Walkthrough,
)
from tests.conftest import STOPPED_AT
from tests.lessons.factories import make_deep_dive, make_lesson
from tests.lessons.test_api import walk

START = STOPPED_AT  # the shared stopped_clock fixture stops the wall clock here
LEAKS = {"verdict", "feedback", "feedback_html", "points", "score", "expected", "outcome", "worked_html"}


@pytest.fixture
def scenario(db):
    """A case study with six deep dives (the first leads to a follow-up), four build-up steps (a design moment
    offers three), numbers; and a concept lesson whose opening question can frame the requirements."""
    lesson = make_lesson("case", deep_dives=6, steps=3, challenges=2)
    Lesson.objects.filter(pk=lesson.pk).update(kind="case_study")
    section = lesson.sections.get()
    follow_up = make_deep_dive(section, key="dd-follow", order=50)
    Choice.objects.filter(deep_dive__key="dd-2", deep_dive__section=section, verdict="weak").update(follow_up=follow_up)
    build = Walkthrough.objects.get(section=section, key="build")
    Step.objects.create(walkthrough=build, order=3, title="Prefix index", body="Route by prefix.",
                        components=[{"key": "index", "label": "Prefix index", "col": 3, "row": 0}])  # fmt: skip
    Step.objects.create(walkthrough=build, order=4, title="Spare replica", body="Keep one spare.",
                        components=[{"key": "spare", "label": "Spare replica", "col": 4, "row": 0}])  # fmt: skip
    question = OpenQuestion.objects.create(section=section, key="wrap", order=60, topic_id="routing",
                                           prompt="A replica dies mid-stream. Walk me through it.")  # fmt: skip
    for n, text in enumerate(["Detect the broken stream", "Drain the replica", "Re-run elsewhere"], start=1):
        ChecklistPoint.objects.create(question=question, order=n, text=text)
    make_lesson("other", deep_dives=2)
    return Lesson.objects.get(pk=lesson.pk)


def start(api, slug="case"):
    response = api.post("/api/v1/interviews/", {"scenario": slug}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def right_answer(item_row: InterviewItem) -> dict:
    """Return the payload that earns full credit on a stored item (read from the content)."""
    return {"item": item_row.pk, **right_payload(item_row)}


def right_payload(item_row: InterviewItem) -> dict:
    if item_row.kind == "open":  # written first, then every point ticked
        if item_row.answer is None:
            return {"text": "Detect, drain, re-run."}
        return {
            "ticked": list(ChecklistPoint.objects.filter(question=item_row.open_question).values_list("pk", flat=True))
        }
    if item_row.kind == "deep_dive":
        return {"choice": handle(item_row, Choice.objects.get(deep_dive=item_row.deep_dive, verdict="best").pk)}
    if item_row.kind == "design":
        following = Step.objects.filter(walkthrough=item_row.step.walkthrough, order__gt=item_row.step.order)
        return {"choice": handle(item_row, following.order_by("order").first().pk)}
    number = item_row.step or item_row.challenge
    return {"value": repr(services.expected_for(number, item_row.drawn_inputs).value)}


def handle(item_row: InterviewItem, pk: int) -> int:
    """Return the handle the learner is shown for the choice or step ``pk`` of an item."""
    view = next(v for v in interviews.load(item_row.interview) if v.item.pk == item_row.pk)
    return view.handle_of(pk)


def wrong_answer(item_row: InterviewItem) -> dict:
    return {"item": item_row.pk, **wrong_payload(item_row)}


def wrong_payload(item_row: InterviewItem) -> dict:
    if item_row.kind == "open":
        return {"text": "No idea."} if item_row.answer is None else {"ticked": []}
    if item_row.kind == "deep_dive":
        return {"choice": handle(item_row, Choice.objects.get(deep_dive=item_row.deep_dive, verdict="weak").pk)}
    if item_row.kind == "design":
        following = Step.objects.filter(walkthrough=item_row.step.walkthrough, order__gt=item_row.step.order)
        return {"choice": handle(item_row, following.order_by("order").last().pk)}
    return {"value": "1e30"}


def answer_all(api, interview_id: int, answer=right_answer, clock=None, step_seconds=0):
    while True:
        row = InterviewItem.objects.filter(interview_id=interview_id, answered_at=None).order_by("position").first()
        if row is None:
            return
        if clock is not None:
            clock.shift(step_seconds)
        response = api.post(f"/api/v1/interviews/{interview_id}/answer/", answer(row), format="json")
        assert response.status_code == 200, response.content


def test_after_logging_out_an_interview_page_says_whose_it_is_and_links_to_log_in(client, scenario, learner_user):
    client.force_login(learner_user)
    url = client.post(reverse("interview-start"), {"scenario": "case"})["Location"]
    assert client.get(url).status_code == 200
    client.post(reverse("logout"))
    for response in (client.get(url), client.post(url + "finish/"), client.post(url + "answer/", {"choice": "1"})):
        html = response.content.decode()
        assert response.status_code == 404
        assert "No Interview matches" not in html
        assert "belongs to the account, or the browser session, that started it" in html
        assert f'href="{reverse("login")}?next={url}"' in html
    assert not Interview.objects.get().finished_at  # nothing was done to it
    client.force_login(learner_user)
    assert client.get(url).status_code == 200


# --- The draw ---------------------------------------------------------------------------------


def test_an_interview_is_drawn_in_phases_and_stored(api, scenario, stopped_clock):
    data = start(api)
    assert [p["key"] for p in data["phases"]] == ["requirements", "estimate", "design", "deep_dives", "wrap_up"]
    # Its questions frame the problem (layer-1 basics, a lesson's opening moment): no "Clarify the requirements".
    assert data["phases"][0]["label"] == "Frame the problem"
    rows = list(InterviewItem.objects.filter(interview_id=data["id"]).order_by("position"))
    phases = [r.phase for r in rows]
    assert phases == sorted(phases, key=["requirements", "estimate", "design", "deep_dives", "wrap_up"].index)
    assert 2 <= phases.count("requirements") <= 3
    assert 2 <= phases.count("estimate") <= 3 and all(r.kind == "number" for r in rows if r.phase == "estimate")
    assert 4 <= phases.count("deep_dives") <= 6
    assert [r.open_question.key for r in rows if r.phase == "wrap_up"] == ["wrap"]
    # Each requirement and deep dive is a different moment; a follow-up comes right after its parent.
    dives = [r.deep_dive for r in rows if r.deep_dive_id]
    assert len({d.pk for d in dives}) == len(dives)
    keys = [d.key for d in dives]
    if "dd-follow" in keys:
        assert keys[keys.index("dd-follow") - 1] == "dd-2"
    # Design: the offered steps come after the one reached, and include the next one.
    for row in (r for r in rows if r.kind == "design"):
        later = list(Step.objects.filter(walkthrough=row.step.walkthrough, order__gt=row.step.order))
        assert set(row.options) <= {s.pk for s in later} and later[0].pk in row.options and len(row.options) >= 2
    # At least one challenge's numbers are drawn afresh within its ranges, and stored.
    drawn = [r for r in rows if r.challenge_id and r.challenge.ranges]
    assert drawn
    for row in drawn:
        low, high, step = row.challenge.ranges["cache_gb"]
        assert low <= row.drawn_inputs["cache_gb"] <= high and (row.drawn_inputs["cache_gb"] - low) % step == 0
    interview = Interview.objects.get(pk=data["id"])
    assert interview.deadline - interview.started_at == timedelta(seconds=sum(p["seconds"] for p in data["phases"]))
    assert interview.deadline == START + timedelta(minutes=45)


def test_without_open_questions_the_wrap_up_is_left_out_and_communication_not_assessed(api, scenario, stopped_clock):
    OpenQuestion.objects.all().delete()
    data = start(api)
    assert [p["key"] for p in data["phases"]] == ["requirements", "estimate", "design", "deep_dives"]
    assert Interview.objects.get().deadline == START + timedelta(minutes=40)
    answer_all(api, data["id"], right_answer, stopped_clock, step_seconds=5)
    card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
    assert card["dimensions"]["communication"] is None and card["overall"] == 1.0
    assert card["explanations"]["communication"].startswith("Not assessed")


def test_the_same_seed_draws_the_same_interview_and_another_seed_may_differ(rf, scenario):
    def drawn(seed):
        request = rf.post("/")
        request.user, request.session = AnonymousUser(), SessionStore()
        interview = interviews.start(request, "case", seed=seed)
        return [(r.phase, r.deep_dive_id, r.step_id, r.challenge_id, r.options) for r in interview.items.all()]

    assert drawn(7) == drawn(7)
    assert len({tuple(map(str, drawn(seed))) for seed in range(6)}) > 1


def test_surprise_me_leans_toward_the_weakest_topic(db):
    routing = make_lesson("routing-sim")
    DeepDive.objects.filter(section__lesson=routing).update(topic_id="routing")
    kv = make_lesson("kv-sim")
    lessons = list(Lesson.objects.filter(pk__in=[routing.pk, kv.pk]))
    pool = interviews.Pool.read(lessons)
    mastered_kv = {"kv_allocation": 1.0, "routing": 0.2}
    picks = [interviews.choose_scenario(lessons, pool, mastered_kv, random.Random(seed)).slug for seed in range(300)]
    # Weights 1.3 (routing) against 0.5 (KV): routing about 72% of the time.
    assert 0.62 < picks.count("routing-sim") / 300 < 0.82
    even = [interviews.choose_scenario(lessons, pool, {}, random.Random(seed)).slug for seed in range(300)]
    assert 0.4 < even.count("routing-sim") / 300 < 0.6


def test_the_requirements_phase_prefers_questions_that_frame_the_problem(db):
    """Each lesson offers its question about requirements (named so), else one from layer 1, else its opening."""
    from lessons.models import Section

    case = make_lesson("case", deep_dives=3)  # layer-2 moments: dd-1 opens the lesson
    Lesson.objects.filter(pk=case.pk).update(kind="case_study")
    brief = Section.objects.create(lesson=case, key="pin-it-down", layer=3, order=9, title="Pin down the SLOs")
    make_deep_dive(brief, key="slo-question", order=1)
    basics = make_lesson("basics", deep_dives=2)
    Section.objects.filter(lesson=basics).update(layer=1)
    make_lesson("deep", deep_dives=2)  # layer 2 only: its opening is the last resort
    lessons = list(Lesson.objects.all())
    pool = interviews.Pool.read(lessons)
    case = Lesson.objects.get(pk=case.pk)
    for seed in range(10):
        drawn = interviews.draw(pool, case, {}, random.Random(seed))
        asked = [
            (i["deep_dive"].section.lesson.slug, i["deep_dive"].key) for i in drawn if i["phase"] == "requirements"
        ]
        assert asked == [("case", "slo-question"), ("basics", "dd-1")]
    # With one framing question only, a lesson's opening fills the phase.
    Section.objects.filter(lesson=basics).update(layer=2)
    drawn = interviews.draw(interviews.Pool.read(lessons), case, {}, random.Random(1))
    asked = [i["deep_dive"].key for i in drawn if i["phase"] == "requirements"]
    assert asked[0] == "slo-question" and asked[1] == "dd-1"


def test_the_scenarios_own_question_opens_the_interview_even_when_none_of_its_frames_the_problem(db):
    """A scenario whose deep dives are all past layer 1, with no requirements in their names, still
    opens with its own opening question; other lessons' framing questions come after it."""
    from lessons.models import Section

    case = make_lesson("case", deep_dives=3)  # layer-2 moments only: dd-1 opens the lesson
    Lesson.objects.filter(pk=case.pk).update(kind="case_study")
    for slug in ("basics-a", "basics-b"):  # two lessons whose layer-1 questions frame a problem
        Section.objects.filter(lesson=make_lesson(slug, deep_dives=2)).update(layer=1)
    pool = interviews.Pool.read(list(Lesson.objects.all()))
    case = Lesson.objects.get(pk=case.pk)
    for seed in range(10):
        drawn = interviews.draw(pool, case, {}, random.Random(seed))
        asked = [
            (i["deep_dive"].section.lesson.slug, i["deep_dive"].key) for i in drawn if i["phase"] == "requirements"
        ]
        assert asked[0] == ("case", "dd-1") and asked[1] in {("basics-a", "dd-1"), ("basics-b", "dd-1")}, asked
        assert drawn[0]["deep_dive"].key == "dd-1" and drawn[0]["deep_dive"].section.lesson_id == case.pk


def test_every_shipped_scenario_opens_with_its_own_question(content):
    """Choosing "Buying the fleet" (or any scenario) asks about it first, not about another lesson."""
    published = list(Lesson.objects.filter(published=True))
    pool = interviews.Pool.read(published)
    scenarios = [lesson for lesson in published if lesson.kind in interviews.SCENARIO_KINDS]
    assert "buying-the-fleet" in {lesson.slug for lesson in scenarios}
    for scenario in scenarios:
        for seed in range(3):
            first = interviews.draw(pool, scenario, {}, random.Random(seed))[0]
            assert first["phase"] == "requirements"
            assert first["deep_dive"].section.lesson_id == scenario.pk, (scenario.slug, first["deep_dive"].key)


def test_a_question_asked_in_requirements_keeps_its_follow_ups_for_the_deep_dives(content):
    """Buying the fleet opens with its own-rent-API question, whose best approach promises "the follow-up
    about a spike month": every follow-up of a question the interview asks is asked too, later."""
    published = list(Lesson.objects.filter(published=True))
    pool = interviews.Pool.read(published)
    fleet = next(lesson for lesson in published if lesson.slug == "buying-the-fleet")
    for scenario in [fleet, *(lesson for lesson in published if lesson.kind in interviews.SCENARIO_KINDS)]:
        for seed in range(3):
            drawn = interviews.draw(pool, scenario, {}, random.Random(seed))
            asked = [item["deep_dive"].pk for item in drawn if item["kind"] == "deep_dive"]
            for position, pk in enumerate(asked):
                for follow_up in pool.follow_ups.get(pk, []):
                    assert follow_up in asked[position + 1 :], (scenario.slug, seed, pk, follow_up)
            if scenario is fleet:
                keys = [item["deep_dive"].key for item in drawn if item["kind"] == "deep_dive"]
                assert keys[0] == "own-rent-api" and "spike-month" in keys
                spike = next(item for item in drawn if item.get("deep_dive") and item["deep_dive"].key == "spike-month")
                assert spike["phase"] == "deep_dives"


def test_follow_ups_of_the_requirements_questions_are_asked_once_and_leave_room_for_the_scenarios_moments(db):
    """Opening questions with many follow-ups (one shared by two of them) still give an interview of at most
    six deep dives, each asked once, with moments of the scenario's own after the follow-ups."""
    from lessons.models import Choice, Section

    case = make_lesson("case", deep_dives=4)  # layer-2 moments: dd-1 opens the lesson
    Lesson.objects.filter(pk=case.pk).update(kind="case_study")
    other = make_lesson("other", deep_dives=1)
    Section.objects.filter(lesson=other).update(layer=1)  # its dd-1 frames the problem: the second question
    section = Section.objects.filter(lesson=case).first()
    opening = DeepDive.objects.get(section__lesson=case, key="dd-1")
    other_opening = DeepDive.objects.get(section__lesson=other, key="dd-1")
    for n in range(6):
        follow_up = make_deep_dive(section, key=f"fu-{n}", order=50 + n)
        Choice.objects.create(deep_dive=opening, order=10 + n, text=f"Path {n}", verdict="weak", feedback="No.",
                              follow_up=follow_up)  # fmt: skip
        if n == 0:
            Choice.objects.create(deep_dive=other_opening, order=10, text="Path", verdict="weak", feedback="No.",
                                  follow_up=follow_up)  # fmt: skip
    pool = interviews.Pool.read(list(Lesson.objects.all()))
    case = Lesson.objects.get(pk=case.pk)
    for seed in range(5):
        drawn = interviews.draw(pool, case, {}, random.Random(seed))
        asked = [item["deep_dive"].pk for item in drawn if item["kind"] == "deep_dive"]
        assert len(asked) == len(set(asked)), asked  # the shared follow-up once, like every question
        deep_dives = [item["deep_dive"] for item in drawn if item["phase"] == "deep_dives"]
        assert interviews.MIN_DEEP_DIVES <= len(deep_dives) <= interviews.PHASE_ITEMS["deep_dives"]
        assert [dd.key for dd in deep_dives[:3]] == ["fu-0", "fu-1", "fu-2"]
        assert any(dd.key.startswith("dd-") for dd in deep_dives), [dd.key for dd in deep_dives]


def test_a_design_question_says_which_lesson_it_comes_from_and_how_far_the_design_has_come(rf, content):
    """A design moment may come from another lesson than the scenario: it names that lesson, the step the
    design has reached (of how many), before the parts the design has; not the build-up's intro, which
    is written for the lesson page ("the interview moments below")."""
    from django.utils.html import strip_tags

    seen = set()
    for seed in range(8):
        request = rf.post("/")
        request.user, request.session = AnonymousUser(), SessionStore()
        for view in interviews.load(interviews.start(request, "buying-the-fleet", seed=seed)):
            if view.item.kind != "design":
                continue
            walkthrough = view.item.step.walkthrough
            steps = list(walkthrough.steps.order_by("order"))
            text = unescape(strip_tags(view.body_html))
            position = [s.pk for s in steps].index(view.item.step_id) + 1
            assert f"From the lesson {walkthrough.section.lesson.title}" in text
            assert f"after its step {position} of {len(steps)}." in text  # the heading names the step
            parts = re.findall(r"<li>(.*?)</li>", view.body_html.split("The design so far has:")[1])
            assert parts and all(part.strip() for part in parts)  # one item a part: labels hold commas
            assert "below" not in text
            assert text.index("From the lesson") < text.index("The design so far has:")
            # Not the build-up's title, which says where the design ends ("… to a self-healing fleet").
            assert (
                unescape(view.heading_html)
                == f"After “{view.item.step.title}”: which need does the design take on next?"
            )
            assert walkthrough.title not in unescape(view.heading_html + view.body_html)
            seen.add(walkthrough.section.lesson.slug)
    assert seen and "buying-the-fleet" not in seen  # the fleet lesson has no build-up: these are other lessons'


def test_no_design_question_shows_the_answer_to_another(content):
    """Two moments of one build-up: the later one's "design so far" listed the step the earlier one asked for."""
    published = list(Lesson.objects.filter(published=True))
    pool = interviews.Pool.read(published)
    for scenario in (lesson for lesson in published if lesson.kind in interviews.SCENARIO_KINDS):
        for seed in range(10):
            designs = [i for i in interviews.draw(pool, scenario, {}, random.Random(seed)) if i["kind"] == "design"]
            assert len(designs) == min(interviews.PHASE_ITEMS["design"], len(pool.build_ups)), scenario.slug
            build_ups = [item["step"].walkthrough_id for item in designs]
            assert len(set(build_ups)) == len(build_ups), (scenario.slug, seed)


def test_no_design_question_is_a_coin_toss(content):
    """The one moment of the three-step build-up ("Grow a cache-aware replica set", four steps since) and the last of
    the five-step one offered two options: a guess was right half the time (newcomer's finding). Every design question
    offers three or more, and both build-ups are still asked."""
    published = list(Lesson.objects.filter(published=True))
    pool = interviews.Pool.read(published)
    offered = []
    for scenario in (lesson for lesson in published if lesson.kind in interviews.SCENARIO_KINDS):
        for seed in range(10):
            designs = [i for i in interviews.draw(pool, scenario, {}, random.Random(seed)) if i["kind"] == "design"]
            offered += [(item["step"].walkthrough.key, len(item["options"])) for item in designs]
    assert {key for key, _ in offered} == {"build-the-design", "grow-a-replica"}
    assert min(count for _, count in offered) >= interviews.MIN_DESIGN_OPTIONS


def test_every_link_from_an_interview_to_its_lesson_lands_on_the_question(client, rf, content):
    """ "Open it in its lesson" (the scorecard's practice links) goes to the layer page holding the question:
    a lesson page shows one layer, so /lessons/<slug>/#dd-x of a layer-2 question landed at the top."""
    request = rf.post("/")
    request.user, request.session = AnonymousUser(), SessionStore()
    views = interviews.load(interviews.start(request, "buying-the-fleet", seed=1), reveal=True)
    layers, steps = set(), 0
    for view in views:
        path, _, anchor = view.lesson_url.partition("#")
        page = client.get(path)
        assert page.status_code == 200
        assert f'id="{anchor}"' in page.content.decode(), view.lesson_url
        if view.item.step_id:  # a design moment or an envelope step: its own step's page, not step 1
            steps += 1
            position = list(view.item.step.walkthrough.steps.values_list("pk", flat=True)).index(view.item.step_id)
            assert f"Step {position + 1} of " in page.content.decode(), view.lesson_url
            assert escape(view.item.step.title) in page.content.decode()
        else:
            assert "?layer=" in path, view.lesson_url
            layers.add(path.rsplit("=", 1)[1])
    assert len(layers) > 1 and steps  # questions of several layers, each on its own page, and steps


def drawn_interviews(rf, draws: int = 8):
    """Yield the items of ``draws`` case-study interviews, each drawn by a new visitor with its own seed."""
    for seed in range(draws):
        request = rf.post("/")
        request.user, request.session = AnonymousUser(), SessionStore()
        yield from interviews.load(interviews.start(request, "case", seed=seed))


def test_an_envelope_step_in_an_interview_shows_its_examples_setup(rf, scenario):
    Walkthrough.objects.filter(key="size").update(intro_html="<p>A 70B replica on four H100s.</p>")
    steps = [v for v in drawn_interviews(rf) if v.item.kind == "number" and v.item.step_id]
    assert {v.item.step.order for v in steps} >= {1, 2}
    for view in steps:
        assert view.body_html.startswith("<p>A 70B replica on four H100s.</p>")
        earlier = Step.objects.filter(walkthrough=view.item.step.walkthrough, order__lt=view.item.step.order)
        assert all(f"<li>{s.title}" in view.body_html for s in earlier)  # "(question 3 of this interview)" may follow


def test_an_interview_asks_at_most_one_step_of_an_example(rf, scenario):
    """Question 4 (step 2 of an example) set itself up with "Each replica holds 123 requests (step 1)" right after
    question 3 asked for step 1: the learner learned whether that answer was right before the scorecard, which
    promises no feedback until the end (newcomer's finding). An interview asks one step of an example at most; a
    later step names the earlier ones by title only (the learner works out what it needs of them)."""
    later = 0
    for seed in range(12):
        request = rf.post("/")
        request.user, request.session = AnonymousUser(), SessionStore()
        views = interviews.load(interviews.start(request, "case", seed=seed))
        steps = [v.item.step for v in views if v.item.kind == "number" and v.item.step_id]
        assert len({step.walkthrough_id for step in steps}) == len(steps), seed
        for view in views:
            if view.item.kind == "number" and view.item.step_id and view.item.step.order > 1:
                first = Step.objects.get(walkthrough=view.item.step.walkthrough, order=1)
                assert f"<li>{first.title}</li>" in view.body_html and "of this interview" not in view.body_html
                later += 1
    assert later  # some draws ask a later step


def test_an_interview_drawn_before_that_rule_still_names_the_earlier_step_it_asked_by_its_question(rf, scenario):
    """An interview drawn before the one-step rule may ask step 1 and then step 2 of an example: step 2 names step 1
    by its question ("question 3 of this interview"), never as a step the interview did not ask."""
    for seed in range(12):
        request = rf.post("/")
        request.user, request.session = AnonymousUser(), SessionStore()
        interview = interviews.start(request, "case", seed=seed)
        later = next((item for item in interview.items.filter(kind="number") if item.step.order > 1), None)
        if later is not None:
            break
    else:
        pytest.fail("no draw asks a later step")
    first = Step.objects.get(walkthrough=later.step.walkthrough, order=1)
    # The question before it made step 1 of the same example, as an interview drawn before the rule asked it.
    earlier = interview.items.filter(position__lt=later.position).order_by("-position").first()
    earlier.kind, earlier.step, earlier.drawn_inputs, earlier.options = "number", first, {}, []
    earlier.deep_dive = earlier.challenge = earlier.open_question = None
    earlier.save()
    view = next(v for v in interviews.load(interview) if v.item.pk == later.pk)
    assert f"<li>{first.title} (question {earlier.position} of this interview)</li>" in view.body_html


def test_an_envelope_steps_line_is_a_question_even_when_its_title_is_not(rf, scenario):
    """A step titled as a question is asked as written; a step titled by what it works out ("Requests per
    replica") is asked as a question about that, in the step's unit, after the walkthrough's setup."""
    Step.objects.filter(walkthrough__key="size", order=2).update(title="How big is one copy of the prefix?")
    lines = {}
    for view in drawn_interviews(rf):
        if view.item.kind == "number" and view.item.step_id:
            lines[view.item.step.order] = view.heading_html
    assert lines[1] == "Requests per replica: what is your estimate, in requests?"
    assert lines[2] == "How big is one copy of the prefix?"
    assert all(line.endswith("?") for line in lines.values())


def test_the_interviewers_line_is_each_items_question_never_a_title(rf, scenario):
    """A challenge's title names it for authors ("Copies in a cache"); the interviewer asks its prompt."""
    fixed = Challenge.objects.get(key="copies-2")
    fixed.prompt = "A replica keeps **8 GB** for the cache.\n\nHow many copies does it hold?"
    fixed.save()
    seen = {}
    for view in drawn_interviews(rf):
        if view.item.kind == "number" and view.item.challenge_id:
            seen[view.item.challenge.key] = view
        elif view.item.kind == "deep_dive":
            assert view.heading_html == view.item.deep_dive.prompt_html
    assert {"copies", "copies-2"} <= set(seen)
    drawn = seen["copies"]
    assert (
        drawn.heading_html == f"A cache of {drawn.item.drawn_inputs['cache_gb']} GB holds how many 1,200-token copies?"
    )
    assert drawn.body_html == ""
    # A prompt in paragraphs: the last one is the question, the ones before set it up.
    assert seen["copies-2"].heading_html == "How many copies does it hold?"
    assert seen["copies-2"].body_html == "<p>A replica keeps <strong>8 GB</strong> for the cache.</p>"
    assert all("Copies" not in view.heading_html for view in seen.values())


# --- The API contract ------------------------------------------------------------------------


def test_starting_gives_the_first_item_without_any_verdict(api, scenario, stopped_clock):
    data = start(api)
    assert {"id", "deadline", "phases", "current"} <= set(data)
    current = data["current"]
    assert current["kind"] == "deep_dive" and current["phase"] == "requirements"
    assert all(set(choice) == {"id", "text", "text_html"} for choice in current["choices"])
    assert not LEAKS & set(walk(data))
    assert not {"Best", "Weak", "Holds up.", "Wastes 60-80%."} & set(walk(data))


def test_answers_are_recorded_silently_until_the_last_then_current_is_null(api, scenario, stopped_clock):
    data = start(api)
    interview_id = data["id"]
    while data["current"] is not None:
        row = InterviewItem.objects.filter(interview_id=interview_id, answered_at=None).order_by("position").first()
        assert row.pk == data["current"]["id"]
        answered = data.get("answered", 0)
        response = api.post(f"/api/v1/interviews/{interview_id}/answer/", right_answer(row), format="json")
        assert response.status_code == 200
        data = response.json()
        assert set(data) == {"current", "answered", "total", "late", "deadline", "remaining_seconds"}
        assert data["late"] is False
        assert not LEAKS & set(walk(data))
        if row.kind == "open" and row.answer is None:  # written: the same question asks for its checklist
            assert data["answered"] == answered and data["current"]["stage"] == "tick"
            assert [p["text"] for p in data["current"]["checklist"]][0] == "Detect the broken stream"
        else:
            assert data["answered"] == answered + 1
    assert data["answered"] == data["total"]
    again = api.post(f"/api/v1/interviews/{interview_id}/answer/", {"choice": 1, "item": row.pk}, format="json")
    assert again.status_code == 409 and "finish the interview" in again.json()["detail"]


@pytest.mark.parametrize("parent_answer", [right_answer, wrong_answer])
def test_a_follow_up_says_which_approach_it_builds_on_whatever_the_learner_answered(
    api, scenario, stopped_clock, monkeypatch, parent_answer
):
    """A lesson shows a follow-up only after its leading approach is picked, and its prompt may assume it
    ("Fine, the weights fit on two GPUs..."); an interview asks it whatever the answer. dd-2's weak
    approach leads to dd-follow: picked (wrong_answer) it is the learner's own, else it is supposed."""
    pool = interviews.Pool.read(list(Lesson.objects.filter(published=True)))

    def asks_the_follow_up(seed: int) -> bool:
        drawn = interviews.draw(pool, scenario, {}, random.Random(seed))
        return any(item.get("deep_dive") and item["deep_dive"].key == "dd-follow" for item in drawn)

    monkeypatch.setattr(interviews, "fresh_seed", lambda: next(filter(asks_the_follow_up, range(200))))
    data = start(api)
    interview_id = data["id"]
    row = InterviewItem.objects.get(pk=data["current"]["id"])
    while row.deep_dive is None or row.deep_dive.key != "dd-follow":
        assert "Suppose" not in data["current"]["prompt"] and "Following up" not in data["current"]["prompt"]
        data = api.post(f"/api/v1/interviews/{interview_id}/answer/", parent_answer(row), format="json").json()
        row = InterviewItem.objects.get(pk=data["current"]["id"])
    leading = Choice.objects.get(follow_up__key="dd-follow")
    label = "Following up your answer:" if parent_answer is wrong_answer else "Suppose you had answered:"
    assert data["current"]["prompt"].startswith(f"{label} {leading.text}"), data["current"]["prompt"]
    page = api.get(f"/interviews/{interview_id}/").content.decode()
    premise = page.index('id="question-premise"')
    assert page.index(label) > premise and page.index('id="question-title"') > page.index(label)
    assert 'aria-describedby="question-position question-premise"' in page


def test_a_follow_up_with_two_parents_builds_on_the_approach_picked_in_either_asked_before_it(scenario):
    """The validator allows several parents; the premise is the learner's own approach in whichever they
    picked it, and a parent asked after the follow-up says nothing of it (its approaches are not shown early)."""
    follow_up = DeepDive.objects.get(key="dd-follow")
    second = Choice.objects.filter(deep_dive__key="dd-3", deep_dive__section__lesson=scenario, verdict="best").first()
    Choice.objects.filter(pk=second.pk).update(follow_up=follow_up)
    first = Choice.objects.get(deep_dive__section__lesson=scenario, deep_dive__key="dd-2", follow_up=follow_up)
    other = (
        Choice.objects.filter(deep_dive__section__lesson=scenario, deep_dive__key="dd-2").exclude(pk=first.pk).first()
    )
    learner = Learner.objects.create()
    interview = Interview.objects.create(learner=learner, lesson=scenario, seed=1, phases=[], started_at=START,
                                         deadline=START + timedelta(minutes=45))  # fmt: skip

    def premise(order: list[str], answers: dict[str, int]) -> str:
        interview.items.all().delete()
        for position, key in enumerate(order, start=1):
            dd = DeepDive.objects.get(key=key, section__lesson=scenario)
            answer = {"choice": answers[key]} if key in answers else None
            InterviewItem.objects.create(interview=interview, position=position, phase="deep_dives",
                                         kind="deep_dive", deep_dive=dd, answer=answer)  # fmt: skip
        return next(v for v in interviews.load(interview) if v.item.deep_dive_id == follow_up.pk).premise_html

    picked_in_second = premise(["dd-2", "dd-3", "dd-follow"], {"dd-2": other.pk, "dd-3": second.pk})
    assert picked_in_second.startswith("<p>Following up your answer:</p>") and second.text in picked_in_second
    neither = premise(["dd-2", "dd-3", "dd-follow"], {"dd-2": other.pk})
    assert neither.startswith("<p>Suppose you had answered:</p>") and first.text in neither  # the first asked
    later_parent = premise(["dd-2", "dd-follow", "dd-3"], {"dd-2": other.pk})
    assert first.text in later_parent and second.text not in later_parent


def test_a_finished_interview_refuses_answers_and_keeps_its_scorecard(api, scenario, stopped_clock):
    data = start(api)
    first = api.post(f"/api/v1/interviews/{data['id']}/finish/")
    assert first.status_code == 200 and first.json()["dimensions"]["requirements"] == 0.0
    refused = api.post(f"/api/v1/interviews/{data['id']}/answer/", {"choice": data["current"]["choices"][0]["id"],
                       "item": data["current"]["id"]}, format="json")  # fmt: skip
    assert refused.status_code == 409
    assert refused.json()["detail"] == "This interview is finished: its scorecard is ready, no more answers."
    assert api.post(f"/api/v1/interviews/{data['id']}/finish/").json() == first.json()


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({"scenario": "no-such-lesson"}, "scenario", "No published case study or simulation has that slug"),
        ({"scenario": "other"}, "scenario", "No published case study or simulation has that slug"),  # a concept
        ({"scenario": ""}, "scenario", "may not be blank"),
        ({}, "scenario", "required"),
        ({"scenario": ["case"]}, "scenario", "Not a valid string"),
    ],
)
def test_bad_starts_are_400s_with_a_message(api, scenario, body, field, message):
    response = api.post("/api/v1/interviews/", body, format="json")
    assert response.status_code == 400
    assert message in " ".join(response.json()["errors"][field])
    assert not Interview.objects.exists()


def test_a_draft_scenario_cannot_be_chosen(api, scenario):
    Lesson.objects.filter(pk=scenario.pk).update(published=False)
    response = api.post("/api/v1/interviews/", {"scenario": "case"}, format="json")
    assert response.status_code == 400 and "scenario" in response.json()["errors"]


def test_bad_answers_are_400s_and_leave_the_item_unanswered(api, scenario, stopped_clock):
    data = start(api)
    url = f"/api/v1/interviews/{data['id']}/answer/"
    cases = [
        ({"value": "42"}, "choice", "asks you to pick one of its choices"),
        ({"choice": 999999}, "choice", "not one of this question's choices"),
        ({"choice": "abc"}, "choice", "valid integer"),
        ({"choice": True}, "choice", "valid integer"),
        ({"choice": "²"}, "choice", "valid integer"),
        ({"ticked": ["²"]}, "ticked", "valid integer"),
    ]
    for body, field, message in cases:
        response = api.post(url, {**body, "item": data["current"]["id"]}, format="json")
        assert response.status_code == 400, body
        assert message in str(response.json()["errors"][field]), response.json()
    # Move on to a number question, then send it bad numbers.
    while (row := InterviewItem.objects.filter(interview_id=data["id"], answered_at=None).order_by("position")
           .first()).kind != "number":  # fmt: skip
        api.post(url, right_answer(row), format="json")
    for body, message in [({"value": "lots"}, "Enter a number"), ({"value": "1,5"}, "commas only separate"),
                          ({"choice": 3}, "asks for a number"), ({"value": "9" * 70}, "no more than 60")]:  # fmt: skip
        response = api.post(url, {**body, "item": row.pk}, format="json")
        assert response.status_code == 400 and message in str(response.json()["errors"]), response.json()
    assert InterviewItem.objects.get(pk=row.pk).answered_at is None
    # A stale item id (a second tab) is a conflict, not an answer to the wrong question.
    stale = api.post(url, {**right_answer(row), "item": row.pk - 1}, format="json")
    assert stale.status_code == 409 and InterviewItem.objects.get(pk=row.pk).answered_at is None


def test_the_open_question_is_written_then_ticked_and_bad_ticks_are_400s(api, scenario, stopped_clock):
    data = start(api)
    url = f"/api/v1/interviews/{data['id']}/answer/"
    while (row := InterviewItem.objects.filter(interview_id=data["id"], answered_at=None).order_by("position")
           .first()).kind != "open":  # fmt: skip
        api.post(url, right_answer(row), format="json")
    assert api.post(url, {"ticked": [], "item": row.pk}, format="json").json()["errors"]["text"] == [
        'Write your answer first (send "text"); then tick what it covered.'
    ]
    assert api.post(url, {"text": "   ", "item": row.pk}, format="json").status_code == 400
    assert api.post(url, {"text": "Detect it, drain it.", "item": row.pk}, format="json").status_code == 200
    points = list(ChecklistPoint.objects.filter(question=row.open_question).values_list("pk", flat=True))
    for body, field in [({"ticked": [points[0], 999999]}, "ticked"), ({"ticked": "all"}, "ticked"),
                        ({"text": "again"}, "ticked")]:  # fmt: skip
        response = api.post(url, {**body, "item": row.pk}, format="json")
        assert response.status_code == 400 and field in response.json()["errors"], response.json()
    done = api.post(url, {"ticked": points[:2], "item": row.pk}, format="json").json()
    assert done["current"] is None
    card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
    assert card["dimensions"]["communication"] == pytest.approx(2 / 3, abs=1e-4)
    wrap = card["items"][-1]
    assert wrap["answer"]["text"] == "Detect it, drain it." and "2 of the 3 points" in wrap["feedback"]


def test_another_learners_interview_is_not_found(api, scenario, stopped_clock):
    data = start(api)
    other = APIClient()
    assert other.post(f"/api/v1/interviews/{data['id']}/answer/", {"choice": 1}, format="json").status_code == 404
    assert other.post(f"/api/v1/interviews/{data['id']}/finish/").status_code == 404
    assert other.get("/api/v1/interviews/").json() == []
    assert Client().get(reverse("interview", args=[data["id"]])).status_code == 404


def test_numbers_take_an_optional_unit_through_the_one_parser(api, scenario, stopped_clock):
    data = start(api)
    while (row := InterviewItem.objects.filter(interview_id=data["id"], answered_at=None).order_by("position")
           .first()).kind != "number":  # fmt: skip
        api.post(f"/api/v1/interviews/{data['id']}/answer/", right_answer(row), format="json")
    # A unit of the wrong kind is refused with the parser's message, and the item stays unanswered.
    response = api.post(
        f"/api/v1/interviews/{data['id']}/answer/", {"value": "12 parsecs", "item": row.pk}, format="json"
    )
    assert response.status_code == 400
    assert "“12 parsecs” is a length, but this question asks for" in response.json()["errors"]["value"][0]
    row.refresh_from_db()
    assert row.answered_at is None
    # The right number written with a unit of the same kind is converted, then graded.
    number = row.step or row.challenge
    value = float(right_answer(row)["value"])
    written = f"{value} {number.unit}" if number.unit not in ("", "%", "$") else str(value)
    api.post(f"/api/v1/interviews/{data['id']}/answer/", {"value": written, "item": row.pk}, format="json")
    row.refresh_from_db()
    assert row.score == 1.0 and row.answer["number"] == pytest.approx(value)


def test_the_scorecard_recomputes_from_stored_answers(api, scenario, stopped_clock):
    data = start(api)
    answer_all(api, data["id"], right_answer, stopped_clock, step_seconds=5)
    card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
    assert card["dimensions"] == {"requirements": 1.0, "estimation": 1.0, "design": 1.0, "trade_offs": 1.0,
                                  "communication": 1.0, "time_management": 1.0}  # fmt: skip
    assert card["band"] == "strong" and card["overall"] == 1.0
    assert all(item["outcome"] == "correct" for item in card["items"])
    assert {item["verdict"] for item in card["items"] if item["kind"] == "deep_dive"} == {"best"}
    numbers = [item for item in card["items"] if item["kind"] == "number"]
    assert all(item["expected"] is not None and item["steps"] for item in numbers)
    # Recomputed from the rows: the same dimensions, and each stored answer graded again gives its score.
    interview = Interview.objects.get(pk=data["id"])
    rows = list(interview.items.all())
    assert interviews.scorecard(interview, rows).as_dict() == card["dimensions"]
    views = interviews.load(interview)
    for view in views:
        payload = {k: v for k, v in view.shown_answer().items() if k in ("choice", "value", "ticked")}
        _stored, score, _feedback = interviews.grade(view, payload)
        assert score == view.item.score


def test_weak_answers_score_low_with_plain_explanations(api, scenario, stopped_clock):
    data = start(api)
    answer_all(api, data["id"], wrong_answer, stopped_clock, step_seconds=5)
    card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
    dims = card["dimensions"]
    assert dims["requirements"] == dims["trade_offs"] == dims["design"] == dims["estimation"] == 0.0
    assert dims["time_management"] == 0.0  # rushed: five seconds a question, and every answer wrong
    assert card["band"] == "not_yet"
    assert card["explanations"]["trade_offs"].startswith("0% on the approaches you chose")
    assert card["explanations"]["communication"].startswith("0% on the points of the open question's checklist")
    assert "Practise this" not in card and card["practise"][-1]["url"].endswith("/review/")


def test_a_phase_left_unanswered_is_said_to_be_unanswered_not_scored_on_what_was_chosen(api, scenario, stopped_clock):
    """Finishing with the deep dives and the wrap-up untouched, the scorecard said "Trade-offs 0% on the approaches
    you chose in the deep dives": none was chosen. It says the questions went unanswered."""
    data = start(api)
    rows = InterviewItem.objects.filter(interview_id=data["id"]).order_by("position")
    for row in rows.exclude(phase__in=["deep_dives", "wrap_up"]):
        stopped_clock.shift(30)
        api.post(f"/api/v1/interviews/{data['id']}/answer/", right_answer(row), format="json")
    card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
    deep_dives = rows.filter(phase="deep_dives").count()
    assert card["explanations"]["trade_offs"] == (
        f"0%: its {deep_dives} questions went unanswered, and an unanswered question scores 0. "
        "Practise this before the real interview."
    )
    assert card["explanations"]["communication"].startswith("0%: its question went unanswered")
    assert card["explanations"]["estimation"].startswith("100% on how close your numbers were")
    page = api.get(reverse("interview", args=[data["id"]])).content.decode()
    assert f"0%: its {deep_dives} questions went unanswered" in page


def test_time_over_a_phase_budget_lowers_time_management(api, scenario, stopped_clock):
    data = start(api)
    budgets = {p["key"]: p["seconds"] for p in data["phases"]}
    while (row := InterviewItem.objects.filter(interview_id=data["id"], answered_at=None).order_by("position")
           .first()) is not None:  # fmt: skip
        # The estimate phase takes twice its budget in all; the others are quick.
        count = InterviewItem.objects.filter(interview_id=data["id"], phase=row.phase).count()
        stopped_clock.shift(2 * budgets["estimate"] / count if row.phase == "estimate" else 1)
        api.post(f"/api/v1/interviews/{data['id']}/answer/", right_answer(row), format="json")
    card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
    phases = len(data["phases"])
    assert card["dimensions"]["time_management"] == pytest.approx((phases - 1 + 0.5) / phases, abs=1e-3)
    estimate = next(t for t in card["time"] if t["phase"] == "estimate")
    assert estimate["spent_seconds"] == pytest.approx(2 * budgets["estimate"])


@pytest.mark.parametrize(("share_of_budget", "time_management"), [(0.01, 0.0), (0.5, 1.0)])
def test_rushing_through_with_wrong_answers_is_not_managing_time(
    api, scenario, stopped_clock, share_of_budget, time_management
):
    """Clicking through at random in seconds scored Time management 100%, "Strong: you would likely pass".
    The same wrong answers given over half of each budget are slow enough: time was spent on them."""
    data = start(api)
    budgets = {p["key"]: p["seconds"] for p in data["phases"]}
    while (row := InterviewItem.objects.filter(interview_id=data["id"], answered_at=None).order_by("position")
           .first()) is not None:  # fmt: skip
        count = InterviewItem.objects.filter(interview_id=data["id"], phase=row.phase).count()
        stopped_clock.shift(share_of_budget * budgets[row.phase] / (count + (row.kind == "open")))
        api.post(f"/api/v1/interviews/{data['id']}/answer/", wrong_answer(row), format="json")
    card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
    assert card["dimensions"]["time_management"] == pytest.approx(time_management, abs=1e-3)
    rushed = share_of_budget < interviews.RUSHED
    assert [(row["rushed"], row["score"]) for row in card["time"]] == [(rushed, time_management)] * len(card["time"])
    page = Client()
    page.cookies = api.cookies
    html = page.get(reverse("interview", args=[data["id"]])).content.decode()
    assert ("Rushed, and the answers show it: counts 0%" in html) == (share_of_budget < interviews.RUSHED)


def test_unanswered_questions_count_against_time_management(api, scenario, stopped_clock):
    """Finishing early is not managing time: a phase counts only when all its questions are answered in time."""
    data = start(api)
    rows = list(InterviewItem.objects.filter(interview_id=data["id"]).order_by("position"))
    requirements = sum(1 for r in rows if r.phase == "requirements")
    for row in rows[: requirements + 1]:  # the requirements, and one estimate of several
        stopped_clock.shift(5)
        api.post(f"/api/v1/interviews/{data['id']}/answer/", right_answer(row), format="json")
    stopped_clock.shift(7)  # the learner reads the next estimate for 7 s, then finishes
    card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
    phases = len(data["phases"])
    assert card["dimensions"]["time_management"] == pytest.approx(1 / phases, abs=1e-4)
    assert card["band"] == "not_yet"
    page = Client()
    page.cookies = api.cookies
    html = page.get(reverse("interview", args=[data["id"]])).content.decode()
    # The phase table says which phases count: the estimate begun counts 0 as not completed; the phases after it,
    # never shown before Finish, are "Not reached" (each had said "Not completed" too).
    # The 7 s before Finish went on the estimate under way (5 s to its first answer, then 7): the phase after it
    # had been given them, and said "Not completed" for a phase whose questions were never shown.
    verdicts = re.findall(r'<td data-label="Time management">([^<]+)</td>', html)
    assert verdicts == ["Within budget", "Not completed: counts 0"] + ["Not reached: counts 0"] * (phases - 2)
    taken = re.findall(r'<td class="num" data-label="Taken">(\d+) s</td>', html)
    assert taken == [str(5 * requirements), "12"] + ["0"] * (phases - 2)


@pytest.mark.parametrize("finish_after", [0, 2 * 24 * 3600])
def test_the_phase_under_way_is_reached_and_its_time_stops_at_the_deadline(api, scenario, stopped_clock, finish_after):
    """Finished at the instant of the last answer, the next phase (its first question on screen) is under way, not
    "Not reached" (that was read off a zero time); finished two days late, its time stops at the deadline (it said
    "Taken 172,8xx s")."""
    data = start(api)
    interview = Interview.objects.get(pk=data["id"])
    rows = list(InterviewItem.objects.filter(interview_id=data["id"]).order_by("position"))
    requirements = [r for r in rows if r.phase == "requirements"]
    for row in requirements:
        stopped_clock.shift(5)
        api.post(f"/api/v1/interviews/{data['id']}/answer/", right_answer(row), format="json")
    stopped_clock.shift(finish_after)
    api.post(f"/api/v1/interviews/{data['id']}/finish/")
    page = Client()
    page.cookies = api.cookies
    html = page.get(reverse("interview", args=[data["id"]])).content.decode()
    verdicts = re.findall(r'<td data-label="Time management">([^<]+)</td>', html)
    phases = len(data["phases"])
    assert verdicts == ["Within budget", "Not completed: counts 0"] + ["Not reached: counts 0"] * (phases - 2)
    taken = re.findall(r'<td class="num" data-label="Taken">([\d,]+) s</td>', html)
    last_answer = interview.started_at + timedelta(seconds=5 * len(requirements))
    until_deadline = round((interview.deadline - last_answer).total_seconds())
    assert taken[1] == str(min(finish_after, until_deadline)) and taken[2:] == ["0"] * (phases - 2)


def test_the_phase_budgets_read_in_whole_minutes(client, db):
    html = client.get(reverse("interviews")).content.decode()
    assert '<td class="num" data-label="Minutes">5</td>' in html and ".0</td>" not in html


def test_the_scoring_rules_are_written_in_plain_words(client, db):
    html = client.get(reverse("interviews")).content.decode()
    rules = html.split('id="scoring-rules"', 1)[1]
    assert "over the best approach's" not in rules
    assert (
        "picking the best one scores full marks for that question, an acceptable one half, a weak one nothing" in rules
    )
    assert "a phase with a question left unanswered scores 0" in rules
    # A scenario's interview asks other lessons' questions too (prefer_scenario): the start page says so,
    # or the questions read as off-topic.
    assert "Each phase asks the scenario's own questions first; when it has too few, the rest come from" in html


# --- The server's clock -------------------------------------------------------------------------


def test_an_unfinished_interviews_deadline_is_written_with_its_date(client, scenario, stopped_clock):
    client.post(reverse("interview-start"), {"scenario": "case"})
    stopped_clock.shift(timedelta(days=2))  # left unfinished: "deadline 12:45 UTC" alone would not say which day
    page = client.get(reverse("interviews")).content.decode()
    assert '· deadline <time datetime="2026-11-30T12:45:15+00:00">30 Nov 2026, 12:45 UTC</time></span>' in page


def test_the_deadline_holds_across_a_reload_and_late_answers_are_flagged(client, scenario, stopped_clock):
    started = client.post(reverse("interview-start"), {"scenario": "case"})
    assert started.status_code == 303
    url = started["Location"]
    interview = Interview.objects.get()
    deadline = interview.deadline
    first = client.get(url).content.decode()
    assert (
        'Time left: <strong role="timer" data-countdown="2700">45:00</strong>' in first
        and "Total budget: 45 minutes, in 5 phases" in first
    )
    stopped_clock.shift(timedelta(minutes=35))
    page = client.get(url).content.decode()  # a reload
    assert 'Time left: <strong role="timer" data-countdown="600">10:00</strong>' in page  # site.js counts it down
    # Started at 12:00:15 (the stopped clock): the deadline as every time on the site is written.
    assert 'Deadline: <strong><time datetime="2026-11-30T12:45:15+00:00">30 Nov 2026, 12:45 UTC</time></strong>' in page
    interview.refresh_from_db()
    assert interview.deadline == deadline
    # A second start does not move this interview's clock either.
    client.post(reverse("interview-start"), {"scenario": "case"})
    interview.refresh_from_db()
    assert interview.deadline == deadline

    # Past the deadline: the answer is kept, marked late, and scores nothing.
    stopped_clock.shift(timedelta(minutes=11))
    page = client.get(url).content.decode()
    assert "Time is up" in page
    row = interview.items.order_by("position").first()
    client.post(reverse("interview-answer", args=[interview.pk]), {"item": row.pk, **right_answer(row)})
    row.refresh_from_db()
    assert row.late is True and row.score == 1.0
    api = APIClient()
    api.cookies = client.cookies
    card = api.post(f"/api/v1/interviews/{interview.pk}/finish/").json()
    assert card["items"][0]["outcome"] == "late" and card["dimensions"]["requirements"] == 0.0


def test_the_timer_announces_five_minutes_and_one_minute_left_once(client, scenario, stopped_clock):
    client.post(reverse("interview-start"), {"scenario": "case"})
    interview = Interview.objects.get()
    timer = reverse("interview-timer", args=[interview.pk])

    def poll(announced=""):
        html = client.get(f"{timer}?announced={announced}", headers={"HX-Request": "true"}).content.decode()
        alert = re.search(r'hx-swap-oob="innerHTML:#time-alert">([^<]*)<', html)
        mark = re.search(r"announced=(\d*)", html)
        return (alert.group(1) if alert else ""), (mark.group(1) if mark else None)

    assert poll() == ("", "")
    stopped_clock.move_to(interview.deadline - timedelta(minutes=4, seconds=50))
    assert poll() == ("Five minutes left.", "5")
    assert poll("5") == ("", "5")
    stopped_clock.move_to(interview.deadline - timedelta(seconds=50))
    assert poll("5") == ("One minute left.", "1")
    assert poll("1") == ("", "1")
    stopped_clock.move_to(interview.deadline + timedelta(seconds=1))
    alert, mark = poll("1")
    assert alert.startswith("Time is up") and mark is None  # the clock stops polling
    assert interviews.announcement(200, None) == ("Five minutes left.", 5)


# --- Pages without JavaScript ---------------------------------------------------------------


def form_answer(html: str, row: InterviewItem) -> dict:
    """Answer as a learner would, from what the form offers (the first choice, or the right number)."""
    assert f'name="item" value="{row.pk}"' in html
    if row.kind == "number":
        assert 'name="value"' in html
        return {"item": row.pk, **right_answer(row)}
    if row.kind == "open" and row.answer is None:
        assert '<textarea id="answer-text" name="text"' in html and 'name="ticked"' not in html
        return {"item": row.pk, "text": "Detect it <script>alert(1)</script>, drain it, re-run."}
    if row.kind == "open":  # the checklist, with the answer written shown escaped; tick the first point
        assert "Detect it &lt;script&gt;" in html and "Drain the replica" in html
        return {"item": row.pk, "ticking": "1", "ticked": re.search(r'name="ticked" value="(\d+)"', html).group(1)}
    choice = re.search(r'name="choice" value="(\d+)"', html).group(1)
    return {"item": row.pk, "choice": choice}


def test_a_whole_interview_through_the_pages(client, scenario, stopped_clock):
    page = client.get(reverse("interviews"))
    assert page.status_code == 200 and 'name="scenario"' in page.content.decode()
    assert '<option value="case">' in page.content.decode()
    # "Surprise me" fits the menu on a phone; what it does is said below it, and read with the menu.
    assert '<option value="surprise">Surprise me</option>' in page.content.decode()
    assert 'aria-describedby="scenario-help"' in page.content.decode()
    assert "weighted toward your weakest topics" in page.content.decode()
    url = client.post(reverse("interview-start"), {"scenario": "case"})["Location"]
    assert "#" not in url  # a new interview opens at the top of its page
    interview = Interview.objects.get()
    answered = 0
    while (row := interview.items.filter(answered_at=None).order_by("position").first()) is not None:
        html = client.get(url).content.decode()
        assert f"question {row.position} of" in html and "Best" not in html
        phase = next(p for p in interview.phases if p["key"] == row.phase)  # the eyebrow names the phase
        part = ", second part" if row.kind == "open" and row.answer is not None else ""
        assert re.search(rf'id="question-position">{phase["label"]} · question {row.position} of \d+{part}</p>', html)
        assert ("Drain the replica" in html) == (row.kind == "open" and row.answer is not None)
        # Opening the page (a new interview, Resume) focuses the question's heading, and nothing else.
        assert html.count("autofocus") == 1 and re.search(r'<h2 id="question-title"[^>]* autofocus[ >]', html)
        stopped_clock.shift(3)
        sent = form_answer(html, row)
        response = client.post(reverse("interview-answer", args=[interview.pk]), sent)
        assert response.status_code == 303
        if "ticking" in sent:  # the ticks sent again: told so, not refused as the next question's points (a 400)
            again = client.post(reverse("interview-answer", args=[interview.pk]), sent)
            assert again.status_code == 303 and again["Location"] == f"{url}#messages"
            left = interview.items.filter(answered_at=None).exists()
            told = (
                "here is the next one" if left else "so this second answer was not recorded. Every question is answered"
            )
            assert re.search(
                rf'id="messages" role="status" tabindex="-1" data-focus-on-load><ul>\s*<li[^>]*>[^<]*{told}',
                client.get(url).content.decode(),
            )
        # The browser focuses the next question's heading; after the last, the line saying all are answered.
        last = not interview.items.filter(answered_at=None).exists()
        assert response["Location"] == f"{url}#{'all-answered' if last else 'question-title'}"
        answered += 1
        # Re-posting the same form (Back, then submit again) does not answer the next question.
        if answered == 1:
            again = client.post(reverse("interview-answer", args=[interview.pk]), form_answer(html, row))
            # The page opens at the message, which the browser focuses (not the next question's heading).
            assert again.status_code == 303 and again["Location"] == f"{url}#messages"
            told = client.get(url).content.decode()
            assert re.search(
                r'<div class="messages" id="messages" role="status" tabindex="-1" data-focus-on-load><ul>\s*<li[^>]*>That question was already '
                r"answered, so this second answer was not recorded; here is the next one.</li>",
                told,
            )
            assert interview.items.filter(answered_at__isnull=False).count() == 1
    html = client.get(url).content.decode()
    assert '<p class="card" id="all-answered" tabindex="-1" autofocus>Every question is answered' in html
    done = client.post(reverse("interview-finish", args=[interview.pk]))
    assert done.status_code == 303 and done["Location"] == f"{url}#band-title"
    # The last answer's form sent again after finishing: the page says the interview is finished.
    stale = client.post(reverse("interview-answer", args=[interview.pk]), sent)
    assert stale.status_code == 303 and stale["Location"] == f"{url}#messages"
    assert interviews.FINISHED in client.get(url).content.decode()
    card = client.get(url).content.decode()
    for label in ("Requirements", "Estimation", "Design", "Trade-offs", "Communication", "Time management"):
        assert f'<th scope="row">{label}</th>' in card
    assert "How the scorecard is worked out" in card and "The worked answer" in card and "Overall:" in card
    assert (
        "You covered 1 of the 3 points" in card and "Detect it &lt;script&gt;" in card and "<script>alert" not in card
    )
    # The history: the attempt, a chart per dimension with a text alternative, practise links.
    history = client.get(reverse("interviews")).content.decode()
    assert history.count('role="img"') == 6 and "Every attempt, scores by dimension" in history
    assert "Practise this" in history and reverse("review") in history
    interview.refresh_from_db()
    # Started at 12:00:15 on the stopped clock: the date over the time, in the one format of the site.
    assert '<time datetime="2026-11-30T12:00:15+00:00">30 Nov 2026<br>12:00 UTC</time>' in history


def test_finishing_with_questions_left_asks_to_confirm_first(client, scenario, stopped_clock):
    url = client.post(reverse("interview-start"), {"scenario": "case"})["Location"]
    interview = Interview.objects.get()
    finish = reverse("interview-finish", args=[interview.pk])
    total = interview.items.count()
    page = client.get(url).content.decode()
    # With questions left, the page's Finish is a link to the confirmation (nothing is finished yet): a plain
    # address, where a GET form with no fields left a bare "?" at its end.
    assert f'<a class="button secondary" href="{finish}">Finish early…</a>' in page
    assert 'method="get"' not in page
    asked = client.get(finish)
    html = asked.content.decode()
    assert asked.status_code == 200
    assert f"You have {total} unanswered questions; they will score 0. Finish now?" in html
    assert 'name="confirm" value="1"' in html and f'href="{url}"' in html and "Keep going" in html
    # The page opens on its question, as an interview's question does (a keyboard user is one Tab from Finish now).
    assert html.count("autofocus") == 1 and re.search(r'<h2 id="finish-title" tabindex="-1" autofocus>You have', html)
    # A post without the confirmation (a stale page) asks again and finishes nothing.
    again = client.post(finish)
    assert again.status_code == 200 and "Finish now?" in again.content.decode()
    interview.refresh_from_db()
    assert interview.finished_at is None
    assert "Scorecard" not in client.get(url).content.decode()
    done = client.post(finish, {"confirm": "1"})
    assert done.status_code == 303 and done["Location"] == f"{url}#band-title"
    card = client.get(url).content.decode()
    # The browser focuses the address's target on load: the scorecard's heading, not the whole scorecard (about
    # 3,200 px tall on a phone: its ring outlined all of it). The page has no autofocus.
    assert '<h2 id="band-title" tabindex="-1">Overall: ' in card
    assert '<section class="card" id="scorecard" aria-labelledby="band-title">' in card
    assert card.count('tabindex="-1"') == 2 and "autofocus" not in card  # main (the skip link's target) and the heading
    # Finishing again (a stale page) opens the same place.
    assert client.get(finish)["Location"] == f"{url}#band-title"
    interview.refresh_from_db()
    assert interview.finished_at is not None


def test_a_progress_reset_keeps_the_mock_interviews_and_says_so(client, scenario, stopped_clock):
    """The reset page did not say whether mock interviews go: they stay, scorecards and all (their items hold
    their own answers, no Answer rows), and the page says so."""
    url = client.post(reverse("interview-start"), {"scenario": "case"})["Location"]
    interview = Interview.objects.get()
    client.post(reverse("interview-finish", args=[interview.pk]), {"confirm": "1"})
    page = client.get(reverse("reset-progress")).content.decode()
    assert "Your mock interviews and their scorecards are kept." in page
    client.post(reverse("reset-progress"), {"confirm": "yes"})
    assert Interview.objects.filter(pk=interview.pk, finished_at__isnull=False).exists()
    assert interview.items.count() > 0 and "Overall:" in client.get(url).content.decode()


def test_a_bad_scenario_on_the_page_is_a_400_with_the_message(client, scenario):
    response = client.post(reverse("interview-start"), {"scenario": "nope"})
    assert response.status_code == 400
    assert "No published case study or simulation has that slug" in response.content.decode()


def test_a_bad_number_on_the_page_is_a_400_beside_the_field(client, scenario, stopped_clock):
    url = client.post(reverse("interview-start"), {"scenario": "case"})["Location"]
    interview = Interview.objects.get()
    while (row := interview.items.filter(answered_at=None).order_by("position").first()).kind != "number":
        client.post(reverse("interview-answer", args=[interview.pk]), {"item": row.pk, **right_answer(row)})
    response = client.post(reverse("interview-answer", args=[interview.pk]), {"item": row.pk, "value": "many"})
    html = response.content.decode()
    assert response.status_code == 400 and "Enter a number" in html
    # Inside the form, just before the field, which keeps what was typed and takes focus.
    form = html[html.index('<form method="post" action="' + reverse("interview-answer", args=[interview.pk])) :]
    assert form.index('role="alert" id="answer-error"') < form.index('id="answer-value"')
    assert re.search(r'id="answer-value"[^>]*value="many" aria-invalid="true" autofocus>', form)
    assert html.count('id="answer-error"') == 1 and html.count("autofocus") == 1
    assert client.get(url).status_code == 200


def test_a_question_id_that_is_no_number_is_a_400_not_already_answered(client, scenario, stopped_clock):
    """The item a form names is read as the form reads it: "abc" is refused (it names no question, so it is
    not "already answered"), and the current question's id with spaces around it answers that question."""
    url = client.post(reverse("interview-start"), {"scenario": "case"})["Location"]
    interview = Interview.objects.get()
    answer_url = reverse("interview-answer", args=[interview.pk])
    row = interview.items.order_by("position").first()
    for item in ("abc", "1e3"):
        refused = client.post(answer_url, {**right_answer(row), "item": item})
        assert refused.status_code == 400 and "Answer the question shown on the page." in refused.content.decode()
    assert interview.items.filter(answered_at__isnull=False).count() == 0
    answered = client.post(answer_url, {"ticking": "1", **right_answer(row), "item": f" {row.pk} "})
    assert answered.status_code == 303 and answered["Location"] == f"{url}#question-title"
    assert interview.items.get(pk=row.pk).answered_at is not None


def test_non_ascii_digits_on_the_page_are_a_400_not_a_crash(client, scenario, stopped_clock):
    """ "²" passes str.isdigit() but is no integer: a choice or a tick of "²" gets a message, not a 500."""
    url = client.post(reverse("interview-start"), {"scenario": "case"})["Location"]
    interview = Interview.objects.get()
    answer_url = reverse("interview-answer", args=[interview.pk])
    seen = set()
    while (row := interview.items.filter(answered_at=None).order_by("position").first()) is not None:
        if row.kind in ("deep_dive", "design") and row.kind not in seen or row.kind == "open" and row.answer:
            bad = {"choice": "²"} if row.kind != "open" else {"ticking": "1", "ticked": ["²"]}
            refused = client.post(answer_url, {"item": row.pk, **bad})
            assert refused.status_code == 400 and 'role="alert"' in refused.content.decode()
            seen.add(row.kind)
            assert client.get(url).status_code == 200
            assert interview.items.get(pk=row.pk).answered_at is None
        client.post(answer_url, {"item": row.pk, "ticking": "1", **right_answer(row)})
    assert seen == {"deep_dive", "design", "open"}


def test_choices_go_out_as_handles_that_do_not_give_the_answer_away(api, scenario, stopped_clock):
    """Across many draws, the right design option and the best approach sit at every position, and
    the ids sent are positions (1, 2, ...), not the content's keys (ordered as authored).

    The draws use seeds 0, 1, 2, ... (tests/conftest.py), which fixes the design options' order; the
    deep dives' order follows the interview's id, and over about 75 of them a best choice first in
    three of four has a chance far below one in a million."""
    right_positions = {"design": [], "deep_dive": []}
    for _draw in range(12):
        data = start(api)
        while (current := api.get(f"/api/v1/interviews/{data['id']}/").json()["current"]) is not None:
            row = InterviewItem.objects.get(pk=current["id"])
            payload = right_answer(row)
            if row.kind in right_positions:
                ids = [c["id"] for c in current["choices"]]
                assert ids == list(range(1, len(ids) + 1))
                right_positions[row.kind].append(ids.index(payload["choice"]))
            api.post(f"/api/v1/interviews/{data['id']}/answer/", {**payload, "item": row.pk}, format="json")
        card = api.post(f"/api/v1/interviews/{data['id']}/finish/").json()
        assert {i["outcome"] for i in card["items"] if i["kind"] in right_positions} == {"correct"}
        assert all(i["answer"]["choice"] in [c["id"] for c in i["choices"]] for i in card["items"] if "choices" in i)
    for kind, positions in right_positions.items():
        assert len(positions) >= 12 and len(set(positions)) > 1, (kind, positions)
        assert positions.count(0) < 0.75 * len(positions), (kind, positions)


def test_an_answer_cannot_land_after_the_interview_is_finished(api, scenario, stopped_clock):
    data = start(api)
    stale = Interview.objects.get(pk=data["id"])  # read by an answer request before another one finished it
    assert api.post(f"/api/v1/interviews/{data['id']}/finish/").status_code == 200
    row = InterviewItem.objects.get(pk=data["current"]["id"])
    with pytest.raises(interviews.InterviewError) as refused:
        interviews.answer(stale, right_payload(row), row.pk)
    assert refused.value.status == 409
    row.refresh_from_db()
    assert row.answered_at is None and row.answer is None


def test_an_api_answer_names_its_item_so_a_retry_cannot_answer_the_next_question(api, scenario, stopped_clock):
    data = start(api)
    url = f"/api/v1/interviews/{data['id']}/answer/"
    row = InterviewItem.objects.get(pk=data["current"]["id"])
    missing = api.post(url, right_payload(row), format="json")
    assert missing.status_code == 400 and "item" in missing.json()["errors"]
    assert api.post(url, right_answer(row), format="json").status_code == 200
    retried = api.post(url, right_answer(row), format="json")  # the response was lost; the client sends it again
    assert retried.status_code == 409
    # It says what became of the answer sent again, in the page's words.
    assert retried.json()["errors"]["item"] == [
        "That question was already answered, so this second answer was not recorded; here is the next one."
    ]
    # ... and, as the page does, gives the next one: the question now current, as the answer's 200 would.
    following = InterviewItem.objects.filter(interview_id=data["id"], answered_at=None).order_by("position").first()
    now = api.get(f"/api/v1/interviews/{data['id']}/").json()["current"]
    assert retried.json()["current"] == now and now["id"] == following.pk
    assert InterviewItem.objects.filter(interview_id=data["id"], answered_at__isnull=False).count() == 1


# --- Merging into the account ------------------------------------------------------------------


@pytest.mark.parametrize("how", ["login", "signup"])
def test_a_visitors_interviews_come_with_them_into_the_account(client, scenario, learner_user, how):
    client.post(reverse("interview-start"), {"scenario": "case"})
    interview = Interview.objects.get()
    row = interview.items.order_by("position").first()
    client.post(reverse("interview-answer", args=[interview.pk]), {"item": row.pk, **right_answer(row)})
    if how == "login":
        client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery"})
        user = learner_user
    else:
        client.post(reverse("signup"), {"username": "bea", "password1": "a-long-pass-phrase-7",
                                        "password2": "a-long-pass-phrase-7"})  # fmt: skip
        user = User.objects.get(username="bea")
    interview.refresh_from_db()
    assert interview.learner == Learner.objects.get(user=user)
    page = client.get(reverse("interviews")).content.decode()
    assert "Resume" in page and interview.get_absolute_url() in page
    assert client.get(interview.get_absolute_url()).status_code == 200
    api = APIClient()
    api.force_authenticate(user)
    listed = api.get("/api/v1/interviews/").json()
    assert [row["id"] for row in listed] == [interview.pk]


# --- Query counts -----------------------------------------------------------------------------


def finished_interviews(api, count, clock):
    for _ in range(count):
        data = start(api)
        answer_all(api, data["id"], wrong_answer, clock, step_seconds=2)
        api.post(f"/api/v1/interviews/{data['id']}/finish/")


def test_the_history_page_reads_a_constant_number_of_queries(
    client, scenario, stopped_clock, django_assert_num_queries
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    api = APIClient()
    counts = []
    for more in (1, 3):  # one attempt, then four
        finished_interviews(api, more, stopped_clock)
        client.cookies = api.cookies
        client.get(reverse("interviews"))  # the content cache warm, as it is once any page has read it
        with CaptureQueriesContext(connection) as queries:
            assert client.get(reverse("interviews")).status_code == 200
        counts.append(len(queries))
    assert Interview.objects.count() == 4
    assert counts[0] == counts[1]
    with CaptureQueriesContext(connection) as queries:
        client.get(Interview.objects.first().get_absolute_url())
    with django_assert_num_queries(len(queries)):
        client.get(Interview.objects.last().get_absolute_url())


def trend_chart(html: str, key: str) -> str:
    """Return the SVG of the history page's trend chart of dimension ``key``."""
    return re.search(rf'<svg[^>]*aria-labelledby="chart-trend-{key}-title[^>]*>.*?</svg>', html).group(0)


def test_one_attempt_draws_its_point_on_an_axis_of_one_attempt_and_says_to_take_another(
    client, scenario, stopped_clock
):
    api = APIClient()
    finished_interviews(api, 1, stopped_clock)
    client.cookies = api.cookies
    html = client.get(reverse("interviews")).content.decode()
    assert "One attempt so far: take another to see a trend." in html
    chart = trend_chart(html, "requirements")
    ticks = re.findall(r'class="chart-tick" text-anchor="middle">([^<]*)</text>', chart)
    assert ticks == ["1"]  # no attempt 2 on the axis
    # Attempt 1 in the middle of the x axis: its grid line and its point halfway between the axis's ends.
    axis = r'<line x1="([\d.]+)" y1="([\d.]+)" x2="([\d.]+)" y2="\2" class="chart-axis"/>'  # the horizontal one
    left, _, right = map(float, re.search(axis, chart).groups())
    grid = [
        float(x)
        for x, x2 in re.findall(
            r'<line x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)" y2="[\d.]+" class="chart-grid"/>', chart
        )
        if x == x2
    ]
    point = float(
        re.search(r'<circle cx="([\d.]+)" cy="[\d.]+" r="4" class="chart-point"><title>Attempt 1: 0%</title>', chart)[1]
    )
    assert grid == [pytest.approx((left + right) / 2, abs=0.1)] and point == pytest.approx((left + right) / 2, abs=0.1)
    assert 'class="chart-point-label" text-anchor="start">0%</text>' in chart  # the point says its value
    assert "Requirements: 0% in your one attempt so far." in chart
    finished_interviews(api, 1, stopped_clock)
    html = client.get(reverse("interviews")).content.decode()
    assert "One attempt so far" not in html
    chart = trend_chart(html, "requirements")
    assert re.findall(r'class="chart-tick" text-anchor="middle">([^<]*)</text>', chart) == ["1", "2"]
    assert 'class="chart-line"' in chart and "chart-point-label" not in chart
    assert "Requirements over 2 attempts: latest 0%, best 0%." in chart


def test_staff_can_audit_an_interviews_draw_and_answers_in_the_admin(client, api, scenario, stopped_clock, admin_user):
    data = start(api)
    row = InterviewItem.objects.filter(interview_id=data["id"]).order_by("position").first()
    api.post(f"/api/v1/interviews/{data['id']}/answer/", right_answer(row), format="json")
    client.force_login(admin_user)
    page = client.get(reverse("admin:lessons_interview_change", args=[data["id"]]))
    assert page.status_code == 200
    html = page.content.decode()
    best = Choice.objects.get(deep_dive=row.deep_dive, verdict="best")
    assert "requirements" in html and "deep_dives" in html and f'"choice": {best.pk}' in unescape(html)
    assert client.get(reverse("admin:lessons_interview_add")).status_code == 403


def test_loading_content_will_not_silently_drop_an_item_drawn_in_an_interview(content_copy, db):
    import yaml
    from django.core.management import CommandError, call_command

    call_command("load_content", dir=content_copy, verbosity=0)
    dd = DeepDive.objects.get(key="kv-heads-sanity")
    interview = Interview.objects.create(learner=Learner.objects.create(), seed=1, phases=[], started_at=START,
                                         deadline=START + timedelta(minutes=45))  # fmt: skip
    InterviewItem.objects.create(interview=interview, position=1, phase="deep_dives", kind="deep_dive", deep_dive=dd)
    path = content_copy / "lessons" / "how-the-lab-works.yaml"
    data = yaml.safe_load(path.read_text())
    items = data["sections"][0]["items"]
    items[:] = [i for i in items if i.get("deep_dive", {}).get("key") != "kv-heads-sanity"]
    for choice in items[0]["deep_dive"]["choices"]:
        choice.pop("follow_up", None)
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    with pytest.raises(CommandError, match="kv-heads-sanity.*1 answer.*mock interviews included"):
        call_command("load_content", dir=content_copy, verbosity=0)
    assert interview.items.count() == 1


def test_no_question_gives_away_a_later_estimates_answer(rf, content):
    """An estimate's answer is never in an earlier question: a walkthrough's steps keep their order
    ("Each replica holds 123 requests (the previous step)" follows the step that asks for the 123),
    and the design so far is named by its parts, never by bodies that quote computed answers."""
    from django.utils.html import strip_tags

    from calculators.formatting import number

    for seed in range(12):
        request = rf.post("/")
        request.user, request.session = AnonymousUser(), SessionStore()
        views = interviews.load(interviews.start(request, "llm-serving-platform", seed=seed))
        for n, view in enumerate(views):
            if view.item.kind != "number":
                continue
            value = services.expected_for(view.item.step or view.item.challenge, view.item.drawn_inputs).value
            shown = {number(value), f"{round(value):,}"} if abs(value) >= 10 else set()
            for earlier in views[:n]:
                if earlier.lesson_url.split("#")[0] != view.lesson_url.split("#")[0]:
                    continue  # another lesson's drawn numbers may match by chance
                text = unescape(strip_tags(f"{earlier.heading_html} {earlier.body_html}"))
                words = set(re.findall(r"\d[\d,]*(?:\.\d+)?", text))
                assert not shown & words, (seed, view.item.position, earlier.item.position, shown & words)
        estimate = [v.item.step for v in views if v.item.phase == "estimate" and v.item.step_id]
        for a, b in zip(estimate, estimate[1:]):
            if a.walkthrough_id == b.walkthrough_id:
                assert a.order < b.order


def test_a_scorecard_survives_its_challenge_moving_to_another_calculator(api, scenario):
    """An interview keeps the numbers it drew; an author who later points the challenge at another calculator
    (other parameters) must not turn that interview's page into a 500."""
    data = start(api)
    answer_all(api, data["id"])
    api.post(f"/api/v1/interviews/{data['id']}/finish/")
    drawn = InterviewItem.objects.filter(interview_id=data["id"], challenge__isnull=False).exclude(drawn_inputs={})
    challenge = drawn.first().challenge
    challenge.calculator, challenge.output, challenge.unit = "replica", "requests_per_replica", "requests"
    challenge.inputs, challenge.ranges = {}, {"gpus": [2, 8, 2]}
    challenge.prompt = "With {gpus} GPUs, how many requests fit?"
    challenge.save()
    for _ in range(2):  # said on every view, not only the first (nothing is stored by a view)
        page = api.get(reverse("interview", args=[data["id"]]))
        assert page.status_code == 200
        assert "This question was changed after this interview asked it" in page.content.decode()
    assert api.get(f"/api/v1/interviews/{data['id']}/").status_code == 200
    assert set(InterviewItem.objects.get(pk=drawn.first().pk).drawn_inputs) == {"cache_gb"}  # what was asked


def test_an_interview_in_progress_asks_a_changed_challenge_with_numbers_that_fit_it(api, scenario):
    data = start(api)
    row = InterviewItem.objects.filter(interview_id=data["id"], challenge__isnull=False).exclude(drawn_inputs={})
    row = row.first()
    challenge = row.challenge
    challenge.calculator, challenge.output, challenge.unit = "replica", "requests_per_replica", "requests"
    challenge.inputs, challenge.ranges = {}, {"gpus": [2, 8, 2]}
    challenge.prompt = "With {gpus} GPUs, how many requests fit?"
    challenge.save()
    while (current := InterviewItem.objects.filter(interview_id=data["id"], answered_at=None).order_by("position")
           .first()) is not None and current.pk != row.pk:  # fmt: skip
        api.post(f"/api/v1/interviews/{data['id']}/answer/", right_answer(current), format="json")
    shown = api.get(f"/api/v1/interviews/{data['id']}/").json()["current"]
    gpus = int(re.search(r"With (\d+) GPUs", shown["prompt"]).group(1))
    answered = api.post(f"/api/v1/interviews/{data['id']}/answer/", {"item": row.pk, "value": "1"}, format="json")
    assert answered.status_code == 200  # graded on the numbers it showed (a 500 on the old ones before)
    assert 2 <= gpus <= 8
