"""A topic for making bytes smaller: quantised weights and compressed KV (the shrinking-the-bytes lesson).

Its moments were filed under capacity planning, so mastery of quantisation and KV compression could
not be told apart from sizing a fleet. Instructors may rename or reorder it in the admin as any topic.
"""

from django.db import migrations

SLUG = "compression"


def add_topic(apps, schema_editor):
    Topic = apps.get_model("lessons", "Topic")
    Topic.objects.get_or_create(
        slug=SLUG,
        defaults={
            "name": "Quantisation and compression",
            "description": "Fewer bytes per weight and per cached token: 4-bit and FP8 weights, FP8 KV, latent "
            "attention and sliding windows, and what each costs in speed and quality.",
            "order": 13,
        },
    )


def remove_topic(apps, schema_editor):
    """Going back: the topic goes only if nothing names it (content loaded since may)."""
    Topic = apps.get_model("lessons", "Topic")
    for model in ("DeepDive", "Walkthrough", "Challenge", "OpenQuestion"):
        if apps.get_model("lessons", model).objects.filter(topic_id=SLUG).exists():
            return
    Topic.objects.filter(slug=SLUG).delete()


class Migration(migrations.Migration):
    dependencies = [("lessons", "0022_practice_reached")]

    operations = [migrations.RunPython(add_topic, remove_topic)]
