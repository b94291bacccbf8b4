"""Spaced review: answers schedule their items; misses come back sooner than right answers."""

import re
from datetime import timedelta

import pytest
from django.urls import reverse

from lessons.models import Answer, DeepDive, Learner, Lesson, ReviewCard, Step
from lessons.review import due_items, schedule
from tests.conftest import STOPPED_AT
from tests.lessons.factories import answer_deep_dive as answer
from tests.lessons.factories import answer_steps_before, make_deep_dive, make_lesson

START = STOPPED_AT  # the shared stopped_clock fixture stops the wall clock here


@pytest.fixture
def lesson(db):
    return make_lesson(deep_dives=2)


@pytest.fixture
def token_api(api, learner_user):
    """The API as a script sees it, holding a token of ``learner_user``."""
    from interview.accounts.tokens import create_token

    _token, key = create_token(learner_user, "review")
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api


def test_a_miss_comes_back_sooner_than_a_right_answer(client, lesson, stopped_clock):
    answer(client, lesson, "dd-1", "weak")
    answer(client, lesson, "dd-2", "best")
    missed = ReviewCard.objects.get(deep_dive__key="dd-1")
    right = ReviewCard.objects.get(deep_dive__key="dd-2")
    assert missed.due == START + timedelta(minutes=10)
    assert right.due > START + timedelta(hours=1)
    assert missed.last_outcome == "incorrect"


def test_the_review_page_says_when_answers_come_back_as_the_scheduler_does(client, lesson, stopped_clock):
    answer(client, lesson, "dd-1", "weak")
    answer(client, lesson, "dd-2", "best")
    assert ReviewCard.objects.get(deep_dive__key="dd-1").due == START + timedelta(minutes=10)
    recalled = ReviewCard.objects.get(deep_dive__key="dd-2")
    assert recalled.due == START + timedelta(hours=4)  # not days: FSRS's second learning step
    html = client.get(reverse("review")).content.decode()
    # The page says what the scheduler does, a partly right answer too: FSRS's Hard, between the two steps.
    said = (
        "After a first answer, a miss comes back in 10\N{NO-BREAK SPACE}minutes, a partly right one in about "
        "2\N{NO-BREAK SPACE}hours, a right one in 4\N{NO-BREAK SPACE}hours. Right every time after that, it comes "
        "back after 2\N{NO-BREAK SPACE}days, then 11\N{NO-BREAK SPACE}days, then 46\N{NO-BREAK SPACE}days, and so "
        "on; a miss brings it back in 10\N{NO-BREAK SPACE}minutes again, and the gaps then grow from a shorter start."
    )
    assert said in html
    make_deep_dive(lesson.sections.get(), key="dd-3", order=3)
    answer(client, lesson, "dd-3", "acceptable")
    assert ReviewCard.objects.get(deep_dive__key="dd-3").due == START + timedelta(hours=2, minutes=5)
    assert said in client.get(reverse("results")).content.decode()


def test_the_schedule_the_pages_state_is_the_schedulers_own():
    """Other learning steps give other words: nothing in them is typed by hand."""
    from fsrs import Scheduler

    from lessons.review import RETURNS, Returns

    assert RETURNS.recalls == ("2\N{NO-BREAK SPACE}days", "11\N{NO-BREAK SPACE}days", "46\N{NO-BREAK SPACE}days")
    other = Returns.of(
        Scheduler(
            learning_steps=(timedelta(minutes=1), timedelta(days=1)),
            relearning_steps=(timedelta(minutes=30),),
            enable_fuzzing=False,
        )
    )
    assert (other.miss, other.right) == ("1\N{NO-BREAK SPACE}minute", "1\N{NO-BREAK SPACE}day")
    assert other.partial == "about 12\N{NO-BREAK SPACE}hours"  # (1 minute + 1 day) / 2
    assert other.relapse == "30\N{NO-BREAK SPACE}minutes"  # a learnt item missed: the relearning step


@pytest.mark.parametrize(
    ("gap", "text"),
    [
        (timedelta(minutes=10), "10 minutes"),
        (timedelta(hours=2, minutes=5), "about 2 hours"),
        (timedelta(minutes=59, seconds=40), "about 1 hour"),  # not "about 60 minutes"
        (timedelta(hours=23, minutes=50), "about 1 day"),
        (timedelta(days=11), "11 days"),
        (timedelta(days=163), "about 5 months"),
        (timedelta(seconds=20), "about 1 minute"),
    ],
)
def test_a_gap_is_written_in_the_largest_unit_that_fits_it(gap, text):
    from interview.dates import gap_text

    written = gap_text(gap)
    assert written.replace("\N{NO-BREAK SPACE}", " ") == text
    assert written.count("\N{NO-BREAK SPACE}") == 1  # the number stays with its unit on a narrow screen


def test_a_gap_is_positive():
    from interview.dates import gap_text

    with pytest.raises(ValueError, match="a gap is positive"):
        gap_text(timedelta(0))


def test_items_due_at_the_same_moment_come_back_in_the_order_they_were_answered(client, db, stopped_clock):
    """Ties on the due time are broken by the card's age, on every database: the page, its list and the API agree."""
    make_lesson(deep_dives=3)
    for key in ("dd-3", "dd-1", "dd-2"):  # missed at one stopped moment: due together
        answer(client, Lesson.objects.get(), key, "weak")
    stopped_clock.shift(timedelta(minutes=11))
    html = client.get(reverse("review")).content.decode()
    assert "How? (dd-3)" in html.split('name="choice"')[0]  # the item asked is the first answered
    listed = client.get("/api/v1/review/").json()
    assert [item["title"] for item in listed] == ["How? (dd-3)", "How? (dd-1)", "How? (dd-2)"]


