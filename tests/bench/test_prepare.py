"""The bench's data: the generated lessons, the 10,000-answer history, queries that do not grow with them."""

from io import StringIO

import pytest
from django.apps import apps
from django.core.management import call_command
from django.test import Client

from bench import prepare, scale
from lessons.content.validate import giveaway_warnings
from lessons.models import Choice, DeepDive, Step


@pytest.fixture
def generated_lessons(db, tmp_path):
    """The bench track with its lessons of 2 and 200 deep dives, loaded as `make bench` loads them."""
    call_command("load_content", dir=scale.write_content(tmp_path, shipped=False), verbosity=0)


def test_the_generated_lessons_pass_the_give_away_rules_as_real_content_must(db, tmp_path):
    """Every generated deep dive had its best choice third longest: preparing the bench printed a warning
    naming all 200 of them. Which choice is best, where it stands and how long it is now go round."""
    for deep_dives in (scale.SMALL, scale.LARGE):
        assert giveaway_warnings(scale.generated_lesson(deep_dives)) == []
    printed = StringIO()
    call_command("load_content", dir=scale.write_content(tmp_path, shipped=False), stdout=printed, stderr=printed)
    assert "Warning" not in printed.getvalue()
    # The same size as before: 3 choices to each deep dive, one best, 2 and 200 deep dives.
    for deep_dives in (scale.SMALL, scale.LARGE):
        dives = DeepDive.objects.filter(section__lesson__slug=scale.lesson_slug(deep_dives))
        assert dives.count() == deep_dives
        choices = Choice.objects.filter(deep_dive__in=dives)
        assert (choices.count(), choices.filter(verdict="best").count()) == (3 * deep_dives, deep_dives)


def test_the_large_lesson_offers_200_deep_dives_to_answer(generated_lessons):
    client = prepare.sign_in("reader")
    assert len(prepare.lesson_forms(client, prepare.lesson_url(scale.LARGE))) == 200
    assert len(prepare.lesson_forms(client, prepare.lesson_url(scale.SMALL))) == 2


def test_a_history_grows_to_10000_answers_that_the_pages_show(generated_lessons):
    small_url = prepare.lesson_url(scale.SMALL)
    client = prepare.sign_in("keen")
    first_pk = prepare.last_answer_pk()
    forms = prepare.answer_everything(client, [small_url])
    retries_from = prepare.last_answer_pk()
    prepare.retry_everything(client, forms)
    assert prepare.grow_history(first_pk, retries_from, prepare.BIG_HISTORY) == 10_000
    assert apps.get_model("lessons", "Answer").objects.count() == 10_000
    assert client.get(small_url).status_code == 200
    assert client.get("/results/").status_code == 200


def test_queries_do_not_grow_with_the_lesson_or_the_history(generated_lessons):
    small_url, large_url = prepare.lesson_url(scale.SMALL), prepare.lesson_url(scale.LARGE)
    newcomer, keen = prepare.sign_in("newcomer"), prepare.sign_in("keen")
    forms = prepare.answer_everything(keen, [small_url])
    first_pk, retries_from = 0, prepare.last_answer_pk()
    prepare.retry_everything(keen, forms)
    prepare.grow_history(first_pk, retries_from, 2_000)
    prepare.answer_half(newcomer, prepare.lesson_forms(newcomer, small_url))
    prepare.answer_half(newcomer, prepare.lesson_forms(newcomer, large_url)[:20])

    small_lesson = prepare.count_queries(newcomer, "GET", small_url)
    assert prepare.count_queries(newcomer, "GET", large_url) == small_lesson
    assert prepare.count_queries(keen, "GET", small_url) == small_lesson
    assert prepare.count_queries(keen, "GET", "/results/") == prepare.count_queries(newcomer, "GET", "/results/")
    assert prepare.count_queries(Client(), "GET", large_url) == prepare.count_queries(Client(), "GET", small_url)


def test_every_answer_the_answer_target_sends_is_answered_200_round_after_round(content):
    """wrk repeats the answer target's requests: a learner's pick of an approach that opens a follow-up, and is not
    the best, makes its deep dive take no other try until that follow-up is answered (409), which the target never
    answers, so those picks are left out (prepare.steady_pick) and every request, sent again and again, is a 200."""
    answerers = [prepare.sign_in(f"answerer-{n}") for n in range(3)]
    forms = prepare.lesson_forms(answerers[0], prepare.CASE_STUDY, walkthroughs=False)
    for client in answerers:
        prepare.answer_half(client, forms)
    target = prepare.answer_target(forms, answerers)
    leading = Choice.objects.filter(follow_up__isnull=False, deep_dive__section__lesson__slug="llm-serving-platform")
    assert leading.exclude(verdict="best").exists()  # the case study has such approaches: the test means something
    for _ in range(2):
        for client, form, body in target:
            response = client.post(
                form.action, body, content_type="application/x-www-form-urlencoded", HTTP_HX_REQUEST="true"
            )
            assert response.status_code == 200, (form.action, body, response.content[:300])


def test_the_learner_who_answers_everything_answers_every_step_and_follow_up(content):
    """A walkthrough's next step opens once the step before it is answered: reading the pages once found step 1 of
    each walkthrough only (1 of the 4 steps of the speculative-decoding envelope), and the full history shrank."""
    client = prepare.sign_in("keen")
    prepare.answer_everything(client, [prepare.CASE_STUDY, "/lessons/speculative-decoding/"])
    lessons = ("llm-serving-platform", "speculative-decoding")
    numeric = Step.objects.filter(walkthrough__section__lesson__slug__in=lessons).exclude(calculator="")
    answers = apps.get_model("lessons", "Answer").objects
    assert set(answers.filter(step__isnull=False).values_list("step", flat=True)) == set(
        numeric.values_list("pk", flat=True)
    )
    reached = Choice.objects.filter(deep_dive__section__lesson__slug__in=lessons, follow_up__isnull=False,
                                    pk__in=answers.values("choice"))  # fmt: skip
    assert reached.exists()
    assert set(reached.values_list("follow_up", flat=True)) <= set(answers.values_list("deep_dive", flat=True))
