"""Practice that trains recall: think before the reveal, hints that cost, open questions on the page."""

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from lessons import services
from lessons.models import Answer, DeepDive, ItemPractice, Step
from tests.lessons.factories import answer_steps_before, make_deep_dive, make_open_question

HTMX = {"HTTP_HX_REQUEST": "true"}


def deep_dive():
    return DeepDive.objects.get(key="dd-1")


def pick(client, verdict, **extra):
    dd = deep_dive()
    url = reverse("answer-deep-dive", args=[dd.section.lesson.slug, dd.pk])
    return client.post(url, {"choice": dd.choices.get(verdict=verdict).pk}, **extra)


def with_follow_up(verdict: str, key: str) -> tuple[DeepDive, DeepDive]:
    """Return the sample deep dive, its choice of ``verdict`` now leading to a new follow-up ``key``, and that follow-up."""
    dd = deep_dive()
    follow_up = make_deep_dive(dd.section, key=key, order=2)
    leading = dd.choices.get(verdict=verdict)
    leading.follow_up = follow_up
    leading.save()  # a save, as the admin's: a new content generation
    return dd, follow_up


def page(client, lesson) -> str:
    return client.get(lesson.get_absolute_url()).content.decode()


def test_a_weak_first_answer_shows_its_own_feedback_but_not_the_others_until_asked(client, lesson):
    pick(client, "weak")
    html = page(client, lesson)
    assert "Wastes 60-80%." in html  # the learner's own feedback
    assert "Holds up." not in html  # the best choice's feedback stays hidden
    assert "Compare the other approaches" not in html
    assert "Show all approaches" in html
    assert "Try again (recorded, not scored)" in html
    dd = deep_dive()
    response = client.post(reverse("reveal", args=[lesson.slug, "deep_dive", dd.pk]))
    assert response.status_code == 303
    html = page(client, lesson)
    assert "Holds up." in html and "Compare the other approaches" in html
    assert ItemPractice.objects.get(deep_dive=dd).revealed


def test_a_second_try_reveals_every_approach_and_the_first_answer_keeps_the_score(client, lesson):
    pick(client, "weak")
    pick(client, "acceptable")
    html = page(client, lesson)
    assert "Holds up." in html
    assert Answer.objects.get(is_first=True).points == 0


def test_a_best_first_answer_shows_every_approach(client, lesson):
    pick(client, "best")
    assert "Compare the other approaches" in page(client, lesson)


def test_reveal_before_answering_is_refused(client, lesson):
    dd = deep_dive()
    response = client.post(reverse("reveal", args=[lesson.slug, "deep_dive", dd.pk]), **HTMX)
    assert response.status_code == 409
    assert "Answer first" in response.content.decode()
    assert not ItemPractice.objects.filter(revealed=True).exists()


def test_reveal_of_an_unknown_kind_is_a_404(client, lesson):
    assert client.post(reverse("reveal", args=[lesson.slug, "lesson", 1])).status_code == 404


def test_a_wrong_number_gets_hints_and_a_second_try_before_the_arithmetic(client, lesson):
    step = Step.objects.get(title="Requests per replica")
    step.hints = ["Start from the KV budget.", "Divide by one request's KV."]
    step.save()
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    html = client.post(url, {"value": "50"}, **HTMX).content.decode()
    assert "Missed" in html or "Partly right" in html
    assert "The worked arithmetic" not in html
    assert "the answer is" not in html
    assert "Start from the KV budget." in html  # the step's hints, free once answered
    assert "Show the worked arithmetic" in html
    html = client.post(url, {"value": "51"}, **HTMX).content.decode()  # the second try
    assert "The worked arithmetic" in html and "the answer is" in html


