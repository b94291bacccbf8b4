"""Authored Markdown is rendered to sanitised HTML when it is saved or loaded, and pages read that HTML."""

import re

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.urls import reverse

from lessons import markup
from lessons.markup import STORED_MARKDOWN
from lessons.models import (
    Challenge,
    ChecklistPoint,
    Choice,
    DeepDive,
    Lesson,
    OpenQuestion,
    Section,
    Step,
    Walkthrough,
)
from tests.lessons.factories import make_lesson, make_open_question

MODELS = {
    m.__name__: m
    for m in (Lesson, Section, DeepDive, Choice, Walkthrough, Step, Challenge, OpenQuestion, ChecklistPoint)
}
XSS = 'Marked <script>alert(1)</script><img src=x onerror="alert(2)"> [x](javascript:alert(3)) <a href="#" onclick="s()">a</a>'
FIELDS = [(model, name) for model, fields in STORED_MARKDOWN.items() for name in fields]


def test_every_content_model_names_its_markdown():
    assert set(STORED_MARKDOWN) == set(MODELS)


@pytest.mark.parametrize(("model", "name"), FIELDS, ids=[f"{m}.{n}" for m, n in FIELDS])
def test_script_in_any_authored_field_is_sanitised_when_saved_and_on_the_page(client, db, model, name):
    lesson = make_lesson()
    make_open_question(lesson.sections.get())
    row = MODELS[model].objects.first()
    if model == "Challenge":
        Challenge.objects.update(ranges={})  # a fixed prompt is stored rendered, like the rest
        row.refresh_from_db()
    setattr(row, name, [XSS] if name == "hints" else XSS)
    row.save()
    row.refresh_from_db()
    stored = getattr(row, f"{name}_html")
    assert "Marked" in str(stored)
    for html in [str(stored), client.get(lesson.get_absolute_url()).content.decode()]:
        lowered = html.lower()
        assert "alert(" not in lowered
        assert "onerror" not in lowered
        assert "onclick" not in lowered
        assert "javascript:" not in lowered


def test_an_admin_edit_shows_on_the_next_page_view(instructor_client, db):
    lesson = make_lesson()
    section = Section.objects.get(lesson=lesson, key="core")
    assert "Read me." in instructor_client.get(lesson.get_absolute_url()).content.decode()
    data = {"lesson": lesson.pk, "key": "core", "layer": 2, "order": 1, "title": "Core", "minutes": 4,
            "body": "Now **{{calc kv-cache.bytes_per_token | int}} bytes** per token."}  # fmt: skip
    response = instructor_client.post(reverse("admin:lessons_section_change", args=[section.pk]), data)
    assert response.status_code == 302
    page = instructor_client.get(lesson.get_absolute_url()).content.decode()
    assert "Now <strong>327,680 bytes</strong> per token." in page
    assert "Read me." not in page


def test_load_content_renders_every_authored_field(content):
    section = Section.objects.get(key="the-api")
    assert '<div class="highlight">' in section.body_html
    for model, fields in STORED_MARKDOWN.items():
        for row in MODELS[model].objects.all():
            for name, kind in fields.items():
                if getattr(row, name) and not (kind == "prompt" and row.ranges):
                    assert getattr(row, f"{name}_html"), (model, row.pk, name)


def test_a_lesson_page_does_no_markdown_work(client, db, monkeypatch):
    lesson = make_lesson()
    Challenge.objects.update(ranges={}, inputs={"cache_gb": 8})  # only drawn numbers are rendered per request
    for row in Challenge.objects.all():
        row.save()

    def refuse(*args, **kwargs):
        raise AssertionError("Markdown rendered while serving a page")

    monkeypatch.setattr(markup.markdown_lib, "markdown", refuse)
    response = client.get(lesson.get_absolute_url())
    assert response.status_code == 200
    assert "A cache of 8 GB holds" in response.content.decode()


@pytest.mark.django_db(transaction=True)
def test_the_migration_renders_rows_saved_before_it():
    before = [("lessons", "0009_learner_session_key")]
    executor = MigrationExecutor(connection)
    executor.migrate(before)
    apps = executor.loader.project_state(before).apps
    track = apps.get_model("lessons", "Track").objects.create(slug="t", title="T")
    apps.get_model("lessons", "Lesson").objects.create(
        track=track, slug="l", title="L", kind="concept", summary="A *summary* <script>x</script>", published=True
    )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    assert Lesson.objects.get(slug="l").summary_html == "<p>A <em>summary</em> </p>"


def test_render_markup_renders_stale_rows_again(db):
    from django.core.management import call_command

    lesson = make_lesson()
    Section.objects.update(body_html="<p>stale</p>")  # as if rendered by an older renderer
    call_command("render_markup", verbosity=0)
    assert Section.objects.get(lesson=lesson).body_html == "<p>Read me.</p>"


def test_render_markup_writes_only_the_html_and_leaves_the_lesson_unchanged(db):
    from django.core.management import call_command

    from lessons.models import Lesson

    lesson = make_lesson()
    changed = Lesson.objects.get(pk=lesson.pk).updated_at
    Lesson.objects.update(summary_html="<p>stale</p>")
    call_command("render_markup", verbosity=0)
    again = Lesson.objects.get(pk=lesson.pk)
    assert again.summary_html != "<p>stale</p>"
    assert again.updated_at == changed  # re-rendering is not an edit


def test_two_sections_tables_on_one_page_have_labels_of_their_own_in_reading_order(client, db):
    """Each section's body is rendered alone; its tables' labels name the section, so a layer page with a
    table in two sections no longer shows "Table 1" twice (a screen reader's list of regions told them apart
    by nothing but their cells)."""
    lesson = make_lesson()
    table = "| Policy | Hit rate |\n|---|---|\n| Round robin | 40% |"
    Section.objects.filter(key="core").update(title="Round robin")
    core = Section.objects.get(key="core")
    core.body = f"First.\n\n{table}"
    core.save()
    Section.objects.create(
        lesson=lesson, key="hashing", layer=2, order=2, title="Hashing", minutes=2, body=f"{table}\n\nAnd:\n\n{table}"
    )
    html = client.get(f"{lesson.get_absolute_url()}?layer=2").content.decode()
    labels = re.findall(r'<div class="table-scroll"[^>]* aria-label="([^"]+)"><table>', html)
    assert labels == [
        "Round robin, table: Policy, Hit rate; first row: Round robin",
        "Hashing, table 1 of 2: Policy, Hit rate; first row: Round robin",
        "Hashing, table 2 of 2: Policy, Hit rate; first row: Round robin",
    ]


def test_no_shipped_layer_page_names_two_tables_alike(content):
    labels: dict[tuple[str, int], list[str]] = {}
    for section in Section.objects.select_related("lesson").order_by("lesson__slug", "order"):
        page = labels.setdefault((section.lesson.slug, section.layer), [])
        page += re.findall(r'<div class="table-scroll"[^>]* aria-label="([^"]+)"><table>', section.body_html)
    assert sum(map(len, labels.values())) >= 10  # the shipped lessons' tables were found
    assert {page: names for page, names in labels.items() if len(set(names)) < len(names)} == {}
    assert not any(name.startswith("Table 1") for names in labels.values() for name in names)