def test_a_retry_reschedules_the_same_card_only_once_the_item_is_due(client, lesson, stopped_clock):
    """A retry before the item is due is practice: the learner was just shown the approaches."""
    answer(client, lesson, "dd-1", "weak")
    first_due = ReviewCard.objects.get().due
    stopped_clock.shift(timedelta(minutes=1))
    answer(client, lesson, "dd-1", "best")
    card = ReviewCard.objects.get()
    assert card.reviews == 2 and card.latest_answer.choice.verdict == "best"  # counted, and the latest shown
    assert card.due == first_due and card.last_outcome == "incorrect"  # still back in ten minutes
    stopped_clock.shift(timedelta(minutes=10))  # due: answering again is a recall
    answer(client, lesson, "dd-1", "best")
    card = ReviewCard.objects.get()
    assert card.reviews == 3 and card.due > first_due + timedelta(minutes=10) and card.last_outcome == "correct"


def test_trying_a_wrong_approach_after_a_right_answer_keeps_the_item_scheduled(client, lesson, stopped_clock):
    """A learner read a wrong approach's feedback on purpose: the item came back in ten minutes, as a miss."""
    answer(client, lesson, "dd-1", "best")
    right_due = ReviewCard.objects.get().due
    stopped_clock.shift(timedelta(minutes=1))
    answer(client, lesson, "dd-1", "weak")
    card = ReviewCard.objects.get()
    assert card.due == right_due and card.last_outcome == "correct"
    stopped_clock.shift(timedelta(minutes=10))
    assert "Nothing is due right now" in client.get(reverse("review")).content.decode()


def test_review_page_quizzes_a_due_item_afresh(client, lesson, stopped_clock):
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=9))
    assert "Nothing is due right now" in client.get(reverse("review")).content.decode()
    stopped_clock.shift(timedelta(minutes=2))  # the miss comes back ten minutes after the answer
    html = client.get(reverse("review")).content.decode()
    assert "How? (dd-1)" in html and "Pick an approach:" in html
    for choice in DeepDive.objects.get(key="dd-1").choices.all():
        assert f'name="choice" value="{choice.pk}"' in html
    assert "Wastes 60-80%." not in html  # no earlier verdict or feedback on screen
    assert "Missed" not in html and f"{lesson.get_absolute_url()}#dd-dd-1" not in html
    results = client.get(reverse("results")).content.decode()
    assert "1 item due for review" in results


def test_a_review_session_grades_a_recall_reschedules_it_and_never_changes_the_score(client, lesson, stopped_clock):
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    dd = DeepDive.objects.get(key="dd-1")
    card_before = ReviewCard.objects.get()
    response = client.post(
        reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="best").pk}
    )
    assert response.status_code == 303
    html = client.get(response["Location"]).content.decode()
    assert "Recalled" in html and "Holds up." in html
    card = ReviewCard.objects.get()
    assert card.due > START + timedelta(minutes=11, hours=1)  # a recall comes back much later than a miss
    assert card.last_outcome == "correct"
    assert (card.reviews, card.latest_answer_id) == (card_before.reviews, card_before.latest_answer_id)
    # The time says its zone (the site keeps UTC), in the sentence and the session's table.
    # Recalled at 12:11:15 on the stopped clock, back four hours later: written as every time on the site.
    due = '<time datetime="2026-11-30T16:11:15+00:00">30 Nov 2026, 16:11 UTC</time>'
    assert f"It comes back on <strong>{due}</strong> (in 4\xa0hours)." in html
    assert '<th scope="col">Next due</th>' in html and f'<td data-label="Next due">{due}</td>' in html
    assert "1 reviewed · 1 recalled" in html  # the session's summary
    assert "Nothing is due right now" in html
    first = Answer.objects.get()
    assert (Answer.objects.count(), first.points, first.is_first) == (1, 0, True)  # the lesson score stands
    assert "0 of 10 points" in client.get(lesson.get_absolute_url()).content.decode()
    client.post(reverse("review-finish"))
    assert "This session" not in client.get(reverse("review")).content.decode()


def test_a_review_miss_comes_back_in_minutes_and_a_hint_makes_a_recall_hard(client, lesson, stopped_clock):
    from fsrs import Rating

    from lessons.review import review_rating

    assert review_rating("correct", 0) == Rating.Good
    assert review_rating("correct", 1) == Rating.Hard
    assert review_rating("incorrect", 0) == Rating.Again
    answer(client, lesson, "dd-1", "best")
    stopped_clock.shift(timedelta(hours=5))  # a first right answer comes back after four hours
    dd = DeepDive.objects.get(key="dd-1")
    client.post(
        reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="weak").pk}
    )
    card = ReviewCard.objects.get()
    assert card.due == START + timedelta(hours=5, minutes=10)
    assert card.last_outcome == "incorrect"