def test_the_worked_arithmetic_on_request_after_one_wrong_number(client, lesson):
    challenge = lesson.sections.get().challenges.get(key="copies")
    client.post(reverse("answer-challenge", args=[lesson.slug, challenge.pk]), {"value": "1"})
    assert "The worked arithmetic" not in page(client, lesson)
    response = client.post(reverse("reveal", args=[lesson.slug, "challenge", challenge.pk]), **HTMX)
    assert response.status_code == 200
    assert "The worked arithmetic" in response.content.decode()


def test_a_hint_taken_before_answering_is_shown_with_its_cost_and_lowers_the_score(client, lesson):
    dd = deep_dive()
    dd.hints = ["Think about fragmentation.", "Blocks, not slabs.", "Like virtual memory."]
    dd.save()
    html = page(client, lesson)
    assert "Think about fragmentation." not in html
    assert "Take hint 1 of 3 (costs 2 points)" in html
    assert "takes 20% of this question" in html  # the rule, shown before taking it
    response = client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk]), **HTMX)
    assert response.status_code == 200
    html = page(client, lesson)
    assert "Think about fragmentation." in html and "Blocks, not slabs." not in html
    assert "Take hint 2 of 3 (costs 2 points)" in html
    response = pick(client, "best", **HTMX)
    assert "Correct: 8 of 10 points" in response.content.decode()
    first = Answer.objects.get(is_first=True)
    assert (first.points, first.hints_taken) == (8, 1)
    html = page(client, lesson)
    assert "Like virtual memory." in html  # answered: every hint is free and shown
    assert "Take hint" not in html


def test_hints_stop_at_the_last_one(client, lesson):
    dd = deep_dive()
    dd.hints = ["Only one."]
    dd.save()
    url = reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk])
    for _ in range(3):
        client.post(url)
    assert ItemPractice.objects.get(deep_dive=dd).hints_taken == 1


def test_a_hint_for_an_item_without_hints_is_refused(client, lesson):
    response = client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", deep_dive().pk]), **HTMX)
    assert response.status_code == 409
    assert "no hints" in response.content.decode()


@pytest.fixture
def question(lesson):
    return make_open_question(lesson.sections.get())


def test_an_open_question_is_written_then_ticked_and_the_ticked_share_scores(client, lesson, question):
    html = page(client, lesson)
    assert "Walk me through a replica dying." in html
    assert "Point 1 a strong answer makes." not in html  # the checklist comes after writing
    write = reverse("write-open-question", args=[lesson.slug, question.pk])
    response = client.post(write, {"text": "Drain the replica and retry on another one."})
    assert response.status_code == 303
    html = page(client, lesson)
    assert "Drain the replica and retry on another one." in html
    assert "Point 1 a strong answer makes." in html
    points = list(question.checklist.values_list("pk", flat=True))
    tick = reverse("answer-open-question", args=[lesson.slug, question.pk])
    response = client.post(tick, {"point": points[:3]}, **HTMX)
    assert response.status_code == 200
    assert "Partly right: 8 of 10 points" in response.content.decode()  # 3 of 4 ticked
    html = page(client, lesson)
    assert "You covered 3 of the 4 points" in html
    assert html.count("Not covered:") == 1
    assert "Answer again (recorded, not scored)" in html
    answer = Answer.objects.get(open_question=question)
    assert (answer.text, answer.is_first, answer.ticked) == (
        "Drain the replica and retry on another one.",
        True,
        points[:3],
    )


def test_ticking_before_writing_and_bad_points_are_refused(client, lesson, question):
    tick = reverse("answer-open-question", args=[lesson.slug, question.pk])
    response = client.post(tick, {"point": []}, **HTMX)
    assert response.status_code == 409
    assert "Write your answer first" in response.content.decode()
    client.post(reverse("write-open-question", args=[lesson.slug, question.pk]), {"text": "Something."})
    response = client.post(tick, {"point": ["99999"]})
    assert response.status_code == 400
    assert "Tick only this question" in response.content.decode()
    response = client.post(reverse("write-open-question", args=[lesson.slug, question.pk]), {"text": "  "}, **HTMX)
    assert response.status_code == 422
    assert not Answer.objects.exists()


