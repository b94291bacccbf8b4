"""Load lesson files (docs/content-format.md) into the database and export them back, identically."""

from __future__ import annotations

import difflib
import hashlib
import math
import re
import string
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.db import transaction
from django.db.models import F

from calculators.registry import CalculatorInputError, get_calculator
from lessons.markup import MarkupError, check_markup
from lessons.models import (
    Answer,
    Challenge,
    Choice,
    DeepDive,
    Lesson,
    Section,
    Step,
    ToleranceKind,
    Topic,
    Track,
    Verdict,
    Walkthrough,
)

FORMAT_VERSION = 1
KEY_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DEFAULT_POINTS = 10
ORDER_BUMP = 10000  # moves rows out of the way so reordering never trips a unique order


def content_dir() -> Path:
    return Path(getattr(settings, "CONTENT_DIR", settings.BASE_DIR / "content"))


class ContentError(ValueError):
    """A content file that cannot be loaded: names the file, the item and the problem."""

    def __init__(self, file: str, item: str, problem: str):
        self.file, self.item, self.problem = file, item, problem
        super().__init__(f"{file}: {item}: {problem}")


@dataclass
class Checker:
    """Collects the context (file and item) for error messages while validating."""

    file: str
    item: str = "lesson"

    def fail(self, problem: str) -> None:
        raise ContentError(self.file, self.item, problem)

    def mapping(self, data: Any, allowed: set[str], required: set[str], what: str) -> dict:
        if not isinstance(data, dict):
            self.fail(f"{what} must be a mapping of fields, got {type(data).__name__}")
        unknown = set(data) - allowed
        if unknown:
            self.fail(f"unknown field(s) {', '.join(sorted(map(str, unknown)))} in {what}")
        missing = required - set(data)
        if missing:
            self.fail(f"missing field(s) {', '.join(sorted(missing))} in {what}")
        return data

    def text(self, data: dict, name: str, *, required: bool = True, markup: bool = False) -> str:
        value = data.get(name, "")
        if value is None:
            value = ""
        if not isinstance(value, str):
            self.fail(f"'{name}' must be text")
        value = value.strip()
        if required and not value:
            self.fail(f"'{name}' must not be empty")
        if markup:
            try:
                check_markup(value)
            except MarkupError as error:
                self.fail(f"'{name}': {error}")
        return value

    def key(self, data: dict, name: str = "key") -> str:
        value = data.get(name)
        if not isinstance(value, str) or not KEY_RE.match(value):
            self.fail(f"'{name}' must be lowercase letters, digits and hyphens (got {value!r})")
        return value

    def integer(self, data: dict, name: str, default: int, low: int, high: int) -> int:
        value = data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"'{name}' must be a whole number (got {value!r})")
        if not low <= value <= high:
            self.fail(f"'{name}' must be between {low} and {high} (got {value})")
        return value

    def number(self, data: dict, name: str, default: float | None = None) -> float | None:
        value = data.get(name, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            self.fail(f"'{name}' must be a finite number (got {value!r})")
        return float(value)

    def choice(self, data: dict, name: str, options: list[str], default: str | None = None) -> str:
        value = data.get(name, default)
        if value not in options:
            self.fail(f"'{name}' must be one of {', '.join(options)} (got {value!r})")
        return value

    def markdown_list(self, data: dict, name: str) -> list[str]:
        value = data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.fail(f"'{name}' must be a list of non-empty texts")
        for text in value:
            try:
                check_markup(text)
            except MarkupError as error:
                self.fail(f"'{name}': {error}")
        return [v.strip() for v in value]


ASK_FIELDS = {
    "calculator", "inputs", "ranges", "output", "scale", "unit", "tolerance", "tolerance_kind",
    "partial_band", "points", "slips",
}  # fmt: skip


def validate_ask(check: Checker, ask: Any, *, allow_ranges: bool) -> dict:
    """Return the validated fields of a graded number, computing its expected value to prove it works."""
    ask = check.mapping(ask, ASK_FIELDS, {"calculator", "output", "unit", "tolerance"}, "ask")
    slug = check.text(ask, "calculator")
    try:
        calculator = get_calculator(slug)
    except KeyError:
        check.fail(f"unknown calculator '{slug}'")
    inputs = ask.get("inputs") or {}
    if not isinstance(inputs, dict):
        check.fail("'inputs' must be a mapping of parameter names to numbers")
    output = check.text(ask, "output")
    if output not in {o.name for o in calculator.outputs}:
        check.fail(f"calculator '{slug}' has no output '{output}'")
    ranges = ask.get("ranges") or {}
    if ranges and not allow_ranges:
        check.fail("'ranges' are only for challenges")
    if not isinstance(ranges, dict):
        check.fail("'ranges' must map parameter names to [min, max, step]")
    params = {p.name: p for p in calculator.parameters}
    for name, spec in ranges.items():
        if name not in params:
            check.fail(f"range for unknown parameter '{name}' of '{slug}'")
        if (
            not isinstance(spec, list)
            or len(spec) != 3
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in spec)
        ):
            check.fail(f"range for '{name}' must be [min, max, step]")
        low, high, step = spec
        if not all(math.isfinite(v) for v in spec) or not (low <= high and step > 0):
            check.fail(f"range for '{name}' needs finite numbers with min <= max and step > 0")
        if params[name].type == "int" and not all(isinstance(v, int) for v in spec):
            check.fail(f"'{name}' takes whole numbers, so its range needs whole min, max and step")
        if (high - low) / step > 10000:
            check.fail(f"range for '{name}' has more than 10,000 values; use a larger step")
    unit = check.text(ask, "unit")
    tolerance = check.number(ask, "tolerance")
    if tolerance is None or tolerance <= 0:
        check.fail("'tolerance' must be above zero")
    kind = check.choice(ask, "tolerance_kind", ToleranceKind.values, "relative")
    band = check.number(ask, "partial_band")
    if band is not None and band <= 1:
        check.fail("'partial_band' must be a factor above 1, such as 2")
    scale = check.number(ask, "scale", 1.0)
    if scale == 0:
        check.fail("'scale' must not be zero")
    points = check.integer(ask, "points", DEFAULT_POINTS, 1, 100)
    fields = {
        "calculator": slug, "inputs": inputs, "output": output, "scale": scale, "unit": unit,
        "tolerance": tolerance, "tolerance_kind": kind, "partial_band": band, "points": points,
        "slips": [],
    }  # fmt: skip
    corners = [dict(inputs)]
    for name, (low, high, _step) in ranges.items():
        corners = [dict(c, **{name: v}) for c in corners for v in (low, high)]
    for corner in corners:
        expected_value(check, fields, corner)
    slips = ask.get("slips") or []
    if not isinstance(slips, list):
        check.fail("'slips' must be a list")
    for slip in slips:
        slip = check.mapping(slip, {"factor", "inputs", "feedback"}, {"feedback"}, "slip")
        feedback = check.text(slip, "feedback", markup=True)
        if ("factor" in slip) == ("inputs" in slip):
            check.fail("a slip needs exactly one of 'factor' or 'inputs'")
        if "factor" in slip:
            factor = check.number(slip, "factor")
            if not factor or factor <= 0:
                check.fail("a slip's 'factor' must be above zero")
            fields["slips"].append({"factor": factor, "feedback": feedback})
        else:
            if not isinstance(slip["inputs"], dict):
                check.fail("a slip's 'inputs' must be a mapping")
            expected_value(check, fields, {**inputs, **slip["inputs"]})
            fields["slips"].append({"inputs": slip["inputs"], "feedback": feedback})
    fields["ranges"] = ranges
    return fields