def test_the_review_page_words_times_as_a_learner_reads_them(client, db, stopped_clock):
    """A miss "comes back in 10 minutes" even when the page shows seconds later; an item due a
    moment ago is "due now", older ones "due 10 minutes ago"; finishing a session says so.

    The clock ticks from its start, as requests take time: "10 minutes" less a few milliseconds reads "9 minutes"."""
    stopped_clock.move_to(START, tick=True)
    lesson = make_lesson(slug="words", deep_dives=3)
    answer(client, lesson, "dd-1", "weak")
    answer(client, lesson, "dd-2", "weak")
    stopped_clock.shift(timedelta(minutes=10))
    answer(client, lesson, "dd-3", "weak")
    stopped_clock.shift(timedelta(minutes=10))  # dd-1 (asked) and dd-2 due 10 minutes ago, dd-3 just now
    html = client.get(reverse("review")).content.decode()
    # Each "due" is a <time>: the moment in its datetime and, on hover, in its title.
    ago = re.search(r'\(Lesson words, due <time datetime="([^"]+)" title="([^"]+)">10\xa0minutes ago</time>\)', html)
    assert ago and ago[2].endswith(" UTC") and ago[1].endswith("+00:00")
    assert re.search(r'\(Lesson words, due <time datetime="[^"]+" title="[^"]+">now</time>\)', html)
    dd = DeepDive.objects.get(key="dd-1")
    response = client.post(
        reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="weak").pk}
    )
    stopped_clock.shift(timedelta(seconds=20))  # the page comes back a moment later
    html = client.get(response["Location"]).content.decode()
    assert "(in 10\xa0minutes)" in html
    finished = client.post(reverse("review-finish"))
    assert finished["Location"].endswith("#messages")  # the browser lands on the message
    html = client.get(finished["Location"]).content.decode()
    assert (
        '<div class="messages" id="messages" role="status" tabindex="-1" data-focus-on-load><ul>' in html
    )  # a list inside the status
    assert "Review session finished: 1 reviewed, 0 recalled." in html
    # The finished session's table of next due dates stays on that page (it vanished with Finish), once.
    assert '<h2 id="summary-title">Session finished</h2>' in html and "Not recalled</td>" in html
    assert "Finish this session" not in html
    assert "summary-title" not in client.get(reverse("review")).content.decode()


def test_a_reset_ends_the_review_session_with_the_answers_it_deleted(client, lesson, stopped_clock):
    """After a reset, "This session" still listed the deleted items, and the next session counted them again."""
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    dd = DeepDive.objects.get(key="dd-1")
    client.post(
        reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="weak").pk}
    )
    assert "summary-title" in client.get(reverse("review")).content.decode()
    client.post(reverse("reset-progress"), {"confirm": "yes"})
    html = client.get(reverse("review")).content.decode()
    assert "summary-title" not in html and "review-result" not in html


def test_a_challenge_in_review_is_graded_on_the_numbers_it_showed(client, lesson, stopped_clock):
    import re

    from calculators.registry import get_calculator

    challenge = lesson.sections.get().challenges.get(key="copies")
    client.post(reverse("answer-challenge", args=[lesson.slug, challenge.pk]), {"value": "1"})
    stopped_clock.shift(timedelta(minutes=11))
    html = client.get(reverse("review")).content.decode()
    shown = int(re.search(r"A cache of (\d+) GB", html).group(1))
    expected = get_calculator("kv-cache").evaluate({"cache_gb": shown}).outputs["copies_per_cache"]
    bad = client.post(reverse("review-answer"), {"kind": "challenge", "id": challenge.pk, "value": "lots"})
    assert bad.status_code == 400 and "Enter a number such as" in bad.content.decode()
    client.post(reverse("review-answer"), {"kind": "challenge", "id": challenge.pk, "value": str(expected)})
    assert ReviewCard.objects.get().last_outcome == "correct"


def test_a_number_in_review_may_carry_the_steps_unit(client, lesson, stopped_clock):
    step = Step.objects.get(title="Preamble size")  # asks for MB
    answer_steps_before(client, step)
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})
    stopped_clock.shift(timedelta(minutes=11))
    refused = client.post(reverse("review-answer"), {"kind": "step", "id": step.pk, "value": "393 ms"})
    assert (
        refused.status_code == 400 and "is a time, but this question asks for a size in MB" in refused.content.decode()
    )
    assert ReviewCard.objects.get(step=step).last_outcome == "incorrect"
    # The field keeps what was typed, takes focus and names the message, so the learner fixes it in place.
    field = re.search(r'<input[^>]*id="review-value"[^>]*>', refused.content.decode()).group(0)
    assert 'value="393 ms"' in field and "autofocus" in field and 'aria-invalid="true"' in field
    response = client.post(reverse("review-answer"), {"kind": "step", "id": step.pk, "value": "375 MiB"})
    assert ReviewCard.objects.get(step=step).last_outcome == "correct"
    # The result says what was answered, in the step's unit, and leads to the step in its lesson (newcomer's finding).
    result = client.get(response["Location"]).content.decode()
    assert "<p><strong>You answered:</strong> 393.216 MB</p>" in result
    assert f'<a href="{step.get_absolute_url()}">Open it in its lesson</a> for its worked arithmetic.' in result


def test_a_walkthrough_step_in_review_shows_the_examples_setup_and_earlier_steps_titles(client, lesson, stopped_clock):
    """Asked away from its walkthrough, a step still shows the numbers it needs: the intro, the titles before it."""
    from lessons.models import Walkthrough

    walkthrough = Walkthrough.objects.get(key="size")
    walkthrough.intro = "64 cards; the hot template takes 80% of its family; the family is 30% of fleet traffic."
    walkthrough.save()
    Step.objects.filter(title="Requests per replica").update(explanation_html="<p>SECRET WORKING</p>")
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})
    stopped_clock.shift(timedelta(minutes=11))
    html = client.get(reverse("review")).content.decode()
    assert "Size it: Preamble size" in html
    assert "64 cards; the hot template takes 80% of its family; the family is 30% of fleet traffic." in html
    assert "<li>Requests per replica</li>" in html and "SECRET WORKING" not in html
    assert (
        "This is step 2 of an example. Its earlier steps ask these questions; where this step needs one of their"
        " answers and does not give it, work it out yourself.</p><ol><li>Requests per replica</li></ol>" in html
    )


