"""Diagrams: laid out by Graphviz when steps are saved; no box or label overlaps another in any shipped diagram."""

from itertools import combinations
from pathlib import Path

import pytest
import yaml
from django.urls import reverse

from lessons import diagram
from lessons.models import Step, Walkthrough
from tests.lessons.factories import make_lesson


def shipped_walkthroughs():
    found = []

    def walk(node, file):
        if isinstance(node, dict):
            steps = node.get("steps")
            if isinstance(steps, list) and any(isinstance(s, dict) and s.get("components") for s in steps):
                found.append(pytest.param(steps, id=f"{file}:{node.get('key')}"))
            for value in node.values():
                walk(value, file)
        elif isinstance(node, list):
            for value in node:
                walk(value, file)

    for path in sorted(Path("content/lessons").glob("*.yaml")):
        walk(yaml.safe_load(path.read_text()), path.stem)
    return found


def overlap(a, b) -> bool:
    (ax, ay, aw, ah), (bx, by, bw, bh) = a, b
    return ax < bx + bw and bx < ax + aw and ay < by + bh and by < ay + ah


@pytest.mark.parametrize("steps", shipped_walkthroughs())
def test_no_box_or_label_overlaps_another_at_any_step(steps):
    every = diagram.normalize(
        [c for s in steps for c in s.get("components") or []], [c for s in steps for c in s.get("connections") or []]
    )
    layout = diagram.lay_out(*every)
    components, connections = [], []
    for step in steps:
        components += step.get("components") or []
        connections += step.get("connections") or []
        shown = diagram.normalize(components, connections)
        assert diagram.covers(layout, *shown)
        drawn = diagram.boxes(layout, *shown)
        clashes = [(a, b) for (a, box_a), (b, box_b) in combinations(drawn, 2) if overlap(box_a, box_b)]
        assert clashes == []
        for comp in shown[0]:
            x, y, w, h = layout["nodes"][comp["key"]]["box"]
            for line in layout["nodes"][comp["key"]]["text"]:
                tx, ty, tw, th = diagram.text_box(line)
                assert x <= tx and tx + tw <= x + w and y <= ty and ty + th <= y + h, (comp["key"], line)


def test_the_layout_is_stored_when_steps_are_saved_and_the_page_draws_from_it(client, db):
    lesson = make_lesson()
    walkthrough = Walkthrough.objects.get(key="build")
    assert set(walkthrough.diagram["nodes"]) == {"client", "fe", "router"}
    step = Step.objects.get(title="Router")
    step.components = [*step.components, {"key": "cache", "label": "Prefix cache", "col": 3, "row": 0}]
    step.save()
    walkthrough.refresh_from_db()
    assert "cache" in walkthrough.diagram["nodes"]
    html = client.get(reverse("walkthrough-step", args=[lesson.slug, "build", 2])).content.decode()
    x, y, w, h = walkthrough.diagram["nodes"]["cache"]["box"]
    assert f'<g class="box new"><rect x="{x}" y="{y}" width="{w}" height="{h}"' in html
    assert "<summary>The diagram in words</summary>" in html
    step.delete()
    walkthrough.refresh_from_db()
    assert set(walkthrough.diagram["nodes"]) == {"client", "fe"}


def test_a_row_changed_without_save_is_still_drawn_whole(client, db):
    lesson = make_lesson()
    Step.objects.filter(title="Router").update(components=[{"key": "lb", "label": "Load balancer", "col": 2, "row": 0}])
    html = client.get(reverse("walkthrough-step", args=[lesson.slug, "build", 2])).content.decode()
    assert ">Load balancer</text>" in html
