"""Validate lesson files (docs/content-format.md): every problem names the file, the item and the reason.

The admin runs the same checks (lessons.admin), so a row saved there is one a file could hold.
"""

from __future__ import annotations

import hashlib
import math
import re
import statistics
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from calculators.registry import CALCULATORS, Calculator, CalculatorInputError, get_calculator
from lessons.markup import MarkupError, check_markup, check_prompt
from lessons.models import (
    MAX_PROMPT,
    Challenge,
    Lesson,
    ToleranceKind,
    Topic,
    Track,
    Verdict,
    Walkthrough,
)
from lessons.scoring import MAX_HINTS

FORMAT_VERSION = 1
KEY_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
DEFAULT_POINTS = 10


class ContentError(ValueError):
    """A content file that cannot be loaded: names the file, the item and the problem.

    ``field`` names the model field at fault when there is one, so the admin can show the
    problem beside it.
    """

    def __init__(self, file: str, item: str, problem: str, field: str | None = None):
        self.file, self.item, self.problem, self.field = file, item, problem, field
        super().__init__(f"{file}: {item}: {problem}")


class ContentErrors(ContentError):
    """Every problem found in the content, reported at once (every problem of every item)."""

    def __init__(self, errors: list[ContentError]):
        self.errors = [e for error in errors for e in getattr(error, "errors", [error])]
        first = self.errors[0]
        self.file, self.item, self.problem, self.field = first.file, first.item, first.problem, first.field
        ValueError.__init__(self, "\n".join(str(e) for e in self.errors))


def sentence(text: str) -> str:
    """Return a problem as a sentence: with a final period, unless it already ends with one (a calculator's)."""
    return text if text.endswith(".") else f"{text}."


def all_problems(error: ContentError) -> list[ContentError]:
    """Return the problems an error carries: several for ContentErrors, else itself."""
    return getattr(error, "errors", [error])


class Fields(dict):
    """A mapping's fields as written; ``missing`` names the required ones it lacks, each reported once by mapping()."""

    missing: frozenset[str] = frozenset()


def missing(data: Any, name: str) -> bool:
    """Return whether mapping() reported ``name`` missing from ``data``: the field's own check then says no more."""
    return name in getattr(data, "missing", ())


def finite(value: Any) -> bool:
    """Return whether ``value`` is a number a float can hold (not a boolean, not an int too large for a float)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:  # an int of more than about 308 digits
        return False


def written(value: Any) -> str:
    """Return a value as an author reads it in a message: a scalar as written, a list or mapping by its kind."""
    if value is None:
        return "empty"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, int) and not isinstance(value, bool) and not finite(value):
        return f"a number of {len(str(abs(value)))} digits"
    return repr(value)


@dataclass
class Checker:
    """Collects the context (file and item) for error messages while validating.

    A problem reads as an author would say it and starts with the field at fault as a file spells it ("title must
    not be empty"); the admin shows it beside that field, named by the form's label (lessons.admin.show_problem).
    """

    file: str
    item: str = "lesson"
    known_topics: list[str] | None = None  # the Topic table's slugs, read once per checker
    problems: list[ContentError] | None = None  # inside gather(): the problems found so far
    entry_of: str | None = None  # inside part(): the list field (slips, components, ...) whose entry is checked

    @contextmanager
    def gather(self) -> Iterator[None]:
        """Run the checks inside, collecting the problems ``soft`` finds, then refuse them all at once."""
        outer, self.problems = self.problems, []
        try:
            yield
        except ContentError as error:  # a problem the checks inside could not go past
            self.problems.extend(all_problems(error))
        finally:
            found, self.problems = self.problems, outer
        if found:
            raise ContentErrors(found)

    def soft(self, check: Callable[..., Any], *args: Any, default: Any = None, **kwargs: Any) -> Any:
        """Run one check; inside gather() a refusal is noted and ``default`` returned, so the next check runs."""
        try:
            return check(*args, **kwargs)
        except ContentError as error:
            if self.problems is None:
                raise
            self.problems.extend(all_problems(error))
            return default

    @contextmanager
    def part(self, name: str, entry_of: str | None = None) -> Iterator[None]:
        """Check one part of the item (a step, a choice, a slip, a diagram part): its problems name it after the
        item ("walkthrough 'size', step 2"); those of an entry of the list field ``entry_of`` belong to that field."""
        outer = self.item, self.entry_of
        self.item, self.entry_of = f"{self.item}, {name}", entry_of or self.entry_of
        try:
            yield
        finally:
            self.item, self.entry_of = outer

    def topic(self, data: dict, name: str = "topic", *, required: bool = True) -> str:
        """Return a topic's slug, refusing one the Topic table does not hold (instructors add them in the admin)."""
        if missing(data, name):
            return ""
        value = data.get(name) or ""
        if not value and not required:
            return ""
        if self.known_topics is None:
            self.known_topics = list(Topic.objects.values_list("slug", flat=True))
        topics = ", ".join(self.known_topics) or "none yet"
        if not value:
            self.fail(f"{name} must not be empty: give one of the topics ({topics})", name)
        if value not in self.known_topics:
            self.fail(
                f"{name} {written(value)} is not one of the topics ({topics}); add it in the admin under Topics first",
                name,
            )
        return value

    def fail(self, problem: str, field: str | None = None) -> None:
        raise ContentError(self.file, self.item, problem, self.entry_of or field)

    def found(self) -> int:
        """Return how many problems gather() holds so far (0 outside it: there the first one is raised)."""
        return len(self.problems or [])

    def mapping(self, data: Any, allowed: set[str], required: set[str], what: str) -> Fields:
        """Return the fields of ``data``, noting unknown ones and each required one that is missing.

        Inside gather() the checks go on past a missing field; the field's own check then stays quiet (``missing``).
        """
        if not isinstance(data, dict):
            self.fail(f"{what} must be a mapping of fields (name: value), not {written(data)}")
        unknown = sorted(map(str, set(data) - allowed))
        if unknown:
            self.soft(
                self.fail,
                f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} in {what} "
                f"(its fields are {', '.join(sorted(allowed))})",
            )
        fields = Fields(data)
        fields.missing = frozenset(required - set(data))
        for name in sorted(fields.missing):
            self.soft(self.fail, f"{name} is missing from {what}", name)
        return fields

    def text(
        self, data: dict, name: str, *, required: bool = True, markup: bool = False, max_length: int | None = None
    ) -> str:
        if missing(data, name):
            return ""
        value = data.get(name, "")
        if value is None:
            value = ""
        if not isinstance(value, str):
            self.fail(f"{name} must be text, not {written(value)}", name)
        value = value.strip()
        if required and not value:
            self.fail(f"{name} must not be empty", name)
        if max_length is not None and len(value) > max_length:
            self.fail(f"{name} is {len(value):,} characters; at most {max_length:,}: shorten it", name)
        if markup:
            try:
                check_markup(value)
            except MarkupError as error:
                self.fail(f"{name}: {error}", name)
        return value

    def key(self, data: dict, name: str = "key") -> str:
        if missing(data, name):
            return ""
        value = data.get(name)
        if value is None:
            self.fail(f"{name} is missing", name)
        if not isinstance(value, str) or not KEY_RE.match(value):
            self.fail(f"{name} must be lowercase letters, digits and hyphens, not {written(value)}", name)
        return value

    def integer(self, data: dict, name: str, default: int, low: int, high: int) -> int:
        if missing(data, name):
            return default
        value = data.get(name, default)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"{name} must be a whole number, not {written(value)}", name)
        if not low <= value <= high:
            self.fail(f"{name} must be between {low} and {high}, not {value}", name)
        return value

    def number(self, data: dict, name: str, default: float | None = None) -> float | None:
        """Return a number field, or ``default`` when none is given (absent or empty)."""
        value = None if missing(data, name) else data.get(name)
        if value is None:
            return default
        if not finite(value):
            self.fail(f"{name} must be a finite number, not {written(value)}", name)
        return float(value)

    def choice(self, data: dict, name: str, options: list[str], default: str | None = None) -> str:
        if missing(data, name):
            return default
        value = data.get(name, default)
        if value not in options:
            self.fail(f"{name} must be one of {', '.join(options)}, not {written(value)}", name)
        return value

    def markdown_list(self, data: dict, name: str) -> list[str]:
        if missing(data, name):
            return []
        value = data.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            self.fail(f"{name} must be a list of texts, none of them empty", name)
        for text in value:
            try:
                check_markup(text)
            except MarkupError as error:
                self.fail(f"{name}: {error}", name)
        return [v.strip() for v in value]


