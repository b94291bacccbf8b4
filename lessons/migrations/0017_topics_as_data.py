"""Topics become authored rows: the Topic table, seeded with the topics that were fixed in code.

Items keep naming a topic by its slug in the same ``topic`` column, now a foreign key to
Topic.slug; a walkthrough without a topic stores NULL instead of "".
"""

import django.db.models.deletion
from django.contrib.auth.management import create_permissions
from django.db import migrations, models

SEED = [
    (
        "kv_allocation",
        "KV memory allocation",
        "How the KV cache is sized and handed out: pages, blocks, fragmentation.",
    ),
    ("batching", "Batching", "Grouping requests per forward pass: static, dynamic and continuous batching."),
    ("tensor_parallel", "Tensor parallelism", "Splitting one model's layers across GPUs and what the links cost."),
    ("speculative_decoding", "Speculative decoding", "A draft model proposes tokens that the large model verifies."),
    ("routing", "Routing", "Choosing the replica for each request: load, locality and cache hits."),
    ("autoscaling", "Autoscaling", "Adding and removing replicas as demand moves, and the cold-start cost."),
    ("rate_limiting", "Rate limiting", "Protecting the fleet and sharing it fairly between tenants."),
    ("fleet_economics", "Fleet economics", "What a token costs: GPU hours, utilisation and pricing."),
    ("capacity_planning", "Capacity planning", "How many GPUs a workload needs, from memory and throughput."),
    ("queueing", "Queueing", "Waiting time as utilisation rises, and what it does to latency targets."),
    ("caching", "Prefix caching", "Reusing computed prompt prefixes across requests."),
    ("api_design", "API design", "The interface clients see: streaming, errors, limits and versions."),
]


def seed_topics(apps, schema_editor):
    Topic = apps.get_model("lessons", "Topic")
    for order, (slug, name, description) in enumerate(SEED, start=1):
        Topic.objects.get_or_create(slug=slug, defaults={"name": name, "description": description, "order": order})


def instructors_edit_topics(apps, schema_editor):
    """Give the Instructors group (0002) the rights on topics it has on every other content model."""
    app_config = apps.get_app_config("lessons")
    app_config.models_module = True  # a migration's app stub lacks it; create_permissions needs it truthy
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Permission = apps.get_model("auth", "Permission")
    group = apps.get_model("auth", "Group").objects.filter(name="Instructors").first()
    if group is not None:
        group.permissions.add(
            *Permission.objects.filter(content_type__app_label="lessons", content_type__model="topic")
        )


def empty_topic_to_null(apps, schema_editor):
    apps.get_model("lessons", "Walkthrough").objects.filter(topic="").update(topic=None)


def null_topic_to_empty(apps, schema_editor):
    apps.get_model("lessons", "Walkthrough").objects.filter(topic__isnull=True).update(topic="")


def topic_field(**options):
    return models.ForeignKey(
        db_column="topic",
        on_delete=django.db.models.deletion.PROTECT,
        related_name="+",
        to="lessons.topic",
        to_field="slug",
        **options,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0016_interviews"),
        ("lessons", "0002_instructors_group"),
    ]

    operations = [
        migrations.CreateModel(
            name="Topic",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                (
                    "slug",
                    models.SlugField(
                        help_text="Named by content files (topic: kv_allocation); letters, digits, _ and -.",
                        max_length=40,
                        unique=True,
                    ),
                ),
                ("name", models.CharField(help_text="Shown to learners, e.g. KV memory allocation.", max_length=80)),
                ("description", models.TextField(blank=True, help_text="What the topic covers, for instructors.")),
                ("order", models.PositiveSmallIntegerField(default=0, help_text="Position on the results page.")),
            ],
            options={"ordering": ["order", "slug"]},
        ),
        migrations.RunPython(seed_topics, migrations.RunPython.noop),
        migrations.RunPython(instructors_edit_topics, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="walkthrough",
            name="topic",
            field=models.CharField(blank=True, max_length=40, null=True),
        ),
        migrations.RunPython(empty_topic_to_null, null_topic_to_empty),
        migrations.AlterField(
            model_name="deepdive",
            name="topic",
            field=topic_field(),
        ),
        migrations.AlterField(
            model_name="challenge",
            name="topic",
            field=topic_field(),
        ),
        migrations.AlterField(
            model_name="openquestion",
            name="topic",
            field=topic_field(),
        ),
        migrations.AlterField(
            model_name="walkthrough",
            name="topic",
            field=topic_field(
                blank=True, null=True, help_text="The topic of its graded steps (envelope walkthroughs)."
            ),
        ),
    ]