def test_an_open_question_counts_in_the_lesson_and_the_results(client, lesson, question):
    client.post(reverse("write-open-question", args=[lesson.slug, question.pk]), {"text": "Retry elsewhere."})
    client.post(reverse("answer-open-question", args=[lesson.slug, question.pk]), {"point": []})
    html = client.get(reverse("results")).content.decode()
    assert "Walk me through a replica dying." in html  # a miss, linked back
    assert f"#{question.anchor}" in html


def test_a_hint_on_an_envelope_step_swaps_in_the_walkthrough_at_that_step(client, lesson):
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    step.hints = ["Multiply the bytes per token by the tokens."]
    step.save()
    response = client.post(reverse("take-hint", args=[lesson.slug, "step", step.pk]), **HTMX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "Step 2 of 2" in html and "Multiply the bytes per token by the tokens." in html
    assert "Hint 1 of 1 shown. It costs points if you answer next." in html
    plain = client.post(reverse("take-hint", args=[lesson.slug, "step", step.pk]))
    assert plain.status_code == 303 and plain["Location"].endswith("/walkthroughs/size/2/#wt-size")


def test_hints_taken_before_signing_in_follow_the_learner_into_their_account(client, lesson, learner_user):
    dd = deep_dive()
    dd.hints = ["Think about fragmentation."]
    dd.save()
    client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk]))
    client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery"})
    practice = ItemPractice.objects.get()
    assert (practice.learner.user, practice.hints_taken) == (learner_user, 1)
    response = pick(client, "best", **HTMX)
    assert "Correct: 8 of 10 points" in response.content.decode()  # the account pays for it
    client.post(reverse("reset-progress"), {"confirm": "yes"})
    assert not ItemPractice.objects.exists()


def test_a_steps_worked_arithmetic_stops_at_its_own_answer(client, content):
    """The derivation of one step ends at that step's number: later steps' answers stay hidden."""
    step = Step.objects.get(title="How many KiB of KV does one token need?")
    lesson = step.walkthrough.section.lesson
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})
    response = client.post(reverse("reveal", args=[lesson.slug, "step", step.pk]))
    html = client.get(response.url).content.decode()
    assert "The worked arithmetic" in html
    assert "The same in KiB" in html  # its own answer line
    assert "Copy size in decimal megabytes" not in html  # step 2's answer
    assert "Whole copies that fit in the cache" not in html
    assert "KV heads on one GPU" not in html


def focus_targets(html: str) -> list[str]:
    """Return the opening tags that carry data-focus (site.js moves focus to the first after a swap)."""
    return [tag for tag in re.findall(r"<[a-z]+ [^>]*>", html) if " data-focus" in tag]


def test_a_hint_swapped_in_is_the_one_place_focus_goes(client, lesson):
    dd = deep_dive()
    dd.hints = ["Think about fragmentation.", "Blocks, not slabs."]
    dd.save()
    html = client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk]), **HTMX).content.decode()
    assert focus_targets(html) == [f'<div class="hint" tabindex="-1" data-focus id="{dd.anchor}-hint-new">']
    assert html.index("Think about fragmentation.") > html.index(f'id="{dd.anchor}-hint-new"')
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    step.hints = ["Multiply the bytes per token by the tokens."]
    step.save()
    html = client.post(reverse("take-hint", args=[lesson.slug, "step", step.pk]), **HTMX).content.decode()
    assert [tag.split(" tabindex")[0] for tag in focus_targets(html)] == ['<div class="hint"']


def test_an_invalid_number_puts_focus_on_its_input_on_a_first_answer_and_on_a_retry(client, lesson):
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    field = (
        '<input type="text" autocomplete="off" spellcheck="false" name="value" id="wt-size-value" aria-invalid="true"'
    )
    for tries in ("first", "retry"):
        html = client.post(url, {"value": "abc"}, **HTMX).content.decode()
        targets = focus_targets(html)
        assert len(targets) == 1 and targets[0].startswith(field), (tries, targets)
        assert 'aria-describedby="wt-size-value-error wt-size-value-unit"' in targets[0]
        assert '<p class="error" id="wt-size-value-error" role="alert">Enter a number' in html
        client.post(url, {"value": "1"}, **HTMX)  # a wrong first answer: the next "abc" is a retry
    assert 'id="wt-size-feedback"' in html  # the old feedback is there, without data-focus