ASK_FIELDS = {
    "calculator", "inputs", "ranges", "output", "scale", "unit", "tolerance", "tolerance_kind",
    "partial_band", "points", "slips",
}  # fmt: skip


def validate_ask(check: Checker, ask: Any, *, allow_ranges: bool) -> dict:
    """Return the validated fields of a graded number, computing its expected value to prove it works.

    Without a known calculator, the checks that need one (the output, the ranges, the expected values) are left
    out and the others still run; so are the expected values without a known output or with inputs refused.
    """
    ask = check.mapping(ask, ASK_FIELDS, {"calculator", "output", "unit", "tolerance"}, "ask (a numeric question)")
    slug = check.soft(check.text, ask, "calculator", default="")
    calculator = check.soft(known_calculator, check, slug) if slug else None
    inputs = ask.get("inputs") or {}
    computable = calculator is not None  # whether the expected values can be computed: refused pieces say not
    if not isinstance(inputs, dict):
        check.soft(check.fail, "inputs must map parameter names to numbers", "inputs")
        inputs, computable = {}, False
    output = check.soft(check.text, ask, "output", default="")
    outputs = {o.name for o in calculator.outputs} if calculator is not None else set()
    if calculator is not None and output and output not in outputs:
        names = ", ".join(o.name for o in calculator.outputs)
        check.soft(
            check.fail, f"output '{output}' is not one of the outputs of calculator '{slug}' ({names})", "output"
        )
    computable = computable and output in outputs
    ranges = ask.get("ranges") or {}
    if ranges and not allow_ranges:
        check.soft(check.fail, "ranges are only for challenges", "ranges")
        ranges = {}
    if not isinstance(ranges, dict):
        check.soft(check.fail, "ranges must map parameter names to [min, max, step]", "ranges")
        ranges = {}
    drawn = {}  # the ranges the calculator takes, whose corners are computed
    if calculator is not None:
        params = {p.name: p for p in calculator.parameters}
        drawn = {
            name: spec for name, spec in ranges.items() if check.soft(check_range, check, slug, params, name, spec)
        }
    for name in sorted(set(ranges) & set(inputs), key=str):  # a learner would see one number, be graded on another
        check.soft(
            check.fail, f"ranges: '{name}' is both fixed in the inputs and drawn per learner; keep one", "ranges"
        )
    unit = check.soft(check.text, ask, "unit", default="")
    tolerance = check.soft(check.number, ask, "tolerance")
    if "tolerance" in ask and (ask["tolerance"] is None or (tolerance is not None and tolerance <= 0)):
        check.soft(check.fail, "tolerance must be above zero: 0.01 means within 1% of the answer", "tolerance")
    kind = check.soft(check.choice, ask, "tolerance_kind", ToleranceKind.values, "relative")
    band = check.soft(check.number, ask, "partial_band")
    if band is not None and band <= 1:
        check.soft(check.fail, "partial_band must be above 1, such as 2 (half credit between half and twice "
                   "the answer)", "partial_band")  # fmt: skip
    scale = check.soft(check.number, ask, "scale", 1.0, default=1.0)
    if scale <= 0:  # learners' answers are read as 0 or more (lessons.number_entry)
        check.soft(check.fail, "scale must be above zero", "scale")
    points = check.soft(check.integer, ask, "points", DEFAULT_POINTS, 1, 100, default=DEFAULT_POINTS)
    fields = {
        "calculator": slug, "inputs": inputs, "output": output, "scale": scale, "unit": unit,
        "tolerance": tolerance, "tolerance_kind": kind, "partial_band": band, "points": points,
        "slips": [],
    }  # fmt: skip
    # The calculator is asked only what its refused pieces leave it able to answer; the fixed inputs are checked
    # alone first, so a bad one is told once, beside them, and not again for every corner of the ranges or slip.
    computable = computable and check.soft(check_inputs, check, slug, calculator, inputs, default=False)
    if computable:
        corners = [dict(inputs)]
        for name, (low, high, _step) in drawn.items():
            corners = [dict(c, **{name: v}) for c in corners for v in (low, high)]
        refusals = {}
        for corner in corners:
            try:
                expected_value(check, fields, corner, "ranges" if drawn else "inputs")
            except ContentError as error:
                refusals.setdefault(error.problem, error.field)
        for problem, field_name in refusals.items():
            check.soft(check.fail, problem, field_name)
    slips = ask.get("slips") or []
    if not isinstance(slips, list):
        check.soft(check.fail, "slips must be a list", "slips")
        slips = []
    for number, slip in enumerate(slips, start=1):
        parsed = check.soft(parse_slip, check, slip, number, fields, inputs, computable)
        if parsed:
            fields["slips"].append(parsed)
    fields["ranges"] = ranges
    return fields


