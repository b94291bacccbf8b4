"""Data migrations: answers given before review cards existed get one, with their history and first answer."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@pytest.mark.django_db(transaction=True)
def test_backfill_builds_cards_from_earlier_answers():
    executor = MigrationExecutor(connection)
    executor.migrate([("lessons", "0007_review_card_latest_answer")])
    apps = executor.loader.project_state([("lessons", "0007_review_card_latest_answer")]).apps
    Track, Lesson, Section = (apps.get_model("lessons", m) for m in ("Track", "Lesson", "Section"))
    DeepDive, Learner, Answer = (apps.get_model("lessons", m) for m in ("DeepDive", "Learner", "Answer"))
    track = Track.objects.create(slug="t", title="T")
    lesson = Lesson.objects.create(track=track, slug="l", title="L", kind="concept", summary="s", published=True)
    section = Section.objects.create(lesson=lesson, key="s", layer=1, order=1, title="S")
    dd = DeepDive.objects.create(section=section, key="d", order=1, topic="batching", prompt="?")
    learner = Learner.objects.create()
    answers = [
        Answer.objects.create(learner=learner, deep_dive=dd, outcome=o, points=0, max_points=10, is_first=i == 0)
        for i, o in enumerate(["incorrect", "partial", "correct"])
    ]
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    from lessons.models import ReviewCard

    card = ReviewCard.objects.get()
    assert card.reviews == 3
    assert card.latest_answer_id == answers[-1].pk
    assert card.first_answer_id == answers[0].pk  # 0012 names the scoring answer on the card
    assert card.last_outcome == "correct"


@pytest.mark.django_db(transaction=True)
def test_removing_choice_points_keeps_the_scores_already_earned():
    before, after = ("lessons", "0017_topics_as_data"), ("lessons", "0018_choice_points_follow_verdict")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    apps = executor.loader.project_state([before]).apps
    Track, Lesson, Section = (apps.get_model("lessons", m) for m in ("Track", "Lesson", "Section"))
    DeepDive, Choice, Learner, Answer = (
        apps.get_model("lessons", m) for m in ("DeepDive", "Choice", "Learner", "Answer")
    )
    track = Track.objects.create(slug="t", title="T")
    lesson = Lesson.objects.create(track=track, slug="l", title="L", kind="concept", summary="s", published=True)
    section = Section.objects.create(lesson=lesson, key="s", layer=1, order=1, title="S")
    dd = DeepDive.objects.create(section=section, key="d", order=1, topic_id="batching", prompt="?", points=10)
    odd = Choice.objects.create(deep_dive=dd, order=1, text="a", verdict="acceptable", points=3, feedback="f")
    answer = Answer.objects.create(
        learner=Learner.objects.create(), deep_dive=dd, choice=odd, outcome="partial", points=3, max_points=10,
        is_first=True,
    )  # fmt: skip
    executor = MigrationExecutor(connection)
    executor.migrate([after])
    executor.loader.build_graph()
    executor.migrate(executor.loader.graph.leaf_nodes())
    from lessons.models import Answer as AnswerNow
    from lessons.models import Choice as ChoiceNow

    assert AnswerNow.objects.get(pk=answer.pk).points == 3  # the score earned stays
    assert ChoiceNow.objects.select_related("deep_dive").get(pk=odd.pk).points == 5  # new answers: half of 10


def test_the_rows_transactional_tests_reseed_are_what_the_migrations_seed(db):
    from django.contrib.auth.models import Group

    from lessons.models import Topic
    from tests.conftest import _seed_migration_rows

    group = Group.objects.get(name="Instructors")
    migrated = set(group.permissions.values_list("codename", flat=True))
    topics = list(Topic.objects.values_list("slug", "name", "order"))
    Group.objects.all().delete()
    Topic.objects.all().delete()
    _seed_migration_rows()
    assert set(Group.objects.get(name="Instructors").permissions.values_list("codename", flat=True)) == migrated
    assert list(Topic.objects.values_list("slug", "name", "order")) == topics


@pytest.mark.django_db(transaction=True)
def test_follow_ups_reached_before_the_flag_existed_stay_reached():
    """0022 records on a practice row each follow-up an earlier answer opened, once, hints kept."""
    before = ("lessons", "0021_content_generation")
    executor = MigrationExecutor(connection)
    executor.migrate([before])
    apps = executor.loader.project_state([before]).apps
    Track, Lesson, Section = (apps.get_model("lessons", m) for m in ("Track", "Lesson", "Section"))
    DeepDive, Choice, Learner, Answer, ItemPractice = (
        apps.get_model("lessons", m) for m in ("DeepDive", "Choice", "Learner", "Answer", "ItemPractice")
    )
    track = Track.objects.create(slug="t", title="T")
    lesson = Lesson.objects.create(track=track, slug="l", title="L", kind="concept", summary="s", published=True)
    section = Section.objects.create(lesson=lesson, key="s", layer=1, order=1, title="S")
    parent, follow, other = (
        DeepDive.objects.create(section=section, key=k, order=i, topic_id="batching", prompt="?", points=10)
        for i, k in enumerate(["p", "f", "o"])
    )
    leads = Choice.objects.create(deep_dive=parent, order=1, text="a", verdict="weak", feedback="f", follow_up=follow)
    best = Choice.objects.create(deep_dive=parent, order=2, text="b", verdict="best", feedback="f")
    Choice.objects.create(deep_dive=parent, order=3, text="c", verdict="acceptable", feedback="f", follow_up=other)
    picked, retried, never = (Learner.objects.create() for _ in range(3))
    for learner, choices in ((picked, [leads]), (retried, [best, leads, leads]), (never, [best])):
        for i, choice in enumerate(choices):
            Answer.objects.create(
                learner=learner, deep_dive=parent, choice=choice, outcome="partial", points=0, max_points=10,
                is_first=i == 0,
            )  # fmt: skip
    ItemPractice.objects.create(learner=retried, deep_dive=follow, hints_taken=2)  # a hint taken on it already
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    from lessons.models import ItemPractice as PracticeNow

    rows = {(p.learner_id, p.deep_dive_id): (p.reached, p.hints_taken) for p in PracticeNow.objects.all()}
    assert rows == {(picked.pk, follow.pk): (True, 0), (retried.pk, follow.pk): (True, 2)}