def test_a_second_submit_of_a_review_is_refused_and_does_not_reschedule_again(client, lesson, stopped_clock):
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    dd = DeepDive.objects.get(key="dd-1")
    post = {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="best").pk}
    assert client.post(reverse("review-answer"), post).status_code == 303
    card = ReviewCard.objects.get()
    # The same form again (double click, or a second tab): the card is not due any more.
    again = client.post(reverse("review-answer"), post)
    assert again.status_code == 303
    page = client.get(again["Location"]).content.decode()
    assert "already reviewed" in page
    assert ReviewCard.objects.get().card == card.card and ReviewCard.objects.get().due == card.due
    from rest_framework.test import APIClient

    api = APIClient()
    api.cookies = client.cookies
    body = {"type": "deep_dive", "id": dd.pk, "choice": post["choice"]}
    refused = api.post("/api/v1/review/answer/", body, format="json")
    assert refused.status_code == 409 and "already reviewed" in refused.json()["detail"]
    assert ReviewCard.objects.get().card == card.card


def test_an_item_not_in_the_queue_is_refused(client, lesson):
    response = client.post(reverse("review-answer"), {"kind": "deep_dive", "id": "12", "choice": "1"})
    assert response.status_code == 404
    assert "not in your review queue" in response.content.decode()
    assert client.post(reverse("review-answer"), {"kind": "lesson", "id": "x"}).status_code == 404


def test_an_open_question_in_review_is_written_then_ticked(client, lesson, stopped_clock):
    from tests.lessons.factories import make_open_question

    question = make_open_question(lesson.sections.get())
    client.post(reverse("write-open-question", args=[lesson.slug, question.pk]), {"text": "First go."})
    client.post(reverse("answer-open-question", args=[lesson.slug, question.pk]), {"point": []})
    stopped_clock.shift(timedelta(minutes=11))
    html = client.get(reverse("review")).content.decode()
    assert "Walk me through a replica dying." in html and "Point 1 a strong" not in html
    saved = client.post(reverse("review-answer"), {"kind": "open_question", "id": question.pk, "text": "Retry it."})
    assert saved.status_code == 303 and saved["Location"].endswith("/review/#review-written")
    html = client.get(saved["Location"]).content.decode()
    assert "Point 1 a strong" in html and "Retry it." in html
    # Kept: coming back to review (a reload, a visit elsewhere) shows it with its checklist, not an empty box.
    again = client.get(reverse("review")).content.decode()
    assert "<blockquote><p>Retry it.</p></blockquote>" in again and "Point 1 a strong" in again
    points = list(question.checklist.values_list("pk", flat=True))
    client.post(reverse("review-answer"),
                {"kind": "open_question", "id": question.pk, "text": "Retry it.", "checked": "yes", "points": points})  # fmt: skip
    assert ReviewCard.objects.get().last_outcome == "correct"
    assert Answer.objects.get().points == 0  # the lesson score stands
    assert "Retry it." not in client.get(reverse("review")).content.decode()  # graded: the kept text goes


def test_a_kept_review_answer_never_returns_with_a_later_review_of_its_question(client, lesson, stopped_clock):
    """Kept until its checklist is ticked in this review: graded another way (the API), the card moved on,
    and the old text came back days later with the checklist beside it."""
    from tests.lessons.factories import make_open_question

    question = make_open_question(lesson.sections.get())
    client.post(reverse("write-open-question", args=[lesson.slug, question.pk]), {"text": "First go."})
    client.post(reverse("answer-open-question", args=[lesson.slug, question.pk]), {"point": []})
    stopped_clock.shift(timedelta(minutes=11))
    client.post(reverse("review-answer"), {"kind": "open_question", "id": question.pk, "text": "Old text."})
    card = ReviewCard.objects.get()
    ReviewCard.objects.filter(pk=card.pk).update(due=card.due + timedelta(days=3))  # reviewed elsewhere, due later
    stopped_clock.shift(timedelta(days=4))
    html = client.get(reverse("review")).content.decode()
    assert "Walk me through a replica dying." in html and "Old text." not in html


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


def test_review_api(lesson, token_api, stopped_clock):
    api = token_api
    dd = DeepDive.objects.get(key="dd-1")
    api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.get(verdict="weak").pk}, format="json")
    assert api.get("/api/v1/review/").json() == []
    stopped_clock.shift(timedelta(minutes=11))
    [item] = api.get("/api/v1/review/").json()
    assert item["title"] == "How? (dd-1)"
    assert item["url"].endswith("/lessons/sample/?layer=2&section=core#dd-dd-1")


def test_due_count_and_review_list_agree_when_a_lesson_is_unpublished(client, lesson, stopped_clock):
    other = make_lesson(slug="other", deep_dives=1)
    answer(client, lesson, "dd-1", "weak")
    answer(client, other, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    other.published = False
    other.save(update_fields=["published"])  # as the admin does: a content edit, a new generation
    assert "1 item due for review" in client.get(reverse("results")).content.decode()
    html = client.get(reverse("review")).content.decode()
    assert "Lesson sample · 1 due" in html and "Lesson other" not in html


def test_home_page_points_a_returning_learner_at_what_is_due(client, lesson, stopped_clock):
    answer(client, lesson, "dd-1", "weak")
    assert "due for review" not in client.get("/").content.decode()
    stopped_clock.shift(timedelta(minutes=11))
    assert "1 due for review" in client.get("/").content.decode()


def test_a_review_session_through_the_api(lesson, token_api, stopped_clock):
    api = token_api
    dd = DeepDive.objects.get(key="dd-1")
    api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.get(verdict="weak").pk}, format="json")
    assert api.get("/api/v1/review/next/").json() == {"due": 0, "item": None}
    stopped_clock.shift(timedelta(minutes=11))
    body = api.get("/api/v1/review/next/").json()
    item = body["item"]
    assert (body["due"], item["type"], item["id"]) == (1, "deep_dive", dd.pk)
    assert sorted(c["id"] for c in item["choices"]) == sorted(dd.choices.values_list("pk", flat=True))
    assert "verdict" not in str(item) and "Wastes" not in str(item)
    bad = api.post("/api/v1/review/answer/", {"type": "deep_dive", "id": dd.pk, "choice": 0}, format="json")
    assert bad.status_code == 400 and "choice" in bad.json()["errors"]
    best = dd.choices.get(verdict="best").pk
    body = api.post("/api/v1/review/answer/", {"type": "deep_dive", "id": dd.pk, "choice": best}, format="json").json()
    assert (body["outcome"], body["recalled"]) == ("correct", True)
    card = ReviewCard.objects.get()
    assert body["next_due"].startswith(f"{card.due:%Y-%m-%dT%H:%M}") and card.due > START + timedelta(hours=1)
    assert Answer.objects.get().points == 0  # the lesson score stands
    missing = api.post("/api/v1/review/answer/", {"type": "step", "id": 1, "value": "3"}, format="json")
    assert missing.status_code == 404