def known_calculator(check: Checker, slug: str) -> Calculator:
    """Return the calculator ``slug`` names, refusing an unknown one with the slugs there are."""
    try:
        return get_calculator(slug)
    except KeyError:
        check.fail(f"calculator '{slug}' is not one of the calculators ({', '.join(CALCULATORS)})", "calculator")


def refusal(error: CalculatorInputError) -> str:
    """Return a calculator's refusal of inputs as one line: each parameter with its problems."""
    return "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in error.errors.items())


def check_inputs(check: Checker, slug: str, calculator: Calculator, inputs: dict) -> bool:
    """Refuse fixed inputs the calculator does not take (unknown names, values out of bounds); True if it takes them."""
    problems = too_large(inputs)
    if not problems:
        try:
            calculator.parse(inputs)
        except CalculatorInputError as error:
            problems = refusal(error)
    if problems:
        check.fail(f"calculator '{slug}' refuses the inputs: {problems}", "inputs")
    return True


def check_range(check: Checker, slug: str, params: dict, name: str, spec: Any) -> bool:
    """Refuse a challenge's range for one parameter unless it is [min, max, step] the calculator takes."""
    if name not in params:
        check.fail(f"ranges: '{name}' is not a parameter of calculator '{slug}' ({', '.join(params)})", "ranges")
    if (
        not isinstance(spec, list)
        or len(spec) != 3
        or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in spec)
    ):
        check.fail(f"ranges: '{name}' must be [min, max, step]", "ranges")
    low, high, step = spec
    if not all(finite(v) for v in spec) or not (low <= high and step > 0):
        check.fail(f"ranges: '{name}' needs finite numbers, a min no larger than its max and a step above zero",
                   "ranges")  # fmt: skip
    if params[name].type == "int" and not all(isinstance(v, int) for v in spec):
        check.fail(f"ranges: '{name}' takes whole numbers, so its min, max and step must be whole", "ranges")
    if (high - low) / step > 10000:
        check.fail(f"ranges: '{name}' has more than 10,000 values; use a larger step", "ranges")
    return True


def parse_slip(check: Checker, slip: Any, number: int, fields: dict, inputs: dict, computable: bool) -> dict:
    """Return one slip rule (a common mistake and its feedback), refusing it in the author's words."""
    with check.part(f"slip {number}", "slips"):
        slip = check.mapping(slip, {"factor", "inputs", "feedback"}, {"feedback"}, "the slip")
        feedback = check.soft(check.text, slip, "feedback", markup=True, default="")
        if ("factor" in slip) == ("inputs" in slip):
            check.fail("needs exactly one of a factor or changed inputs")
        if "factor" in slip:
            factor = check.number(slip, "factor")
            if not factor or factor <= 0:
                check.fail("factor must be above zero")
            return {"factor": factor, "feedback": feedback}
        if not isinstance(slip["inputs"], dict):
            check.fail("inputs must map parameter names to numbers")
        if computable:
            expected_value(check, fields, {**inputs, **slip["inputs"]}, "slips")
        return {"inputs": slip["inputs"], "feedback": feedback}


def too_large(inputs: dict) -> str:
    """Return why whole numbers among ``inputs`` are too large for the calculators' floating-point maths ("" if none)."""
    return "; ".join(
        f"{name}: must be a finite number" for name, v in inputs.items() if isinstance(v, int) and not finite(v)
    )


def expected_value(check: Checker, fields: dict, inputs: dict, field: str = "inputs") -> float:
    """Compute the expected answer for ``inputs``, failing clearly if the calculator refuses them."""
    calculator = get_calculator(fields["calculator"])
    if too_large(inputs):
        check.fail(f"calculator '{fields['calculator']}' refuses the inputs: {too_large(inputs)}", field)
    try:
        result = calculator.evaluate(inputs)
    except CalculatorInputError as error:
        check.fail(f"calculator '{fields['calculator']}' refuses the inputs: {refusal(error)}", field)
    value = result.outputs.get(fields["output"])
    if isinstance(value, bool) or value is None or not math.isfinite(value):
        check.fail(f"output '{fields['output']}' is not a finite number for these inputs", "output")
    if value * fields["scale"] < 0:  # no learner could give it: answers are read as 0 or more (lessons.number_entry)
        what = "the slip's value" if field == "slips" else f"output '{fields['output']}'"
        check.fail(f"{what} is negative for these inputs, and answers cannot be", field)
    return value * fields["scale"]


@dataclass
class LessonSpec:
    file: str
    lesson: dict
    sections: list[dict] = field(default_factory=list)
    digest: str = ""  # of the file's text: an unchanged file is not loaded again
    warnings: list[str] = field(default_factory=list)  # give-aways (giveaway_warnings): loaded anyway


