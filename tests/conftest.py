"""Shared fixtures: personas and the sample content."""

import importlib
import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from hypothesis import settings

# Playwright's sync API runs an event loop in the test thread; the ORM must still be usable there.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

# Property tests and fuzzers draw the same examples on every run, so a CI run is reproducible;
# HYPOTHESIS_PROFILE=explore draws new ones (run it locally to hunt for fresh failures).
settings.register_profile("repeatable", derandomize=True, database=None, deadline=None)
settings.register_profile("explore", database=None, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


STOPPED_AT = datetime(2026, 11, 30, 12, 0, 15, tzinfo=UTC)


@pytest.fixture
def stopped_clock(time_machine):
    """Stop the wall clock at STOPPED_AT; tests move it on with ``stopped_clock.shift(...)``.

    15 s into a minute: a rate-limit window that ended mid-test would reset its counts.
    """
    time_machine.move_to(STOPPED_AT, tick=False)
    return time_machine


@pytest.fixture(autouse=True)
def _clear_cache():
    """Start every test with an empty cache (throttle counters stay per test)."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(autouse=True)
def _repeatable_interview_draws(monkeypatch):
    """Draw every interview a test starts without a seed from seeds 0, 1, 2, ... (in the test's
    thread and the browser tests' server thread alike), so which items are drawn is never luck.

    A deep dive's choices are shuffled by the interview's id, which PostgreSQL's sequences make
    differ between runs: tests must not rest on where a choice lands in one interview."""
    import itertools

    from lessons import interviews

    seeds = itertools.count()
    monkeypatch.setattr(interviews, "fresh_seed", lambda: next(seeds))


def _migration(suffix: str):
    """Import a lessons migration by the end of its name, so renumbering keeps it found."""
    (path,) = Path(__file__).resolve().parent.parent.glob(f"lessons/migrations/*_{suffix}.py")
    return importlib.import_module(f"lessons.migrations.{path.stem}")


def _seed_migration_rows() -> None:
    """Put back the rows data migrations seed: the topics and the Instructors group with its rights.

    Permissions themselves come back on their own (flush sends post_migrate); the group is read the
    way 0002, 0013 and the topics migration grant it, from their own lists of models.
    """
    from django.apps import apps
    from django.contrib.auth.models import Permission

    _migration("topics_as_data").seed_topics(apps, None)
    _migration("compression_topic").add_topic(apps, None)
    models = [*_migration("instructors_group").CONTENT_MODELS, *_migration("instructors_open_questions").MODELS]
    group, _ = Group.objects.get_or_create(name="Instructors")
    group.permissions.set(
        Permission.objects.filter(content_type__app_label="lessons", content_type__model__in=[*models, "topic"])
    )


@pytest.fixture(autouse=True)
def _migration_rows_survive_flush(request):
    """Transactional tests end by emptying every table, migration-seeded rows too: a transactional test seeds them."""
    marker = request.node.get_closest_marker("django_db")
    if {"transactional_db", "live_server"} & set(request.fixturenames) or (
        marker is not None and marker.kwargs.get("transaction")
    ):
        request.getfixturevalue("transactional_db")
        _seed_migration_rows()


def rows_written_by_load_content() -> list[tuple[type, list[dict]]]:
    """Run ``load_content`` and return the rows it wrote, model by model, then roll it all back.

    The migration-seeded rows (topics) are put back first: a transactional test that ran before
    may have emptied every table, and the content names its topics.
    """
    from django.apps import apps
    from django.db import transaction

    from lessons.models import ContentGeneration

    models = [m for m in apps.get_models(include_auto_created=True) if m is not ContentGeneration]
    with transaction.atomic():
        _seed_migration_rows()
        before = {model: set(model._base_manager.values_list("pk", flat=True)) for model in models}
        call_command("load_content", verbosity=0)
        written = [
            (model, [row for row in model._base_manager.values() if row[model._meta.pk.attname] not in before[model]])
            for model in models
        ]
        transaction.set_rollback(True)
    return [(model, rows) for model, rows in written if rows]


@pytest.fixture(scope="session")
def _loaded_content(django_db_setup, django_db_blocker) -> list[tuple[type, list[dict]]]:
    """The rows ``load_content`` writes, loaded once per test process (the database is left as it was)."""
    with django_db_blocker.unblock():
        return rows_written_by_load_content()


@pytest.fixture
def content(db, _loaded_content):
    """The shipped content files, loaded as `make run` does (``load_content``).

    Loading parses and renders every file (about 1.5 s); a suite loads them for hundreds of tests.
    So each test process loads them once (``_loaded_content``) and each test gets the same rows
    written back, with a new content generation and its own timestamps, as the command leaves them.
    Tests of loading itself call ``load_content``. Ask for ``content`` before any fixture that writes
    content rows of its own: the stored rows keep the ids they were loaded with.
    """
    from django.core.management.color import no_style
    from django.db import connection, transaction
    from django.utils import timezone

    from lessons import content_cache

    now = timezone.now()
    with transaction.atomic():
        for model, rows in _loaded_content:
            stamped = [f.attname for f in model._meta.concrete_fields if getattr(f, "auto_now", False)]
            model._base_manager.bulk_create([model(**{**row, **dict.fromkeys(stamped, now)}) for row in rows])
        # A safeguard: rows added after these take the next ids on any database (on PostgreSQL the
        # sequences already moved past them, since a rollback does not move a sequence back).
        with connection.cursor() as cursor:
            for sql in connection.ops.sequence_reset_sql(no_style(), [model for model, _ in _loaded_content]):
                cursor.execute(sql)
        content_cache.new_generation()


@pytest.fixture
def learner_user(db) -> User:
    """A learner with an account and no special rights."""
    return User.objects.create_user("ada", "ada@example.com", "correct-horse-battery")


@pytest.fixture
def instructor(db) -> User:
    """Staff in the Instructors group: may edit content in the admin, never users or groups."""
    user = User.objects.create_user("ines", "ines@example.com", "correct-horse-battery", is_staff=True)
    user.groups.add(Group.objects.get(name="Instructors"))
    return user


@pytest.fixture
def instructor_client(client, instructor):
    client.force_login(instructor)
    return client
