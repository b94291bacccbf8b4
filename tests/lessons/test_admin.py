"""Authoring in the admin: instructors edit content, never users; validation with clear messages."""

import re
from html import unescape

import pytest
from django.test import Client
from django.urls import reverse
from django.utils.http import urlencode

from lessons.models import Challenge, Choice, DeepDive, Lesson, Walkthrough
from tests.lessons.factories import make_deep_dive, make_lesson


def choice_formset(dd, rows, points=10):
    data = {
        "section": dd.section_id, "key": dd.key, "order": dd.order, "topic": dd.topic_id, "prompt": dd.prompt,
        "context": "", "points": points,
        "choices-TOTAL_FORMS": len(rows), "choices-INITIAL_FORMS": 0, "choices-MIN_NUM_FORMS": 0,
        "choices-MAX_NUM_FORMS": 1000,
    }  # fmt: skip
    for i, row in enumerate(rows):
        for name, value in row.items():
            data[f"choices-{i}-{name}"] = value
    return data


def row(order, verdict, follow_up=""):
    return {"order": order, "text": f"Option {order}", "verdict": verdict, "feedback": "Because.",
            "follow_up": follow_up}  # fmt: skip


@pytest.fixture
def fresh_dive(db):
    lesson = make_lesson(deep_dives=0)
    section = lesson.sections.get()
    return DeepDive.objects.create(section=section, key="new", order=9, topic_id="batching", prompt="How do you batch?")


def test_instructor_edits_content_but_not_users_or_groups(instructor_client, db):
    lesson = make_lesson()
    assert instructor_client.get(reverse("admin:lessons_lesson_change", args=[lesson.pk])).status_code == 200
    assert instructor_client.get(reverse("admin:lessons_deepdive_add")).status_code == 200
    assert instructor_client.get(reverse("admin:auth_user_changelist")).status_code == 403
    assert instructor_client.get(reverse("admin:auth_group_changelist")).status_code == 403


def test_learner_cannot_reach_the_admin(client, learner_user):
    client.force_login(learner_user)
    response = client.get(reverse("admin:index"))
    assert response.status_code == 302
    assert "login" in response["Location"]