def expected_value(check: Checker, fields: dict, inputs: dict) -> float:
    """Compute the expected answer for ``inputs``, failing clearly if the calculator refuses them."""
    calculator = get_calculator(fields["calculator"])
    try:
        result = calculator.evaluate(inputs)
    except CalculatorInputError as error:
        problems = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in error.errors.items())
        check.fail(f"calculator '{fields['calculator']}' refuses the inputs: {problems}")
    value = result.outputs.get(fields["output"])
    if isinstance(value, bool) or value is None or not math.isfinite(value):
        check.fail(f"output '{fields['output']}' is not a finite number for these inputs")
    return value * fields["scale"]


@dataclass
class LessonSpec:
    file: str
    lesson: dict
    sections: list[dict] = field(default_factory=list)
    digest: str = ""  # of the file's text: an unchanged file is not loaded again


def parse_lesson(data: Any, file: str, track_slugs: set[str]) -> LessonSpec:
    """Validate one lesson file's data, refusing the first problem with file, item and reason."""
    check = Checker(file)
    lesson_fields = {"format", "slug", "track", "order", "title", "kind", "summary", "published", "sections"}
    data = check.mapping(data, lesson_fields, lesson_fields - {"published"}, "the lesson")
    if data["format"] != FORMAT_VERSION:
        check.fail(f"'format' must be {FORMAT_VERSION}")
    slug = check.key(data, "slug")
    track = data["track"]
    if track not in track_slugs:
        check.fail(f"unknown track '{track}' (tracks: {', '.join(sorted(track_slugs)) or 'none'})")
    published = data.get("published", True)
    if not isinstance(published, bool):
        check.fail("'published' must be true or false")
    spec = LessonSpec(
        file,
        {
            "slug": slug,
            "track": track,
            "order": check.integer(data, "order", 1, 0, 999),
            "title": check.text(data, "title"),
            "kind": check.choice(data, "kind", Lesson.Kind.values),
            "summary": check.text(data, "summary", markup=True),
            "published": published,
        },
    )
    sections = data["sections"]
    if not isinstance(sections, list) or not sections:
        check.fail("'sections' must be a non-empty list")
    section_keys: set[str] = set()
    item_keys: set[str] = set()
    deep_dives: dict[str, dict] = {}
    for section in sections:
        check.item = "a section"
        section = check.mapping(
            section, {"key", "layer", "title", "minutes", "body", "items"}, {"key", "layer", "title"}, "section"
        )
        key = check.key(section)
        check.item = f"section '{key}'"
        if key in section_keys:
            check.fail("section keys must be unique in the lesson")
        section_keys.add(key)
        parsed = {
            "key": key,
            "layer": check.integer(section, "layer", 1, 1, 3),
            "title": check.text(section, "title"),
            "minutes": check.integer(section, "minutes", 1, 0, 120),
            "body": check.text(section, "body", required=False, markup=True),
            "items": [],
        }
        items = section.get("items") or []
        if not isinstance(items, list):
            check.fail("'items' must be a list")
        for item in items:
            if not isinstance(item, dict) or len(item) != 1:
                check.fail("each item must be exactly one of deep_dive, walkthrough or challenge")
            ((kind, body),) = item.items()
            if kind not in ("deep_dive", "walkthrough", "challenge"):
                check.fail(f"unknown item type '{kind}'")
            check.item = f"{kind} in section '{key}'"
            item_key = check.key(body if isinstance(body, dict) else {})
            check.item = f"{kind} '{item_key}'"
            if item_key in item_keys:
                check.fail("item keys must be unique in the lesson")
            item_keys.add(item_key)
            parser = {"deep_dive": parse_deep_dive, "walkthrough": parse_walkthrough, "challenge": parse_challenge}
            fields = parser[kind](check, body)
            parsed["items"].append((kind, fields))
            if kind == "deep_dive":
                deep_dives[item_key] = fields
        spec.sections.append(parsed)
    check_follow_ups(check, deep_dives)
    return spec