def parse_lesson(data: Any, file: str, track_slugs: set[str]) -> LessonSpec:
    """Validate one lesson file's data, refusing every problem of every item at once, each with file, item and reason."""
    check = Checker(file)
    lesson_fields = {"format", "slug", "track", "order", "title", "kind", "summary", "published", "sections"}
    if not isinstance(data, dict):  # nothing more to read
        check.fail(f"the lesson must be a mapping of fields (name: value), not {written(data)}")
    errors: list[ContentError] = []
    fields: dict = {}
    try:
        with check.gather():  # every problem of the lesson's own fields, then its sections' still
            data = check.mapping(data, lesson_fields, lesson_fields - {"published"}, "the lesson")
            if "format" in data and data["format"] != FORMAT_VERSION:
                check.soft(check.fail, f"format must be {FORMAT_VERSION}, not {written(data['format'])}")
            track = data.get("track")
            if "track" in data and (not isinstance(track, str) or track not in track_slugs):
                tracks = ", ".join(sorted(track_slugs)) or "none"
                check.soft(check.fail, f"track {written(track)} is not one of the tracks ({tracks})")
            published = data.get("published", True)
            if not isinstance(published, bool):
                check.soft(check.fail, "published must be true or false")
            fields = {
                "slug": check.soft(check.key, data, "slug"),
                "track": track,
                "order": check.soft(check.integer, data, "order", 1, 0, 999),
                "title": check.soft(check.text, data, "title"),
                "kind": check.soft(check.choice, data, "kind", Lesson.Kind.values),
                "summary": check.soft(check.text, data, "summary", markup=True),
                "published": published,
            }
    except ContentError as error:
        errors.append(error)
    spec = LessonSpec(file, fields)
    sections = data.get("sections")
    if not isinstance(sections, list) or not sections:
        if "sections" in data:
            errors.append(ContentError(file, check.item, "sections must list at least one section"))
        raise ContentErrors(errors)
    section_keys: set[str] = set()
    item_keys: set[str] = set()
    deep_dives: dict[str, dict | None] = {}  # by key; None: refused
    unread = False
    for section in sections:
        try:
            parsed = parse_section(check, section, section_keys, item_keys, deep_dives, errors)
        except ContentError as error:
            errors.append(error)
            unread = True  # its items were not all read: a follow-up may name one of them
            continue
        spec.sections.append(parsed)

    # A deep dive refused above (None) is told there: follow-ups to it are not checked, nor its own; nor
    # follow-ups to keys not found when a section's items were not all read.
    def told(target: str) -> bool:
        return deep_dives.get(target, {}) is None or (unread and target not in deep_dives)

    graph = {
        key: {c["follow_up"] for c in dd["choices"] if c["follow_up"] and not told(c["follow_up"])}
        for key, dd in deep_dives.items()
        if dd is not None
    }
    try:
        with check.gather():
            check_follow_ups(check, graph)
    except ContentError as error:
        errors.append(error)
    if errors:
        raise ContentErrors(errors)
    spec.warnings = giveaway_warnings(data)
    return spec


def parse_section(
    check: Checker, section: Any, section_keys: set[str], item_keys: set[str], deep_dives: dict, errors: list
) -> dict:
    """Validate one section; a refused item is added to ``errors`` and the next item is still checked."""
    check.item = "a section"
    if not isinstance(section, dict):  # nothing more to read
        check.fail(f"the section must be a mapping of fields (name: value), not {written(section)}")
    key = section.get("key")
    check.item = f"section '{key}'" if isinstance(key, str) and KEY_RE.match(key) else "a section"
    parsed: dict = {"key": key, "items": []}
    try:
        with check.gather():  # every problem of the section's own fields; its items are still read
            section = check.mapping(
                section, {"key", "layer", "title", "minutes", "body", "items"}, {"key", "layer", "title"}, "the section"
            )
            check.soft(check.key, section)
            if isinstance(key, str) and key in section_keys:
                check.soft(check.fail, f"another section of this lesson already has the key '{key}'")
            parsed |= {
                "layer": check.soft(check.integer, section, "layer", 1, 1, 3),
                "title": check.soft(check.text, section, "title"),
                "minutes": check.soft(check.integer, section, "minutes", 1, 0, 120),
                "body": check.soft(check.text, section, "body", required=False, markup=True),
            }
    except ContentError as error:
        errors.append(error)
    if isinstance(key, str):
        section_keys.add(key)
    items = section.get("items") or []
    if not isinstance(items, list):
        check.fail("items must be a list")
    for number, item in enumerate(items, start=1):
        check.item = f"item {number} of section '{key}'"
        try:
            parsed["items"].append(parse_item(check, item, item_keys, deep_dives))
        except ContentError as error:
            errors.append(error)
    return parsed


def parse_item(check: Checker, item: Any, item_keys: set[str], deep_dives: dict[str, dict | None]) -> tuple[str, dict]:
    if not isinstance(item, dict) or len(item) != 1:
        check.fail("each item must be exactly one of deep_dive, walkthrough, challenge or open_question")
    ((kind, body),) = item.items()
    if kind not in PARSERS:
        check.fail(f"{written(kind)} is not an item type (deep_dive, walkthrough, challenge or open_question)")
    if not isinstance(body, dict):
        check.fail(
            f"{kind} has no fields: write them, starting with its key, indented under it"
            if body is None
            else f"{kind} must be a mapping of fields (name: value) indented under it, not {written(body)}"
        )
    item_key = check.key(body)
    check.item = f"{kind} '{item_key}'"
    if item_key in item_keys:
        check.fail(f"another item of this lesson already has the key '{item_key}'")
    item_keys.add(item_key)
    if kind == "deep_dive":
        deep_dives[item_key] = None  # refused, until its fields pass
    with check.gather():  # every problem of the item, not only its first
        fields = PARSERS[kind](check, body)
    if kind == "deep_dive":
        deep_dives[item_key] = fields
    return kind, fields


