"""The content cache (lessons/content_cache.py): content read once per generation, edits shown at once."""

import pytest
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from lessons import content_cache
from lessons.models import Choice, DeepDive, Section
from tests.lessons.factories import make_lesson

HTMX = {"HTTP_HX_REQUEST": "true"}


def page(client, lesson) -> str:
    response = client.get(f"{lesson.get_absolute_url()}?layer=2")
    assert response.status_code == 200
    return response.content.decode()


def test_an_edit_saved_anywhere_shows_on_the_next_request(client, lesson):
    """The admin, the shell and data migrations all save rows: each save or delete starts a new generation."""
    assert "Paged blocks" in page(client, lesson)  # read once: the next pages come from the cache
    best = Choice.objects.get(deep_dive__key="dd-1", verdict="best")
    best.text = "Shard the pool by tenant"
    best.save()
    html = page(client, lesson)
    assert "Shard the pool by tenant" in html
    assert "Paged blocks" not in html
    Choice.objects.get(deep_dive__key="dd-1", verdict="weak").delete()
    assert "Reserve max length" not in page(client, lesson)
    assert "Shard the pool by tenant" in page(client, lesson)


def test_a_learner_answering_keeps_the_generation(client, lesson):
    """Answers, hints and places are the learner's, not content: the cached content stays valid for everyone."""
    page(client, lesson)
    token = content_cache.current_token()
    dd = DeepDive.objects.get(key="dd-1")
    weak = dd.choices.get(verdict="weak")
    response = client.post(reverse("answer-deep-dive", args=[lesson.slug, dd.pk]), {"choice": weak.pk}, **HTMX)
    assert response.status_code == 200
    assert content_cache.current_token() == token
    assert "Try again (recorded, not scored)" in page(client, lesson)


def test_a_warm_page_reads_no_content_rows(client, lesson):
    """Once cached, a page asks the database for the generation, not for sections, deep dives and choices."""
    page(client, lesson)
    with CaptureQueriesContext(connection) as warm:
        page(client, lesson)
    tables = " ".join(q["sql"] for q in warm.captured_queries)
    assert "lessons_contentgeneration" in tables
    assert "lessons_choice" not in tables and "lessons_section" not in tables
    cache.clear()  # a cache that lost everything (Redis restarted): the content is read again, and shown
    with CaptureQueriesContext(connection) as cold:
        html = page(client, lesson)
    assert "lessons_choice" in " ".join(q["sql"] for q in cold.captured_queries)
    assert "Paged blocks" in html


def test_render_markup_shows_its_html_at_once_though_it_writes_with_update(client, lesson):
    """render_markup writes the HTML columns with update(), which sends no signal: it starts a generation itself."""
    section = Section.objects.get(lesson=lesson, key="core")
    Section.objects.filter(pk=section.pk).update(body_html="<p>Stale HTML.</p>")  # as an old renderer left it
    content_cache.new_generation()
    assert "Stale HTML." in page(client, lesson)
    call_command("render_markup", verbosity=0)
    html = page(client, lesson)
    assert "Stale HTML." not in html
    assert "Read me." in html


@pytest.fixture
def no_save_signals():
    """Content saves start no generation for the test's length, as update() saves do not."""
    content_cache.connect_signals(connect=False)
    yield
    content_cache.connect_signals()


def test_load_content_starts_a_new_generation_even_when_it_only_updates(content_copy, db, no_save_signals):
    """The loader writes orders and follow-up links with update(): it starts a generation when it finishes."""
    call_command("load_content", dir=content_copy, verbosity=0)
    before = content_cache.current_token()
    call_command("load_content", dir=content_copy, force=True, verbosity=0)
    assert content_cache.current_token() != before


def test_tokens_never_repeat(db):
    """A random token, not a counter: a database restored from a backup never meets entries cached after it."""
    tokens = set()
    for _ in range(20):
        content_cache.new_generation()
        tokens.add(content_cache.current_token())
    assert len(tokens) == 20


def test_pages_work_with_no_cache_at_all(client, settings, db):
    """A cache that keeps nothing (or is down) costs the content queries, never a wrong or failing page."""
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.dummy.DummyCache"}}
    lesson = make_lesson(slug="nocache")
    assert "Paged blocks" in page(client, lesson)
    Choice.objects.filter(deep_dive__key="dd-1", verdict="best").update(text_html="Changed without a signal")
    assert "Changed without a signal" in page(client, lesson)  # nothing kept: always read


def test_cached_content_rows_unpickle_whole_without_the_app_registry(lesson, monkeypatch):
    """A lesson's cached rows name their class: unpickling hundreds of them asks the app registry nothing."""
    import pickle

    from django.apps import apps

    from lessons.pages import read_lesson_content

    content = read_lesson_content(lesson.pk)
    data = pickle.dumps(content)

    def refuse(*args, **kwargs):
        raise AssertionError("the app registry was asked for a model")

    monkeypatch.setattr(apps, "get_model", refuse)
    again = pickle.loads(data)
    assert [c.pk for c in again.choices] == [c.pk for c in content.choices]
    assert [c.text_html for c in again.choices] == [c.text_html for c in content.choices]
    assert again.choices[0].deep_dive.topic.name == content.choices[0].deep_dive.topic.name
    assert again.choices[0]._state.adding is False and again.choices[0]._state.db == "default"


def test_a_lesson_changed_by_a_queryset_update_shows_once_a_new_generation_starts(client, lesson):
    """update() sends no signal: a writer that uses it starts a new generation itself (as load_content does)."""
    from lessons.models import Lesson

    assert "Lesson sample" in page(client, lesson)
    Lesson.objects.filter(pk=lesson.pk).update(title="Renamed by update")
    content_cache.new_generation()
    assert "Renamed by update" in page(client, lesson)
    assert client.get("/api/v1/lessons/sample/").json()["title"] == "Renamed by update"  # the API reads the same


def test_a_release_that_changes_the_apps_code_reads_none_of_the_entries_an_older_one_cached(tmp_path):
    """The cache key names the app's code: entries built by an older builder (another URL format, another
    field) are never read after a release, even when no content was edited since."""
    import shutil
    from pathlib import Path

    from lessons import links, pages

    builders = {Path(pages.__file__).resolve(), Path(links.__file__).resolve(), Path(content_cache.__file__).resolve()}
    assert all(any(package in path.parents for package in content_cache.APP_PACKAGES) for path in builders)
    release = tmp_path / "lessons"
    shutil.copytree(Path(pages.__file__).parent, release, ignore=shutil.ignore_patterns("__pycache__"))
    before = content_cache.source_digest([release])
    assert content_cache.source_digest([release]) == before  # the same code, the same key
    (release / "links.py").write_text((release / "links.py").read_text() + "\n# the next release\n")
    assert content_cache.source_digest([release]) != before


def test_the_cache_key_names_the_apps_code_digest(monkeypatch):
    """Entries are stored under SCHEMA, and SCHEMA is made from the digest of the app's packages."""
    import django

    from lessons.content_cache import APP_PACKAGES, SCHEMA, source_digest

    expected = content_cache.hashlib.sha256(f"{django.__version__}:{source_digest(APP_PACKAGES)}".encode())
    assert expected.hexdigest()[:12] == SCHEMA
    built = []
    assert content_cache.cached("probe", lambda: built.append(1) or "old", "t") == "old"
    assert content_cache.cached("probe", lambda: built.append(1) or "again", "t") == "old"  # a hit
    monkeypatch.setattr(content_cache, "SCHEMA", "another-release")
    assert content_cache.cached("probe", lambda: built.append(1) or "new", "t") == "new"  # another key
    assert len(built) == 2
