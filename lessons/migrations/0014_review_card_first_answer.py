"""ReviewCard.first_answer: the card names the item's scoring answer, so a lesson page reads states from cards alone."""

import django.db.models.deletion
from django.db import migrations, models
from django.db.models import OuterRef, Subquery


def backfill(apps, schema_editor):
    Answer = apps.get_model("lessons", "Answer")
    ReviewCard = apps.get_model("lessons", "ReviewCard")
    for kind in ("deep_dive", "step", "challenge", "open_question"):
        first = Answer.objects.filter(
            learner_id=OuterRef("learner_id"), is_first=True, **{f"{kind}_id": OuterRef(f"{kind}_id")}
        ).values("pk")[:1]
        ReviewCard.objects.filter(**{f"{kind}__isnull": False}).update(first_answer_id=Subquery(first))


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0013_instructors_open_questions"),
    ]

    operations = [
        migrations.AddField(
            model_name="reviewcard",
            name="first_answer",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="lessons.answer",
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
