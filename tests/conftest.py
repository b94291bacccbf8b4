"""Shared fixtures: personas and the sample content."""

import importlib
import os
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


@pytest.fixture(autouse=True)
def _clear_cache():
    """Start every test with an empty cache (throttle counters stay per test)."""
    from django.core.cache import cache

    cache.clear()
    yield


def _seed_topics() -> None:
    """Seed the topics as their data migration does (found by name, so renumbering keeps it)."""
    from django.apps import apps

    (path,) = Path(__file__).resolve().parent.parent.glob("lessons/migrations/*_topics_as_data.py")
    importlib.import_module(f"lessons.migrations.{path.stem}").seed_topics(apps, None)


@pytest.fixture(autouse=True)
def _topics_survive_flush(request):
    """Transactional tests end by emptying every table, migration-seeded topics too: a transactional test seeds them."""
    marker = request.node.get_closest_marker("django_db")
    if {"transactional_db", "live_server"} & set(request.fixturenames) or (
        marker is not None and marker.kwargs.get("transaction")
    ):
        request.getfixturevalue("transactional_db")
        _seed_topics()


@pytest.fixture
def content(db):
    """Load the shipped content files, as `make run` does."""
    call_command("load_content", verbosity=0)


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