def parse_deep_dive(check: Checker, data: Any) -> dict:
    data = check.mapping(
        data, {"key", "topic", "prompt", "context", "points", "choices"}, {"key", "topic", "prompt", "choices"},
        "deep_dive",
    )  # fmt: skip
    points = check.integer(data, "points", DEFAULT_POINTS, 1, 100)
    fields = {
        "key": data["key"],
        "topic": check.choice(data, "topic", Topic.values),
        "prompt": check.text(data, "prompt", markup=True),
        "context": check.text(data, "context", required=False, markup=True),
        "points": points,
        "choices": [],
    }
    choices = data["choices"]
    if not isinstance(choices, list) or len(choices) < 3:
        check.fail("a deep dive needs at least three choices")
    defaults = {"best": points, "acceptable": points // 2, "weak": 0}
    for number, choice in enumerate(choices, start=1):
        choice = check.mapping(
            choice, {"text", "verdict", "points", "feedback", "follow_up"}, {"text", "verdict", "feedback"},
            f"choice {number}",
        )  # fmt: skip
        verdict = check.choice(choice, "verdict", Verdict.values)
        choice_points = check.integer(choice, "points", defaults[verdict], 0, points)
        if verdict == "best" and choice_points != points:
            check.fail(f"choice {number} is best, so it must earn the full {points} points")
        if verdict != "best" and choice_points >= points:
            check.fail(f"choice {number} is {verdict}, so it must earn fewer than {points} points")
        follow_up = choice.get("follow_up")
        if follow_up is not None and (not isinstance(follow_up, str) or not KEY_RE.match(follow_up)):
            check.fail(f"choice {number}: 'follow_up' must be the key of a deep dive")
        fields["choices"].append(
            {
                "text": check.text(choice, "text", markup=True),
                "verdict": verdict,
                "points": choice_points,
                "feedback": check.text(choice, "feedback", markup=True),
                "follow_up": follow_up,
            }
        )
    best = sum(1 for c in fields["choices"] if c["verdict"] == "best")
    if best != 1:
        check.fail(f"a deep dive needs exactly one best choice (found {best})")
    return fields


def check_follow_ups(check: Checker, deep_dives: dict[str, dict]) -> None:
    """Refuse follow-ups that do not exist, point at themselves, or lead back in a loop."""
    graph = {key: {c["follow_up"] for c in dd["choices"] if c["follow_up"]} for key, dd in deep_dives.items()}
    for key, targets in graph.items():
        check.item = f"deep_dive '{key}'"
        for target in targets:
            if target not in deep_dives:
                check.fail(f"follow_up '{target}' is not a deep dive in this lesson")
            if target == key:
                check.fail("a follow-up cannot lead back to its own deep dive")
    for start in graph:
        seen: set[str] = set()
        frontier = list(graph[start])
        while frontier:
            node = frontier.pop()
            if node == start:
                check.item = f"deep_dive '{start}'"
                check.fail("its follow-ups lead back to it in a loop")
            if node not in seen:
                seen.add(node)
                frontier.extend(graph.get(node, ()))


def parse_walkthrough(check: Checker, data: Any) -> dict:
    data = check.mapping(
        data, {"key", "kind", "title", "intro", "topic", "steps"}, {"key", "kind", "title", "steps"}, "walkthrough"
    )
    kind = check.choice(data, "kind", Walkthrough.Kind.values)
    topic = data.get("topic", "")
    if topic and topic not in Topic.values:
        check.fail(f"'topic' must be one of {', '.join(Topic.values)}")
    if kind == "envelope" and not topic:
        check.fail("an envelope walkthrough needs a topic for its graded steps")
    fields = {
        "key": data["key"], "kind": kind, "title": check.text(data, "title"),
        "intro": check.text(data, "intro", required=False, markup=True), "topic": topic, "steps": [],
    }  # fmt: skip
    steps = data["steps"]
    if not isinstance(steps, list) or not steps:
        check.fail("a walkthrough needs at least one step")
    components: set[str] = set()
    base_item = check.item
    for number, step in enumerate(steps, start=1):
        check.item = f"{base_item}, step {number}"
        step = check.mapping(
            step, {"title", "body", "ask", "hints", "explanation", "components", "connections"}, {"title"}, "step"
        )
        parsed = {
            "title": check.text(step, "title"),
            "body": check.text(step, "body", required=False, markup=True),
            "hints": check.markdown_list(step, "hints"),
            "explanation": check.text(step, "explanation", required=False, markup=True),
            "components": [],
            "connections": [],
            "ask": None,
        }
        if kind == "envelope":
            if "ask" not in step:
                check.fail("an envelope step must ask for a number ('ask')")
            parsed["ask"] = validate_ask(check, step["ask"], allow_ranges=False)
        elif "ask" in step:
            check.fail("only envelope steps ask for a number")
        if kind != "envelope":
            for comp in step.get("components") or []:
                comp = check.mapping(comp, {"key", "label", "col", "row"}, {"key", "label", "col", "row"}, "component")
                key = check.key(comp)
                if key in components:
                    check.fail(f"component '{key}' was already added")
                components.add(key)
                parsed["components"].append(
                    {
                        "key": key,
                        "label": check.text(comp, "label"),
                        "col": check.integer(comp, "col", 0, 0, 9),
                        "row": check.integer(comp, "row", 0, 0, 9),
                    }
                )
            for conn in step.get("connections") or []:
                conn = check.mapping(conn, {"from", "to", "label"}, {"from", "to"}, "connection")
                for end in ("from", "to"):
                    if conn[end] not in components:
                        check.fail(f"connection {end} '{conn[end]}' is not a component added so far")
                parsed["connections"].append(
                    {"from": conn["from"], "to": conn["to"], "label": check.text(conn, "label", required=False)}
                )
        elif step.get("components") or step.get("connections"):
            check.fail("envelope steps have no diagram")
        fields["steps"].append(parsed)
    check.item = base_item
    return fields


def parse_challenge(check: Checker, data: Any) -> dict:
    data = check.mapping(
        data, {"key", "topic", "title", "prompt", "ask", "hints", "explanation"},
        {"key", "topic", "title", "prompt", "ask"}, "challenge",
    )  # fmt: skip
    fields = {
        "key": data["key"],
        "topic": check.choice(data, "topic", Topic.values),
        "title": check.text(data, "title"),
        "prompt": check.text(data, "prompt", markup=True),
        "hints": check.markdown_list(data, "hints"),
        "explanation": check.text(data, "explanation", required=False, markup=True),
        "ask": validate_ask(check, data["ask"], allow_ranges=True),
    }
    calculator = get_calculator(fields["ask"]["calculator"])
    names = {p.name for p in calculator.parameters}
    try:
        placeholders = [name for _, name, _, _ in string.Formatter().parse(fields["prompt"]) if name is not None]
    except ValueError as error:
        check.fail(f"prompt has a brace that is not a placeholder ({error}); write {{{{ and }}}} for literal braces")
    for name in placeholders:
        if name not in names:
            check.fail(f"prompt shows {{{name}}}, which is not a parameter of '{calculator.slug}'")
    return fields


# --- loading -----------------------------------------------------------------------------------


def read_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        raise ContentError(path.name, "file", f"not valid YAML: {error}") from None
    except UnicodeDecodeError:
        raise ContentError(path.name, "file", "not UTF-8 text") from None


def parse_tracks(path: Path) -> list[dict]:
    check = Checker(path.name, "tracks")
    data = check.mapping(read_yaml(path), {"format", "tracks"}, {"format", "tracks"}, "tracks.yaml")
    if data["format"] != FORMAT_VERSION:
        check.fail(f"'format' must be {FORMAT_VERSION}")
    tracks = []
    for order, track in enumerate(data["tracks"] or [], start=1):
        track = check.mapping(track, {"slug", "title", "summary"}, {"slug", "title"}, "track")
        check.item = f"track '{track.get('slug')}'"
        tracks.append(
            {
                "slug": check.key(track, "slug"),
                "title": check.text(track, "title"),
                "summary": check.text(track, "summary", required=False),
                "order": order,
            }
        )
    return tracks


def parse_directory(directory: Path) -> tuple[list[dict], list[LessonSpec]]:
    """Validate every file under ``directory`` before anything is written."""
    tracks_file = directory / "tracks.yaml"
    if not tracks_file.exists():
        return [], []
    tracks = parse_tracks(tracks_file)
    slugs = {t["slug"] for t in tracks} | set(Track.objects.values_list("slug", flat=True))
    specs = []
    for path in sorted(directory.glob("lessons/*.yaml")):
        spec = parse_lesson(read_yaml(path), path.name, slugs)
        spec.digest = hashlib.sha256(path.read_bytes()).hexdigest()
        specs.append(spec)
    seen: dict[str, str] = {}
    orders: dict[tuple[str, int], str] = {}
    for spec in specs:
        slug = spec.lesson["slug"]
        if slug in seen:
            raise ContentError(spec.file, "lesson", f"slug '{slug}' is also used by {seen[slug]}")
        seen[slug] = spec.file
        place = (spec.lesson["track"], spec.lesson["order"])
        if place in orders:
            raise ContentError(spec.file, "lesson", f"order {place[1]} in track '{place[0]}' is also {orders[place]}")
        orders[place] = spec.file
    return tracks, specs


@dataclass
class LoadReport:
    created: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    lessons: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        text = (
            f"{len(self.lessons)} lesson(s): {self.created} created, {self.updated} updated, "
            f"{self.deleted} deleted, {self.unchanged} unchanged"
        )
        if self.skipped:
            text += f"; {len(self.skipped)} file(s) unchanged since the last load were left as they are"
        return text


def upsert(report: LoadReport, model, lookup: dict, values: dict, create: dict | None = None):
    """Create or update one row, counting what changed; return the row.

    Rows whose ``order`` was moved out of the way by ORDER_BUMP and comes back to
    the same value count as unchanged.
    """
    row = model.objects.filter(**lookup).first()
    if row is None:
        report.created += 1
        return model.objects.create(**(create if create is not None else lookup), **values)
    changed = []
    for name, value in values.items():
        old = getattr(row, name)
        if name == "order" and old >= ORDER_BUMP:
            old -= ORDER_BUMP
            setattr(row, name, value)
            if old == value:
                row.save(update_fields=["order"])
                continue
        if old != value:
            changed.append(name)
            setattr(row, name, value)
    if changed:
        row.save(update_fields=sorted(set(changed) | ({"order"} if "order" in values else set())))
        report.updated += 1
    else:
        report.unchanged += 1
    return row


ANSWERS_OF = {
    Choice: "choice__in",
    DeepDive: "deep_dive__in",
    Walkthrough: "step__walkthrough__in",
    Challenge: "challenge__in",
    Step: "step__in",
}


def delete_missing(report: LoadReport, queryset, *, file: str = "", prune: bool = True) -> None:
    """Delete rows the file no longer has; refuse when learners' answers would go with them."""
    if not prune and queryset.model in ANSWERS_OF:
        answered = Answer.objects.filter(**{ANSWERS_OF[queryset.model]: queryset}).count()
        if answered:
            names = ", ".join(sorted(str(getattr(row, "key", None) or row) for row in queryset))
            raise ContentError(
                file,
                f"{queryset.model._meta.verbose_name} {names}",
                f"is no longer in the file but learners gave {answered} answer(s) to it; put it back, "
                "or load with --prune to delete it and those answers",
            )
    _count, by_model = queryset.delete()
    report.deleted += by_model.get(queryset.model._meta.label, 0)


def ask_values(ask: dict | None) -> dict:
    if not ask:
        return {"calculator": "", "inputs": {}, "output": "", "scale": 1.0, "unit": "", "tolerance": None,
                "tolerance_kind": "relative", "partial_band": None, "slips": [], "points": DEFAULT_POINTS}  # fmt: skip
    return {k: ask[k] for k in (
        "calculator", "inputs", "output", "scale", "unit", "tolerance", "tolerance_kind", "partial_band", "slips",
        "points",
    )}  # fmt: skip


@transaction.atomic
def write(tracks: list[dict], specs: list[LessonSpec], *, force: bool = False, prune: bool = False) -> LoadReport:
    """Write validated tracks and lessons; rows keep their ids so learners' answers survive edits.

    A lesson whose file has not changed since it was last loaded is left alone (``force``
    reloads it), so edits made in the admin survive restarts until the file itself changes.
    """
    report = LoadReport()
    write_all(report, tracks, specs, force, prune)
    return report


def write_all(report: LoadReport, tracks: list[dict], specs: list[LessonSpec], force: bool, prune: bool) -> None:
    Track.objects.filter(slug__in=[t["slug"] for t in tracks]).update(order=F("order") + ORDER_BUMP)
    for track in tracks:
        upsert(report, Track, {"slug": track["slug"]}, {k: track[k] for k in ("title", "summary", "order")})
    track_ids = dict(Track.objects.values_list("slug", "id"))
    digests = dict(
        Lesson.objects.filter(slug__in=[s.lesson["slug"] for s in specs]).values_list("slug", "source_digest")
    )
    changed = [spec for spec in specs if force or digests.get(spec.lesson["slug"]) != spec.digest]
    report.skipped = [spec.lesson["slug"] for spec in specs if spec not in changed]
    Lesson.objects.filter(slug__in=[s.lesson["slug"] for s in changed]).update(order=F("order") + ORDER_BUMP)
    for spec in changed:
        write_lesson(report, spec, track_ids, prune)
        Lesson.objects.filter(slug=spec.lesson["slug"]).update(source_digest=spec.digest)
        report.lessons.append(spec.lesson["slug"])


def write_lesson(report: LoadReport, spec: LessonSpec, track_ids: dict[str, int], prune: bool = False) -> None:
    values = dict(spec.lesson)
    values["track_id"] = track_ids[values.pop("track")]
    slug = values.pop("slug")
    lesson = upsert(report, Lesson, {"slug": slug}, values)
    Section.objects.filter(lesson=lesson).update(order=F("order") + ORDER_BUMP)
    for model in (DeepDive, Walkthrough, Challenge):
        model.objects.filter(section__lesson=lesson).update(order=F("order") + ORDER_BUMP)
    kept: dict[type, list[int]] = {DeepDive: [], Walkthrough: [], Challenge: [], Section: []}
    follow_ups: list[tuple[Choice, str, bool]] = []
    for section_order, section_spec in enumerate(spec.sections, start=1):
        section = upsert(
            report,
            Section,
            {"lesson": lesson, "key": section_spec["key"]},
            {"order": section_order, **{k: section_spec[k] for k in ("layer", "title", "minutes", "body")}},
        )
        kept[Section].append(section.pk)
        for item_order, (kind, fields) in enumerate(section_spec["items"], start=1):
            if kind == "deep_dive":
                row = write_deep_dive(report, lesson, section, item_order, fields, follow_ups, spec.file, prune)
                kept[DeepDive].append(row.pk)
            elif kind == "walkthrough":
                row = write_walkthrough(report, lesson, section, item_order, fields, spec.file, prune)
                kept[Walkthrough].append(row.pk)
            else:
                row = write_challenge(report, lesson, section, item_order, fields)
                kept[Challenge].append(row.pk)
    deep_dive_ids = dict(DeepDive.objects.filter(section__lesson=lesson).values_list("key", "id"))
    for choice, key, created in follow_ups:
        if choice.follow_up_id != deep_dive_ids.get(key):
            Choice.objects.filter(pk=choice.pk).update(follow_up_id=deep_dive_ids.get(key))
            report.updated += 0 if created else 1  # a new choice's link is part of creating it
    for model in (DeepDive, Walkthrough, Challenge):
        missing = model.objects.filter(section__lesson=lesson).exclude(pk__in=kept[model])
        delete_missing(report, missing, file=spec.file, prune=prune)
    delete_missing(report, Section.objects.filter(lesson=lesson).exclude(pk__in=kept[Section]))


def item_row(report: LoadReport, model, lesson: Lesson, section: Section, order: int, key: str, values: dict):
    """Upsert an item by its key within the lesson (it may move between sections)."""
    values = {"section_id": section.pk, "order": order, **values}
    return upsert(report, model, {"section__lesson": lesson, "key": key}, values, create={"key": key})


def match_choices(existing: list[Choice], specs: list[dict]) -> tuple[list[Choice | None], list[Choice]]:
    """Pair each choice in the file with a row: the same text first, then the most similar text.

    Inserting, removing or reordering choices keeps every answer on the choice it was given to;
    a choice whose wording was edited keeps its row. Returns the pairing and the rows left over.
    """
    remaining = sorted(existing, key=lambda c: c.order)
    matched: list[Choice | None] = []
    for spec in specs:
        row = next((c for c in remaining if c.text == spec["text"]), None)
        if row is not None:
            remaining.remove(row)
        matched.append(row)
    # A reworded choice is still mostly the same words: pair the most similar texts first.
    pairs = sorted(
        (
            (difflib.SequenceMatcher(None, row.text, specs[i]["text"]).ratio(), i, row)
            for i, matched_row in enumerate(matched)
            if matched_row is None
            for row in remaining
        ),
        key=lambda pair: -pair[0],
    )
    for ratio, index, row in pairs:
        if ratio >= 0.6 and matched[index] is None and row in remaining:
            matched[index] = row
            remaining.remove(row)
    return matched, remaining


def write_deep_dive(report, lesson, section, order, fields, follow_ups, file: str = "", prune: bool = True) -> DeepDive:
    deep_dive = item_row(
        report, DeepDive, lesson, section, order, fields["key"],
        {k: fields[k] for k in ("topic", "prompt", "context", "points")},
    )  # fmt: skip
    Choice.objects.filter(deep_dive=deep_dive).update(order=F("order") + ORDER_BUMP)
    matched, leftover = match_choices(list(Choice.objects.filter(deep_dive=deep_dive)), fields["choices"])
    delete_missing(report, Choice.objects.filter(pk__in=[c.pk for c in leftover]), file=file, prune=prune)
    for number, (choice, row) in enumerate(zip(fields["choices"], matched), start=1):
        values = {k: choice[k] for k in ("text", "verdict", "points", "feedback")}
        created = row is None
        if created:
            row = Choice.objects.create(deep_dive=deep_dive, order=number, **values)
            report.created += 1
        else:
            changed = any(getattr(row, k) != v for k, v in values.items()) or row.order != number + ORDER_BUMP
            Choice.objects.filter(pk=row.pk).update(order=number, **values)
            if changed:
                report.updated += 1
            else:
                report.unchanged += 1
        follow_ups.append((row, choice["follow_up"], created))
    return deep_dive


def write_walkthrough(report, lesson, section, order, fields, file: str = "", prune: bool = True) -> Walkthrough:
    walkthrough = item_row(
        report, Walkthrough, lesson, section, order, fields["key"],
        {k: fields[k] for k in ("kind", "title", "intro", "topic")},
    )  # fmt: skip
    Step.objects.filter(walkthrough=walkthrough).update(order=F("order") + ORDER_BUMP)
    for number, step in enumerate(fields["steps"], start=1):
        values = {
            **{k: step[k] for k in ("title", "body", "hints", "explanation", "components", "connections")},
            **ask_values(step["ask"]),
        }
        row = Step.objects.filter(walkthrough=walkthrough, order=number + ORDER_BUMP).first()
        if row is None:
            Step.objects.create(walkthrough=walkthrough, order=number, **values)
            report.created += 1
        else:
            if any(getattr(row, k) != v for k, v in values.items()):
                report.updated += 1
            else:
                report.unchanged += 1
            Step.objects.filter(pk=row.pk).update(order=number, **values)
    delete_missing(report, Step.objects.filter(walkthrough=walkthrough, order__gt=ORDER_BUMP), file=file, prune=prune)
    return walkthrough


def write_challenge(report, lesson, section, order, fields) -> Challenge:
    values = {k: fields[k] for k in ("topic", "title", "prompt", "hints", "explanation")}
    values.update(ask_values(fields["ask"]))
    values["ranges"] = fields["ask"]["ranges"]
    return item_row(report, Challenge, lesson, section, order, fields["key"], values)


def load_directory(directory: Path | None = None, *, force: bool = False, prune: bool = False) -> LoadReport:
    """Validate all files, then write them in one transaction (nothing half-written)."""
    tracks, specs = parse_directory(directory or content_dir())
    return write(tracks, specs, force=force, prune=prune)


# --- export ------------------------------------------------------------------------------------


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
        out = {"key": dd.key, "topic": dd.topic, "prompt": dd.prompt}
        put(out, "context", dd.context)
        put(out, "points", dd.points, DEFAULT_POINTS)
        defaults = {"best": dd.points, "acceptable": dd.points // 2, "weak": 0}
        out["choices"] = []
        for choice in dd.choices.all():
            c = {"text": choice.text, "verdict": choice.verdict}
            put(c, "points", choice.points, defaults[choice.verdict])
            c["feedback"] = choice.feedback
            if choice.follow_up_id:
                c["follow_up"] = choice.follow_up.key
            out["choices"].append(c)
        items[dd.section_id].append((dd.order, {"deep_dive": out}))
    for wt in walkthroughs:
        out = {"key": wt.key, "kind": wt.kind, "title": wt.title}
        put(out, "intro", wt.intro)
        put(out, "topic", wt.topic)
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
            "topic": ch.topic,
            "title": ch.title,
            "prompt": ch.prompt,
            "ask": ask_to_data(ch, ch.ranges),
        }
        put(out, "hints", ch.hints, [])
        put(out, "explanation", ch.explanation)
        items[ch.section_id].append((ch.order, {"challenge": out}))
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
