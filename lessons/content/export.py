"""Write the database's tracks and lessons back to content files, identical to the files they were loaded from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from lessons.content.validate import DEFAULT_POINTS, FORMAT_VERSION
from lessons.models import (
    Challenge,
    DeepDive,
    Lesson,
    OpenQuestion,
    Track,
    Walkthrough,
)


class ContentDumper(yaml.SafeDumper):
    """Dump multi-line text as literal blocks so files stay readable and diff well."""


def _represent_str(dumper: yaml.SafeDumper, value: str):
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


ContentDumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    return yaml.dump(data, Dumper=ContentDumper, sort_keys=False, allow_unicode=True, width=100)


def put(out: dict, name: str, value: Any, default: Any = "") -> None:
    """Write ``name`` unless it holds its default, which keeps files short."""
    if value != default:
        out[name] = value


def in_order(mapping: dict, keys: tuple[str, ...] | None = None) -> dict:
    """Return ``mapping`` with its keys in a fixed order, whatever order the database kept.

    PostgreSQL's jsonb does not keep key order, so export imposes one: ``keys`` first,
    the rest sorted.
    """
    first = [k for k in (keys or ()) if k in mapping]
    return {k: mapping[k] for k in first + sorted(k for k in mapping if k not in first)}


def ask_to_data(row, ranges: dict | None = None) -> dict:
    ask: dict[str, Any] = {"calculator": row.calculator}
    put(ask, "inputs", in_order(row.inputs), {})
    put(ask, "ranges", in_order(ranges or {}), {})
    ask["output"] = row.output
    put(ask, "scale", row.scale, 1.0)
    ask["unit"] = row.unit
    ask["tolerance"] = row.tolerance
    put(ask, "tolerance_kind", row.tolerance_kind, "relative")
    put(ask, "partial_band", row.partial_band, None)
    put(ask, "points", row.points, DEFAULT_POINTS)
    slips = [in_order({**slip, **({"inputs": in_order(slip["inputs"])} if "inputs" in slip else {})},
                     ("factor", "inputs", "feedback")) for slip in row.slips]  # fmt: skip
    put(ask, "slips", slips, [])
    return ask


def lesson_to_data(lesson: Lesson) -> dict:
    """Return a lesson in the file format, with defaults left out."""
    data: dict[str, Any] = {
        "format": FORMAT_VERSION, "slug": lesson.slug, "track": lesson.track.slug, "order": lesson.order,
        "title": lesson.title, "kind": lesson.kind, "summary": lesson.summary,
    }  # fmt: skip
    put(data, "published", lesson.published, True)
    sections = list(lesson.sections.order_by("order"))
    deep_dives = DeepDive.objects.filter(section__lesson=lesson).prefetch_related("choices__follow_up")
    walkthroughs = Walkthrough.objects.filter(section__lesson=lesson).prefetch_related("steps")
    challenges = Challenge.objects.filter(section__lesson=lesson)
    items: dict[int, list] = {s.pk: [] for s in sections}
    for dd in deep_dives:
        out = {"key": dd.key, "topic": dd.topic_id, "prompt": dd.prompt}
        put(out, "context", dd.context)
        put(out, "points", dd.points, DEFAULT_POINTS)
        put(out, "keep_choice_order", dd.keep_choice_order, False)
        put(out, "hints", dd.hints, [])
        out["choices"] = []
        for choice in dd.choices.all():
            c = {"text": choice.text, "verdict": choice.verdict}
            c["feedback"] = choice.feedback
            if choice.follow_up_id:
                c["follow_up"] = choice.follow_up.key
            out["choices"].append(c)
        items[dd.section_id].append((dd.order, {"deep_dive": out}))
    for wt in walkthroughs:
        out = {"key": wt.key, "kind": wt.kind, "title": wt.title}
        put(out, "intro", wt.intro)
        put(out, "topic", wt.topic_id or "")
        out["steps"] = []
        for step in wt.steps.all():
            s: dict[str, Any] = {"title": step.title}
            put(s, "body", step.body)
            if step.calculator:
                s["ask"] = ask_to_data(step)
            put(s, "hints", step.hints, [])
            put(s, "explanation", step.explanation)
            put(s, "components", [in_order(c, ("key", "label", "col", "row")) for c in step.components], [])
            put(s, "connections", [in_order(c, ("from", "to", "label")) for c in step.connections], [])
            out["steps"].append(s)
        items[wt.section_id].append((wt.order, {"walkthrough": out}))
    for ch in challenges:
        out = {
            "key": ch.key,
            "topic": ch.topic_id,
            "title": ch.title,
            "prompt": ch.prompt,
            "ask": ask_to_data(ch, ch.ranges),
        }
        put(out, "hints", ch.hints, [])
        put(out, "explanation", ch.explanation)
        items[ch.section_id].append((ch.order, {"challenge": out}))
    for question in OpenQuestion.objects.filter(section__lesson=lesson).prefetch_related("checklist"):
        out = {"key": question.key, "topic": question.topic_id, "prompt": question.prompt}
        put(out, "points", question.points, DEFAULT_POINTS)
        out["checklist"] = [point.text for point in question.checklist.all()]
        items[question.section_id].append((question.order, {"open_question": out}))
    data["sections"] = []
    for section in sections:
        s = {"key": section.key, "layer": section.layer, "title": section.title}
        put(s, "minutes", section.minutes, 1)
        put(s, "body", section.body)
        ordered = [item for _, item in sorted(items[section.pk], key=lambda pair: pair[0])]
        put(s, "items", ordered, [])
        data["sections"].append(s)
    return data


def export_directory(directory: Path) -> list[Path]:
    """Write tracks.yaml and one file per lesson; return the paths written."""
    (directory / "lessons").mkdir(parents=True, exist_ok=True)
    tracks = [
        {k: v for k, v in (("slug", t.slug), ("title", t.title), ("summary", t.summary)) if v}
        for t in Track.objects.order_by("order", "slug")
    ]
    written = [directory / "tracks.yaml"]
    written[0].write_text(dump_yaml({"format": FORMAT_VERSION, "tracks": tracks}), encoding="utf-8")
    for lesson in Lesson.objects.select_related("track"):
        path = directory / "lessons" / f"{lesson.slug}.yaml"
        path.write_text(dump_yaml(lesson_to_data(lesson)), encoding="utf-8")
        written.append(path)
    return written