def test_a_hint_taken_in_review_makes_the_recall_come_back_sooner(client, lesson, stopped_clock):
    dd = DeepDive.objects.get(key="dd-1")
    dd.hints = ["Think of virtual memory."]
    dd.save()
    for key in ("dd-1", "dd-2"):
        answer(client, lesson, key, "weak")
    stopped_clock.shift(timedelta(minutes=11))
    html = client.get(reverse("review") + "?hints=1").content.decode()
    assert "Think of virtual memory." in html and 'name="hints" value="1"' in html
    best = {key: DeepDive.objects.get(key=key).choices.get(verdict="best").pk for key in ("dd-1", "dd-2")}
    client.post(reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": best["dd-1"], "hints": "1"})
    other = DeepDive.objects.get(key="dd-2")
    client.post(reverse("review-answer"), {"kind": "deep_dive", "id": other.pk, "choice": best["dd-2"]})
    helped, unaided = ReviewCard.objects.get(deep_dive=dd), ReviewCard.objects.get(deep_dive=other)
    assert helped.last_outcome == unaided.last_outcome == "correct"
    assert helped.due < unaided.due


def test_a_step_that_no_longer_asks_a_number_leaves_the_review(client, lesson, stopped_clock):
    step = Step.objects.get(title="Requests per replica")
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})
    stopped_clock.shift(timedelta(minutes=11))
    assert "Requests per replica" in client.get(reverse("review")).content.decode()
    Step.objects.filter(pk=step.pk).update(calculator="", unit="", output="", tolerance=None)
    assert "Nothing is due right now" in client.get(reverse("review")).content.decode()
    response = client.post(reverse("review-answer"), {"kind": "step", "id": step.pk, "value": "1"})
    assert response.status_code == 404


def test_hints_shown_in_review_count_however_many_the_answer_says(client, lesson, stopped_clock):
    """The server remembers the hints it showed: posting hints=0 does not turn a hinted recall into a Good."""
    from fsrs import Card

    from lessons.review import SCHEDULER, review_rating

    DeepDive.objects.filter(key="dd-1").update(hints=["Think of the cache."], hints_html=["<p>Think of the cache.</p>"])
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    assert "Think of the cache." in client.get(reverse("review"), {"hints": "1"}).content.decode()
    card = ReviewCard.objects.get()
    hard, good = (
        SCHEDULER.review_card(
            Card.from_dict(card.card), review_rating("correct", hints), review_datetime=START + timedelta(minutes=11)
        )[0].due
        for hints in (1, 0)
    )
    assert hard != good
    dd = DeepDive.objects.get(key="dd-1")
    post = {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="best").pk, "hints": "0"}
    response = client.post(reverse("review-answer"), post)
    assert response.status_code == 303
    assert ReviewCard.objects.get().due == hard
    # The result says the hint helped, as the schedule counts it ("Recalled" alone read as an unaided recall).
    html = client.get(response["Location"]).content.decode()
    assert '<h2 id="review-result-title">Recalled with a hint</h2>' in html
    assert '<td data-label="Result">Recalled with a hint</td>' in html  # the session's table says it alike


def good_recall_due(card: ReviewCard):
    """Return when an unaided right recall of ``card`` comes back, reviewed 11 minutes after START (FSRS's Good)."""
    from fsrs import Card

    from lessons.review import SCHEDULER, review_rating

    when = START + timedelta(minutes=11)
    state, _log = SCHEDULER.review_card(Card.from_dict(card.card), review_rating("correct", 0), review_datetime=when)
    return state.due


def test_hints_an_author_removed_no_longer_count_against_a_review(client, lesson, stopped_clock):
    """A hint shown in review, then removed by the author: a right recall with no hint on screen is Good."""
    dd = DeepDive.objects.get(key="dd-1")
    dd.hints = ["Think of the cache.", "Pages."]
    dd.save()  # as the admin saves it: the hints rendered anew
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    assert "Pages." in client.get(reverse("review"), {"hints": "2"}).content.decode()
    assert ReviewCard.objects.get().hints_shown == 2
    dd.hints = ["Think of the cache."]  # one removed: the page counts the one there is
    dd.save()
    html = client.get(reverse("review"), {"hints": "2"}).content.decode()
    assert "Think of the cache." in html and "Pages." not in html and "Hint 2" not in html
    assert 'name="hints" value="1" form="review-answer"' in html and "Take hint" not in html
    dd.hints = []  # all removed: no hint on screen, none counted
    dd.save()
    html = client.get(reverse("review")).content.decode()
    assert 'id="review-hints"' not in html and "Think of the cache." not in html
    good = good_recall_due(ReviewCard.objects.get())
    post = {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="best").pk, "hints": "2"}
    response = client.post(reverse("review-answer"), post)  # an old form's claim counts no removed hint either
    assert response.status_code == 303
    card = ReviewCard.objects.get()
    assert (card.last_outcome, card.due, card.hints_shown) == ("correct", good, 0)
    html = client.get(response["Location"]).content.decode()
    assert '<h2 id="review-result-title">Recalled</h2>' in html and "with a hint" not in html