def test_after_a_hinted_answer_the_wording_is_plain(client, lesson):
    dd = deep_dive()
    dd.hints = ["Think about fragmentation.", "Blocks, not slabs."]
    dd.save()
    client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk]), **HTMX)
    html = pick(client, "weak", **HTMX).content.decode()
    # The announcer: a weak answer earned nothing, so the hint took nothing off.
    assert ": 0 of 10 points. You took 1 hint before answering. " in html
    assert "before answering: it cost" not in html
    html = page(client, lesson)
    assert "Hints (all shown now that you have answered)" in html
    assert '<p class="eyebrow">Hint 1</p>' in html and '<p class="eyebrow">Hint 2</p>' in html
    assert "Hint 2 of 2" not in html
    html = pick(client, "best", **HTMX).content.decode()
    assert "Best</span> on a retry (not scored). Your score stays 0 of 10.</p>" in html


def test_a_hinted_answer_that_earned_points_says_what_the_hint_cost(client, lesson):
    dd = deep_dive()
    dd.hints = ["Think about fragmentation."]
    dd.save()
    client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk]), **HTMX)
    html = pick(client, "best", **HTMX).content.decode()
    assert "Correct: 8 of 10 points. You took 1 hint before answering: it cost 2 points." in html


def test_the_unit_line_offers_conversion_only_for_a_physical_unit(client, lesson):
    html = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 1])).content.decode()
    assert '<span class="unit" id="wt-size-value-unit">in requests</span>' in html
    client.post(
        reverse("answer-step", args=[lesson.slug, Step.objects.get(title="Requests per replica").pk]), {"value": "1"}
    )
    html = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 2])).content.decode()
    assert '<span class="unit" id="wt-size-value-unit">in MB (other units are converted)</span>' in html
    assert "a number with another unit" not in html


def test_an_answered_deep_dive_says_what_the_hints_taken_before_it_cost(client, lesson):
    dd = deep_dive()
    dd.hints = ["Think about fragmentation.", "Blocks, not slabs."]
    dd.save()
    for _ in range(2):
        client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk]))
    pick(client, "best")
    html = page(client, lesson)
    assert '6 of 10 points <span class="meta">(2 hints taken before answering: −4\xa0points)</span>' in html


def test_an_answered_step_says_what_the_hint_taken_before_it_cost(client, lesson):
    step = Step.objects.get(title="Requests per replica")
    step.hints = ["Start from the KV budget."]
    step.save()
    client.post(reverse("take-hint", args=[lesson.slug, "step", step.pk]))
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "110"})
    html = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 1])).content.decode()
    assert '8 of 10 points <span class="meta">(1 hint taken before answering: −2\xa0points)</span>' in html


def test_hints_before_an_answer_that_earned_nothing_are_listed_without_a_cost(client, lesson):
    dd = deep_dive()
    dd.hints = ["Think about fragmentation."]
    dd.save()
    client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk]))
    pick(client, "weak")
    assert '0 of 10 points <span class="meta">(1 hint taken before answering)</span>' in page(client, lesson)


