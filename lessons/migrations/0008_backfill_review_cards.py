"""Give every answered item a review card, replaying its answers, for answers given before cards existed."""

from datetime import timedelta

from django.db import migrations
from fsrs import Card, Rating, Scheduler

# The schedule lessons/review.py uses, frozen here as migrations must be.
SCHEDULER = Scheduler(
    learning_steps=(timedelta(minutes=10), timedelta(hours=4)),
    relearning_steps=(timedelta(minutes=10),),
    enable_fuzzing=False,
)
RATING = {"correct": Rating.Good, "partial": Rating.Hard, "incorrect": Rating.Again}


def backfill(apps, schema_editor):
    Answer = apps.get_model("lessons", "Answer")
    ReviewCard = apps.get_model("lessons", "ReviewCard")
    have = set(ReviewCard.objects.values_list("learner_id", "deep_dive_id", "step_id", "challenge_id"))
    history: dict[tuple, list] = {}
    for answer in Answer.objects.order_by("created_at", "pk").iterator():
        key = (answer.learner_id, answer.deep_dive_id, answer.step_id, answer.challenge_id)
        if key not in have:
            history.setdefault(key, []).append(answer)
    for (learner_id, deep_dive_id, step_id, challenge_id), answers in history.items():
        card = Card(due=answers[0].created_at)
        for answer in answers:
            card, _log = SCHEDULER.review_card(card, RATING[answer.outcome], review_datetime=answer.created_at)
        ReviewCard.objects.create(
            learner_id=learner_id, deep_dive_id=deep_dive_id, step_id=step_id, challenge_id=challenge_id,
            card=card.to_dict(), due=card.due, last_outcome=answers[-1].outcome, reviews=len(answers),
            latest_answer_id=answers[-1].pk,
        )  # fmt: skip


class Migration(migrations.Migration):
    dependencies = [("lessons", "0007_review_card_latest_answer")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