def test_hints_an_author_removed_no_longer_count_against_a_review_through_the_api(lesson, token_api, stopped_clock):
    api = token_api
    dd = DeepDive.objects.get(key="dd-1")
    dd.hints = ["Think of the cache."]
    dd.save()
    api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.get(verdict="weak").pk}, format="json")
    stopped_clock.shift(timedelta(minutes=11))
    item = api.get("/api/v1/review/next/", {"hints": 1}).json()["item"]
    assert (len(item["hints"]), item["hints_total"]) == (1, 1)
    dd.hints = []
    dd.save()
    item = api.get("/api/v1/review/next/", {"hints": 1}).json()["item"]
    assert (item["hints"], item["hints_total"]) == ([], 0)
    good = good_recall_due(ReviewCard.objects.get())
    best = dd.choices.get(verdict="best").pk
    body = api.post("/api/v1/review/answer/", {"type": "deep_dive", "id": dd.pk, "choice": best}, format="json").json()
    assert (body["outcome"], body["recalled"]) == ("correct", True)
    assert ReviewCard.objects.get().due == good  # Good, not Hard


def choice_order(html: str) -> list[str]:
    return re.findall(r'name="choice" value="(\d+)"', html)


def test_showing_a_review_hint_keeps_the_item_as_it_was_and_lands_at_the_hints(client, lesson, stopped_clock):
    DeepDive.objects.filter(key="dd-1").update(
        hints=["Think of the cache.", "Pages."], hints_html=["<p>Think of the cache.</p>", "<p>Pages.</p>"]
    )
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    html = client.get(reverse("review")).content.decode()
    order = choice_order(html)
    assert 'action="/review/#review-item"' in html  # without JS the page comes back at the item
    assert "Take hint 1 of 2</button>" in html
    html = client.get(reverse("review"), {"hints": "1"}).content.decode()
    assert "Think of the cache." in html and "Pages." not in html
    assert "Take hint 2 of 2</button>" in html
    assert choice_order(html) == order  # the approaches keep their order while the item is on screen
    fragment = client.get(reverse("review"), {"hints": "2"}, HTTP_HX_REQUEST="true").content.decode()
    assert "<h1>" not in fragment and 'id="review-hints"' in fragment  # htmx swaps the hints region only
    assert re.search(r'tabindex="-1" data-focus[^>]*>\s*<p class="eyebrow">Hint 2', fragment)  # focus: the new hint
    assert "Take hint" not in fragment  # both shown
    assert 'name="hints" value="2" form="review-answer"' in fragment  # the answer says how many it saw


def test_the_review_pages_due_count_is_the_results_pages(client, lesson, stopped_clock):
    """Both pages count the items due as results does (an item no longer graded is not due)."""
    step = Step.objects.get(title="Requests per replica")
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    Step.objects.filter(pk=step.pk).update(calculator="", unit="", output="", tolerance=None)
    assert "1 item due for review" in client.get(reverse("results")).content.decode()
    html = client.get(reverse("review")).content.decode()
    assert "Lesson sample · 1 due" in html


def test_the_review_page_says_how_many_more_are_due_than_it_lists(client, db, stopped_clock, monkeypatch):
    from lessons import review

    lesson = make_lesson(slug="many", deep_dives=5)
    for n in range(1, 6):
        answer(client, lesson, f"dd-{n}", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    html = client.get(reverse("review")).content.decode()
    assert "Lesson many · 5 due" in html and "more due" not in html  # all five: one asked, four listed
    monkeypatch.setattr(review, "DUE_LIST_LIMIT", 3)
    html = client.get(reverse("review")).content.decode()
    assert html.count("(Lesson many, due ") == 2  # one asked, two listed
    assert "…and 2 more due, not listed here." in html


def test_the_due_list_is_full_though_older_cards_are_of_steps_no_longer_graded(
    client, lesson, stopped_clock, monkeypatch
):
    """Cards of steps that no longer ask a number are left out before the list is cut, not after."""
    from lessons import review

    for step in Step.objects.exclude(calculator=""):  # the two most overdue cards
        client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})
    stopped_clock.shift(timedelta(minutes=1))
    answer(client, lesson, "dd-1", "weak")
    answer(client, lesson, "dd-2", "weak")
    stopped_clock.shift(timedelta(minutes=20))
    Step.objects.update(calculator="", unit="", output="", tolerance=None)  # an author turned them into prose
    monkeypatch.setattr(review, "DUE_LIST_LIMIT", 2)
    listed = client.get("/api/v1/review/").json()
    assert [item["title"] for item in listed] == ["How? (dd-1)", "How? (dd-2)"]
    html = client.get(reverse("review")).content.decode()
    assert "Lesson sample · 2 due" in html and "(Lesson sample, due " in html  # one asked, the other listed


def test_every_page_header_links_to_review_and_marks_it_there(client, lesson):
    home = client.get(reverse("home")).content.decode()
    assert f'<a href="{reverse("review")}">Review</a>' in home
    page = client.get(reverse("review")).content.decode()
    assert f'<a href="{reverse("review")}" aria-current="page">Review</a>' in page
    assert 'aria-current="page">Lessons</a>' not in page


def test_a_signed_in_header_names_the_account_on_every_page(client, lesson, learner_user):
    """The header's account link reads the username (a method: Jinja2 calls it only when told to)."""
    client.force_login(learner_user)
    for name in ("home", "review", "results", "interviews"):
        html = client.get(reverse(name)).content.decode()
        assert f'<li class="nav-account"><a href="{reverse("account")}">ada</a>' in html, name