def test_after_a_retry_the_first_answers_line_still_says_what_its_hints_cost(client, lesson):
    """'First answer: correct, 8 of 10 points' must say why it is not 10: the hint taken before it."""
    dd = deep_dive()
    dd.hints = ["Think about fragmentation.", "Blocks, not slabs."]
    dd.save()
    client.post(reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk]), **HTMX)
    best = dd.choices.get(verdict="best")
    first = client.post(reverse("answer-deep-dive", args=[lesson.slug, dd.pk]), {"choice": best.pk}, **HTMX)
    assert "(1 hint taken before answering: −" in first.content.decode()
    client.post(reverse("answer-deep-dive", args=[lesson.slug, dd.pk]), {"choice": best.pk}, **HTMX)
    html = client.get(lesson.get_absolute_url() + "?layer=2").content.decode()
    line = re.search(r'<p class="retries">(.*?)</p>', html).group(1)
    points = Answer.objects.get(is_first=True).points
    assert line.startswith(f"Tries recorded: 2. First answer: correct, {points} of 10 points")
    assert "1 hint taken before answering: −" in line


def test_a_numbers_retry_feedback_says_what_the_first_answers_hints_cost(client, lesson):
    """'Your score stays 8 of 10' after a retry says why it is not 10, as the first answer's feedback did."""
    from lessons import services

    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    step.hints = ["Multiply the bytes per token by the tokens."]
    step.save()
    client.post(reverse("take-hint", args=[lesson.slug, "step", step.pk]), **HTMX)
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    right = {"value": repr(services.expected_for(step).value)}
    assert "(1 hint taken before answering: −" in client.post(url, right, **HTMX).content.decode()
    html = client.post(url, right, **HTMX).content.decode()
    points = Answer.objects.get(is_first=True, step=step).points
    assert re.search(rf"Your score stays {points} of 10 <span class=\"meta\">\(1 hint taken before answering: −", html)


