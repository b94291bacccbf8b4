"""Create the "Instructors" group with rights on content models only (never users or groups)."""

from django.contrib.auth.management import create_permissions
from django.db import migrations

CONTENT_MODELS = ["track", "lesson", "section", "deepdive", "choice", "walkthrough", "step", "challenge"]


def create_instructors(apps, schema_editor):
    # Permissions are normally created after all migrations; make sure this app's exist now.
    app_config = apps.get_app_config("lessons")
    app_config.models_module = True  # a migration's app stub lacks it; create_permissions needs it truthy
    create_permissions(app_config, apps=apps, verbosity=0)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="Instructors")
    permissions = Permission.objects.filter(content_type__app_label="lessons", content_type__model__in=CONTENT_MODELS)
    group.permissions.set(permissions)


def remove_instructors(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="Instructors").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_instructors, remove_instructors)]
