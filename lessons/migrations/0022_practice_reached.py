"""Follow-ups a learner reached are recorded on their practice row, set by the answer that reaches them.

Until now each page asked which of the learner's answers picked a choice leading to a follow-up (one
query over their answers per page). The backfill records every follow-up already reached that way.
"""

from django.db import migrations, models


def backfill(apps, schema_editor):
    Answer = apps.get_model("lessons", "Answer")
    ItemPractice = apps.get_model("lessons", "ItemPractice")
    reached = (
        Answer.objects.filter(choice__follow_up__isnull=False)
        .values_list("learner_id", "choice__follow_up_id")
        .distinct()
        .order_by()
    )
    for learner_id, deep_dive_id in reached.iterator():
        if not ItemPractice.objects.filter(learner_id=learner_id, deep_dive_id=deep_dive_id).update(reached=True):
            ItemPractice.objects.create(learner_id=learner_id, deep_dive_id=deep_dive_id, reached=True)


class Migration(migrations.Migration):
    dependencies = [("lessons", "0021_content_generation")]

    operations = [
        migrations.AddField(
            model_name="itempractice",
            name="reached",
            field=models.BooleanField(
                default=False, help_text="A follow-up: an answer to its parent picked a choice leading here."
            ),
        ),
        migrations.RunPython(backfill, migrations.RunPython.noop),
    ]
