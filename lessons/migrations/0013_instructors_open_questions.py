"""Give the "Instructors" group the rights to author open questions and their checklists."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

MODELS = ["openquestion", "checklistpoint"]


def grant(apps, schema_editor):
    app_config = apps.get_app_config("lessons")
    app_config.models_module = True  # as in 0002: create_permissions needs it truthy
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="Instructors")
    group.permissions.add(
        *Permission.objects.filter(content_type__app_label="lessons", content_type__model__in=MODELS)
    )


def revoke(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group in Group.objects.filter(name="Instructors"):
        group.permissions.remove(
            *Permission.objects.filter(content_type__app_label="lessons", content_type__model__in=MODELS)
        )


class Migration(migrations.Migration):
    dependencies = [("lessons", "0012_open_questions_hints_practice")]

    operations = [migrations.RunPython(grant, revoke)]