def test_deep_dive_needs_three_choices(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    response = instructor_client.post(url, choice_formset(fresh_dive, [row(1, "best"), row(2, "weak")]))
    assert (
        "at least three choices" in response.content.decode()
        or "Please submit at least 3 forms" in response.content.decode()
    )
    assert not Choice.objects.exists()


def test_deep_dive_needs_exactly_one_best(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best"), row(2, "best"), row(3, "weak")]
    response = instructor_client.post(url, choice_formset(fresh_dive, rows))
    assert "exactly one best choice; this one has 2" in response.content.decode()
    assert not Choice.objects.exists()


def test_choices_added_in_the_admin_get_keys_that_do_not_rank_them(instructor_client, fresh_dive):
    """A choice's button sends its key: saved in the rows' order, the best (often written first) had the lowest."""
    lowest_best = 0
    for n in range(8):
        dive = DeepDive.objects.create(section=fresh_dive.section, key=f"dd-{n}", order=20 + n, topic_id="batching",
                                       prompt="How do you batch?")  # fmt: skip
        rows = [row(1, "best"), row(2, "acceptable"), row(3, "weak"), row(4, "weak")]
        response = instructor_client.post(reverse("admin:lessons_deepdive_change", args=[dive.pk]),
                                          choice_formset(dive, rows))  # fmt: skip
        assert response.status_code == 302
        saved = list(Choice.objects.filter(deep_dive=dive).order_by("pk"))
        assert sorted(c.order for c in saved) == [1, 2, 3, 4]  # each keeps its place on the page
        lowest_best += saved[0].verdict == "best"
    assert lowest_best < 6, lowest_best  # by chance about 2 of 8; all 8 before


def test_valid_deep_dive_saves(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best"), row(2, "acceptable"), row(3, "weak")]
    response = instructor_client.post(url, choice_formset(fresh_dive, rows))
    assert response.status_code == 302
    assert Choice.objects.filter(deep_dive=fresh_dive).count() == 3


def test_a_prompt_over_the_longest_an_interviewer_asks_is_refused_beside_it(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best"), row(2, "acceptable"), row(3, "weak")]
    response = instructor_client.post(url, {**choice_formset(fresh_dive, rows), "prompt": "Why? " * 400})
    assert response.status_code == 200
    assert "Ensure this value has at most 1500 characters (it has 1999)." in unescape(response.content.decode())
    fresh_dive.refresh_from_db()
    assert fresh_dive.prompt == "How do you batch?"


def test_instructor_pins_the_choice_order(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    assert 'name="keep_choice_order"' in instructor_client.get(url).content.decode()
    rows = [row(1, "best"), row(2, "acceptable"), row(3, "weak")]
    response = instructor_client.post(url, {**choice_formset(fresh_dive, rows), "keep_choice_order": "on"})
    assert response.status_code == 302
    fresh_dive.refresh_from_db()
    assert fresh_dive.keep_choice_order


def test_follow_up_cannot_lead_back_to_its_own_deep_dive(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best", follow_up=fresh_dive.pk), row(2, "acceptable"), row(3, "weak")]
    response = instructor_client.post(url, choice_formset(fresh_dive, rows))
    assert "cannot lead back to its own deep dive" in response.content.decode()


def test_follow_up_loop_is_refused(instructor_client, fresh_dive):
    other = make_deep_dive(fresh_dive.section, key="other", order=20, follow_up=fresh_dive)
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best", follow_up=other.pk), row(2, "acceptable"), row(3, "weak")]
    response = instructor_client.post(url, choice_formset(fresh_dive, rows))
    assert "follow-ups lead back to it in a loop" in response.content.decode()


def test_a_refused_follow_up_is_marked_beside_the_choice_at_fault(instructor_client, fresh_dive):
    """The loop (and another lesson's deep dive) was told only above the choices, never which choice: now the
    follow-up field of the choice at fault says why, and the others say nothing."""
    other = make_deep_dive(fresh_dive.section, key="other", order=20, follow_up=fresh_dive)
    elsewhere = make_deep_dive(make_lesson(slug="elsewhere", deep_dives=0).sections.get(), key="far", order=1)
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])

    def errors_by_choice(rows) -> list[str]:
        """Return the text of each choice's Follow up errors ("" for none)."""
        html = instructor_client.post(url, choice_formset(fresh_dive, rows)).content.decode()
        found = []
        for i in range(len(rows)):
            errors = re.search(rf'<ul class="errorlist" id="id_choices-{i}-follow_up_error">(.*?)</ul>', html)
            found.append(" ".join(re.findall(r"<li>(.*?)</li>", errors[1])) if errors else "")
        return found

    marked = errors_by_choice([row(1, "best"), row(2, "acceptable", follow_up=other.pk), row(3, "weak")])
    assert marked[0] == "" and marked[2] == ""
    assert "leads back to “new”, the deep dive it follows" in marked[1]
    marked = errors_by_choice([row(1, "best", follow_up=elsewhere.pk), row(2, "acceptable"), row(3, "weak")])
    assert "in another lesson" in marked[0] and marked[1] == marked[2] == ""
    marked = errors_by_choice([row(1, "best"), row(2, "acceptable"), row(3, "weak", follow_up=fresh_dive.pk)])
    assert "leads back to “new”" in marked[2] and marked[0] == marked[1] == ""
    assert not Choice.objects.filter(deep_dive=fresh_dive).exists()


def test_an_item_at_a_taken_position_is_refused_beside_its_order_naming_what_is_there(instructor_client, fresh_dive):
    """A deep dive saved at a walkthrough's position sat beside it with no order between them; one at another
    deep dive's position was told "…with this Section and Order already exists." above the form."""
    walkthrough = fresh_dive.section.walkthroughs.get(key="build")
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best"), row(2, "acceptable"), row(3, "weak")]
    for taken, named in [(walkthrough.order, f"the walkthrough “{walkthrough.title}”")]:
        data = {**choice_formset(fresh_dive, rows), "order": taken}
        html = instructor_client.post(url, data).content.decode()
        errors = re.search(r'<ul class="errorlist" id="id_order_error">(.*?)</ul>', html)
        assert errors and f"Position {taken} of this section is taken by {named}" in errors[1]
    other = make_deep_dive(fresh_dive.section, key="other", order=30)
    html = instructor_client.post(url, {**choice_formset(fresh_dive, rows), "order": 30}).content.decode()
    errors = re.search(r'<ul class="errorlist" id="id_order_error">(.*?)</ul>', html)
    assert errors and "taken by the deep dive “other”" in errors[1]
    assert "already exists" not in html
    fresh_dive.refresh_from_db()
    assert fresh_dive.order == 9 and other.order == 30
    assert instructor_client.post(url, {**choice_formset(fresh_dive, rows), "order": 31}).status_code == 302


def test_a_walkthroughs_steps_fold_the_part_its_kind_does_not_use(instructor_client, db):
    """An envelope's steps showed the diagram's Components and Connections rows, and a build-up's the graded
    number's, open among the fields the author fills in: the unused part is folded (a closed <details>)."""
    lesson = make_lesson()
    folded = r'<fieldset class="module aligned collapse"[^>]*>\s*<details><summary>\s*<h4 [^>]*>{}'
    for key, unused, used in [
        ("size", "Diagram (build-up", "A graded number (envelope"),
        ("build", "A graded number (envelope", "Diagram (build-up"),
    ]:
        walkthrough = lesson.sections.get().walkthroughs.get(key=key)
        html = instructor_client.get(
            reverse("admin:lessons_walkthrough_change", args=[walkthrough.pk])
        ).content.decode()
        assert re.search(folded.format(re.escape(unused)), html), (walkthrough.kind, unused)
        assert not re.search(folded.format(re.escape(used)), html), (walkthrough.kind, used)
        assert used in html


def test_numeric_step_needs_unit_and_tolerance(instructor_client, db):
    lesson = make_lesson()
    wt = lesson.sections.get().walkthroughs.get(key="size")
    steps = list(wt.steps.all())
    data = {
        "section": wt.section_id, "key": wt.key, "order": wt.order, "kind": wt.kind, "title": wt.title, "intro": "",
        "topic": wt.topic_id or "", "steps-TOTAL_FORMS": 2, "steps-INITIAL_FORMS": 2, "steps-MIN_NUM_FORMS": 0,
        "steps-MAX_NUM_FORMS": 1000,
    }  # fmt: skip
    for i, step in enumerate(steps):
        data.update({
            f"steps-{i}-id": step.pk, f"steps-{i}-walkthrough": wt.pk, f"steps-{i}-order": step.order,
            f"steps-{i}-title": step.title, f"steps-{i}-body": "", f"steps-{i}-components": "[]",
            f"steps-{i}-connections": "[]", f"steps-{i}-calculator": step.calculator, f"steps-{i}-inputs": "{}",
            f"steps-{i}-output": step.output, f"steps-{i}-scale": step.scale, f"steps-{i}-unit": step.unit,
            f"steps-{i}-tolerance": step.tolerance, f"steps-{i}-tolerance_kind": "relative",
            f"steps-{i}-partial_band": "", f"steps-{i}-points": 10, f"steps-{i}-slips": "[]", f"steps-{i}-hints": "[]",
            f"steps-{i}-explanation": "",
        })  # fmt: skip
    data["steps-0-unit"] = ""
    data["steps-0-tolerance"] = ""
    response = instructor_client.post(reverse("admin:lessons_walkthrough_change", args=[wt.pk]), data)
    html = response.content.decode()
    assert "Choose the unit the learner answers in." in html
    assert "Give a tolerance above zero: 0.01 means answers within 1% are right." in html
    assert "missing field" not in html and "ask (a numeric question)" not in html


def test_bad_calc_reference_in_admin_markdown_is_refused_with_reason(instructor_client, db):
    lesson = make_lesson()
    section = lesson.sections.get()
    data = {"lesson": lesson.pk, "key": section.key, "layer": 2, "order": 1, "title": "Core", "minutes": 3,
            "body": "{{calc nope.x | int}}"}  # fmt: skip
    response = instructor_client.post(reverse("admin:lessons_section_change", args=[section.pk]), data)
    assert "unknown calculator &#x27;nope&#x27;" in response.content.decode()
    section.refresh_from_db()
    assert section.body == "Read me."


def test_html_that_would_be_removed_is_refused_beside_its_field_and_nothing_is_lost(instructor_client, db):
    """A <script> in a section's Markdown used to save with a success message and vanish on the page: the
    instructor is told, beside the field, and the saved text stays as it was."""
    lesson = make_lesson()
    section = lesson.sections.get()
    data = {"lesson": lesson.pk, "key": section.key, "layer": 2, "order": 1, "title": "Core", "minutes": 3,
            "body": "Read me. <script>alert('hi')</script>"}  # fmt: skip
    response = instructor_client.post(reverse("admin:lessons_section_change", args=[section.pk]), data)
    assert response.status_code == 200  # the form again, not a redirect
    html = response.content.decode()
    assert re.search(r'<ul class="errorlist" id="id_body_error"><li>&lt;script&gt; would be removed when shown', html)
    section.refresh_from_db()
    assert section.body == "Read me."
    data["body"] = "Read me. `<script>` is shown as code."  # in backticks it is text, and saves
    assert instructor_client.post(reverse("admin:lessons_section_change", args=[section.pk]), data).status_code == 302


def test_a_choices_markdown_is_checked_like_every_other_text(instructor_client, fresh_dive):
    """Choices (an inline of the deep dive) had no Markdown check: a broken {{calc}} or an onerror handler saved."""
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best"), row(2, "acceptable"), row(3, "weak")]
    rows[1]["feedback"] = "Costs {{calc nope.x | int}}."
    rows[2]["feedback"] = 'See <img src="x" onerror="alert(1)">'
    html = instructor_client.post(url, choice_formset(fresh_dive, rows)).content.decode()
    assert "unknown calculator &#x27;nope&#x27;" in html
    assert "&lt;img&gt;, onerror= would be removed when shown" in html
    assert not Choice.objects.filter(deep_dive=fresh_dive).exists()


def test_view_on_site_links_to_the_lesson(instructor_client, db):
    lesson = make_lesson()
    html = instructor_client.get(reverse("admin:lessons_lesson_change", args=[lesson.pk])).content.decode()
    assert "View on site" in html
    assert Lesson.objects.get().get_absolute_url() == "/lessons/sample/"


def walkthrough_post(wt, steps):
    data = {
        "section": wt.section_id, "key": wt.key, "order": wt.order, "kind": wt.kind, "title": wt.title, "intro": "",
        "topic": wt.topic_id or "", "steps-TOTAL_FORMS": len(steps), "steps-INITIAL_FORMS": 0, "steps-MIN_NUM_FORMS": 0,
        "steps-MAX_NUM_FORMS": 1000,
    }  # fmt: skip
    defaults = {"body": "", "components": "[]", "connections": "[]", "calculator": "", "inputs": "{}", "output": "",
                "scale": 1, "unit": "", "tolerance": "", "tolerance_kind": "relative", "partial_band": "", "points": 10,
                "slips": "[]", "hints": "[]", "explanation": ""}  # fmt: skip
    for i, step in enumerate(steps):
        for name, value in {**defaults, **step}.items():
            data[f"steps-{i}-{name}"] = value
        data[f"steps-{i}-walkthrough"] = wt.pk
    return data


@pytest.mark.parametrize(
    ("steps", "message"),
    [
        ([{"order": 1, "title": "A", "components": '[{"key": "fe", "label": "Front end"}]'}], "Component 1: col is missing from the component."),
        (
            [{"order": 1, "title": "A", "components": '[{"key": "fe", "label": "FE", "col": 0, "row": 0}]',
              "connections": '[{"from": "fe", "to": "nowhere"}]'}],
            "is not a component added so far",
        ),
        ([], "a walkthrough needs at least one step"),
    ],
)  # fmt: skip
def test_build_up_steps_are_validated_like_content_files(instructor_client, db, steps, message):
    lesson = make_lesson()
    wt = lesson.sections.get().walkthroughs.get(key="build")
    wt.steps.all().delete()
    response = instructor_client.post(
        reverse("admin:lessons_walkthrough_change", args=[wt.pk]), walkthrough_post(wt, steps)
    )
    assert response.status_code == 200
    assert message in response.content.decode()


def test_malformed_slips_are_refused(instructor_client, db):
    lesson = make_lesson()
    wt = lesson.sections.get().walkthroughs.get(key="size")
    wt.steps.all().delete()
    step = {"order": 1, "title": "N", "calculator": "replica", "output": "requests_per_replica", "unit": "requests",
            "tolerance": "0.02", "slips": '[{"feedback": "x"}]'}  # fmt: skip
    response = instructor_client.post(
        reverse("admin:lessons_walkthrough_change", args=[wt.pk]), walkthrough_post(wt, [step])
    )
    assert "Slip 1: needs exactly one of a factor or changed inputs." in response.content.decode()


def challenge_post(challenge, **changes):
    data = {"section": challenge.section_id, "key": challenge.key, "order": challenge.order, "topic": challenge.topic_id,
            "title": challenge.title, "prompt": challenge.prompt, "calculator": challenge.calculator, "inputs": "{}",
            "ranges": '{"cache_gb": [4, 40, 4]}', "output": challenge.output, "scale": 1, "unit": challenge.unit,
            "tolerance": challenge.tolerance, "tolerance_kind": "relative", "partial_band": "", "points": 10,
            "slips": "[]", "hints": "[]", "explanation": ""}  # fmt: skip
    return {**data, **changes}


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        ({"ranges": '{"cache_gb": [1, 5, "x"]}'}, "ranges", "must be [min, max, step]"),
        ({"ranges": '{"cache_gb": [0, 40, 4]}'}, "ranges", "refuses the inputs"),
        (
            {"output": "nothing"},
            "output",
            "Output 'nothing' is not one of the outputs of calculator 'kv-cache' (bytes_per_token,",
        ),
        ({"prompt": "A cache of {cards[x]} GB"}, "prompt", "is not a parameter"),
        ({"prompt": "A cache of {cache_gb:>3000000} GB"}, "prompt", "{cache_gb:>3000000} has the format '>3000000'"),
        ({"prompt": "A cache of {cache_gb:{cache_gb}} GB"}, "prompt", "has the format '{cache_gb}'"),
        ({"prompt": "A cache of {tokens} GB"}, "prompt", "'tokens' is not a parameter in this challenge's inputs"),
        ({"key": "dd-1"}, "key", "already uses the key"),
        ({"tolerance": "0"}, "tolerance", "Tolerance must be above zero: 0.01 means within 1% of the answer."),
        (
            {"partial_band": "0.5"},
            "partial_band",
            "Half-credit factor must be above 1, such as 2 (half credit between half and twice",
        ),
    ],
)
def test_challenge_admin_refuses_bad_ranges_prompts_and_keys_beside_the_field(
    instructor_client, db, changes, field, message
):
    from lessons.models import Challenge

    make_lesson()
    challenge = Challenge.objects.get()
    response = instructor_client.post(
        reverse("admin:lessons_challenge_change", args=[challenge.pk]), challenge_post(challenge, **changes)
    )
    assert response.status_code == 200
    assert any(message in error for error in response.context["adminform"].form.errors[field])
    challenge.refresh_from_db()
    assert challenge.prompt == "A cache of {cache_gb} GB holds how many 1,200-token copies?"


@pytest.mark.parametrize(
    ("ranges", "message"),
    [
        ('{"cache_gb": [4, 40, 5e-324]}', "more than 10,000 values"),
        ('{"tokens": [1000, 2000, 0.5]}', "takes whole numbers"),
    ],
)
def test_ranges_that_would_break_drawing_are_refused(instructor_client, db, ranges, message):
    from lessons.models import Challenge

    make_lesson()
    challenge = Challenge.objects.get()
    response = instructor_client.post(
        reverse("admin:lessons_challenge_change", args=[challenge.pk]), challenge_post(challenge, ranges=ranges)
    )
    assert message in response.content.decode()


def test_a_refused_range_is_told_once_not_again_as_a_prompt_naming_no_parameter(instructor_client, db):
    """A range of four values was refused ("must be [min, max, step]"), and the prompt's {tokens} was then told
    it names no parameter, though the author had named it in the ranges (instructor check)."""
    from lessons.models import Challenge

    make_lesson()
    challenge = Challenge.objects.get()
    data = challenge_post(challenge, ranges='{"tokens": [1000, 2000, 100, 5]}', prompt="Room for {tokens} tokens?")
    response = instructor_client.post(reverse("admin:lessons_challenge_change", args=[challenge.pk]), data)
    errors = response.context["adminform"].form.errors
    assert errors["ranges"] == ["Ranges: 'tokens' must be [min, max, step]."]
    assert "prompt" not in errors
    challenge.refresh_from_db()
    assert challenge.ranges == {"cache_gb": [4, 40, 4]}  # nothing saved
    data["prompt"] = "Room for {tokenz} tokens?"  # a name no input or range has is still told
    errors = instructor_client.post(reverse("admin:lessons_challenge_change", args=[challenge.pk]), data)
    assert "'tokenz' is not a parameter" in errors.context["adminform"].form.errors["prompt"][0]


def test_give_away_warnings_show_while_editing_a_deep_dive_and_its_lesson(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best"), row(2, "acceptable"), row(3, "weak")]
    rows[0]["text"] = "Batch continuously, admitting new requests at every decode step so the GPU never idles."
    assert instructor_client.post(url, {**choice_formset(fresh_dive, rows), "_continue": "1"}).status_code == 302
    html = instructor_client.get(url).content.decode()
    assert "choice 1 is 87 characters, more than 2 x the median of the other choices (8)" in html
    assert "(rule: long choice)" in html
    lesson_html = instructor_client.get(
        reverse("admin:lessons_lesson_change", args=[fresh_dive.section.lesson_id])
    ).content.decode()
    assert "(rule: best is longest)" in lesson_html
    assert "with 1 deep dive, none may be, or length alone finds the answer" in lesson_html  # not "at most 0"
    rows[0]["text"] = "Paged"  # shorter than the others: the warnings go
    data = choice_formset(fresh_dive, rows)
    for i, pk in enumerate(fresh_dive.choices.order_by("order").values_list("pk", flat=True)):
        data |= {f"choices-{i}-id": pk, f"choices-{i}-deep_dive": fresh_dive.pk}
    assert instructor_client.post(url, {**data, "choices-INITIAL_FORMS": 3}).status_code == 302
    assert "None: no choice gives the answer away" in instructor_client.get(url).content.decode()


def test_one_save_reports_every_problem_of_the_choices(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "weak"), row(2, "acceptable")]
    html = instructor_client.post(url, choice_formset(fresh_dive, rows)).content.decode()
    assert "A deep dive needs at least three choices." in html
    assert "exactly one best choice; this one has 0" in html
    assert not Choice.objects.exists()


def test_the_empty_rows_shown_after_the_saved_ones_are_numbered_in_order(instructor_client, fresh_dive):
    page = instructor_client.get(reverse("admin:lessons_deepdive_add")).content.decode()
    for n in range(3):  # a new deep dive shows its three choices to fill: 1, 2, 3, not 0, 0, 0
        assert f'name="choices-{n}-order" value="{n + 1}"' in page


def test_two_best_choices_are_told_in_the_same_save_as_an_empty_feedback(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    rows = [row(1, "best"), row(2, "best") | {"feedback": ""}, row(3, "weak")]
    html = instructor_client.post(url, choice_formset(fresh_dive, rows)).content.decode()
    assert "This field is required." in html
    assert "A deep dive needs exactly one best choice; this one has 2 (choices 1 and 2)." in html
    assert not Choice.objects.exists()


def test_a_numeric_question_is_set_up_by_choosing_a_calculator_then_its_output(instructor_client, db):
    challenge = make_lesson().sections.get().challenges.first()
    page = instructor_client.get(reverse("admin:lessons_challenge_change", args=[challenge.pk])).content.decode()
    assert '<option value="kv-cache" selected>' in page and '<option value="routing">' in page and "hx-get=" in page
    assert "Expected answer" in page
    url = reverse("admin:lessons_calculator_outputs")
    select = instructor_client.get(url, {"steps-0-calculator": "kv-cache"}).content.decode()
    assert select.startswith('<select name="steps-0-output" id="id_steps-0-output" hx-get=')
    assert 'value="copy_bytes"' in select and 'value="round_robin_share"' not in select
    every = instructor_client.get(url, {"calculator": ""}).content.decode()
    assert '<optgroup label="Routing' in every


def test_choosing_a_calculator_shows_its_parameter_tables_at_once(instructor_client, db):
    page = instructor_client.get(reverse("admin:lessons_challenge_add")).content.decode()
    assert 'aria-label="Calculator parameters: drawn ranges"><textarea' in page  # no calculator yet: JSON
    assert "tables=inputs%2Cranges" in page
    url = reverse("admin:lessons_calculator_outputs")
    swapped = instructor_client.get(url, {"tables": "inputs,ranges", "calculator": "kv-cache"}).content.decode()
    assert 'aria-label="Calculator parameters: drawn ranges" hx-swap-oob="true"><table' in swapped
    assert 'name="ranges__cache_gb__min"' in swapped and 'name="inputs__cache_gb"' in swapped
    assert '<input type="text" name="unit" class="answer-unit" id="id_unit" hx-swap-oob="true">' in swapped
    step = instructor_client.get(url, {"tables": "inputs", "steps-2-calculator": "replica"}).content.decode()
    assert 'id="id_steps-2-inputs-params"' in step and "ranges" not in step


def test_switching_calculators_keeps_what_was_typed_for_a_parameter_both_have(instructor_client, db):
    """kv-cache and decode-step both take the tensor-parallel degree ``tp``: typed once, it survives the switch."""
    url = reverse("admin:lessons_calculator_outputs")
    typed = {"tables": "inputs,ranges", "calculator": "decode-step", "output-of": "kv-cache", "inputs__tp": "4",
             "inputs__tokens": "2000", "ranges__tp__min": "2", "ranges__tp__max": "8", "ranges__tp__step": "2"}  # fmt: skip
    html = instructor_client.get(url, typed).content.decode()
    assert 'name="inputs__tp" id="id_inputs__tp" value="4"' in html
    assert 'name="ranges__tp__max" id="id_ranges__tp__max" value="8"' in html
    assert "inputs__tokens" not in html  # decode-step has no such parameter
    page = instructor_client.get(reverse("admin:lessons_challenge_add")).content.decode()
    assert 'hx-trigger="change delay:400ms"' in page  # arrowing through the select asks once, at the end


def test_the_expected_answer_says_which_numbers_each_learner_draws(instructor_client, db):
    url = reverse("admin:lessons_challenge_expected")
    fields = {"calculator": "kv-cache", "output": "copies_per_cache", "unit": "copies"}
    assert instructor_client.get(url, fields).content.decode().endswith("(empty parameters take their defaults)")
    drawn = instructor_client.get(url, {**fields, "ranges__cache_gb__min": "4", "ranges__cache_gb__max": "40",
                                        "ranges__cache_gb__step": "4"}).content.decode()  # fmt: skip
    assert drawn.endswith("; each learner draws their own cache_gb, so their answers differ")
    no_output = instructor_client.get(url, {"calculator": "kv-cache"}).content.decode()
    assert no_output == "Choose an output, then the unit to ask for."
    units = instructor_client.get(
        reverse("admin:lessons_answer_units"), {"calculator": "kv-cache", "output": "copy_bytes"}
    )
    assert units.headers["HX-Trigger-After-Settle"] == "calculator-changed"  # the expected answer asks again


def test_choosing_an_output_preselects_its_own_unit_not_the_first_offered(instructor_client, db):
    """Picking queue-wait's wait_ms (ms) preselected µs, the first unit offered: an author who did not look
    asked learners for microseconds ("280,000 µs" in the preview). The output's own unit comes selected."""
    units = instructor_client.get(
        reverse("admin:lessons_answer_units"), {"calculator": "queue-wait", "output": "wait_ms"}
    )
    html = units.content.decode()
    assert '<option value="ms" selected>ms</option>' in html and '<option value="µs">µs</option>' in html
    kept = instructor_client.get(
        reverse("admin:lessons_answer_units"), {"calculator": "queue-wait", "output": "wait_ms", "unit": "s"}
    )
    assert '<option value="s" selected>s</option>' in kept.content.decode()  # a unit the author chose stays


def test_choosing_the_same_calculator_again_keeps_the_output_unit_and_tables(instructor_client, db):
    """Arrowing through the calculator select back to the one the output belongs to loses nothing."""
    lesson = make_lesson(slug="pick")
    challenge = Challenge.objects.filter(section__lesson=lesson, key="copies").get()
    page = instructor_client.get(reverse("admin:lessons_challenge_change", args=[challenge.pk])).content.decode()
    # The output select says which calculator its outputs belong to; the calculator select sends it.
    assert '<input type="hidden" name="output-of" value="kv-cache" id="id_output-of">' in page
    assert 'hx-include="closest fieldset"' in page
    url = reverse("admin:lessons_calculator_outputs")
    fields = {"tables": "inputs,ranges", "calculator": "kv-cache", "output-of": "kv-cache",
              "output": "copies_per_cache", "unit": "copies"}  # fmt: skip
    same = instructor_client.get(url, fields)
    assert same.status_code == 204 and same.content == b""  # nothing is swapped: output, unit, tables stay
    other = instructor_client.get(url, {**fields, "calculator": "replica"})
    html = other.content.decode()
    assert other.status_code == 200 and 'value="requests_per_replica"' in html and '<option value="" selected>' in html
    assert '<input type="text" name="unit" class="answer-unit" id="id_unit" hx-swap-oob="true">' in html
    assert '<input type="hidden" name="output-of" value="replica" id="id_output-of" hx-swap-oob="true">' in html
    # The expected answer is asked again once the new selects are in (it was read while the old ones were).
    assert other["HX-Trigger-After-Settle"] == "calculator-changed"
    assert "calculator-changed from:closest fieldset" in page
    back = instructor_client.get(url, {**fields, "output-of": "replica"})  # then back to the first: reset again
    assert back.status_code == 200 and 'value="copies_per_cache"' in back.content.decode()


def test_the_output_select_is_for_staff_only(client, db):
    response = client.get(reverse("admin:lessons_calculator_outputs"), {"calculator": "kv-cache"})
    assert response.status_code == 302 and "login" in response["Location"]


@pytest.mark.parametrize("model", ["deepdive", "walkthrough", "challenge"])
def test_view_on_site_opens_a_draft_item_where_an_instructor_can_try_it_as_a_learner(instructor_client, model):
    lesson = make_lesson(slug="draft", published=False)
    item = (
        {"deepdive": DeepDive, "walkthrough": Walkthrough, "challenge": Challenge}[model]
        .objects.filter(section__lesson=lesson)
        .first()
    )
    page = instructor_client.get(reverse(f"admin:lessons_{model}_change", args=[item.pk])).content.decode()
    assert "View on site" in page
    shortcut = re.search(r'href="(/admin/r/[^"]+)"[^>]*>View on site', page).group(1)
    target = instructor_client.get(shortcut)["Location"]
    assert target.endswith(
        f"/lessons/draft/?layer={item.section.layer}&section=core#{item.anchor}"
    )  # its section's page
    preview = instructor_client.get(target).content.decode()
    assert f'id="{item.anchor}"' in preview and "draft (visible to staff only)" in preview
    if model == "deepdive":  # the instructor answers as a learner would, and sees the feedback
        best = item.choices.get(verdict="best")
        answered = instructor_client.post(reverse("answer-deep-dive", args=["draft", item.pk]), {"choice": best.pk})
        assert answered.status_code == 303
        assert "Holds up." in instructor_client.get(target).content.decode()
    assert Client().get(target).status_code == 404  # learners never see the draft


def test_the_lesson_form_shows_its_outline_linking_into_each_item_and_back(instructor_client, db):
    lesson = make_lesson(deep_dives=2)
    page = instructor_client.get(reverse("admin:lessons_lesson_change", args=[lesson.pk])).content.decode()
    outline = page[page.index('<ol class="lesson-outline" id="outline">') :]
    dd = DeepDive.objects.get(key="dd-2")
    assert f'Deep dive <a href="{reverse("admin:lessons_deepdive_change", args=[dd.pk])}">dd-2</a>' in outline
    assert outline.index(">dd-1<") < outline.index(">dd-2<") < outline.index(">build<") < outline.index(">copies<")
    section = lesson.sections.get()
    assert ">Add an open question</a>" in outline and "Add a open" not in outline
    assert "↑ and ↓ move an item at once and reload this page: save the lesson's other edits first." in outline
    add = re.search(r'href="([^"]+)">Add a deep dive', outline).group(1).replace("&amp;", "&")
    assert add == f"{reverse('admin:lessons_deepdive_add')}?section={section.pk}&order=103"
    form = instructor_client.get(add).content.decode()
    assert f'<option value="{section.pk}" selected>' in form
    item_page = instructor_client.get(reverse("admin:lessons_deepdive_change", args=[dd.pk])).content.decode()
    assert f'href="{reverse("admin:lessons_lesson_change", args=[lesson.pk])}#outline">Back to the outline' in item_page


def test_a_challenge_sets_its_parameters_in_a_table_generated_from_the_calculator(instructor_client, db):
    challenge = make_lesson().sections.get().challenges.first()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    page = instructor_client.get(url).content.decode()
    assert '<table class="parameter-table">' in page
    # A phone scrolls the wide table inside its own labelled region; the help speaks of the table, not JSON.
    assert 'class="parameter-field" role="region" tabindex="0" aria-label="Calculator parameters: values"' in page
    assert "leave its row empty to keep it fixed" in page and '{"cards": [8, 64, 8]}' not in page
    assert "Prefix tokens <code>tokens</code></th><td>tokens</td><td>1,200</td><td>1 to 10,000,000</td>" in page
    assert "Layers <code>layers</code></th><td>layers</td>" in page  # an author reads every unit in its column
    assert 'name="ranges__cache_gb__min" id="id_ranges__cache_gb__min" value="4"' in page
    # The table's fields stand in for the JSON "inputs" and "ranges" of challenge_post.
    data = challenge_post(
        challenge, prompt="A cache of {cache_gb} GB and {tokens} tokens: how many copies?", inputs__tokens="2400",
        ranges__cache_gb__min="8", ranges__cache_gb__max="16", ranges__cache_gb__step="8",
    )  # fmt: skip
    assert instructor_client.post(url, data).status_code == 302
    challenge.refresh_from_db()
    assert (challenge.inputs, challenge.ranges) == ({"tokens": 2400}, {"cache_gb": [8, 16, 8]})
    refused = instructor_client.post(url, {**data, "inputs__tokens": "lots"}).content.decode()
    assert "refuses the inputs: tokens: “lots” is not a number." in refused


def lesson_form_with_section_body(lesson, section, body: str) -> dict:
    """The lesson's change form as posted, its one section's body set to ``body``."""
    return {
        "track": lesson.track_id, "slug": lesson.slug, "title": lesson.title, "kind": lesson.kind,
        "summary": lesson.summary, "order": lesson.order, "published": "on",
        "sections-TOTAL_FORMS": 1, "sections-INITIAL_FORMS": 1, "sections-MIN_NUM_FORMS": 0,
        "sections-MAX_NUM_FORMS": 1000, "sections-0-id": section.pk, "sections-0-lesson": lesson.pk,
        "sections-0-order": section.order, "sections-0-key": section.key, "sections-0-layer": section.layer,
        "sections-0-minutes": section.minutes, "sections-0-title": section.title, "sections-0-body": body,
    }  # fmt: skip


def test_a_section_s_body_is_edited_on_its_lesson_s_page(instructor_client, client, db):
    lesson = make_lesson(published=True)
    section = lesson.sections.get()
    change = reverse("admin:lessons_lesson_change", args=[lesson.pk])
    page = instructor_client.get(change).content.decode()
    assert 'name="sections-0-body"' in page
    data = lesson_form_with_section_body(lesson, section, "Edited **from the lesson** page.")
    response = instructor_client.post(change, data)
    assert response.status_code == 302, response.content.decode()[:2000]
    learner_page = client.get(lesson.get_absolute_url()).content.decode()
    assert "Edited <strong>from the lesson</strong> page." in learner_page


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("Hi <script>alert(1)</script>", "&lt;script&gt; would be removed when shown"),
        ("{{calc nosuch.copy_bytes | MB}}", "unknown calculator &#x27;nosuch&#x27;"),
    ],
)
def test_a_section_body_edited_on_its_lesson_s_page_is_checked_as_on_its_own(
    instructor_client, client, db, body, message
):
    """On the lesson's page a section's Markdown saved unchecked, with a success message: the learner's page
    lost the prose with the script, or showed "[number unavailable ...]". It is refused there too now."""
    lesson = make_lesson(published=True)
    section = lesson.sections.get()
    change = reverse("admin:lessons_lesson_change", args=[lesson.pk])
    data = lesson_form_with_section_body(lesson, section, body)
    response = instructor_client.post(change, data)
    assert response.status_code == 200  # the form again, with the reason beside the body
    assert message in response.content.decode()
    section.refresh_from_db()
    assert section.body == "Read me."
    assert "Read me." in client.get(lesson.get_absolute_url()).content.decode()


def test_a_saved_section_stays_in_its_lesson(instructor_client, db):
    """Moved to another lesson in the admin, a section took its items along: one lesson drew a key twice and
    a follow-up crossed lessons, and the exported files no longer loaded."""
    a, b = make_lesson("a"), make_lesson("b")
    section = a.sections.get()
    url = reverse("admin:lessons_section_change", args=[section.pk])
    page = instructor_client.get(url).content.decode()
    assert re.search(r'<select name="lesson"[^>]* disabled', page) and "A section stays in its lesson" in page
    data = {"lesson": b.pk, "key": section.key, "layer": section.layer, "order": section.order,
            "title": "Core, renamed", "minutes": section.minutes, "body": section.body}  # fmt: skip
    assert instructor_client.post(url, data).status_code == 302  # the other fields save
    section.refresh_from_db()
    assert (section.lesson_id, section.title) == (a.pk, "Core, renamed")  # the lesson it was in, kept
    new = {**data, "key": "more", "order": 9, "lesson": b.pk}
    assert instructor_client.post(reverse("admin:lessons_section_add"), new).status_code == 302
    assert b.sections.filter(key="more").exists()  # a new section goes in any lesson


def test_outline_arrows_move_an_item_among_its_section_s_items(instructor_client, db):
    lesson = make_lesson(deep_dives=2)
    change = reverse("admin:lessons_lesson_change", args=[lesson.pk])
    page = instructor_client.get(change).content.decode()
    assert 'aria-label="Move Deep dive dd-2 up">↑</button>' in page
    dd2 = DeepDive.objects.get(key="dd-2")
    learner_page = f"{lesson.get_absolute_url()}?layer=2"
    before = Client().get(learner_page).content.decode()  # read once: learners' pages are cached content
    assert before.index('id="dd-dd-1"') < before.index('id="dd-dd-2"')
    up = reverse("admin:lessons_lesson_move", args=[lesson.pk, "deepdive", dd2.pk, "up"])
    assert instructor_client.get(up).status_code == 405
    response = instructor_client.post(up)
    assert response.status_code == 302 and response["Location"] == change + "#outline"
    outline = instructor_client.get(change).content.decode()
    assert outline.index(">dd-2<") < outline.index(">dd-1<")
    after = Client().get(learner_page).content.decode()  # and learners see the new order at once
    assert after.index('id="dd-dd-2"') < after.index('id="dd-dd-1"')
    again = instructor_client.post(up, follow=True).content.decode()
    assert "Already at the top." in again
    # Down past the build-up walkthrough: a move across kinds.
    dd1 = DeepDive.objects.get(key="dd-1")
    instructor_client.post(reverse("admin:lessons_lesson_move", args=[lesson.pk, "deepdive", dd1.pk, "down"]))
    outline = instructor_client.get(change).content.decode()
    assert outline.index(">dd-2<") < outline.index(">build<") < outline.index(">dd-1<") < outline.index(">size<")


def test_a_deep_dive_s_hints_are_edited_as_rows(instructor_client, fresh_dive):
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    assert '<label for="id_hints__0__text">Hint 1</label>' in instructor_client.get(url).content.decode()
    rows = [row(1, "best"), row(2, "weak"), row(3, "acceptable")]
    data = choice_formset(fresh_dive, rows) | {"hints__0__text": "Where does the time go?", "hints__1__text": ""}
    data.pop("hints", None)
    assert instructor_client.post(url, data).status_code == 302
    fresh_dive.refresh_from_db()
    assert fresh_dive.hints == ["Where does the time go?"]


def test_hints_and_slips_are_edited_as_rows(instructor_client, db):
    challenge = make_lesson().sections.get().challenges.first()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    page = instructor_client.get(url).content.decode()
    assert '<label for="id_hints__0__text">Hint 1</label>' in page
    assert '<label for="id_slips__0__factor">Slip 1: expected ×</label>' in page
    # The rows' fields stand in for the JSON "hints" and "slips" of challenge_post.
    data = challenge_post(
        challenge,
        hints__0__text="How big is one copy?", hints__1__text="  ", hints__2__text="Divide the cache by it.",
        slips__0__factor="0.5", slips__0__inputs="", slips__0__feedback="Count both K and V.", slips__1__factor="",
        slips__1__inputs="bytes_per_value=1", slips__1__feedback="Use 16-bit values.", slips__2__factor="",
        slips__2__inputs="", slips__2__feedback="",
    )  # fmt: skip
    assert instructor_client.post(url, data).status_code == 302
    challenge.refresh_from_db()
    assert challenge.hints == ["How big is one copy?", "Divide the cache by it."]
    assert challenge.slips == [
        {"factor": 0.5, "feedback": "Count both K and V."},
        {"inputs": {"bytes_per_value": 1}, "feedback": "Use 16-bit values."},
    ]
    page = instructor_client.get(url).content.decode()
    assert 'name="slips__1__inputs" id="id_slips__1__inputs" value="bytes_per_value=1"' in page
    refused = instructor_client.post(url, {**data, "slips__1__inputs": "bytes_per_value"}).content.decode()
    assert "Slip 2: inputs must map parameter names to numbers." in refused


def test_the_expected_answer_follows_the_form_as_it_is_edited(instructor_client, db):
    challenge = make_lesson().sections.get().challenges.first()
    page = instructor_client.get(reverse("admin:lessons_challenge_change", args=[challenge.pk])).content.decode()
    assert 'class="expected-answer" aria-live="polite"' in page
    url = reverse("admin:lessons_challenge_expected")
    form = {"calculator": "kv-cache", "output": "copy_bytes", "unit": "MB"}
    from calculators.formatting import number
    from calculators.registry import get_calculator

    expected = get_calculator("kv-cache").evaluate({"tokens": 2400}).outputs["copy_bytes"] / 1e6
    answer = instructor_client.get(url, {**form, "inputs__tokens": "2400"}).content.decode()
    assert answer == f"{number(expected)} MB (empty parameters take their defaults)"
    refused = instructor_client.get(url, {**form, "inputs__tokens": "0"}).content.decode()
    assert refused.startswith("The calculator refuses these inputs: tokens: Must be at least 1")
    assert instructor_client.get(url).content.decode() == "Choose a calculator and an output."


def test_the_answer_unit_is_chosen_from_the_outputs_units_and_the_learner_is_graded_in_it(
    instructor_client, client, db
):
    from calculators.formatting import number
    from calculators.registry import get_calculator
    from lessons.models import Answer

    lesson = make_lesson()
    challenge = Challenge.objects.get()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    units = instructor_client.get(
        reverse("admin:lessons_answer_units"), {"calculator": "kv-cache", "output": "copy_bytes"}
    )
    assert '<option value="MiB">MiB</option>' in units.content.decode() and 'value="ms"' not in units.content.decode()
    refused = instructor_client.post(url, challenge_post(challenge, output="copy_bytes", unit="ms"))
    assert "Ask for copy_bytes in one of: B, kB, MB, GB, TB, KiB, MiB" in refused.content.decode()
    assert instructor_client.post(url, challenge_post(challenge, output="copy_bytes", unit="MiB")).status_code == 302
    challenge.refresh_from_db()
    assert (challenge.unit, challenge.scale) == ("MiB", 2**-20)
    form = instructor_client.get(url).content.decode()
    assert '<option value="MiB" selected>MiB</option>' in form and 'name="scale"' not in form

    page = client.get(lesson.get_absolute_url()).content.decode()
    assert "in MiB (other units are converted)" in page
    copy_bytes = get_calculator("kv-cache").evaluate({}).outputs["copy_bytes"]
    client.post(reverse("answer-challenge", args=[lesson.slug, challenge.pk]), {"value": f"{copy_bytes / 1e6} MB"})
    answered = client.get(lesson.get_absolute_url()).content.decode()
    assert f"You answered <strong>{number(copy_bytes / 2**20, 6)} MiB</strong>" in answered
    assert Answer.objects.get().outcome == "correct"


def test_an_envelope_step_shows_its_expected_answer_as_it_is_edited(instructor_client, db):
    from calculators.formatting import number
    from calculators.registry import get_calculator

    wt = make_lesson().sections.get().walkthroughs.get(key="size")
    page = instructor_client.get(reverse("admin:lessons_walkthrough_change", args=[wt.pk])).content.decode()
    copy_bytes = get_calculator("kv-cache").evaluate({}).outputs["copy_bytes"]
    assert f"{number(copy_bytes / 1e6)} MB (empty parameters take their defaults)</output>" in page
    step = {"steps-1-calculator": "kv-cache", "steps-1-output": "copy_bytes", "steps-1-unit": "KiB"}
    url = reverse("admin:lessons_challenge_expected")
    halved = get_calculator("kv-cache").evaluate({"bytes_per_value": 1}).outputs["copy_bytes"]
    answer = instructor_client.get(url, {**step, "steps-1-inputs__bytes_per_value": "1"}).content.decode()
    assert answer == f"{number(halved / 1024)} KiB (empty parameters take their defaults)"


def test_a_step_without_a_number_saves_with_its_inputs_left_out(instructor_client, db):
    wt = make_lesson().sections.get().walkthroughs.get(key="size")
    data = {
        "section": wt.section_id, "key": wt.key, "order": wt.order, "kind": "build_up", "title": wt.title,
        "intro": "", "topic": wt.topic_id or "", "steps-TOTAL_FORMS": 1, "steps-INITIAL_FORMS": 0,
        "steps-MIN_NUM_FORMS": 0, "steps-MAX_NUM_FORMS": 1000, "steps-0-order": 1, "steps-0-title": "Only words",
        "steps-0-tolerance_kind": "relative", "steps-0-points": 10,
    }  # fmt: skip
    wt.steps.all().delete()
    response = instructor_client.post(reverse("admin:lessons_walkthrough_change", args=[wt.pk]), data)
    assert response.status_code == 302
    assert wt.steps.get().inputs == {}


def test_diagram_parts_and_connections_are_rows_laid_out_on_save(instructor_client, db):
    lesson = make_lesson()
    wt = lesson.sections.get().walkthroughs.get(key="build")
    wt.steps.all().delete()
    url = reverse("admin:lessons_walkthrough_change", args=[wt.pk])
    step = {"order": 1, "title": "Front to back", "components": "", "connections": "",
            "components__0__key": "fe", "components__0__label": "Front end",
            "components__1__key": "gpu", "components__1__label": "GPU worker", "components__2__key": "",
            "connections__0__from": "fe", "connections__0__to": "gpu", "connections__0__label": "prompt"}  # fmt: skip
    data = walkthrough_post(wt, [step])
    del data["steps-0-components"], data["steps-0-connections"]
    assert instructor_client.post(url, data).status_code == 302
    wt.refresh_from_db()
    saved = wt.steps.get()
    assert [c["key"] for c in saved.components] == ["fe", "gpu"]
    assert saved.connections == [{"from": "fe", "to": "gpu", "label": "prompt"}]
    assert "gpu" in str(wt.diagram) and "fe" in str(wt.diagram)  # Graphviz placed the parts on save
    form = instructor_client.get(url).content.decode()
    assert 'name="steps-0-components__1__label" id="id_steps-0-components__1__label" value="GPU worker"' in form
    refused = instructor_client.post(url, {**data, "steps-0-connections__0__to": "db"}).content.decode()
    assert "Connection 1: to &#x27;db&#x27; is not a component added so far." in refused


def shown(response) -> str:
    """Return the page's text as a user reads it (entities such as &#x27; turned back into characters)."""
    return unescape(response.content.decode())


def test_one_save_of_a_challenge_shows_every_problem_beside_its_field_and_saves_nothing(instructor_client, db):
    challenge = make_lesson().sections.get().challenges.first()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    data = challenge_post(
        challenge, title="", tolerance="0", partial_band="0.5", ranges='{"cache_gb": [1, 5, "x"]}',
        hints__0__text="One.", hints__1__text="Two.", hints__2__text="Three.", hints__3__text="Four.",
    )  # fmt: skip
    response = instructor_client.post(url, data)
    assert response.status_code == 200
    every = {
        "title": ["This field is required."],  # Django's own; the validator's "title is missing" is not repeated
        "tolerance": ["Tolerance must be above zero: 0.01 means within 1% of the answer."],
        "partial_band": ["Half-credit factor must be above 1, such as 2 (half credit between half and twice the answer)."],
        "ranges": ["Ranges: 'cache_gb' must be [min, max, step]."],
        "hints": ["Hints may hold at most 3 hints, not 4."],
    }  # fmt: skip
    assert {name: list(errors) for name, errors in response.context["adminform"].form.errors.items()} == every
    page = shown(response)
    for (message,) in every.values():
        assert page.count(message) == 1
    saved = Challenge.objects.get(pk=challenge.pk)
    assert (saved.title, saved.tolerance, saved.hints) == (challenge.title, challenge.tolerance, challenge.hints)


def test_one_save_of_an_envelope_walkthrough_shows_every_problem_in_its_step_and_saves_nothing(instructor_client, db):
    wt = make_lesson().sections.get().walkthroughs.get(key="size")
    wt.steps.all().delete()
    steps = [
        {"order": 1, "title": "", "calculator": "replica", "output": "requests_per_replica", "unit": "requests",
         "tolerance": "0", "partial_band": "0.5", "slips": '[{"feedback": "Count both."}]'},
        {"order": 2, "title": "No number asked"},
    ]  # fmt: skip
    data = {**walkthrough_post(wt, steps), "topic": "", "title": "Renamed"}
    response = instructor_client.post(reverse("admin:lessons_walkthrough_change", args=[wt.pk]), data)
    assert response.status_code == 200
    formset = response.context["inline_admin_formsets"][0].formset
    first = {
        "title": ["This field is required."],
        "tolerance": ["Tolerance must be above zero: 0.01 means within 1% of the answer."],
        "partial_band": ["Half-credit factor must be above 1, such as 2 (half credit between half and twice the answer)."],
        "slips": ["Slip 1: needs exactly one of a factor or changed inputs."],
    }  # fmt: skip
    second = {
        "calculator": [
            "An envelope step must ask for a number: a calculator, an output, a unit and a tolerance (its ask, in a file)."
        ]
    }
    assert [{name: list(e) for name, e in form.errors.items()} for form in formset.forms] == [first, second]
    walkthrough = "walkthrough 'size': an envelope walkthrough needs a topic for its graded steps."
    assert list(formset.non_form_errors()) == [walkthrough]
    page = shown(response)
    for message in [*(m for (m,) in first.values()), *second["calculator"], walkthrough]:
        assert message in page
    wt.refresh_from_db()
    assert (wt.title, wt.topic_id, wt.steps.count()) == ("Size it", "capacity_planning", 0)


def test_a_challenge_without_a_calculator_is_told_what_it_needs_beside_each_field(instructor_client, db):
    challenge = make_lesson().sections.get().challenges.first()
    data = challenge_post(challenge, calculator="", output="", unit="", tolerance="", inputs="{}",
                          partial_band="0.5")  # fmt: skip
    response = instructor_client.post(reverse("admin:lessons_challenge_change", args=[challenge.pk]), data)
    errors = {name: list(e) for name, e in response.context["adminform"].form.errors.items()}
    assert errors == {
        "calculator": ["A challenge asks for a number: choose the calculator that computes it."],
        "output": ["Choose the number the learner is asked for."],
        "unit": ["Choose the unit the learner answers in."],
        "tolerance": ["Give a tolerance above zero: 0.01 means answers within 1% are right."],
        "partial_band": ["Half-credit factor must be above 1, such as 2 (half credit between half and twice the answer)."],
    }  # fmt: skip
    assert "is missing from ask" not in shown(response)


@pytest.mark.parametrize(
    ("rows", "problems"),
    [
        (
            [row(1, "weak"), row(1, "acceptable")],
            ["Please correct the duplicate data for order.",  # Django's, from the model's unique order
             "A deep dive needs at least three choices.", "A deep dive needs exactly one best choice; this one has 0."],
        ),
        (
            [row(1, "best", follow_up="self"), row(2, "acceptable"), row(2, "weak")],
            ["Please correct the duplicate data for order.",
             "deep_dive 'new': a follow-up cannot lead back to its own deep dive."],
        ),
    ],
)  # fmt: skip
def test_one_save_reports_the_choices_positions_and_follow_ups_together(instructor_client, fresh_dive, rows, problems):
    for choice in rows:
        if choice["follow_up"] == "self":
            choice["follow_up"] = fresh_dive.pk
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    response = instructor_client.post(url, choice_formset(fresh_dive, rows))
    assert list(response.context["inline_admin_formsets"][0].formset.non_form_errors()) == problems
    page = shown(response)
    assert all(problem in page for problem in problems)
    assert not Choice.objects.exists()


@pytest.mark.parametrize(
    ("changes", "field", "message"),
    [
        (
            {"ranges": '{"cache_gb": [1, 1%s, 1]}' % ("0" * 400)},
            "ranges",
            "Ranges: 'cache_gb' needs finite numbers, a min no larger than its max and a step above zero.",
        ),
        (
            {"slips__0__factor": "1" + "0" * 400, "slips__0__feedback": "Too big."},
            "slips",
            "Slip 1: factor must be a finite number, not a number of 401 digits.",
        ),
        (
            {"ranges": "{}", "inputs__cache_gb": "1" + "0" * 400},
            "inputs",
            "Calculator 'kv-cache' refuses the inputs: cache_gb: must be a finite number.",
        ),
    ],
)
def test_a_number_too_large_for_a_float_is_refused_beside_its_field(instructor_client, db, changes, field, message):
    challenge = make_lesson().sections.get().challenges.first()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    response = instructor_client.post(url, challenge_post(challenge, **changes))
    assert response.status_code == 200
    assert list(response.context["adminform"].form.errors[field]) == [message]
    assert shown(response).count(message) == 1
    assert Challenge.objects.get(pk=challenge.pk).ranges == challenge.ranges


def test_the_expected_answer_of_a_number_too_large_for_a_float_says_so(instructor_client, db):
    form = {"calculator": "kv-cache", "output": "copy_bytes", "unit": "MB", "inputs__cache_gb": "1" + "0" * 400}
    answer = instructor_client.get(reverse("admin:lessons_challenge_expected"), form)
    assert answer.status_code == 200
    assert answer.content.decode() == "The calculator refuses these inputs: cache_gb: must be a finite number"


def test_refused_inputs_of_a_challenge_with_ranges_are_told_once_beside_the_inputs(instructor_client, db):
    challenge = make_lesson().sections.get().challenges.first()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    data = challenge_post(challenge, inputs__tokens="0", slips__0__inputs="bytes_per_value=1", slips__0__feedback="F")
    response = instructor_client.post(url, data)
    errors = {name: list(e) for name, e in response.context["adminform"].form.errors.items()}
    assert list(errors) == ["inputs"]
    assert len(errors["inputs"]) == 1
    assert errors["inputs"][0].startswith("Calculator 'kv-cache' refuses the inputs: tokens: Must be at least 1")
    assert shown(response).count("refuses the inputs") == 1


def test_a_problem_that_ends_a_sentence_gets_one_period(instructor_client, db):
    challenge = make_lesson().sections.get().challenges.first()
    url = reverse("admin:lessons_challenge_change", args=[challenge.pk])
    response = instructor_client.post(url, challenge_post(challenge, inputs__tokens="eighty"))
    assert list(response.context["adminform"].form.errors["inputs"]) == [
        "Calculator 'kv-cache' refuses the inputs: tokens: “eighty” is not a number."
    ]
    assert "number.." not in shown(response)


def test_a_refused_diagram_part_is_told_once_not_again_in_its_connections(instructor_client, db):
    wt = make_lesson().sections.get().walkthroughs.get(key="build")
    wt.steps.all().delete()
    step = {"order": 1, "title": "Front to back", "components": "[]", "connections": '[{"from": "fe", "to": "fe"}]'}
    refused = {**walkthrough_post(wt, [step]), "steps-0-components": "[not json"}
    response = instructor_client.post(reverse("admin:lessons_walkthrough_change", args=[wt.pk]), refused)
    form = response.context["inline_admin_formsets"][0].formset.forms[0]
    assert list(form.errors) == ["components"]
    assert "is not a component added so far" not in shown(response)


def test_steps_in_one_position_are_told_by_django_alone_not_as_connections_out_of_order(instructor_client, db):
    wt = make_lesson().sections.get().walkthroughs.get(key="build")
    wt.steps.all().delete()
    steps = [
        {"order": 1, "title": "Front", "components": '[{"key": "fe", "label": "FE", "col": 0, "row": 0}]'},
        {"order": 1, "title": "Back", "components": '[{"key": "db", "label": "DB", "col": 0, "row": 0}]',
         "connections": '[{"from": "db", "to": "fe"}]'},
    ]  # fmt: skip
    response = instructor_client.post(
        reverse("admin:lessons_walkthrough_change", args=[wt.pk]), walkthrough_post(wt, steps)
    )
    formset = response.context["inline_admin_formsets"][0].formset
    assert list(formset.non_form_errors()) == ["Please correct the duplicate data for order."]
    assert "is not a component added so far" not in shown(response)
    assert not wt.steps.exists()


def follow_ups_offered(client, page: str, term: str = "") -> set[str]:
    """Return the keys a choice's follow-up autocomplete on ``page`` lists, asked as Django's autocomplete.js asks:
    its own fields appended to the widget's URL (jQuery adds them after any query the URL carries)."""
    url = unescape(re.search(r'<select name="choices-0-follow_up"[^>]*data-ajax--url="([^"]+)"', page)[1])
    asked = urlencode({"term": term, "app_label": "lessons", "model_name": "choice", "field_name": "follow_up"})
    response = client.get(url + ("&" if "?" in url else "?") + asked)
    assert response.status_code == 200
    return {result["text"].split(":")[0] for result in response.json()["results"]}


def test_a_choice_s_follow_up_is_offered_from_its_deep_dive_s_lesson_only(instructor_client, fresh_dive):
    """The autocomplete listed every lesson's deep dives, and the deep dive being edited too (both refused on save)."""
    make_deep_dive(fresh_dive.section, key="sibling", order=20)
    make_deep_dive(make_lesson(slug="elsewhere", deep_dives=0).sections.get(), key="far", order=1)
    page = instructor_client.get(reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])).content.decode()
    assert follow_ups_offered(instructor_client, page) == {"sibling"}
    assert follow_ups_offered(instructor_client, page, term="far") == set()