def test_with_nothing_due_review_and_results_say_when_the_next_item_comes_back(client, lesson, stopped_clock):
    """Both pages give the next due time as review's "It comes back on" does (UTC, a <time>); review counts
    every scheduled item. Past that time the item is asked; once reviewed, the next one is named."""
    answer(client, lesson, "dd-1", "best")  # a first right answer comes back in four hours: 16:00:15
    stopped_clock.shift(timedelta(minutes=30))
    answer(client, lesson, "dd-2", "best")  # 16:30:15
    first = '<strong><time datetime="2026-11-30T16:00:15+00:00">30 Nov 2026, 16:00 UTC</time></strong>'
    html = client.get(reverse("review")).content.decode()
    assert (
        f"Nothing is due right now. The next item comes back on {first} (in 3\xa0hours, 30\xa0minutes); "
        "2 items are scheduled in all." in html
    )
    results = client.get(reverse("results")).content.decode()
    assert f"Nothing is due for review right now. The next item comes back on {first} (in 3\xa0hours" in results
    stopped_clock.shift(timedelta(hours=3, minutes=31))  # 16:01:15: dd-1 is due, dd-2 not yet
    html = client.get(reverse("review")).content.decode()
    assert "Nothing is due right now" not in html and "How? (dd-1)" in html
    assert "1 item due for review" in client.get(reverse("results")).content.decode()
    dd = DeepDive.objects.get(key="dd-1")
    client.post(
        reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="best").pk}
    )
    second = '<strong><time datetime="2026-11-30T16:30:15+00:00">30 Nov 2026, 16:30 UTC</time></strong>'
    html = client.get(reverse("review")).content.decode()
    assert f"The next item comes back on {second} (in 29\xa0minutes); 2 items are scheduled in all." in html
    assert f"The next item comes back on {second}" in client.get(reverse("results")).content.decode()
    stopped_clock.shift(timedelta(minutes=28, seconds=30))  # 16:29:45, half a minute before it comes back
    assert (
        f"The next item comes back on {second} (in under a minute);" in client.get(reverse("review")).content.decode()
    )
    assert "(in under a minute)." in client.get(reverse("results")).content.decode()


def test_with_nothing_scheduled_the_pages_name_no_next_time(client, lesson, stopped_clock):
    step = Step.objects.get(title="Requests per replica")
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})
    Step.objects.filter(pk=step.pk).update(calculator="", unit="", output="", tolerance=None)  # no longer graded
    html = client.get(reverse("review")).content.decode()
    assert "Nothing is due right now. Come back later" in html and "next item" not in html
    assert (
        "Nothing is due for review right now. A first answer schedules"
        in client.get(reverse("results")).content.decode()
    )


def test_the_review_page_with_nothing_due_reads_as_many_queries_for_one_scheduled_item_as_for_many(
    client, db, stopped_clock
):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    lesson = make_lesson(deep_dives=6)
    counts = []
    for keys, said in ((["dd-1"], "1 item is scheduled"), (["dd-2", "dd-3", "dd-4", "dd-5", "dd-6"], "6 items are")):
        for key in keys:
            answer(client, lesson, key, "best")
        client.get(reverse("review"))  # the content cache filled
        with CaptureQueriesContext(connection) as queries:
            assert said in client.get(reverse("review")).content.decode()
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_the_review_list_gives_what_the_review_answer_takes(lesson, token_api, stopped_clock):
    """Each listed item names its lesson by slug (as results and /review/next/ do), with its title beside,
    and carries the type and id that POST /api/v1/review/answer/ answers it with."""
    api = token_api
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(api, step)
    api.post(f"/api/v1/steps/{step.pk}/answer/", {"value": "1"}, format="json")
    dd = DeepDive.objects.get(key="dd-1")
    api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.get(verdict="weak").pk}, format="json")
    stopped_clock.shift(timedelta(minutes=11))
    listed = api.get("/api/v1/review/").json()
    assert [(item["type"], item["id"]) for item in listed] == [("step", step.pk), ("deep_dive", dd.pk)]
    assert {(item["lesson"], item["lesson_title"]) for item in listed} == {("sample", "Lesson sample")}
    assert api.get("/api/v1/results/").json()["misses"][0]["lesson"] == listed[0]["lesson"]
    asked = api.get("/api/v1/review/next/").json()["item"]
    assert (asked["lesson"], asked["lesson_title"]) == (listed[0]["lesson"], listed[0]["lesson_title"])  # alike
    first = listed[0]
    answered = api.post(
        "/api/v1/review/answer/", {"type": first["type"], "id": first["id"], "value": "375 MiB"}, format="json"
    )
    assert answered.status_code == 200 and answered.json()["outcome"] == "correct"
    assert [(item["type"], item["id"]) for item in api.get("/api/v1/review/").json()] == [("deep_dive", dd.pk)]


def test_the_schema_documents_the_review_lists_fields_with_the_answers_type(db):
    from drf_spectacular.generators import SchemaGenerator

    components = SchemaGenerator().get_schema(request=None, public=True)["components"]["schemas"]
    item = components["ReviewItem"]["properties"]
    assert {"type", "id", "lesson", "lesson_title"} <= set(item)
    assert item["lesson"]["description"] == "The lesson's slug."
    answer_type = components["ReviewAnswerRequest"]["properties"]["type"]
    assert item["type"] == answer_type == {"$ref": "#/components/schemas/ReviewAnswerTypeEnum"}


def test_the_review_page_says_where_you_stand_before_how_the_schedule_works(client, db):
    """A newcomer read seven lines about FSRS before the page said whether anything was due: one sentence,
    then the status; the schedule's workings are a disclosure to open."""
    html = client.get(reverse("review")).content.decode()
    top = html[html.index("<h1>Review</h1>") : html.index("Answer a few questions in the")]
    shown = re.sub(r"<details.*?</details>", "", top, flags=re.S)
    assert len(re.sub(r"<[^>]+>", "", shown).split()) <= 30  # a sentence, not a paragraph
    assert "<summary>How the schedule works</summary>" in top and "FSRS" in top