def parse_deep_dive(check: Checker, data: Any) -> dict:
    data = check.mapping(
        data, {"key", "topic", "prompt", "context", "points", "keep_choice_order", "hints", "choices"},
        {"key", "topic", "prompt", "choices"},
        "the deep dive",
    )  # fmt: skip
    fields = {
        "key": data.get("key"),
        "topic": check.soft(check.topic, data),
        "prompt": check.soft(check.text, data, "prompt", markup=True, max_length=MAX_PROMPT),
        "context": check.soft(check.text, data, "context", required=False, markup=True),
        "points": check.soft(check.integer, data, "points", DEFAULT_POINTS, 1, 100),
        "keep_choice_order": data.get("keep_choice_order", False),
        "hints": check.soft(hint_list, check, data),
        "choices": [],
    }
    if not isinstance(fields["keep_choice_order"], bool):
        check.soft(check.fail, "keep_choice_order must be true or false", "keep_choice_order")
    choices = data.get("choices")
    if "choices" in data and (not isinstance(choices, list) or len(choices) < 3):
        check.soft(check.fail, "a deep dive needs at least three choices", "choices")
    for number, choice in enumerate(choices if isinstance(choices, list) else [], start=1):
        fields["choices"].append(check.soft(parse_choice, check, choice, number))
    if fields["choices"] and all(fields["choices"]):  # a refused choice would miscount the best ones
        best = sum(1 for c in fields["choices"] if c["verdict"] == "best")
        if best != 1:
            check.soft(check.fail, f"a deep dive needs exactly one best choice (found {best})", "choices")
    return fields


def parse_choice(check: Checker, choice: Any, number: int) -> dict | None:
    """Return one choice of a deep dive, or None when it has problems (each one gathered)."""
    before = check.found()
    with check.part(f"choice {number}", "choices"):
        if isinstance(choice, dict) and "points" in choice:
            check.soft(
                check.fail,
                "points are no longer given per choice: a choice earns by its verdict (best: the deep dive's "
                "points, acceptable: half, weak: none); remove the line",
            )
            choice = {k: v for k, v in choice.items() if k != "points"}
        choice = check.mapping(
            choice, {"text", "verdict", "feedback", "follow_up"}, {"text", "verdict", "feedback"}, "the choice"
        )
        verdict = check.soft(check.choice, choice, "verdict", Verdict.values)
        follow_up = choice.get("follow_up")
        if follow_up is not None and (not isinstance(follow_up, str) or not KEY_RE.match(follow_up)):
            check.soft(check.fail, "follow_up must be the key of a deep dive")
        parsed = {
            "text": check.soft(check.text, choice, "text", markup=True),
            "verdict": verdict,
            "feedback": check.soft(check.text, choice, "feedback", markup=True),
            "follow_up": follow_up,
        }
    return None if check.found() != before else parsed


def check_follow_ups(check: Checker, graph: dict[str, set[str]]) -> None:
    """Refuse follow-ups that do not exist, point at themselves, or lead back in a loop.

    ``graph`` maps each deep dive's key to the keys its choices lead to, for one lesson; the
    content loader and the admin (lessons.admin.ChoiceFormSet) both check through here.
    """
    for key, targets in graph.items():
        check.item = f"deep_dive '{key}'"
        for target in sorted(targets):
            if target == key:
                check.soft(check.fail, "a follow-up cannot lead back to its own deep dive", "follow_up")
            elif target not in graph:
                check.soft(check.fail, f"follow_up '{target}' is not a deep dive of this lesson", "follow_up")
    for start in graph:
        if start not in graph[start] and start in reachable(start, graph):  # a follow-up to itself is told above
            check.item = f"deep_dive '{start}'"
            check.soft(check.fail, "its follow-ups lead back to it in a loop", "follow_up")


def reachable(start: str, graph: dict[str, set[str]]) -> set[str]:
    """Return every deep dive a learner can reach from ``start`` by following answers (``start`` only in a loop)."""
    seen: set[str] = set()
    frontier = list(graph.get(start, ()))
    while frontier:
        node = frontier.pop()
        if node not in seen:
            seen.add(node)
            frontier.extend(graph.get(node, ()))
    return seen


def step_part(number: int) -> str:
    """Return how a problem names a walkthrough's step after the walkthrough (the admin finds the step's form by it)."""
    return f"step {number}"


def parse_walkthrough(check: Checker, data: Any) -> dict:
    data = check.mapping(
        data, {"key", "kind", "title", "intro", "topic", "steps"}, {"key", "kind", "title", "steps"}, "the walkthrough"
    )
    kind = check.soft(check.choice, data, "kind", Walkthrough.Kind.values)
    topic = check.soft(check.topic, data, required=False, default="")
    if kind == "envelope" and not data.get("topic"):
        check.soft(check.fail, "an envelope walkthrough needs a topic for its graded steps", "topic")
    fields = {
        "key": data.get("key"), "kind": kind, "title": check.soft(check.text, data, "title"),
        "intro": check.soft(check.text, data, "intro", required=False, markup=True), "topic": topic, "steps": [],
    }  # fmt: skip
    steps = data.get("steps")
    if "steps" in data and (not isinstance(steps, list) or not steps):
        check.soft(check.fail, "a walkthrough needs at least one step", "steps")
    parts = Parts()
    for number, step in enumerate(steps if isinstance(steps, list) else [], start=1):
        parsed = check.soft(parse_step, check, step, number, kind, parts)
        if parsed:
            fields["steps"].append(parsed)
    return fields


@dataclass
class Parts:
    """The diagram's parts added by the steps so far: their keys, and the keys of parts refused (None: one unread)."""

    keys: set[str] = field(default_factory=set)
    refused: set[str | None] = field(default_factory=set)

    def unknown(self, key: Any) -> bool:
        """Return whether ``key`` names no part added so far, nor a part refused (its problem is told already)."""
        if not isinstance(key, str):
            return True
        return key not in self.keys and key not in self.refused and None not in self.refused