def test_a_new_deep_dive_added_from_the_outline_is_offered_its_lesson_s_follow_ups(instructor_client, fresh_dive):
    make_deep_dive(make_lesson(slug="elsewhere", deep_dives=0).sections.get(), key="far", order=1)
    add = reverse("admin:lessons_deepdive_add")
    page = instructor_client.get(f"{add}?section={fresh_dive.section_id}&order=20").content.decode()
    assert follow_ups_offered(instructor_client, page) == {"new"}
    unknown = instructor_client.get(f"{add}?section=nowhere").content.decode()  # no section known: every lesson's
    assert follow_ups_offered(instructor_client, unknown) == {"new", "far"}


def test_a_follow_up_search_naming_no_lesson_by_id_is_refused_with_a_400(instructor_client, fresh_dive):
    asked = {"term": "", "app_label": "lessons", "model_name": "choice", "field_name": "follow_up"}
    response = instructor_client.get(reverse("admin:autocomplete"), {**asked, "lesson": "sample"})
    assert response.status_code == 400
    assert "A follow-up search names its lesson and deep dive by id. lesson: Enter a whole number." in shown(response)


def test_an_item_s_section_is_chosen_among_its_own_lesson_s_sections_named_by_title(instructor_client, fresh_dive):
    """The select listed every section of every lesson as "slug · title"; an item now stays in its lesson."""
    fresh_dive.section.lesson.sections.create(key="deeper", layer=3, order=2, title="Go deeper")
    elsewhere = make_lesson(slug="elsewhere", deep_dives=0).sections.get()
    url = reverse("admin:lessons_deepdive_change", args=[fresh_dive.pk])
    page = instructor_client.get(url).content.decode()
    select = re.search(r'<select name="section".*?</select>', page, re.S)[0]
    assert re.findall(r"<option [^>]*>([^<]*)</option>", select) == [
        "---------",
        "Lesson sample · Core",
        "Lesson sample · Go deeper",
    ]
    moved = {**choice_formset(fresh_dive, [row(1, "best"), row(2, "acceptable"), row(3, "weak")]),
             "section": elsewhere.pk}  # fmt: skip
    response = instructor_client.post(url, moved)
    assert response.status_code == 200
    assert list(response.context["adminform"].form.errors["section"]) == [
        "Choose one of this lesson's sections: an item stays in its lesson (its key and follow-ups belong to it)."
    ]
    assert DeepDive.objects.get(pk=fresh_dive.pk).section_id == fresh_dive.section_id
    new = instructor_client.get(reverse("admin:lessons_deepdive_add")).content.decode()
    assert ">Lesson elsewhere · Core</option>" in new and ">Lesson sample · Go deeper</option>" in new


