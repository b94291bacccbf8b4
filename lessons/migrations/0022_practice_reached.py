"""Follow-ups a learner reached are recorded on their practice row, set by the answer that reaches them.

Until now each page asked which of the learner's answers picked a choice leading to a follow-up (one
query over their answers per page). The backfill records every follow-up already reached that way.
"""

from itertools import islice

from django.db import migrations, models
from django.db.models import Exists, OuterRef


def backfill(apps, schema_editor):
    """One UPDATE for the rows there are, then the missing ones in batches (as services.reach_through does)."""
    Answer = apps.get_model("lessons", "Answer")
    ItemPractice = apps.get_model("lessons", "ItemPractice")
    picked = Answer.objects.filter(choice__follow_up__isnull=False).order_by()
    leads_here = picked.filter(learner=OuterRef("learner"), choice__follow_up=OuterRef("deep_dive"))
    ItemPractice.objects.filter(Exists(leads_here)).update(reached=True)
    have = set(ItemPractice.objects.filter(reached=True).order_by().values_list("learner_id", "deep_dive_id"))
    pairs = picked.values_list("learner_id", "choice__follow_up_id").distinct()
    missing = (ItemPractice(learner_id=lr, deep_dive_id=dd, reached=True) for lr, dd in pairs.iterator() if (lr, dd) not in have)
    while batch := list(islice(missing, 1000)):
        ItemPractice.objects.bulk_create(batch, ignore_conflicts=True)


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