def parse_step(check: Checker, step: Any, number: int, kind: str | None, parts: Parts) -> dict:
    """Return one walkthrough step; ``parts`` holds the diagram's parts added by the steps before.

    ``kind`` is the walkthrough's, None when it is refused: the checks that depend on it are then left out.
    """
    with check.part(step_part(number)):
        step = check.mapping(
            step, {"title", "body", "ask", "hints", "explanation", "components", "connections"}, {"title"}, "the step"
        )
        parsed = {
            "title": check.soft(check.text, step, "title"),
            "body": check.soft(check.text, step, "body", required=False, markup=True),
            "hints": check.soft(hint_list, check, step),
            "explanation": check.soft(check.text, step, "explanation", required=False, markup=True),
            "components": [],
            "connections": [],
            "ask": None,
        }
        if "ask" in step and kind in ("envelope", None):
            parsed["ask"] = check.soft(validate_ask, check, step["ask"], allow_ranges=False)
        elif "ask" in step:
            check.soft(check.fail, "only envelope steps ask for a number", "calculator")
        elif kind == "envelope":
            check.soft(
                check.fail,
                "an envelope step must ask for a number: a calculator, an output, a unit and a tolerance (its ask, in a file)",
                "calculator",
            )
        if kind == "envelope":
            if step.get("components") or step.get("connections"):
                check.soft(check.fail, "envelope steps have no diagram", "components")
            return parsed
        for name, parse in (("components", parse_component), ("connections", parse_connection)):
            entries = step.get(name) or []
            if not isinstance(entries, list):
                check.soft(check.fail, f"{name} must be a list", name)
                entries = []
                if name == "components":
                    parts.refused.add(None)
            for entry_number, entry in enumerate(entries, start=1):
                found = check.soft(parse, check, entry, entry_number, parts)
                if found:
                    parsed[name].append(found)
    return parsed


def parse_component(check: Checker, component: Any, number: int, parts: Parts) -> dict:
    """Return one diagram part a step adds, noting its key in ``parts`` (in ``parts.refused`` until it passes)."""
    written_key = component.get("key") if isinstance(component, dict) else None
    parts.refused.add(written_key if isinstance(written_key, str) else None)
    with check.part(f"component {number}", "components"):
        component = check.mapping(
            component, {"key", "label", "col", "row"}, {"key", "label", "col", "row"}, "the component"
        )
        key = check.soft(check.key, component, default="")
        if key in parts.keys:
            check.soft(check.fail, f"key '{key}' is already used by an earlier component")
        elif key:
            parts.keys.add(key)
            parts.refused.discard(key)
        return {
            "key": key,
            "label": check.soft(check.text, component, "label", default=""),
            "col": check.soft(check.integer, component, "col", 0, 0, 9, default=0),
            "row": check.soft(check.integer, component, "row", 0, 0, 9, default=0),
        }


def parse_connection(check: Checker, connection: Any, number: int, parts: Parts) -> dict:
    """Return one diagram connection a step adds; both ends must be parts added so far."""
    with check.part(f"connection {number}", "connections"):
        connection = check.mapping(connection, {"from", "to", "label"}, {"from", "to"}, "the connection")
        for end in ("from", "to"):
            if end in connection and parts.unknown(connection[end]):
                check.soft(check.fail, f"{end} {written(connection[end])} is not a component added so far")
        return {
            "from": connection.get("from"),
            "to": connection.get("to"),
            "label": check.soft(check.text, connection, "label", required=False, default=""),
        }


def parse_challenge(check: Checker, data: Any) -> dict:
    data = check.mapping(
        data, {"key", "topic", "title", "prompt", "ask", "hints", "explanation"},
        {"key", "topic", "title", "prompt", "ask"}, "the challenge",
    )  # fmt: skip
    fields = {
        "key": data.get("key"),
        "topic": check.soft(check.topic, data),
        "title": check.soft(check.text, data, "title"),
        "prompt": check.soft(check.text, data, "prompt", markup=True, max_length=MAX_PROMPT),
        "hints": check.soft(hint_list, check, data),
        "explanation": check.soft(check.text, data, "explanation", required=False, markup=True),
        "ask": check.soft(validate_ask, check, data["ask"], allow_ranges=True) if "ask" in data else None,
    }
    ask = data.get("ask")
    # Inputs or ranges refused as a whole name no parameters: the prompt's fields are not told again.
    named = isinstance(ask, dict) and all(isinstance(ask.get(name) or {}, dict) for name in ("inputs", "ranges"))
    if fields["prompt"] and fields["ask"] is not None and named:
        try:
            check_prompt(fields["prompt"], Challenge.prompt_names(fields["ask"]["inputs"], fields["ask"]["ranges"]))
        except MarkupError as error:
            check.soft(check.fail, f"prompt: {error}", "prompt")
    return fields


def hint_list(check: Checker, data: dict) -> list[str]:
    """Return an item's hints: at most MAX_HINTS Markdown texts (one taken before answering costs points)."""
    hints = check.markdown_list(data, "hints")
    if len(hints) > MAX_HINTS:
        check.fail(f"hints may hold at most {MAX_HINTS} hints, not {len(hints)}", "hints")
    return hints


MIN_CHECKLIST, MAX_CHECKLIST = 2, 12


def parse_open_question(check: Checker, data: Any) -> dict:
    data = check.mapping(
        data,
        {"key", "topic", "prompt", "points", "checklist"},
        {"key", "topic", "prompt", "checklist"},
        "the open question",
    )
    fields = {
        "key": data.get("key"),
        "topic": check.soft(check.topic, data),
        "prompt": check.soft(check.text, data, "prompt", markup=True, max_length=MAX_PROMPT),
        "points": check.soft(check.integer, data, "points", DEFAULT_POINTS, 1, 100),
        "checklist": [],
    }
    checklist = data.get("checklist")
    if "checklist" in data and (
        not isinstance(checklist, list) or not MIN_CHECKLIST <= len(checklist) <= MAX_CHECKLIST
    ):
        check.soft(
            check.fail,
            f"checklist must list {MIN_CHECKLIST} to {MAX_CHECKLIST} points a strong answer covers",
            "checklist",
        )
    if isinstance(checklist, list):
        fields["checklist"] = check.soft(check.markdown_list, data, "checklist", default=[])
    repeated = repeated_points(fields["checklist"])
    if repeated:
        check.soft(check.fail, f"checklist repeats a point: “{repeated[0]}”", "checklist")
    return fields