def test_the_other_approaches_wait_for_the_follow_up_an_answer_opened(client, lesson):
    """'Show all approaches' on a deep dive showed its best approach right above the follow-up the weak answer
    opened ("Two GPUs…" opens "how do you fix that?", whose best answer is the parent's best): one click gave the
    follow-up's answer away (newcomer's finding). The reveal, on request or earned by a second try, waits until
    the follow-up is answered; the page says so; the reveal endpoints refuse it (409), the page's and the API's."""
    dd, follow_up = with_follow_up("weak", "fix-it")
    for choice in follow_up.choices.all():  # its own feedback, told apart from the parent's
        choice.feedback = f"Follow-up: {choice.feedback}"
        choice.save()
    weak = dd.choices.get(verdict="weak")
    reveal = reverse("reveal", args=[lesson.slug, "deep_dive", dd.pk])

    answered = pick(client, "weak", **HTMX).content.decode()  # opens the follow-up
    html = page(client, lesson)
    assert "How? (fix-it)" in html  # the follow-up is shown, under its parent
    assert f'action="{reveal}"' not in html and "Compare the other approaches" not in html
    # The weak approach's own feedback explains the mistake the follow-up asks about: it waits too.
    for shown in (answered, html):
        parent = shown.split('id="dd-fix-it" aria-labelledby')[0]
        assert "The interviewer follows up first." in parent and "Wastes 60-80%." not in parent
        assert "You chose:</strong> Reserve max length" in parent
    # Its hints wait too: every hint is shown once answered, and they may point at the follow-up's answer.
    dd.hints = ["Think about fragmentation."]
    dd.save()
    hint = reverse("take-hint", args=[lesson.slug, "deep_dive", dd.pk])
    refused = client.post(hint, **HTMX)
    assert refused.status_code == 409 and "Think about fragmentation." not in refused.content.decode()
    refused = client.post(reveal, **HTMX)
    assert refused.status_code == 409 and "Answer the follow-up your answer opened first" in refused.content.decode()
    assert not ItemPractice.objects.filter(deep_dive=dd, revealed=True).exists()
    api = APIClient()
    api.cookies = client.cookies
    refused = api.post(f"/api/v1/deep-dives/{dd.pk}/reveal/")
    assert refused.status_code == 409 and refused.json()["errors"]["follow_up"] == [services.FOLLOW_UP_FIRST]
    # A retry would show its own verdict and feedback (the best's gave the follow-up's answer): it waits too.
    parent = html.split('id="dd-fix-it" aria-labelledby')[0]  # the page down to the follow-up's article
    assert f'action="{reverse("answer-deep-dive", args=[lesson.slug, dd.pk])}"' not in parent
    refused = pick(client, "best", **HTMX)  # from a page loaded before the follow-up opened
    assert refused.status_code == 409
    # Said once and focused (the button clicked is swapped out): not the note saying the same beside it.
    assert f'role="alert" tabindex="-1" data-focus>{services.FOLLOW_UP_FIRST}</p>' in refused.content.decode()
    assert "The interviewer follows up first." not in refused.content.decode()
    assert "Holds up." not in refused.content.decode().split('id="dd-fix-it" aria-labelledby')[0]
    best = dd.choices.get(verdict="best").pk
    refused = api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": best}, format="json")
    assert refused.status_code == 409 and refused.json()["errors"]["follow_up"] == [services.FOLLOW_UP_FIRST]
    assert Answer.objects.filter(deep_dive=dd).count() == 1
    dive = api.get(f"/api/v1/lessons/{lesson.slug}/").json()["sections"][0]["items"][0]
    assert dive["all_shown"] is False and {c.get("verdict") for c in dive["choices"]} == {None, "weak"}
    chosen = next(c for c in dive["choices"] if c.get("verdict") == "weak")
    assert dive["follow_up_waiting"] is True and chosen["feedback"] == "" and chosen["feedback_html"] == ""
    assert dive["hints"]["hints"] == [] and dive["hints"]["total"] == 1
    assert api.post(f"/api/v1/deep-dives/{dd.pk}/hint/").status_code == 409
    other = APIClient()  # another learner, through the API alone: the answer's reply holds the feedback back too
    reply = other.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": weak.pk}, format="json").json()
    assert reply["follow_up_waiting"] is True and reply["feedback"] == "" and reply["follow_up"]["key"] == "fix-it"

    answer = reverse("answer-deep-dive", args=[lesson.slug, follow_up.pk])
    client.post(answer, {"choice": follow_up.choices.get(verdict="best").pk})
    html = page(client, lesson)
    parent = html.split('id="dd-fix-it" aria-labelledby')[0]
    assert f'action="{reveal}"' in parent and "The interviewer follows up first." not in parent
    assert "Wastes 60-80%." in parent  # the weak approach's feedback, now that the follow-up is answered
    dive = api.get(f"/api/v1/lessons/{lesson.slug}/").json()["sections"][0]["items"][0]
    assert dive["follow_up_waiting"] is False
    assert next(c for c in dive["choices"] if c.get("verdict") == "weak")["feedback"] == "Wastes 60-80%."
    assert pick(client, "acceptable", **HTMX).status_code == 200  # a retry, which earns the reveal
    html = page(client, lesson)
    parent = html.split('id="dd-fix-it" aria-labelledby')[0]
    assert "Compare the other approaches" in parent and "Holds up." in parent
    assert api.post(f"/api/v1/deep-dives/{dd.pk}/reveal/").status_code == 200


