"""What a calculator definition is made of: parameters, outputs, presets, derivation steps (no Django).

Each calculator is one module in `calculators/definitions/` built from these
pieces; `calculators/registry.py` collects them. Parsing and validation live
here once, so forms, pages and the API all report the same messages.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_type_hints

from calculators.charts import Chart
from calculators.errors import CalculatorError, CalculatorInputError
from calculators.formatting import number, value_text

__all__ = ["Calculator", "DerivationStep", "Output", "Parameter", "Preset", "Result", "parse_values", "step"]

Number = int | float
OutputValue = int | float | bool | None

# Units whose singular drops the final "s" ("at least 1 layer").
_COUNT_UNITS = frozenset({"layers", "heads", "values", "tokens", "cards", "GPUs", "requests", "replicas", "servers"})


def _quantity(value: Number, unit: str) -> str:
    if unit == "fraction":
        return f"{number(value)} (a fraction: 0.8 means 80%)"
    if not unit:
        return number(value)
    if unit in _COUNT_UNITS and value == 1:
        unit = unit[:-1]
    if unit == "×":
        return f"{number(value)}×"
    return f"{number(value)} {unit}"


def _shown(value: object) -> str:
    text = str(value).strip()
    return text if len(text) <= 30 else text[:29] + "…"


@dataclass(frozen=True)
class Parameter:
    """One input of a calculator, with its bounds (inclusive) and unit."""

    name: str
    type: Literal["int", "float"]
    default: Number
    min: Number
    max: Number
    unit: str
    help: str
    label: str

    @property
    def step(self) -> str:
        """Return the HTML `step` attribute: whole numbers or any value."""
        return "1" if self.type == "int" else "any"

    @property
    def unit_label(self) -> str:
        """Return the unit as shown beside a field ("GB, decimal", "fraction 0–1").

        Empty when the label already names the unit as a word: "Replicas (replicas)" or "KV heads
        (heads)" says it twice. ("Tokens per second (tokens/s)" keeps its unit: it is not a word.)
        """
        if self.unit.casefold() in re.findall(r"\w+", self.label.casefold()):
            return ""
        return {"fraction": "fraction, 0–1", "GB": "GB, decimal"}.get(self.unit, self.unit)

    def parse(self, raw: object) -> Number:
        """Return `raw` (a string or a number) as this parameter's value.

        Raise ValueError with a message for a learner: not a number, NaN,
        infinite, not whole for an integer, or outside [min, max].
        """
        if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
            raise ValueError("Enter a number.")
        value: Number
        if isinstance(raw, str):
            text = raw.strip()
            if not text:
                raise ValueError("Enter a number.")
            try:
                value = int(text)
            except ValueError:
                try:
                    value = float(text)
                except ValueError:
                    raise ValueError(f"“{_shown(raw)}” is not a number.") from None
        else:
            value = raw
        if isinstance(value, float):
            if math.isnan(value):
                raise ValueError("NaN (not a number) is not allowed: enter a finite number.")
            if math.isinf(value):
                raise ValueError("Infinity is not allowed: enter a finite number.")
        if self.type == "int" and isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"Must be a whole number; got {_shown(raw)}.")
            value = int(value)
        # Bounds before converting: a whole number too large for a float is out of range, not an overflow.
        if value < self.min:
            raise ValueError(f"Must be at least {_quantity(self.min, self.unit)}; got {_shown(raw)}.")
        if value > self.max:
            raise ValueError(f"Must be at most {_quantity(self.max, self.unit)}; got {_shown(raw)}.")
        return value if self.type == "int" else float(value)

    def as_dict(self) -> dict[str, Any]:
        """Return the API description: name, type, default, min, max, unit, help."""
        return {
            "name": self.name,
            "type": self.type,
            "default": self.default,
            "min": self.min,
            "max": self.max,
            "unit": self.unit,
            "help": self.help,
        }


@dataclass(frozen=True)
class Output:
    """One result of a calculator."""

    name: str
    unit: str
    label: str
    yes: str = "Pass"  # how a true check reads on a page
    no: str = "Fail"

    @property
    def is_check(self) -> bool:
        return self.unit == "check"

    def as_dict(self) -> dict[str, str]:
        """Return the API description: name, unit."""
        return {"name": self.name, "unit": self.unit}


@dataclass(frozen=True)
class Preset:
    """Named parameter values; values it does not name keep whatever the learner had."""

    label: str
    values: Mapping[str, Number]


@dataclass(frozen=True)
class DerivationStep:
    """One line of a derivation: what is computed, how, and the result."""

    label: str
    expression: str
    value: OutputValue
    unit: str

    @property
    def text(self) -> str:
        """The result as pages write it: "$2,924,800", "11.7%", "320 KiB" (formatting.value_text)."""
        return value_text(self.value, self.unit)

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "expression": self.expression,
            "value": self.value,
            "unit": self.unit,
        }


@dataclass(frozen=True)
class Result:
    """A calculator evaluated: every input (defaults filled), outputs and derivation."""

    slug: str
    inputs: dict[str, Number]
    outputs: dict[str, OutputValue]
    steps: list[DerivationStep]

    def as_dict(self) -> dict[str, Any]:
        """Return the API body: {"slug", "inputs", "outputs", "steps"}."""
        return {
            "slug": self.slug,
            "inputs": dict(self.inputs),
            "outputs": dict(self.outputs),
            "steps": [step.as_dict() for step in self.steps],
        }


Derive = Callable[[Mapping[str, Any], Mapping[str, Any]], list[DerivationStep]]
Draw = Callable[[Mapping[str, Any], Mapping[str, Any]], Chart]


@dataclass(frozen=True)
class Calculator:
    """A calculator: its description, its maths and how to explain a result.

    `compute` is the formula in calculators/maths.py; `derive` turns a result
    into derivation steps; `chart` draws it (None: no chart); `notes` is
    Markdown, written with figures computed from the maths.
    """

    slug: str
    title: str
    purpose: str
    parameters: tuple[Parameter, ...]
    outputs: tuple[Output, ...]
    compute: Callable[..., tuple] = field(repr=False, compare=False)
    derive: Derive = field(repr=False, compare=False)
    headline: str = ""
    presets: tuple[Preset, ...] = ()
    notes: tuple[str, ...] = ()  # Markdown paragraphs
    chart: Draw | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        names = [p.name for p in self.parameters]
        output_names = [o.name for o in self.outputs]
        assert len(set(names)) == len(names), f"{self.slug}: duplicate parameter"
        assert output_names == list(self.compute_fields()), f"{self.slug}: outputs differ"
        assert self.headline in output_names, f"{self.slug}: unknown headline"
        for preset in self.presets:
            unknown = set(preset.values) - set(names)
            assert not unknown, f"{self.slug}: preset {preset.label!r} names {unknown}"
            for name, value in preset.values.items():
                self.parameter(name).parse(value)  # presets must be valid inputs

    def compute_fields(self) -> tuple[str, ...]:
        """Return the field names of the maths function's result, in order."""
        return get_type_hints(self.compute)["return"]._fields  # type: ignore[no-any-return]

    @property
    def defaults(self) -> dict[str, Number]:
        return {p.name: p.default for p in self.parameters}

    def parameter(self, name: str) -> Parameter:
        """Return the parameter called `name` (KeyError if there is none)."""
        for parameter in self.parameters:
            if parameter.name == name:
                return parameter
        raise KeyError(name)

    def output(self, name: str) -> Output:
        """Return the output called `name` (KeyError if there is none)."""
        for output in self.outputs:
            if output.name == name:
                return output
        raise KeyError(name)

    def parse(self, raw: Mapping[str, object]) -> dict[str, Number]:
        """Return every parameter's value from `raw` (strings or numbers), defaults filled (see `parse_values`)."""
        return parse_values(self.parameters, raw, self.title)

    def compute_outputs(self, inputs: Mapping[str, Number]) -> dict[str, OutputValue]:
        """Return the outputs for parsed inputs; a domain error becomes a CalculatorInputError."""
        try:
            result = self.compute(**{p.name: inputs[p.name] for p in self.parameters})
        except CalculatorError as error:
            fields = [name for name in error.fields if name in inputs] or ["__all__"]
            raise CalculatorInputError({name: [error.message] for name in fields}) from error
        return result._asdict()

    def evaluate(self, raw: Mapping[str, object]) -> Result:
        """Parse `raw`, compute, and explain: the one call adapters need."""
        inputs = self.parse(raw)
        outputs = self.compute_outputs(inputs)
        return Result(self.slug, inputs, outputs, self.derive(inputs, outputs))

    def draw(self, result: Result) -> Chart | None:
        """Return the chart of an evaluated result, or None when this calculator has none."""
        return self.chart(result.inputs, result.outputs) if self.chart else None

    def describe(self) -> dict[str, Any]:
        """Return the API list entry: slug, title, parameters and outputs."""
        return {
            "slug": self.slug,
            "title": self.title,
            "parameters": [p.as_dict() for p in self.parameters],
            "outputs": [o.as_dict() for o in self.outputs],
        }


def parse_values(
    parameters: tuple[Parameter, ...], raw: Mapping[str, object], title: str, extra: tuple[str, ...] = ()
) -> dict[str, Number]:
    """Return every parameter's value from `raw` (strings or numbers), defaults filled.

    Raise CalculatorInputError with every problem: unknown names (other than
    `extra`, which the caller parses), values that are not finite numbers, not
    whole for integers, or out of range.
    """
    errors: dict[str, list[str]] = {}
    known = [p.name for p in parameters] + list(extra)
    for key in raw:
        if key not in known:
            errors[str(key)] = [f"Unknown parameter. {title} takes: {', '.join(known)}."]
    values: dict[str, Number] = {}
    for parameter in parameters:
        if parameter.name not in raw:
            values[parameter.name] = parameter.default
            continue
        try:
            values[parameter.name] = parameter.parse(raw[parameter.name])
        except ValueError as error:
            errors[parameter.name] = [str(error)]
    if errors:
        raise CalculatorInputError(errors)
    return values


def step(label: str, expression: str, value: OutputValue, unit: str = "") -> DerivationStep:
    """Return one derivation line: what is computed, the arithmetic with the numbers, the result."""
    return DerivationStep(label=label, expression=expression, value=value, unit=unit)