def test_a_section_is_headed_by_its_lesson_s_title_not_its_slug(instructor_client, lesson):
    Lesson.objects.filter(pk=lesson.pk).update(title="Paged attention")
    section = lesson.sections.get()
    page = instructor_client.get(reverse("admin:lessons_section_change", args=[section.pk])).content.decode()
    assert "<h2>Paged attention · Core</h2>" in page and "sample · Core" not in page
    listed = instructor_client.get(reverse("admin:lessons_deepdive_changelist")).content.decode()
    assert '<td class="field-section nowrap">Paged attention · Core</td>' in listed


def test_a_numeric_question_s_inputs_are_empty_until_a_calculator_is_chosen(instructor_client, db):
    """The inputs (and a challenge's ranges) showed a raw {} before a calculator was chosen."""
    page = instructor_client.get(reverse("admin:lessons_challenge_add")).content.decode()
    for name in ("inputs", "ranges"):
        box = re.search(rf'<textarea name="{name}"[^>]*>(.*?)</textarea>', page, re.S)
        assert box[1].strip() == "" and 'placeholder="Choose a calculator' in box[0]
    wt = make_lesson().sections.get().walkthroughs.get(key="build")
    url = reverse("admin:lessons_walkthrough_change", args=[wt.pk])
    step = re.search(
        r'<textarea name="steps-0-inputs"[^>]*>(.*?)</textarea>', instructor_client.get(url).content.decode(), re.S
    )
    assert step[1].strip() == ""
    steps = [{"order": 1, "title": "Only words", "inputs": ""}, {"order": 2, "title": "Typed JSON", "inputs": "{oops"}]
    wt.steps.all().delete()
    refused = instructor_client.post(url, walkthrough_post(wt, steps))
    assert list(refused.context["inline_admin_formsets"][0].formset.forms[1].errors["inputs"]) == [
        "Enter a valid JSON."
    ]
    assert ">\n{oops</textarea>" in refused.content.decode()  # shown back as typed
    assert instructor_client.post(url, walkthrough_post(wt, steps[:1])).status_code == 302
    assert wt.steps.get().inputs == {}


@pytest.mark.parametrize("model", ["deepdive", "walkthrough", "challenge", "openquestion"])
def test_staff_who_may_only_view_items_see_them_without_an_error(client, lesson, model):
    """The admin gives a view-only form no fields: the item forms must not assume a section field."""
    from django.contrib.auth.models import Permission, User

    viewer = User.objects.create_user("vera", "vera@example.com", "correct-horse-battery", is_staff=True)
    viewer.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="lessons", codename__startswith="view_")
    )
    client.force_login(viewer)
    from django.apps import apps

    item = apps.get_model("lessons", model).objects.filter(section__lesson=lesson).first()
    if item is None:  # the sample lesson has no open question: one for this check
        from tests.lessons.factories import make_open_question

        item = make_open_question(lesson.sections.first())
    response = client.get(reverse(f"admin:lessons_{model}_change", args=[item.pk]))
    assert response.status_code == 200
    assert item.key in response.content.decode()  # the item is shown, read-only