def test_answering_the_follow_up_updates_its_parent_at_once(client, lesson):
    """After the follow-up's answer the parent still said "Answer the follow-up … first" until a reload: the answer
    now sends the top parent (with the follow-up inside) and swaps it in for the follow-up; the follow-up's own
    feedback takes focus and is announced."""
    dd, follow_up = with_follow_up("weak", "fix-it")
    pick(client, "weak")
    answer = reverse("answer-deep-dive", args=[lesson.slug, follow_up.pk])
    response = client.post(answer, {"choice": follow_up.choices.get(verdict="best").pk}, **HTMX)
    assert response["HX-Retarget"] == f"#{dd.anchor}"
    html = response.content.decode()
    assert html.lstrip().startswith(f'<article class="item deep-dive" id="{dd.anchor}"')
    parent = html.split(f'id="{follow_up.anchor}" aria-labelledby')[0]
    assert "The interviewer follows up first." not in parent and "Wastes 60-80%." in parent
    assert 'action="' + reverse("reveal", args=[lesson.slug, "deep_dive", dd.pk]) + '"' in parent
    assert parent.count("data-focus") == 0
    follow = html.split(f'id="{follow_up.anchor}" aria-labelledby')[1]
    assert f'id="{follow_up.anchor}-feedback"' in follow and follow.count("data-focus") == 1
    assert html.count('id="announcer"') == 1 and 'id="announcer"' in follow
    # The parent changed out of sight of a screen reader whose focus is on the follow-up: the announcement says so.
    freed = "The question it follows now shows the feedback on your answer there and takes another try."
    assert re.search(rf'id="announcer" hx-swap-oob="innerHTML">Correct: 10 of 10 points\. Best\. {freed}</div>', html)
    retry = client.post(answer, {"choice": follow_up.choices.get(verdict="weak").pk}, **HTMX).content.decode()
    assert freed not in retry  # said once, when it happened


def test_a_best_answer_that_opens_a_follow_up_shows_every_approach_at_once(client, lesson):
    """The wait is for a learner who has not seen the best approach: most follow-ups open from the best choice, and
    a best answer showed "Try again" and no approaches while its follow-up waited (review's finding)."""
    dd, _follow_up = with_follow_up("best", "go-deeper")
    pick(client, "best")
    html = page(client, lesson)
    parent = html.split('id="dd-go-deeper" aria-labelledby')[0]
    assert "How? (go-deeper)" in html and "Compare the other approaches" in parent and "Meh." in parent
    assert "once you have answered the follow-up" not in html
    assert client.post(reverse("reveal", args=[lesson.slug, "deep_dive", dd.pk]), **HTMX).status_code == 200


def test_a_refused_reveal_on_a_later_step_is_said_on_that_step(client, lesson):
    """A reveal asked for before answering step 2 came back as the walkthrough at step 1, without the message (the
    step's error line is drawn on its own step), and since the announcer no longer repeats errors, nothing was said."""
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    response = client.post(reverse("reveal", args=[lesson.slug, "step", step.pk]), **HTMX)
    assert response.status_code == 409
    html = response.content.decode()
    assert "Answer first: your own answer comes before the reveal." in html
    assert "Step 2 of" in html and 'role="alert"' in html


def test_an_action_on_a_step_not_open_yet_shows_the_step_to_answer_first(client, lesson):
    """An answer, a hint or a reveal sent for step 2 before step 1 is answered (a crafted request or the API's
    learner on the page) came back as step 2, whose text starts from step 1's answer, and an answer there was
    graded: a wrong one earned the worked arithmetic, step 1's answer in it. Each is refused (409), and the
    walkthrough shows step 1 with the notice saying why, which takes focus; nothing is stored."""
    step = Step.objects.get(title="Preamble size")
    step.body = "Step 1 gave 110 requests a replica."
    step.hints = ["Step 1 gave 110: multiply."]
    step.save()
    notice = "Step 2 opens once the steps before it are answered: here is step 1, the first to answer."
    leads = {"answer-step": "Your answer was not recorded.", "take-hint": "No hint was shown.",
             "reveal": "Nothing was revealed."}  # fmt: skip
    for action, body in (("answer-step", {"value": "1"}), ("take-hint", {}), ("reveal", {})):
        args = [lesson.slug, step.pk] if action == "answer-step" else [lesson.slug, "step", step.pk]
        for headers in (HTMX, {}):
            response = client.post(reverse(action, args=args), body, **headers)
            html = response.content.decode()
            assert response.status_code == 409, (action, headers)
            # For htmx the notice is all that is said, so it says first what was not done (the page's top does).
            said = (
                f"data-focus-on-load data-focus>{leads[action]} {notice}" if headers else f"data-focus-on-load>{notice}"
            )
            assert f"{said}</p>" in html, (action, headers)
            assert "Step 1 of 2" in html and "Step 1 gave" not in html and "Step 2 of" not in html, (action, headers)
            if not headers:  # the whole page, at its top: the message there links the walkthrough, far below
                top = re.search(r'<p class="error" role="alert">(.*?)</p>', html).group(1)
                assert top == f'{leads[action]} {services.STEP_NOT_OPEN} <a href="#wt-size">Go to the question</a>'
    assert not Answer.objects.exists() and not ItemPractice.objects.exists()