def repeated_points(texts: list[str]) -> list[str]:
    """Return the checklist points written more than once (spaces aside), for content files and the admin."""
    spaced = [" ".join(text.split()) for text in texts]
    return sorted({text for text in spaced if spaced.count(text) > 1})


PARSERS = {
    "deep_dive": parse_deep_dive,
    "walkthrough": parse_walkthrough,
    "challenge": parse_challenge,
    "open_question": parse_open_question,
}


# Give-aways: choices whose shape, not their content, tells the learner which is best.
# The rules are documented in docs/content-format.md ("Give-aways"); they warn, never refuse,
# so an instructor's draft still loads, and tests/content/test_giveaways.py keeps shipped
# content free of them.
BEST_LONGEST_SHARE = 1 / 3  # of a lesson's deep dives (follow-ups included)
SAME_RANK_SHARE = 1 / 2  # of a lesson's deep dives: the best at any one other length rank (second longest, ...)
SAME_RANK_FROM = 4  # deep dives a lesson needs before the rule applies (with fewer, a repeat is chance)
LONG_CHOICE_FACTOR = 2.0  # x the median length of the other choices of the same deep dive
RESTATED_WORDS = 6  # consecutive words a follow-up shares with its parent's best choice
ABSOLUTE_CHOICES = 2  # a lesson's choices that are not the best and may use an absolute while no best one does
# Absolute words, matched as whole words whatever their case: a test-wise learner rules such choices out.
ABSOLUTE_WORDS = re.compile(
    r"\b(always|never|ever|everywhere|nowhere|every other|all by itself|on its own|nothing stops|perfectly|the only|at all)\b",
    re.IGNORECASE,
)

ORDINALS = {2: "second", 3: "third", 4: "fourth", 5: "fifth"}
NAMED_AT_MOST = 10  # deep dives a warning names; the rest are counted ("… and 190 more")

_APOSTROPHES = re.compile(r"(?<=\w)['\u2019](?=\w)")
_WORD = re.compile(r"[^\W_]+")


def words(text: str) -> list[str]:
    """Return the words of text, lowercased, with punctuation and Markdown marks ignored."""
    return _WORD.findall(_APOSTROPHES.sub("", text.lower()))


def word_runs(text: str, size: int = RESTATED_WORDS) -> set[tuple[str, ...]]:
    """Return every run of ``size`` consecutive words in text (tests/content/test_originality.py uses it too)."""
    found = words(text)
    return {tuple(found[i : i + size]) for i in range(len(found) - size + 1)}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _deep_dives(lesson_data: Any) -> list[dict]:
    """Return the lesson's deep dives (raw mappings with a key and a list of choices), skipping malformed ones."""
    found = []
    sections = lesson_data.get("sections") if isinstance(lesson_data, dict) else None
    for section in sections if isinstance(sections, list) else []:
        items = section.get("items") if isinstance(section, dict) else None
        for item in items if isinstance(items, list) else []:
            body = item.get("deep_dive") if isinstance(item, dict) else None
            if isinstance(body, dict) and isinstance(body.get("choices"), list):
                choices = [c for c in body["choices"] if isinstance(c, dict)]
                if len(choices) >= 2:
                    found.append({**body, "choices": choices})
    return found


def named(keys: list[str]) -> str:
    """Return the deep dives a warning is about, as it names them: the first NAMED_AT_MOST, then a count of the
    rest (an author reading the admin or load_content's output can use ten names, not 200)."""
    if len(keys) <= NAMED_AT_MOST:
        return ", ".join(keys)
    return f"{', '.join(keys[:NAMED_AT_MOST])}, … and {len(keys) - NAMED_AT_MOST} more"


def _best(deep_dive: dict) -> dict | None:
    return next((c for c in deep_dive["choices"] if c.get("verdict") == "best"), None)