def test_a_prompt_with_an_ampersand_reads_as_written_in_review(client, lesson, stopped_clock):
    """A title made of a rendered prompt is plain text: "Q&A", not "Q&amp;A" escaped a second time."""
    dd = DeepDive.objects.get(key="dd-1")
    dd.prompt = "Prefill & decode on one card: what do you split first?"
    dd.save()
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    response = client.post(
        reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": dd.choices.get(verdict="best").pk}
    )
    html = client.get(response["Location"]).content.decode()
    assert "Prefill &amp; decode on one card" in html  # escaped once, as any text on a page
    assert "&amp;amp;" not in html


def test_a_right_recall_in_review_makes_a_miss_right_on_a_retry_until_a_later_answer(client, lesson, stopped_clock):
    """A miss recalled right on the review page still said "missed" in the outline and the results: only a retry on
    the lesson page counted. The latest try is the latest, wherever it was given; the first answer still scores."""
    answer(client, lesson, "dd-1", "weak")
    stopped_clock.shift(timedelta(minutes=11))
    dd = DeepDive.objects.get(key="dd-1")
    best = dd.choices.get(verdict="best")
    client.post(reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": best.pk})
    results = client.get(reverse("results")).content.decode()
    assert "Missed, 0 of 10 points · right on a retry" in results
    outline = client.get(lesson.get_absolute_url()).content.decode()
    assert '<span class="mark mark-retried" id="mark-dd-dd-1">' in outline
    assert client.get("/api/v1/results/").json()["misses"][0]["right_on_retry"] is True
    assert "0 of 10 points" in outline  # the score stands
    answer(client, lesson, "dd-1", "weak")  # a wrong retry on the lesson page after it: the latest try again
    results = client.get(reverse("results")).content.decode()
    assert "Missed, 0 of 10 points" in results and "right on a retry" not in results
    assert '<span class="mark mark-missed" id="mark-dd-dd-1">' in client.get(lesson.get_absolute_url()).content.decode()


def test_a_merged_card_keeps_the_recall_of_the_card_whose_latest_answer_it_keeps(client, lesson, stopped_clock):
    """Signing in merges the visitor's cards into the account's: where the account's card has no latest answer and
    takes the visitor's, the visitor's recall since that answer comes with it (it kept its own, blank)."""
    from lessons.review import merge_cards

    answer(client, lesson, "dd-1", "weak")
    visitor = ReviewCard.objects.get()
    ReviewCard.objects.filter(pk=visitor.pk).update(recall_outcome="correct")  # a right recall on the review page
    account = Learner.objects.create(session_key="the-account")
    ReviewCard.objects.create(learner=account, deep_dive=visitor.deep_dive, card=visitor.card, due=visitor.due,
                              last_outcome="incorrect")  # fmt: skip
    merge_cards(visitor.learner_id, account.pk)
    kept = ReviewCard.objects.get(learner=account)
    assert (kept.latest_answer_id, kept.recall_outcome) == (visitor.latest_answer_id, "correct")


def test_a_deep_dive_waiting_for_its_follow_up_is_not_asked_in_review(client, lesson, stopped_clock):
    """A weak answer that opened a follow-up came back in review ten minutes later and showed its feedback and the
    best approach's, which the lesson page holds back until the follow-up is answered (code review's finding). It
    joins the queue, and the counts, once the follow-up is answered."""
    dd = DeepDive.objects.get(key="dd-1")
    follow_up = make_deep_dive(dd.section, key="fix-it", order=5)
    weak = dd.choices.get(verdict="weak")
    weak.follow_up = follow_up
    weak.save()
    answer(client, lesson, "dd-1", "weak")  # opens the follow-up, left unanswered
    stopped_clock.shift(timedelta(minutes=11))
    review_page = client.get(reverse("review")).content.decode()
    assert "Wastes 60-80%." not in review_page and "Holds up." not in review_page
    assert "Nothing is due right now" in review_page
    assert "A question whose answer opened a follow-up waits until you have answered the follow-up." in review_page
    assert client.get("/api/v1/review/").json() == []
    refused = client.post(reverse("review-answer"), {"kind": "deep_dive", "id": dd.pk, "choice": weak.pk})
    assert refused.status_code in (400, 404, 409) and ReviewCard.objects.get(deep_dive=dd).reviews == 1
    assert "Nothing is due for review right now." in client.get(reverse("results")).content.decode()
    answer(client, lesson, "fix-it", "best")  # the follow-up answered: the deep dive may be asked again
    assert [row["id"] for row in client.get("/api/v1/review/").json()] == [dd.pk]
    assert "How? (dd-1)" in client.get(reverse("review")).content.decode()


@pytest.mark.django_db
def test_an_answer_reads_its_review_card_once_first_answer_or_retry(client):
    """The page reads the learner's state (their review cards) before it stores an answer; a first answer, finding
    no card, read the table again in ``schedule`` before creating one: a statement on every first answer."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    lesson = make_lesson(deep_dives=2)
    answer(client, lesson, "dd-1", "best")  # a learner with a history (a new one has no cards to read)
    for verdict in ("weak", "best"):  # a first answer, then a retry
        with CaptureQueriesContext(connection) as captured:
            assert answer(client, lesson, "dd-2", verdict).status_code == 303
        card_reads = [
            q for q in captured.captured_queries if re.match(r'SELECT .* FROM "lessons_reviewcard"', q["sql"])
        ]
        assert len(card_reads) == 1, verdict
    card = ReviewCard.objects.get(deep_dive__key="dd-2")
    assert (card.reviews, card.first_answer.choice.verdict, card.latest_answer.choice.verdict) == (2, "weak", "best")
