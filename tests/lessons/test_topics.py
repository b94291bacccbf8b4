"""Topics are authored rows: instructors add them in the admin, files name them, results follow them."""

import pytest
from django.core.management import CommandError
from django.urls import reverse

from lessons.models import Choice, DeepDive, Topic
from tests.lessons.test_content import SAMPLE, edit, load


def first_deep_dive(data: dict) -> dict:
    return next(i["deep_dive"] for s in data["sections"] for i in s.get("items", []) if "deep_dive" in i)


def test_the_migration_seeds_the_topics_that_were_fixed_in_code(db):
    assert Topic.objects.count() == 13  # the twelve of 0017 and compression (0023)
    assert Topic.objects.get(slug="caching").name == "Prefix caching"
    assert Topic.objects.get(slug="compression").name == "Quantisation and compression"


def test_an_instructor_adds_a_topic_in_the_admin_and_a_file_may_then_name_it(instructor_client, content_copy):
    edit(content_copy, SAMPLE, lambda d: first_deep_dive(d).update(topic="observability"))
    with pytest.raises(CommandError, match=r"topic 'observability' is not one of the topics \(kv_allocation, "):
        load(content_copy)
    response = instructor_client.post(
        reverse("admin:lessons_topic_add"),
        {"slug": "observability", "name": "Observability", "description": "Metrics and traces.", "order": 20},
    )
    assert response.status_code == 302
    load(content_copy)
    deep_dive = DeepDive.objects.get(section__lesson__slug=SAMPLE, topic="observability")
    assert deep_dive.topic.name == "Observability"


def test_mastery_on_the_results_page_follows_the_topic_rows(client, content):
    deep_dive = DeepDive.objects.filter(section__lesson__slug=SAMPLE).select_related("section__lesson").first()
    best = Choice.objects.get(deep_dive=deep_dive, verdict="best")
    Topic.objects.filter(slug=deep_dive.topic_id).update(name="Renamed by an instructor", order=0)
    url = reverse("answer-deep-dive", args=[SAMPLE, deep_dive.pk])
    assert client.post(url, {"choice": best.pk}).status_code == 303
    html = client.get(reverse("results")).content.decode()
    assert f'<h3 id="topic-{deep_dive.topic_id}">Renamed by an instructor</h3>' in html


def test_a_topic_in_use_cannot_be_deleted(instructor_client, content):
    topic = Topic.objects.get(slug=DeepDive.objects.first().topic_id)
    response = instructor_client.post(reverse("admin:lessons_topic_delete", args=[topic.pk]), {"post": "yes"})
    assert response.status_code == 200
    assert "Cannot delete topic" in response.content.decode()
    assert Topic.objects.filter(pk=topic.pk).exists()