def giveaway_warnings(lesson_data: Any) -> list[str]:
    """Return a warning for each give-away in one lesson, as parsed from YAML (or built by the admin).

    Five rules, each named in its message with the lesson and the deep dive:
    - best is longest: the best choice is at least as long as every other choice in at most
      a third of the lesson's deep dives, follow-ups included;
    - same length rank: in a lesson of at least SAME_RANK_FROM deep dives, the best choice is
      the second longest (or the third, ...) in at most half of them ("skip the longest, take
      the next" must not pay);
    - long choice: no choice is more than LONG_CHOICE_FACTOR times the median length of the
      other choices of its deep dive (lengths in characters of the stripped text);
    - restated best: a follow-up's prompt, context and choices share no run of RESTATED_WORDS
      consecutive words (lowercased, punctuation ignored) with its parent's best choice;
    - absolute words: while no best choice of the lesson uses an absolute word (ABSOLUTE_WORDS:
      "always", "never", "the only", ...), at most ABSOLUTE_CHOICES of its other choices do.
    """
    lesson = f"Lesson '{lesson_data.get('slug', '?')}'" if isinstance(lesson_data, dict) else "Lesson '?'"
    deep_dives = _deep_dives(lesson_data)
    warnings = []
    best_longest = []
    by_rank: dict[int, list[str]] = {}  # length rank of the best choice (2 = second longest) -> deep dives
    absolute_best = 0  # best choices using an absolute word
    absolute_others: list[str] = []  # the deep dive of each other choice using one
    for deep_dive in deep_dives:
        key = deep_dive.get("key", "?")
        for c in deep_dive["choices"]:
            if ABSOLUTE_WORDS.search(_text(c.get("text"))):
                if c.get("verdict") == "best":
                    absolute_best += 1
                else:
                    absolute_others.append(key)
        lengths = [len(_text(c.get("text"))) for c in deep_dive["choices"]]
        best = _best(deep_dive)
        if best is not None:
            rank = 1 + sum(length > len(_text(best.get("text"))) for length in lengths)  # a tie ranks with the best
            (best_longest if rank == 1 else by_rank.setdefault(rank, [])).append(key)
        for number, length in enumerate(lengths, start=1):
            others = statistics.median(lengths[: number - 1] + lengths[number:])
            if length > LONG_CHOICE_FACTOR * others:
                warnings.append(
                    f"{lesson}, deep dive '{key}': choice {number} is {length} characters, more than "
                    f"{LONG_CHOICE_FACTOR:g} x the median of the other choices ({others:g}); its length "
                    "gives it away (rule: long choice)."
                )
    allowed = int(len(deep_dives) * BEST_LONGEST_SHARE)
    if len(best_longest) > allowed:
        limit = (
            f"at most {allowed} of them may be"
            if allowed
            else f"with {len(deep_dives)} deep {'dive' if len(deep_dives) == 1 else 'dives'}, none may be"
        )
        warnings.append(
            f"{lesson}: the best choice is the longest in {len(best_longest)} of {len(deep_dives)} deep dives "
            f"({named(best_longest)}); {limit}, or length alone finds the answer: make a wrong choice "
            "longer, or the best one shorter (rule: best is longest)."
        )
    if len(deep_dives) >= SAME_RANK_FROM:
        for rank, keys in sorted(by_rank.items()):
            if len(keys) > len(deep_dives) * SAME_RANK_SHARE:
                warnings.append(
                    f"{lesson}: the best choice is the {ORDINALS.get(rank, f'{rank}th')} longest in {len(keys)} of "
                    f"{len(deep_dives)} deep dives ({named(keys)}); at most half may be, or skipping the longest "
                    "and taking the next finds the answer: lengthen another choice, or trim the best one "
                    "(rule: same length rank)."
                )
    if len(absolute_others) > ABSOLUTE_CHOICES and not absolute_best:
        keys = list(dict.fromkeys(absolute_others))
        warnings.append(
            f"{lesson}: {len(absolute_others)} choices that are not the best, in {len(keys)} deep "
            f'{"dive" if len(keys) == 1 else "dives"} ({named(keys)}), use an absolute word ("always", "never", '
            f'"the only", ...) and no best choice does; at most {ABSOLUTE_CHOICES} may, or ruling out absolutes '
            "finds the answer: reword the choice so its reason, not an absolute, carries it; or let a best choice "
            "state a true absolute (rule: absolute words)."
        )
    by_key = {d.get("key"): d for d in deep_dives}
    for parent in deep_dives:
        best = _best(parent)
        if best is None:
            continue
        best_runs = word_runs(_text(best.get("text")))
        for key in dict.fromkeys(c.get("follow_up") for c in parent["choices"] if c.get("follow_up")):
            follow_up = by_key.get(key)
            if follow_up is None:
                continue
            shown = [("prompt", follow_up.get("prompt")), ("context", follow_up.get("context"))]
            shown += [(f"choice {n}", c.get("text")) for n, c in enumerate(follow_up["choices"], start=1)]
            for place, text in shown:
                shared = word_runs(_text(text)) & best_runs
                if shared:
                    warnings.append(
                        f"{lesson}, deep dive '{key}': its {place} repeats \"{' '.join(min(shared))}\" from the "
                        f"best choice of its parent '{parent.get('key', '?')}', so the follow-up tells the "
                        "parent's answer (rule: restated best)."
                    )
    return warnings


# PyYAML's safe loader in C (libyaml, in its wheels) where present: the same documents, ten times faster.
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: Path) -> Any:
    try:
        return yaml.load(path.read_text(encoding="utf-8"), Loader=SAFE_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as error:
        raise ContentError(path.name, "file", f"not valid YAML: {error}") from None
    except UnicodeDecodeError:
        raise ContentError(path.name, "file", "not UTF-8 text") from None


def parse_tracks(path: Path) -> list[dict]:
    check = Checker(path.name, "tracks")
    data = check.mapping(read_yaml(path), {"format", "tracks"}, {"format", "tracks"}, "tracks.yaml")
    if data["format"] != FORMAT_VERSION:
        check.fail(f"format must be {FORMAT_VERSION}, not {written(data['format'])}")
    listed = data["tracks"] or []
    if not isinstance(listed, list):
        check.fail(f"tracks must list the tracks (each with a slug and a title), not {written(listed)}")
    tracks = []
    for order, track in enumerate(listed, start=1):
        track = check.mapping(track, {"slug", "title", "summary"}, {"slug", "title"}, "the track")
        check.item = f"track '{track.get('slug')}'"
        slug = check.key(track, "slug")
        if slug in {t["slug"] for t in tracks}:
            check.fail(f"slug '{slug}' is also used by an earlier track")
        tracks.append(
            {
                "slug": slug,
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
    errors: list[ContentError] = []
    for path in sorted(directory.glob("lessons/*.yaml")):
        try:
            spec = parse_lesson(read_yaml(path), path.name, slugs)
        except ContentError as error:
            errors.append(error)
            continue
        spec.digest = hashlib.sha256(path.read_bytes()).hexdigest()
        specs.append(spec)
    if errors:
        raise ContentErrors(errors)
    seen: dict[str, str] = {}
    orders: dict[tuple[str, int], str] = {}
    for spec in specs:
        slug = spec.lesson["slug"]
        if slug in seen:
            raise ContentError(spec.file, "lesson", f"slug '{slug}' is also used by {seen[slug]}")
        seen[slug] = spec.file
        place = (spec.lesson["track"], spec.lesson["order"])
        if place in orders:
            raise ContentError(
                spec.file, "lesson", f"order {place[1]} in track '{place[0]}' is also used by {orders[place]}"
            )
        orders[place] = spec.file
    return tracks, specs
