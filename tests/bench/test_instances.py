"""Several instances, one truth: two gunicorn servers on this test database (and Redis, when set).

An edit in the admin of one shows at once on the other, and answers given through both at the
same time are all kept (bench/instances.py; `make bench` runs the same check). On SQLite the
two servers share the test database's file; on PostgreSQL its test database.
"""

from django.apps import apps
from django.contrib.auth.models import User
from django.core.management import call_command

from bench import instances, servers


def test_two_instances_show_an_edit_at_once_and_keep_every_answer(server_env):
    call_command("load_content", verbosity=0)  # the shipped case study, as make bench: its questions are on layers 2-3
    User.objects.create_superuser("ines", password="correct-horse-battery")
    User.objects.create_user("ada", password="correct-horse-battery")
    with servers.gunicorn(server_env) as (base_a, _), servers.gunicorn(server_env) as (base_b, _):
        failures = instances.check(
            base_a,
            base_b,
            staff=("ines", "correct-horse-battery"),
            learner=("ada", "correct-horse-battery"),
            count_answers=apps.get_model("lessons", "Answer").objects.count,
        )
    assert failures == []