@pytest.mark.parametrize("action", ["answer-step", "take-hint", "reveal"])
def test_an_action_refused_on_a_step_not_open_yet_puts_the_step_shown_in_the_address_bar(client, lesson, action):
    """Refused on step 2 before step 1 is answered, the fragment swapped in is step 1, but the address bar still
    named step 2 (code review's finding): a reload or a copied link then meant step 2. The refusal names step 1's
    URL in HX-Replace-Url, for htmx only, and only when the step shown is not the one asked for."""
    step = Step.objects.get(title="Preamble size")
    step.hints = ["Step 1 gave 110: multiply."]
    step.save()
    args = [lesson.slug, step.pk] if action == "answer-step" else [lesson.slug, "step", step.pk]
    body = {"value": "1"} if action == "answer-step" else {}
    refused = client.post(reverse(action, args=args), body, **HTMX)
    assert refused.status_code == 409 and "Step 1 of 2" in refused.content.decode()
    first = reverse("walkthrough-step", args=[lesson.slug, "size", 1])
    assert refused["HX-Replace-Url"] == f"{first}#wt-size"
    assert "HX-Push-Url" not in refused
    page_refused = client.post(reverse(action, args=args), body)  # a whole page: nothing for htmx to put there
    assert page_refused.status_code == 409 and "HX-Replace-Url" not in page_refused
    answer_steps_before(client, step)
    if action == "answer-step":  # refused on the step asked for (bad input): it is the step shown, at its address
        shown = client.post(reverse(action, args=args), {"value": "lots"}, **HTMX)
        assert shown.status_code == 422 and "HX-Replace-Url" not in shown
    elif action == "reveal":  # refused on the step asked for (answer first): likewise
        shown = client.post(reverse(action, args=args), **HTMX)
        assert shown.status_code == 409 and "Step 2 of 2" in shown.content.decode() and "HX-Replace-Url" not in shown


def test_an_answer_landing_between_the_two_reads_of_a_learners_state_does_not_hold_the_deep_dive(client, lesson):
    """A double click on the best approach (it opens a follow-up) sent two answers: the second read the learner's
    cards before the first committed and the practice rows after (a follow-up reached, the best answer not seen),
    took the deep dive for one waiting on its follow-up, and answered 409 "Answer the follow-up first" (`make
    bench` on PostgreSQL saw one). The practice rows are read first: an answer landing between the reads then
    shows in the cards, never a follow-up reached without the answer that reached it."""
    from django.db import connection

    dd, _follow_up = with_follow_up("best", "why-it-holds")
    learner_client = client
    learner_client.get(lesson.get_absolute_url())
    assert pick(learner_client, "weak", **HTMX).status_code == 200  # the learner, as its first answer
    learner = Answer.objects.get().learner
    best = dd.choices.get(verdict="best")
    landed = []

    def other_tab_lands(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        reads_state = sql.lstrip().startswith("SELECT") and (
            "lessons_reviewcard" in sql or "lessons_itempractice" in sql
        )
        if reads_state and not landed:  # after the first of the two reads: the other tab's answer commits
            landed.append(True)
            services.answer_deep_dive(learner, dd, best, answered_before=True)
        return result

    with connection.execute_wrapper(other_tab_lands):
        response = pick(learner_client, "best", **HTMX)
    assert landed
    assert response.status_code == 200, response.content.decode()[:300]
    html = page(learner_client, lesson)
    assert "Answer the follow-up your answer opened first" not in html
    assert Answer.objects.filter(deep_dive=dd).count() == 3
