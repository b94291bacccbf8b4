"""The calculator registry: parameters, outputs, presets, notes and derivations (no Django).

Forms, the API, pages and the learning engine are generated from these
descriptions; nothing else lists a calculator's parameters. The names below
are a public contract (see DESIGN.md): slugs, parameter names, defaults and
output names never change without a new API version.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_type_hints

from calculators import maths
from calculators.errors import CalculatorError, CalculatorInputError
from calculators.formatting import money, number, percent, power_of_ten

__all__ = [
    "CALCULATORS",
    "Calculator",
    "CalculatorError",
    "CalculatorInputError",
    "DerivationStep",
    "Output",
    "Parameter",
    "Preset",
    "Result",
    "get_calculator",
]

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
        """Return the unit as shown beside a field ("GB, decimal", "fraction 0–1")."""
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
        if self.type == "int":
            if isinstance(value, float):
                if not value.is_integer():
                    raise ValueError(f"Must be a whole number; got {_shown(raw)}.")
                value = int(value)
        else:
            value = float(value)
        if value < self.min:
            raise ValueError(f"Must be at least {_quantity(self.min, self.unit)}; got {_shown(raw)}.")
        if value > self.max:
            raise ValueError(f"Must be at most {_quantity(self.max, self.unit)}; got {_shown(raw)}.")
        return value

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


@dataclass(frozen=True)
class Calculator:
    """A calculator: its description, its maths and how to explain a result."""

    slug: str
    title: str
    purpose: str
    parameters: tuple[Parameter, ...]
    outputs: tuple[Output, ...]
    compute: Callable[..., tuple] = field(repr=False, compare=False)
    derive: Derive = field(repr=False, compare=False)
    headline: str = ""
    presets: tuple[Preset, ...] = ()
    notes: tuple[str, ...] = ()

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
        """Return every parameter's value from `raw` (strings or numbers), defaults filled.

        Raise CalculatorInputError with every problem: unknown names, values
        that are not finite numbers, not whole for integers, or out of range.
        """
        errors: dict[str, list[str]] = {}
        known = {p.name for p in self.parameters}
        for key in raw:
            if key not in known:
                errors[str(key)] = [
                    f"Unknown parameter. {self.title} takes: {', '.join(p.name for p in self.parameters)}."
                ]
        values: dict[str, Number] = {}
        for parameter in self.parameters:
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

    def describe(self) -> dict[str, Any]:
        """Return the API list entry: slug, title, parameters and outputs."""
        return {
            "slug": self.slug,
            "title": self.title,
            "parameters": [p.as_dict() for p in self.parameters],
            "outputs": [o.as_dict() for o in self.outputs],
        }


def _step(label: str, expression: str, value: OutputValue, unit: str = "") -> DerivationStep:
    return DerivationStep(label, expression, value, unit)


n = number


def _div(x: Number) -> str:
    """Return a divisor, in brackets when it is written as a power of ten."""
    text = n(x)
    return f"({text})" if "×" in text else text


def _compare(ok: bool) -> str:
    """Return the sign that makes a check's expression true: ≤ when it passes, > when it fails."""
    return "≤" if ok else ">"


def _plural(count: Number, word: str) -> str:
    return word if count == 1 else word + "s"


# --- kv-cache ---------------------------------------------------------------


def _kv_cache_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    cache_bytes = round(i["cache_gb"] * maths.BYTES_PER_GB)
    ratio = cache_bytes / o["copy_bytes"]
    return [
        _step(
            "KV bytes per token",
            f"2 (K and V) × {n(i['layers'])} layers × {n(i['kv_heads'])} KV heads"
            f" × {n(i['head_dim'])} values per head × {n(i['bytes_per_value'])} B",
            o["bytes_per_token"],
            "B",
        ),
        _step("The same in KiB", f"{n(o['bytes_per_token'])} B ÷ 1,024", o["bytes_per_token"] / 1024, "KiB"),
        _step(
            "Bytes for one copy of the prefix",
            f"{n(i['tokens'])} tokens × {n(o['bytes_per_token'])} B",
            o["copy_bytes"],
            "B",
        ),
        _step(
            "Copy size in decimal megabytes",
            f"{n(o['copy_bytes'])} B ÷ {power_of_ten(6)}",
            o["copy_bytes"] / 1e6,
            "MB",
        ),
        _step(
            "Copy size in binary mebibytes",
            f"{n(o['copy_bytes'])} B ÷ 2²⁰ (1,048,576)",
            o["copy_bytes"] / 2**20,
            "MiB",
        ),
        _step("Cache size in bytes", f"{n(i['cache_gb'])} GB × {power_of_ten(9)}", cache_bytes, "B"),
        _step(
            "Whole copies that fit in the cache",
            f"⌊{n(cache_bytes)} B ÷ {n(o['copy_bytes'])} B⌋ = ⌊{n(ratio, 4)}⌋",
            o["copies_per_cache"],
            "copies",
        ),
    ]


# --- routing ----------------------------------------------------------------


def _routing_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    cards, hot, shards = i["cards"], i["hot_share"], i["shards"]
    hot_part = hot / shards
    rest = (1 - hot) / cards
    fair_points = 100 / cards
    steps = [
        _step(
            "Round robin: share of the family on each card",
            f"1 ÷ {n(cards)} {_plural(cards, 'card')}",
            o["round_robin_share"],
            "fraction",
        ),
        _step(
            "Hash: the hot key's share on each card that holds it",
            f"{n(hot)} ÷ {n(shards)} {_plural(shards, 'shard')}",
            hot_part,
            "fraction",
        ),
        _step(
            "Other keys, hashed evenly over all cards",
            f"(1 − {n(hot)}) ÷ {n(cards)} {_plural(cards, 'card')}",
            rest,
            "fraction",
        ),
        _step(
            "Hash: busiest card's share of the family",
            f"{n(hot_part)} + {n(rest)}",
            o["hash_busiest_share"],
            "fraction",
        ),
        _step(
            "Busiest card's load from this family, in fleet points",
            f"100 × {n(i['family_fleet_share'])} (family's share of the fleet) × {n(o['hash_busiest_share'])}",
            o["fleet_points"],
            "percentage points",
        ),
        _step(
            "A card's fair share of the fleet",
            f"100 ÷ {n(cards)} {_plural(cards, 'card')}",
            fair_points,
            "percentage points",
        ),
    ]
    if fair_points > 0:
        steps.append(
            _step(
                "Busiest card's load against its fair share",
                f"{n(o['fleet_points'])} ÷ {n(fair_points)}",
                o["fleet_points"] / fair_points,
                "×",
            )
        )
    steps.append(
        _step(
            "Duplicate copies of the hot prefix",
            f"{n(shards)} {_plural(shards, 'shard')} − 1",
            o["duplicate_copies"],
            "copies",
        )
    )
    return steps


# --- replica ----------------------------------------------------------------


def _replica_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    total_gb = i["gpus"] * i["gpu_memory_gb"]
    usable_gb = i["memory_utilization"] * total_gb
    ratio = o["kv_budget_bytes"] / o["kv_bytes_per_request"]
    return [
        _step(
            "Total GPU memory",
            f"{n(i['gpus'])} {_plural(i['gpus'], 'GPU')} × {n(i['gpu_memory_gb'])} GB",
            total_gb,
            "GB",
        ),
        _step(
            "Memory the engine may use",
            f"{n(i['memory_utilization'])} × {n(total_gb)} GB",
            usable_gb,
            "GB",
        ),
        _step(
            "KV budget: usable memory minus the weights",
            f"{n(usable_gb)} GB − {n(i['weights_gb'])} GB",
            o["kv_budget_bytes"],
            "B",
        ),
        _step(
            "KV bytes for one request at full context",
            f"{n(i['kv_bytes_per_token'])} B × {n(i['context_tokens'])} tokens",
            o["kv_bytes_per_request"],
            "B",
        ),
        _step(
            "Whole requests that fit",
            f"⌊{n(o['kv_budget_bytes'])} B ÷ {n(o['kv_bytes_per_request'])} B⌋ = ⌊{n(ratio, 4)}⌋",
            o["requests_per_replica"],
            "requests",
        ),
    ]


# --- pool -------------------------------------------------------------------


def _pool_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    usable = i["requests_per_replica"] * i["target_utilization"]
    steps = [
        _step(
            "Peak concurrency (Little's law: L = λ × W)",
            f"{n(i['peak_requests_per_s'])} requests/s × {n(i['mean_request_s'])} s",
            o["peak_concurrency"],
            "requests",
        ),
        _step(
            "Requests each replica should carry at the target",
            f"{n(i['requests_per_replica'])} × {n(i['target_utilization'])}",
            usable,
            "requests",
        ),
        _step(
            "Replicas, rounded up",
            f"⌈{n(o['peak_concurrency'])} ÷ {n(usable)}⌉ = ⌈{n(o['peak_concurrency'] / usable, 4)}⌉",
            o["replicas"],
            "replicas",
        ),
        _step(
            "GPUs in the pool",
            f"{n(o['replicas'])} {_plural(o['replicas'], 'replica')} × {n(i['gpus_per_replica'])}"
            f" {_plural(i['gpus_per_replica'], 'GPU')}",
            o["gpus"],
            "GPUs",
        ),
    ]
    if o["replicas"] > 0:
        slots = o["replicas"] * i["requests_per_replica"]
        steps.append(
            _step(
                "Share of request slots in use at peak",
                f"{n(o['peak_concurrency'])} ÷ ({n(o['replicas'])} × {n(i['requests_per_replica'])})",
                o["peak_concurrency"] / slots,
                "ratio",
            )
        )
    return steps


# --- token-cost -------------------------------------------------------------


def _token_cost_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    return [
        _step(
            "Cost of an hour of the cards",
            f"{money(i['card_month_usd'])} per card-month × {n(i['cards'])} {_plural(i['cards'], 'card')} ÷ 730 hours",
            o["usd_per_hour"],
            "USD/h",
        ),
        _step(
            "Tokens in an hour",
            f"{n(i['tokens_per_s'])} tokens/s × 3,600 s",
            o["tokens_per_hour"],
            "tokens/h",
        ),
        _step(
            "Cost per million tokens",
            f"{money(o['usd_per_hour'])} ÷ {n(o['tokens_per_hour'])} tokens × {power_of_ten(6)}",
            o["usd_per_million_tokens"],
            "USD per 1M tokens",
        ),
        _step(
            "Against the API price",
            f"{money(o['usd_per_million_tokens'])} ÷ {money(i['api_usd_per_million'])}",
            o["share_of_api"],
            "ratio",
        ),
    ]


# --- fleet ------------------------------------------------------------------


def _fleet_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    parts = maths.fleet_breakdown(
        i["monthly_tokens"],
        i["tokens_per_s_per_card"],
        i["owned_cards"],
        i["rented_cards"],
        i["card_month_usd"],
        i["rent_multiplier"],
    )
    per_card = o["tokens_per_card_month"]
    needed = i["monthly_tokens"]
    api = i["api_usd_per_million"]
    gap = max(0.0, needed - parts.owned_capacity)
    steps = [
        _step(
            "Tokens one card serves in a month",
            f"{n(i['tokens_per_s_per_card'])} tokens/s × 3,600 s × 730 h",
            per_card,
            "tokens",
        ),
        _step(
            "Cards needed, rounded up",
            f"⌈{n(needed)} ÷ {_div(per_card)}⌉ = ⌈{n(needed / per_card, 6)}⌉",
            o["cards_needed"],
            "cards",
        ),
        _step(
            "Owned capacity",
            f"{n(i['owned_cards'])} owned {_plural(i['owned_cards'], 'card')} × {n(per_card)} tokens",
            parts.owned_capacity,
            "tokens",
        ),
        _step(
            "Served by owned cards (they go first)",
            f"min({n(needed)}, {n(parts.owned_capacity)})",
            parts.served_by_owned,
            "tokens",
        ),
        _step(
            "Served by rented cards",
            f"min({n(needed)} − {n(parts.served_by_owned)}, {n(i['rented_cards'])} × {n(per_card)})",
            parts.served_by_rented,
            "tokens",
        ),
        _step(
            "Overflow to the API",
            f"{n(needed)} − {n(parts.served_by_owned)} − {n(parts.served_by_rented)}",
            o["overflow_tokens"],
            "tokens",
        ),
        _step(
            "Overflow share of needed tokens",
            f"{n(o['overflow_tokens'])} ÷ {_div(needed)}",
            o["overflow_share"],
            "fraction",
        ),
        _step(
            "API bill",
            f"{n(o['overflow_tokens'])} ÷ {power_of_ten(6)} × {money(api)}",
            o["api_usd"],
            "USD",
        ),
        _step(
            "Owned cards bill",
            f"{n(i['owned_cards'])} × {money(i['card_month_usd'])}",
            parts.owned_usd,
            "USD",
        ),
        _step(
            "Rented cards bill",
            f"{n(i['rented_cards'])} × {money(i['card_month_usd'])} × {n(i['rent_multiplier'])}",
            parts.rented_usd,
            "USD",
        ),
        _step(
            "Total for the month",
            f"{money(parts.owned_usd)} + {money(parts.rented_usd)} + {money(o['api_usd'])}",
            o["total_usd"],
            "USD",
        ),
        _step(
            "Blended cost per million needed tokens",
            f"{money(o['total_usd'])} ÷ ({n(needed)} tokens ÷ {power_of_ten(6)})",
            o["blended_usd_per_million"],
            "USD per 1M tokens",
        ),
        _step(
            "Idle share of owned capacity",
            (
                f"({n(parts.owned_capacity)} − {n(parts.served_by_owned)}) ÷ {_div(parts.owned_capacity)}"
                if parts.owned_capacity > 0
                else "no owned cards, so nothing owned sits idle"
            ),
            o["idle_share"],
            "fraction",
        ),
        _step(
            "Rented cards that would close the gap left by owned cards",
            f"⌈{n(gap)} ÷ {_div(per_card)}⌉ = ⌈{n(gap / per_card, 6)}⌉",
            o["rented_cards_to_cover"],
            "cards",
        ),
        _step(
            "Idle check: at most 15% of owned capacity unused",
            f"{percent(o['idle_share'], 4)} {_compare(o['idle_ok'])} 15%",
            o["idle_ok"],
            "check",
        ),
        _step(
            "Margin check: blended cost at most 75% of the API price",
            f"{money(o['blended_usd_per_million'])} {_compare(o['margin_ok'])} 0.75 × {money(api)} = {money(0.75 * api)}",
            o["margin_ok"],
            "check",
        ),
        _step(
            "Overflow check: at most 10% of needed tokens go to the API",
            f"{percent(o['overflow_share'], 4)} {_compare(o['overflow_ok'])} 10%",
            o["overflow_ok"],
            "check",
        ),
    ]
    return steps


# --- token-bucket -----------------------------------------------------------


def _token_bucket_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    rate, burst, arrivals, window = i["rate_per_s"], i["burst"], i["arrivals"], i["window_s"]
    spacing = window / arrivals
    refill = rate * spacing
    steps = [
        _step(
            "Time between arrivals",
            (
                f"{n(window)} s ÷ {n(arrivals)} arrivals"
                if window > 0
                else "window of 0 s: every request arrives at t = 0"
            ),
            spacing,
            "s",
        ),
        _step(
            "Tokens refilled between arrivals (d)",
            f"{n(rate)} tokens/s × {n(spacing)} s",
            refill,
            "tokens",
        ),
        _step(
            "Upper bound: what the bucket can hand out over the window",
            f"min({n(arrivals)}, {n(burst)} + {n(rate)} tokens/s × {n(window)} s)",
            min(arrivals, burst + rate * window),
            "requests",
        ),
    ]
    if refill == 0 or burst >= 2 or refill >= 1 - 1e-9:
        steps.append(
            _step(
                "Admitted: the bucket starts full, then each arrival adds d",
                f"min({n(arrivals)}, ⌊{n(burst)} + ({n(arrivals)} − 1) × {n(refill)}⌋)",
                o["admitted"],
                "requests",
            )
        )
    else:
        period = maths.one_token_period(refill, arrivals)
        steps.append(
            _step(
                "Admitted: a one-token bucket passes one request every ⌈1 ÷ d⌉ arrivals",
                f"1 + ⌊({n(arrivals)} − 1) ÷ {n(period)}⌋",
                o["admitted"],
                "requests",
            )
        )
    steps.append(_step("Rejected", f"{n(arrivals)} − {n(o['admitted'])}", o["rejected"], "requests"))
    return steps


# --- queue-wait -------------------------------------------------------------


def _wait_expression(service_ms: float, rho: float, servers: int) -> str:
    if servers == 1:
        return f"{n(service_ms)} ms × {n(rho)} ÷ (1 − {n(rho)})"
    load = servers * rho
    c = maths.erlang_c(servers, load)
    return f"C = {n(c, 4)} × {n(service_ms)} ms ÷ ({servers} − {n(load)})"


def _queue_wait_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    service, rho, servers, loss = i["service_ms"], i["utilization"], i["servers"], i["capacity_loss"]
    steps: list[DerivationStep] = []
    if servers == 1:
        steps.append(
            _step(
                "Probability a request waits (M/M/1: equals the utilisation)",
                f"ρ = {n(rho)}",
                rho,
                "fraction",
            )
        )
    else:
        load = servers * rho
        steps += [
            _step(
                "Offered load in Erlangs",
                f"{servers} servers × {n(rho)}",
                load,
                "Erlangs",
            ),
            _step(
                "Probability a request waits (Erlang C)",
                f"C({servers}, {n(load)})",
                maths.erlang_c(servers, load),
                "fraction",
            ),
        ]
    steps.append(
        _step(
            "Mean wait in the queue before the loss",
            _wait_expression(service, rho, servers),
            o["wait_ms"],
            "ms",
        )
    )
    after = o["utilization_after"]
    steps.append(
        _step(
            f"Utilisation after losing {percent(loss, 4)} of capacity",
            f"{n(rho)} ÷ (1 − {n(loss)})",
            after,
            "ratio",
        )
    )
    if o["stable_after"]:
        steps.append(
            _step(
                "Mean wait in the queue after the loss",
                _wait_expression(service, after, servers),
                o["wait_after_ms"],
                "ms",
            )
        )
        if o["wait_ms"] > 0:
            steps.append(
                _step(
                    "The wait grows by",
                    f"{n(o['wait_after_ms'])} ms ÷ {n(o['wait_ms'])} ms",
                    o["wait_after_ms"] / o["wait_ms"],
                    "×",
                )
            )
    else:
        steps.append(
            _step(
                "Mean wait in the queue after the loss",
                f"utilisation {n(after)} ≥ 1: arrivals outpace service and the queue grows without bound",
                None,
                "ms",
            )
        )
    return steps


# --- shed -------------------------------------------------------------------


def _shed_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    allowed = i["target_utilization"] * i["capacity_rps"]
    room = allowed - i["paid_rps"]
    return [
        _step(
            "Load the pool may carry at the target",
            f"{n(i['target_utilization'])} × {n(i['capacity_rps'])} requests/s",
            allowed,
            "requests/s",
        ),
        _step(
            "Room left after paid traffic (paid goes first)",
            f"{n(allowed)} − {n(i['paid_rps'])}",
            room,
            "requests/s",
        ),
        _step(
            "Free traffic admitted",
            f"min({n(i['free_rps'])} free demand, max(0, {n(room)}))",
            o["free_admitted_rps"],
            "requests/s",
        ),
        _step(
            "Free traffic shed at the gateway",
            f"{n(i['free_rps'])} − {n(o['free_admitted_rps'])}",
            o["free_shed_rps"],
            "requests/s",
        ),
        _step(
            "Pool utilisation",
            f"({n(i['paid_rps'])} + {n(o['free_admitted_rps'])}) ÷ {n(i['capacity_rps'])}",
            o["utilization"],
            "ratio",
        ),
    ]


# --- spec-decode ------------------------------------------------------------


def _spec_decode_steps(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    alpha, gamma, cost = i["acceptance"], i["draft_tokens"], i["draft_cost"]
    best, best_speedup = maths.best_draft_tokens(alpha, cost)
    expected = (
        f"{gamma} + 1 (every draft accepted)" if alpha == 1 else f"(1 − {n(alpha)}^({gamma} + 1)) ÷ (1 − {n(alpha)})"
    )
    return [
        _step("Expected tokens per target pass (Leviathan et al., eq. 1)", expected, o["expected_tokens"], "tokens"),
        _step(
            "Time of one round, in target steps",
            f"{gamma} drafts × {n(cost)} + 1 target step",
            gamma * cost + 1,
            "target steps",
        ),
        _step(
            "Speedup (theorem 3.8)",
            f"{n(o['expected_tokens'])} ÷ {n(gamma * cost + 1)}",
            o["speedup"],
            "×",
        ),
        _step(
            "Best draft length for this acceptance and cost (1 to 64)",
            f"γ = {best} gives {n(best_speedup, 4)}×",
            best,
            "tokens",
        ),
    ]


# --- The registry -----------------------------------------------------------

_FRACTION = "fraction"

_ASSUMPTIONS = (
    "**Assumptions, not sourced facts.** Per-card throughput (an H100 at about 700 "
    "tokens/s on a 70B model and 10,000 on an 8B model) is plausible and conservative "
    "against TensorRT-LLM's published maxima (assumption S13). B200 = 2.4 × H100 (S14) "
    "and used A100 = 0.45 × H100 (S15) are not confirmed. Card-month prices of "
    "$2,100–2,900 owned and 1.35 × for rented cards (S16) have no public source. The "
    "API prices, $0.20 per million tokens for an 8B model (plausible against list "
    "prices) and $2.50 for a 70B model (no source found), are S17. Treat them all as "
    "inputs to change."
)

_LLAMA_3_70B = {"layers": 80, "kv_heads": 8, "head_dim": 128, "bytes_per_value": 2}

CALCULATORS: dict[str, Calculator] = {
    c.slug: c
    for c in (
        Calculator(
            slug="kv-cache",
            title="KV cache per token and prefix copies",
            purpose=(
                "How many bytes of KV cache one token costs, how big a cached prompt prefix "
                "is, and how many copies of it a cache holds."
            ),
            parameters=(
                Parameter(
                    name="layers",
                    type="int",
                    default=80,
                    min=1,
                    max=1000,
                    unit="layers",
                    help="Transformer layers (Llama-3-70B: 80).",
                    label="Layers",
                ),
                Parameter(
                    name="kv_heads",
                    type="int",
                    default=8,
                    min=1,
                    max=1024,
                    unit="heads",
                    help="Key/value heads per layer: 8 with grouped-query attention on Llama-3; "
                    "equal to the attention heads without it (Llama-2-13B: 40). Under "
                    "tensor parallelism, divide by the TP degree for one GPU's share.",
                    label="KV heads",
                ),
                Parameter(
                    name="head_dim",
                    type="int",
                    default=128,
                    min=1,
                    max=4096,
                    unit="values",
                    help="Values per head: hidden size ÷ attention heads (128 on every Llama here).",
                    label="Head dimension",
                ),
                Parameter(
                    name="bytes_per_value",
                    type="int",
                    default=2,
                    min=1,
                    max=8,
                    unit="B",
                    help="2 for BF16/FP16, 1 for an FP8 KV cache.",
                    label="Bytes per value",
                ),
                Parameter(
                    name="tokens",
                    type="int",
                    default=1200,
                    min=1,
                    max=10_000_000,
                    unit="tokens",
                    help="Tokens in the cached prefix (the shared preamble).",
                    label="Prefix tokens",
                ),
                Parameter(
                    name="cache_gb",
                    type="float",
                    default=8.0,
                    min=0.001,
                    max=1_000_000.0,
                    unit="GB",
                    help="Prefix-cache size in decimal GB (10⁹ bytes).",
                    label="Cache size",
                ),
            ),
            outputs=(
                Output(name="bytes_per_token", unit="B", label="KV bytes per token"),
                Output(name="copy_bytes", unit="B", label="Bytes per prefix copy"),
                Output(name="copies_per_cache", unit="copies", label="Whole copies per cache"),
            ),
            compute=maths.kv_cache,
            derive=_kv_cache_steps,
            headline="copies_per_cache",
            presets=(
                Preset(label="Llama-3-70B, BF16 (also Llama-2-70B)", values=_LLAMA_3_70B),
                Preset(label="Llama-3-70B, FP8 KV cache", values={**_LLAMA_3_70B, "bytes_per_value": 1}),
                Preset(
                    label="Llama-3-8B, BF16",
                    values={"layers": 32, "kv_heads": 8, "head_dim": 128, "bytes_per_value": 2},
                ),
                Preset(
                    label="Llama-2-13B, BF16 (no GQA)",
                    values={"layers": 40, "kv_heads": 40, "head_dim": 128, "bytes_per_value": 2},
                ),
                Preset(
                    label="Check: Llama-2-13B, 2,048 tokens (vLLM's “up to 1.7 GB”)",
                    values={"layers": 40, "kv_heads": 40, "head_dim": 128, "bytes_per_value": 2, "tokens": 2048},
                ),
            ),
            notes=(
                "**Units.** Sizes are in bytes. MB and GB are decimal (10⁶ and 10⁹ bytes); "
                "KiB, MiB and GiB are binary (2¹⁰, 2²⁰, 2³⁰). A 70B-class model stores "
                "327,680 B of KV per token: exactly 320 KiB, or 327.7 kB.",
                "**Where the source's figure slips.** A 1,200-token preamble on a 70B model "
                "takes 1,200 × 327,680 B = 393,216,000 B: **393.2 MB, or 375 MiB**. The "
                "source's 384 MB multiplies 1,200 by “320 kB”, reading 320 KiB as 320 kB. "
                "The 8 GB cache still holds 20 whole copies (20.3; 20.8 in the source's "
                "units). In binary units throughout, 8 GiB ÷ 375 MiB = 21.8, so 21.",
                "**What the formula leaves out.** A paged engine rounds each copy up to whole "
                "blocks (up to block size − 1 extra tokens; 1,200 tokens is exactly 75 "
                "blocks of 16). Under tensor parallelism each GPU keeps only its share of the "
                "KV heads (80 KiB per token per GPU for a 70B model at TP = 4).",
                "**Model shapes.** Llama-2-70B and Llama-3-70B: 80 layers, 8 KV heads "
                "(grouped-query attention), head size 128. Llama-3-8B: 32 layers, 8 KV heads. "
                "Llama-2-13B has no GQA: 40 layers × 40 KV heads, so 819,200 B per token, "
                "and 2,048 tokens take 1.68 GB, matching vLLM's “up to 1.7GB” for one sequence.",
            ),
        ),
        Calculator(
            slug="routing",
            title="Routing: round robin against hash affinity",
            purpose=(
                "How much of one prompt family's traffic the busiest card takes under round "
                "robin, under hash affinity, and with the hot key sharded."
            ),
            parameters=(
                Parameter(
                    name="cards",
                    type="int",
                    default=64,
                    min=1,
                    max=100_000,
                    unit="cards",
                    help="Cards (replicas) the router chooses between.",
                    label="Cards",
                ),
                Parameter(
                    name="hot_share",
                    type="float",
                    default=0.8,
                    min=0.0,
                    max=1.0,
                    unit=_FRACTION,
                    help="Share of the family's traffic carried by its hottest key (0.8 = 80%); "
                    "hashing sends all of it to the same card.",
                    label="Hot key's share of the family",
                ),
                Parameter(
                    name="family_fleet_share",
                    type="float",
                    default=0.3,
                    min=0.0,
                    max=1.0,
                    unit=_FRACTION,
                    help="The family's share of all fleet traffic (0.3 = 30%).",
                    label="Family's share of the fleet",
                ),
                Parameter(
                    name="shards",
                    type="int",
                    default=1,
                    min=1,
                    max=100_000,
                    unit="cards",
                    help="Cards the hot key is split over evenly (1 = no sharding); at most the number of cards.",
                    label="Shards for the hot key",
                ),
            ),
            outputs=(
                Output(name="round_robin_share", unit=_FRACTION, label="Round robin: share of the family per card"),
                Output(name="hash_busiest_share", unit=_FRACTION, label="Hash: busiest card's share of the family"),
                Output(name="fleet_points", unit="percentage points", label="Busiest card's load from the family"),
                Output(name="duplicate_copies", unit="copies", label="Duplicate copies of the hot prefix"),
            ),
            compute=maths.routing,
            derive=_routing_steps,
            headline="hash_busiest_share",
            presets=(
                Preset(
                    label="Source case: 64 cards, hot key 80%, family 30%",
                    values={"cards": 64, "hot_share": 0.8, "family_fleet_share": 0.3, "shards": 1},
                ),
                Preset(label="Shard the hot key over 2 cards", values={"shards": 2}),
                Preset(label="Shard the hot key over 4 cards", values={"shards": 4}),
                Preset(label="Shard the hot key over 8 cards", values={"shards": 8}),
            ),
            notes=(
                "**The model.** Shares are of one prompt family's traffic. Round robin spreads "
                "every request evenly, so each card sees 1/N of the family and its cached prefix "
                "is needed everywhere. Hash affinity sends a key to one card: the hot key's "
                "traffic is split over `shards` cards and the other keys hash evenly over all "
                "N cards, so the busiest card carries h/k + (1 − h)/N.",
                "**Where the source's figure slips.** The source gives the busiest card "
                "80 + 20/63 = 80.32%. That mixes two models: if the other 20% hashes over all "
                "64 cards, the busiest card gets 80 + 20/64 = **80.3125%**; if it avoids the hot "
                "card, it stays at 80.00%. Dividing by 63 matches neither. The gap is under a "
                "third of a point, and the fleet figure rounds to 24.1 points either way.",
                "**Fleet points** multiply the busiest card's share of the family by the "
                "family's share of the fleet: 0.3 × 80.3125 = 24.09 points, against a fair "
                "share of 100/64 = 1.5625 points per card (15.4×). Reading the 80% as a share of "
                "the whole fleet instead would give 31.09 points, not the source's 24.1.",
                "**Sharding** the hot key over k cards divides its load by k at the cost of "
                "k − 1 duplicate copies of its prefix (393.2 MB each for a 1,200-token 70B "
                "preamble; see the KV-cache calculator). Consistent hashing with bounded loads "
                "(Mirrokni, Thorup and Zadimoghaddam) caps each card at ⌈(1 + ε) × average⌉ "
                "instead and spills the rest clockwise round the ring.",
            ),
        ),
        Calculator(
            slug="replica",
            title="KV budget and requests per replica",
            purpose=(
                "How much GPU memory a replica has left for the KV cache after its weights, "
                "and how many full-context requests fit in it."
            ),
            parameters=(
                Parameter(
                    name="gpus",
                    type="int",
                    default=4,
                    min=1,
                    max=1024,
                    unit="GPUs",
                    help="GPUs in one replica (tensor parallel).",
                    label="GPUs per replica",
                ),
                Parameter(
                    name="gpu_memory_gb",
                    type="float",
                    default=80.0,
                    min=1.0,
                    max=10_000.0,
                    unit="GB",
                    help="Memory per GPU in decimal GB (H100: 80).",
                    label="Memory per GPU",
                ),
                Parameter(
                    name="weights_gb",
                    type="float",
                    default=140.0,
                    min=0.0,
                    max=1_000_000.0,
                    unit="GB",
                    help="Model weights in decimal GB: parameters × bytes (70B in BF16: 140).",
                    label="Weights",
                ),
                Parameter(
                    name="memory_utilization",
                    type="float",
                    default=0.9,
                    min=0.01,
                    max=1.0,
                    unit=_FRACTION,
                    help="Share of total GPU memory the engine may use, as vLLM's gpu_memory_utilization (default 0.9).",
                    label="Memory utilisation",
                ),
                Parameter(
                    name="kv_bytes_per_token",
                    type="int",
                    default=327_680,
                    min=1,
                    max=100_000_000,
                    unit="B",
                    help="KV bytes per token for the whole model (70B: 327,680; see the KV-cache calculator).",
                    label="KV bytes per token",
                ),
                Parameter(
                    name="context_tokens",
                    type="int",
                    default=4096,
                    min=1,
                    max=10_000_000,
                    unit="tokens",
                    help="Tokens each request may hold: prompt plus maximum output.",
                    label="Context per request",
                ),
            ),
            outputs=(
                Output(name="kv_budget_bytes", unit="B", label="KV budget"),
                Output(name="kv_bytes_per_request", unit="B", label="KV bytes per request"),
                Output(name="requests_per_replica", unit="requests", label="Requests per replica"),
            ),
            compute=maths.replica,
            derive=_replica_steps,
            headline="requests_per_replica",
            presets=(
                Preset(
                    label="Llama-3-70B on 4 × H100 80 GB, 4,096 tokens",
                    values={
                        "gpus": 4,
                        "gpu_memory_gb": 80,
                        "weights_gb": 140,
                        "memory_utilization": 0.9,
                        "kv_bytes_per_token": 327_680,
                        "context_tokens": 4096,
                    },
                ),
                Preset(
                    label="Llama-3-70B on 2 × H100 80 GB",
                    values={
                        "gpus": 2,
                        "gpu_memory_gb": 80,
                        "weights_gb": 140,
                        "memory_utilization": 0.9,
                        "kv_bytes_per_token": 327_680,
                    },
                ),
                Preset(
                    label="Llama-3-8B on 1 × H100 80 GB",
                    values={
                        "gpus": 1,
                        "gpu_memory_gb": 80,
                        "weights_gb": 16.06,
                        "memory_utilization": 0.9,
                        "kv_bytes_per_token": 131_072,
                    },
                ),
                Preset(
                    label="Llama-2-13B on 1 × H100 80 GB",
                    values={
                        "gpus": 1,
                        "gpu_memory_gb": 80,
                        "weights_gb": 26,
                        "memory_utilization": 0.9,
                        "kv_bytes_per_token": 819_200,
                    },
                ),
                Preset(label="Context of 8,192 tokens", values={"context_tokens": 8192}),
                Preset(label="Context of 2,048 tokens", values={"context_tokens": 2048}),
            ),
            notes=(
                "**Convention.** This follows vLLM: `gpu_memory_utilization` (default 0.90) is a "
                "share of *total* GPU memory, and the weights come out of it. Activations are "
                "ignored, so a real engine fits slightly fewer requests. The source's "
                "convention, (memory − weights) × utilisation, gives 162 GB and 120 requests for "
                "the same replica.",
                "**Why a 70B replica has four GPUs.** 140 GB of BF16 weights fit on two 80 GB "
                "GPUs, but at 0.9 utilisation that leaves 4 GB for the KV cache: 2 requests at "
                "4,096 tokens. Four GPUs leave 148 GB: 110 requests. (Its 8 KV heads also split "
                "evenly, 2 per GPU, at tensor parallelism 4.)",
                "**Sizes are decimal.** An H100 has 80 GB (10⁹ bytes each). 70B parameters × 2 B "
                "= 140 GB nominal; Llama-3-70B has about 70.6B parameters, so 141.2 GB. The "
                "Llama-2-13B preset uses 13B × 2 B = 26 GB, nominal too.",
                "**Full context.** Requests are counted at their maximum length (prompt plus "
                "output). A paged engine (vLLM) admits more when most requests are shorter.",
            ),
        ),
        Calculator(
            slug="pool",
            title="Replicas and GPUs for a pool at peak",
            purpose=(
                "How many replicas and GPUs a peak load needs when no replica may run above a "
                "target share of its request slots (Little's law)."
            ),
            parameters=(
                Parameter(
                    name="peak_requests_per_s",
                    type="float",
                    default=100.0,
                    min=0.0,
                    max=10_000_000.0,
                    unit="requests/s",
                    help="Requests arriving per second at peak.",
                    label="Peak arrival rate",
                ),
                Parameter(
                    name="mean_request_s",
                    type="float",
                    default=20.0,
                    min=0.001,
                    max=86_400.0,
                    unit="s",
                    help="Mean time a request stays in the system, first token to last.",
                    label="Mean request time",
                ),
                Parameter(
                    name="requests_per_replica",
                    type="int",
                    default=110,
                    min=1,
                    max=1_000_000,
                    unit="requests",
                    help="Concurrent requests one replica holds (see the replica calculator).",
                    label="Requests per replica",
                ),
                Parameter(
                    name="gpus_per_replica",
                    type="int",
                    default=4,
                    min=1,
                    max=1024,
                    unit="GPUs",
                    help="GPUs in one replica.",
                    label="GPUs per replica",
                ),
                Parameter(
                    name="target_utilization",
                    type="float",
                    default=0.6,
                    min=0.01,
                    max=1.0,
                    unit=_FRACTION,
                    help="Highest share of its request slots a replica should use at peak (0.6 leaves 40% headroom).",
                    label="Target utilisation",
                ),
            ),
            outputs=(
                Output(name="peak_concurrency", unit="requests", label="Peak concurrency"),
                Output(name="replicas", unit="replicas", label="Replicas"),
                Output(name="gpus", unit="GPUs", label="GPUs"),
            ),
            compute=maths.pool,
            derive=_pool_steps,
            headline="gpus",
            presets=(
                Preset(
                    label="70B replicas at 60% (100 requests/s × 20 s)",
                    values={
                        "peak_requests_per_s": 100,
                        "mean_request_s": 20,
                        "requests_per_replica": 110,
                        "gpus_per_replica": 4,
                        "target_utilization": 0.6,
                    },
                ),
                Preset(
                    label="2,000 concurrent at full utilisation (76 GPUs)",
                    values={
                        "peak_requests_per_s": 100,
                        "mean_request_s": 20,
                        "requests_per_replica": 110,
                        "gpus_per_replica": 4,
                        "target_utilization": 1.0,
                    },
                ),
                Preset(
                    label="Llama-3-8B replicas: 1 GPU, 104 requests",
                    values={"requests_per_replica": 104, "gpus_per_replica": 1},
                ),
            ),
            notes=(
                "**Little's law.** Requests in flight = arrival rate × time in the system: "
                "100 requests/s × 20 s = 2,000 concurrent requests, whatever their arrival pattern.",
                "**Headroom.** The target keeps every replica below full so bursts and the "
                "non-linear queue wait (see the queue-wait calculator) do not hit users. A cap "
                "near 60% is a policy value from the source, not a sourced figure (S11): at "
                "ρ = 0.6 an M/M/1 queue waits 1.5 service times.",
                "**Only the memory limit.** A pool can also be limited by token throughput: "
                "50,000 tokens/s of a 70B model at 700 tokens/s per GPU with TP = 4 needs 18 "
                "replicas at full load, 30 at a 0.6 cap. Size for whichever limit binds first.",
            ),
        ),
        Calculator(
            slug="token-cost",
            title="Cost per million tokens",
            purpose="What a token costs on cards you pay for by the month, against an API's price.",
            parameters=(
                Parameter(
                    name="card_month_usd",
                    type="float",
                    default=2100.0,
                    min=0.0,
                    max=1_000_000.0,
                    unit="USD",
                    help="What one card costs per month, all in (capex over 36 months, power, hosting, staff).",
                    label="Price per card-month",
                ),
                Parameter(
                    name="cards",
                    type="int",
                    default=1,
                    min=1,
                    max=1_000_000,
                    unit="cards",
                    help="Cards serving together.",
                    label="Cards",
                ),
                Parameter(
                    name="tokens_per_s",
                    type="float",
                    default=700.0,
                    min=0.001,
                    max=1_000_000_000.0,
                    unit="tokens/s",
                    help="Output tokens per second of all the cards together (H100 on a 70B model: about 700 per card).",
                    label="Combined token rate",
                ),
                Parameter(
                    name="api_usd_per_million",
                    type="float",
                    default=2.5,
                    min=0.0001,
                    max=10_000.0,
                    unit="USD per 1M tokens",
                    help="The API's price per million tokens (70B: $2.50 in the source, unconfirmed).",
                    label="API price",
                ),
            ),
            outputs=(
                Output(name="usd_per_hour", unit="USD/h", label="Cost per hour"),
                Output(name="tokens_per_hour", unit="tokens/h", label="Tokens per hour"),
                Output(name="usd_per_million_tokens", unit="USD per 1M tokens", label="Cost per million tokens"),
                Output(name="share_of_api", unit="ratio", label="Against the API price"),
            ),
            compute=maths.token_cost,
            derive=_token_cost_steps,
            headline="usd_per_million_tokens",
            presets=(
                Preset(
                    label="H100 on a 70B model, owned at $2,100",
                    values={"card_month_usd": 2100, "cards": 1, "tokens_per_s": 700, "api_usd_per_million": 2.5},
                ),
                Preset(
                    label="H100 on a 70B model, owned at $2,900",
                    values={"card_month_usd": 2900, "cards": 1, "tokens_per_s": 700, "api_usd_per_million": 2.5},
                ),
                Preset(
                    label="H100 on a 70B model, rented (1.35 × $2,100)",
                    values={"card_month_usd": 2835, "cards": 1, "tokens_per_s": 700, "api_usd_per_million": 2.5},
                ),
                Preset(
                    label="H100 on an 8B model, owned at $2,100",
                    values={"card_month_usd": 2100, "cards": 1, "tokens_per_s": 10_000, "api_usd_per_million": 0.2},
                ),
                Preset(
                    label="B200 rate, 70B (2.4 × H100, assumed; price unchanged)",
                    values={"cards": 1, "tokens_per_s": 1680},
                ),
                Preset(
                    label="Used A100 rate, 70B (0.45 × H100, assumed; price unchanged)",
                    values={"cards": 1, "tokens_per_s": 315},
                ),
            ),
            notes=(
                "**A month is 730 hours** (8,760 ÷ 12), so an hour of a $2,100 card costs $2.877.",
                "**Reading the ratio.** “Against the API price” is the cost per token as a share "
                "of the API's: 0.457 means 45.7% of the API price; above 1, self-hosting costs "
                "more. Owning beats renting on rate everywhere (renting adds the cloud's margin); "
                "whether owning pays depends on keeping the cards busy: see the fleet calculator.",
                "**Chip presets** change only the token rate; B200 and used-A100 prices are not "
                "in the sources, so set your own.",
                _ASSUMPTIONS,
            ),
        ),
        Calculator(
            slug="fleet",
            title="Buying the fleet: owned, rented and API",
            purpose=(
                "A month of demand served by owned cards, then rented cards, then an API: the "
                "bill, the blended price and the three checks."
            ),
            parameters=(
                Parameter(
                    name="monthly_tokens",
                    type="float",
                    default=1e13,
                    min=1.0,
                    max=1e18,
                    unit="tokens",
                    help="Tokens needed in the month (10¹³ = 10T, a serious product).",
                    label="Tokens per month",
                ),
                Parameter(
                    name="tokens_per_s_per_card",
                    type="float",
                    default=700.0,
                    min=0.001,
                    max=10_000_000.0,
                    unit="tokens/s",
                    help="Sustained output tokens per second per card (H100 on a 70B model: about 700).",
                    label="Token rate per card",
                ),
                Parameter(
                    name="owned_cards",
                    type="int",
                    default=5000,
                    min=0,
                    max=10_000_000,
                    unit="cards",
                    help="Cards you own; they serve first and bill whether busy or not.",
                    label="Owned cards",
                ),
                Parameter(
                    name="rented_cards",
                    type="int",
                    default=0,
                    min=0,
                    max=10_000_000,
                    unit="cards",
                    help="Cards rented for the month; they serve after owned cards.",
                    label="Rented cards",
                ),
                Parameter(
                    name="card_month_usd",
                    type="float",
                    default=2100.0,
                    min=0.0,
                    max=1_000_000.0,
                    unit="USD",
                    help="What an owned card costs per month, all in.",
                    label="Price per owned card-month",
                ),
                Parameter(
                    name="rent_multiplier",
                    type="float",
                    default=1.35,
                    min=0.0,
                    max=100.0,
                    unit="×",
                    help="Rented price as a multiple of the owned price (source: 1.35).",
                    label="Rent multiplier",
                ),
                Parameter(
                    name="api_usd_per_million",
                    type="float",
                    default=2.5,
                    min=0.0,
                    max=10_000.0,
                    unit="USD per 1M tokens",
                    help="API price per million tokens; the API takes whatever the cards cannot.",
                    label="API price",
                ),
            ),
            outputs=(
                Output(name="tokens_per_card_month", unit="tokens", label="Tokens per card-month"),
                Output(name="cards_needed", unit="cards", label="Cards needed for the month"),
                Output(name="overflow_tokens", unit="tokens", label="Overflow to the API"),
                Output(name="overflow_share", unit=_FRACTION, label="Overflow share of needed tokens"),
                Output(name="api_usd", unit="USD", label="API bill"),
                Output(name="total_usd", unit="USD", label="Total for the month"),
                Output(
                    name="blended_usd_per_million", unit="USD per 1M tokens", label="Blended cost per million tokens"
                ),
                Output(name="idle_share", unit=_FRACTION, label="Idle share of owned capacity"),
                Output(name="rented_cards_to_cover", unit="cards", label="Rented cards to close the gap"),
                Output(name="idle_ok", unit="check", label="Idle at most 15%"),
                Output(name="margin_ok", unit="check", label="Blended at most 75% of the API price"),
                Output(name="overflow_ok", unit="check", label="Overflow at most 10%"),
            ),
            compute=maths.fleet,
            derive=_fleet_steps,
            headline="blended_usd_per_million",
            presets=(
                Preset(
                    label="10T tokens of 70B, own 5,000 H100 (overflow case)",
                    values={
                        "monthly_tokens": 1e13,
                        "tokens_per_s_per_card": 700,
                        "owned_cards": 5000,
                        "rented_cards": 0,
                        "card_month_usd": 2100,
                        "rent_multiplier": 1.35,
                        "api_usd_per_million": 2.5,
                    },
                ),
                Preset(
                    label="Own 4,000, rent 1,000",
                    values={
                        "monthly_tokens": 1e13,
                        "tokens_per_s_per_card": 700,
                        "owned_cards": 4000,
                        "rented_cards": 1000,
                        "card_month_usd": 2100,
                        "rent_multiplier": 1.35,
                        "api_usd_per_million": 2.5,
                    },
                ),
                Preset(
                    label="Over-provisioned: own 8,000",
                    values={
                        "monthly_tokens": 1e13,
                        "tokens_per_s_per_card": 700,
                        "owned_cards": 8000,
                        "rented_cards": 0,
                        "card_month_usd": 2100,
                        "rent_multiplier": 1.35,
                        "api_usd_per_million": 2.5,
                    },
                ),
                Preset(
                    label="The “$441M bet”: own 17,500 H100",
                    values={
                        "monthly_tokens": 1e13,
                        "tokens_per_s_per_card": 700,
                        "owned_cards": 17_500,
                        "rented_cards": 0,
                        "card_month_usd": 2100,
                        "rent_multiplier": 1.35,
                        "api_usd_per_million": 2.5,
                    },
                ),
                Preset(
                    label="8B model on H100 (10,000 tokens/s, API $0.20)",
                    values={"tokens_per_s_per_card": 10_000, "api_usd_per_million": 0.2},
                ),
                Preset(label="B200 rate (2.4 × H100, assumed)", values={"tokens_per_s_per_card": 1680}),
                Preset(label="Used A100 rate (0.45 × H100, assumed)", values={"tokens_per_s_per_card": 315}),
            ),
            notes=(
                "**Order of service.** Owned cards serve first (they bill anyway), rented cards "
                "next, and the API takes the overflow at its retail price. A month is 730 hours.",
                "**The checks are design thresholds** from the source (S18), with no outside "
                "source: at most 15% of owned capacity idle, a blended price at most 75% of the "
                "API's, and at most 10% of needed tokens sent to the API. Idle share is 0 when "
                "there are no owned cards.",
                "**The “$441M bet runs 71% idle” does not reproduce.** 17,500 H100 × $2,100 × "
                "12 months = $441.0M exactly. A month of 10T 70B tokens at 700 tokens/s needs "
                "5,436 cards, so 17,500 cards run **68.9% idle**, not 71%. Reaching 71% would "
                "take 750 tokens/s per card, or 9.34T tokens a month at 700. Try the preset.",
                "**Rented cards to close the gap** counts cards for the tokens owned cards "
                "cannot carry, whatever is rented already: with 5,000 owned cards, 436.",
                _ASSUMPTIONS,
            ),
        ),
        Calculator(
            slug="token-bucket",
            title="Token bucket admissions",
            purpose=(
                "How many requests a token-bucket rate limiter at the gateway admits from a "
                "burst or from a stream spread over a window."
            ),
            parameters=(
                Parameter(
                    name="rate_per_s",
                    type="float",
                    default=10.0,
                    min=0.0,
                    max=1_000_000.0,
                    unit="tokens/s",
                    help="Tokens added per second (the sustained rate).",
                    label="Refill rate",
                ),
                Parameter(
                    name="burst",
                    type="int",
                    default=20,
                    min=1,
                    max=1_000_000_000,
                    unit="tokens",
                    help="Bucket capacity; it starts full.",
                    label="Burst (bucket size)",
                ),
                Parameter(
                    name="arrivals",
                    type="int",
                    default=50,
                    min=1,
                    max=1_000_000_000,
                    unit="requests",
                    help="Requests arriving, one token each.",
                    label="Arrivals",
                ),
                Parameter(
                    name="window_s",
                    type="float",
                    default=0.0,
                    min=0.0,
                    max=10_000_000.0,
                    unit="s",
                    help="Arrivals are evenly spaced over this window; 0 means all at once.",
                    label="Window",
                ),
            ),
            outputs=(
                Output(name="admitted", unit="requests", label="Admitted"),
                Output(name="rejected", unit="requests", label="Rejected"),
            ),
            compute=maths.token_bucket,
            derive=_token_bucket_steps,
            headline="admitted",
            presets=(
                Preset(
                    label="Burst of 50 at once, bucket 20, 10/s",
                    values={"rate_per_s": 10, "burst": 20, "arrivals": 50, "window_s": 0},
                ),
                Preset(
                    label="100 requests over 10 s, bucket 10, 5/s",
                    values={"rate_per_s": 5, "burst": 10, "arrivals": 100, "window_s": 10},
                ),
                Preset(
                    label="Steady stream under the rate: 100 over 20 s",
                    values={"rate_per_s": 10, "burst": 20, "arrivals": 100, "window_s": 20},
                ),
                Preset(
                    label="redis-cell CL.THROTTLE 15 30 60, burst of 20",
                    values={"rate_per_s": 0.5, "burst": 16, "arrivals": 20, "window_s": 0},
                ),
            ),
            notes=(
                "**Semantics.** The bucket starts full with `burst` tokens and refills "
                "continuously at `rate_per_s`, never above `burst`. Arrival i comes at "
                "t = i × window ÷ arrivals (all at t = 0 when the window is 0). An arrival "
                "takes one token if a whole token is there; otherwise it is rejected (a 429), "
                "not queued.",
                "**Bounds.** One burst of N admits min(N, b). Over a window T at most "
                "min(N, b + r × T) pass: 100 requests over 10 s at 5/s with a bucket of 10 admit "
                "59, just under the bound of 59.5.",
                "**In Redis.** redis-cell's `CL.THROTTLE key max_burst count period` implements "
                "GCRA, equivalent to this bucket with capacity max_burst + 1: its README example "
                "`15 30 60` reports a limit of 16 and admits 16 of a burst of 20. Keeping the "
                "count in Redis makes each grant atomic across gateway replicas.",
            ),
        ),
        Calculator(
            slug="queue-wait",
            title="Queue wait against utilisation",
            purpose=(
                "How the mean wait in a queue grows with utilisation, and what losing part of "
                "the capacity does to it (M/M/1, or M/M/c with Erlang C)."
            ),
            parameters=(
                Parameter(
                    name="service_ms",
                    type="float",
                    default=50.0,
                    min=0.001,
                    max=10_000_000.0,
                    unit="ms",
                    help="Mean service time of one request.",
                    label="Mean service time",
                ),
                Parameter(
                    name="utilization",
                    type="float",
                    default=0.66,
                    min=0.0,
                    max=0.999,
                    unit=_FRACTION,
                    help="Busy share of each server before the loss; below 1 for the queue to be stable.",
                    label="Utilisation",
                ),
                Parameter(
                    name="servers",
                    type="int",
                    default=1,
                    min=1,
                    max=1000,
                    unit="servers",
                    help="Servers sharing one queue (1 = M/M/1).",
                    label="Servers",
                ),
                Parameter(
                    name="capacity_loss",
                    type="float",
                    default=0.3,
                    min=0.0,
                    max=0.99,
                    unit=_FRACTION,
                    help="Share of capacity lost (0.3 = 30%); utilisation becomes ρ ÷ (1 − loss).",
                    label="Capacity lost",
                ),
            ),
            outputs=(
                Output(name="wait_ms", unit="ms", label="Mean wait before the loss"),
                Output(name="utilization_after", unit="ratio", label="Utilisation after the loss"),
                Output(name="wait_after_ms", unit="ms", label="Mean wait after the loss"),
                Output(
                    name="stable_after", unit="check", label="Queue stable after the loss", yes="Yes", no="No: unstable"
                ),
            ),
            compute=maths.queue_wait,
            derive=_queue_wait_steps,
            headline="wait_after_ms",
            presets=(
                Preset(
                    label="Round numbers: 50 ms, ρ = 0.66, lose 30%",
                    values={"service_ms": 50, "utilization": 0.66, "servers": 1, "capacity_loss": 0.3},
                ),
                Preset(
                    label="Source reconstruction: 49.67 ms, ρ = 0.6614 (97 → 851 ms)",
                    values={"service_ms": 49.67, "utilization": 0.6614, "servers": 1, "capacity_loss": 0.3},
                ),
                Preset(
                    label="Headroom cap: ρ = 0.6",
                    values={"service_ms": 50, "utilization": 0.6, "servers": 1, "capacity_loss": 0.3},
                ),
                Preset(
                    label="Check: M/M/4 at 3 Erlangs, 1 s service",
                    values={"service_ms": 1000, "utilization": 0.75, "servers": 4, "capacity_loss": 0},
                ),
            ),
            notes=(
                "**The 97 ms → 850 ms story is an illustration, not a source.** It fits a single "
                "queue with Wq = S × ρ ÷ (1 − ρ): S ≈ 49.7 ms and ρ ≈ 0.661 give 97 ms, and after "
                "a 30% loss ρ ≈ 0.945 gives 851 ms (try the reconstruction preset). Round numbers "
                "(50 ms, 0.66, the defaults) give 97.1 → 825 ms.",
                "**How the loss is modelled.** Losing a share of capacity divides each server's "
                "utilisation by (1 − loss), with the same servers and service time. A pool that "
                "instead loses 30% of its servers (M/M/c, 10 → 7) multiplies its wait at least "
                "21.8×, so it cannot produce the story's 8.8×.",
                "**Assumptions.** Poisson arrivals and exponential service times. Kingman's "
                "approximation for other variability multiplies the wait by (ca² + cs²) ÷ 2: "
                "LLM requests vary far more than exponential service, so real waits can be longer.",
                "**Headroom.** At ρ = 0.6 an M/M/1 queue waits 1.5 service times; after a 30% "
                "loss (ρ = 0.857), 6. A cap near 60% is the source's policy value (S11), unsourced.",
            ),
        ),
        Calculator(
            slug="shed",
            title="Shedding free traffic",
            purpose=(
                "How much free-tier traffic a shared pool can admit at a target utilisation "
                "while paid traffic keeps priority, and how much the gateway sheds."
            ),
            parameters=(
                Parameter(
                    name="capacity_rps",
                    type="float",
                    default=1000.0,
                    min=0.001,
                    max=1_000_000_000.0,
                    unit="requests/s",
                    help="Requests per second the shared pool can serve at full utilisation.",
                    label="Pool capacity",
                ),
                Parameter(
                    name="paid_rps",
                    type="float",
                    default=600.0,
                    min=0.0,
                    max=1_000_000_000.0,
                    unit="requests/s",
                    help="Paid demand; always admitted first.",
                    label="Paid demand",
                ),
                Parameter(
                    name="free_rps",
                    type="float",
                    default=500.0,
                    min=0.0,
                    max=1_000_000_000.0,
                    unit="requests/s",
                    help="Free-tier demand.",
                    label="Free demand",
                ),
                Parameter(
                    name="target_utilization",
                    type="float",
                    default=0.85,
                    min=0.0,
                    max=1.0,
                    unit=_FRACTION,
                    help="Utilisation the pool should not exceed, keeping the queue short.",
                    label="Target utilisation",
                ),
            ),
            outputs=(
                Output(name="free_admitted_rps", unit="requests/s", label="Free traffic admitted"),
                Output(name="free_shed_rps", unit="requests/s", label="Free traffic shed"),
                Output(name="utilization", unit="ratio", label="Pool utilisation"),
            ),
            compute=maths.shed,
            derive=_shed_steps,
            headline="free_admitted_rps",
            presets=(
                Preset(
                    label="Normal day: 1,000 requests/s pool, 600 paid, 500 free",
                    values={"capacity_rps": 1000, "paid_rps": 600, "free_rps": 500, "target_utilization": 0.85},
                ),
                Preset(
                    label="Incident: the pool loses 30% of capacity",
                    values={"capacity_rps": 700, "paid_rps": 600, "free_rps": 500, "target_utilization": 0.85},
                ),
            ),
            notes=(
                "**Priority.** Paid requests are admitted first; free requests fill whatever "
                "is left below target × capacity, never below zero and never above their demand.",
                "**Why shed at the gateway.** A request refused with a 429 costs nothing. The same "
                "request admitted into a saturated pool holds an expensive seat and lengthens every "
                "wait behind it, and waits grow non-linearly with utilisation (see the queue-wait "
                "calculator).",
                "**Overload.** When paid traffic alone exceeds the target, all free traffic is "
                "shed and the utilisation shown is the paid load alone, which can exceed 1: the "
                "pool needs more capacity, not more shedding.",
            ),
        ),
        Calculator(
            slug="spec-decode",
            title="Speculative decoding speedup",
            purpose=(
                "How many tokens each pass of the large model yields with a draft model, and "
                "how much faster decoding gets (Leviathan et al.)."
            ),
            parameters=(
                Parameter(
                    name="acceptance",
                    type="float",
                    default=0.8,
                    min=0.0,
                    max=1.0,
                    unit=_FRACTION,
                    help="Chance the target model accepts each drafted token (α).",
                    label="Acceptance rate",
                ),
                Parameter(
                    name="draft_tokens",
                    type="int",
                    default=4,
                    min=1,
                    max=64,
                    unit="tokens",
                    help="Tokens the draft model proposes per round (γ).",
                    label="Draft length",
                ),
                Parameter(
                    name="draft_cost",
                    type="float",
                    default=0.05,
                    min=0.0,
                    max=1.0,
                    unit="× target step",
                    help="Time of one draft step as a share of one target step (c); below 0.05 in Leviathan et al.",
                    label="Draft cost",
                ),
            ),
            outputs=(
                Output(name="expected_tokens", unit="tokens", label="Expected tokens per target pass"),
                Output(name="speedup", unit="×", label="Speedup"),
            ),
            compute=maths.spec_decode,
            derive=_spec_decode_steps,
            headline="speedup",
            presets=(
                Preset(label="α 0.8, γ 4, c 0.05", values={"acceptance": 0.8, "draft_tokens": 4, "draft_cost": 0.05}),
                Preset(
                    label="α 0.8, γ 8, c 0.05 (best γ)",
                    values={"acceptance": 0.8, "draft_tokens": 8, "draft_cost": 0.05},
                ),
                Preset(label="α 0.6, γ 5, c 0.1", values={"acceptance": 0.6, "draft_tokens": 5, "draft_cost": 0.1}),
                Preset(label="α 0.5, γ 3, c 0.2", values={"acceptance": 0.5, "draft_tokens": 3, "draft_cost": 0.2}),
            ),
            notes=(
                "**Formulas.** Leviathan, Kalman and Matias (ICML 2023): expected tokens per "
                "target pass (1 − α^(γ+1)) ÷ (1 − α) (eq. 1) and walltime speedup "
                "(1 − α^(γ+1)) ÷ ((1 − α)(γc + 1)) (theorem 3.8). Chen et al. report 2–2.5× on "
                "Chinchilla 70B.",
                "**When it does not pay.** The theorem assumes checking γ + 1 tokens costs one "
                "target step, which holds while decoding is memory-bound (small batches). At large "
                "batch the target step becomes compute-bound, verification costs grow with γ + 1 "
                "and rejected drafts waste compute. vLLM measured up to 1.5× (draft model) and "
                "2.8× (n-gram) at low load on Llama-3-70B with 4 × H100, but 1.4× and 1.8× "
                "slowdowns at high load. A compute-bound estimate, E ÷ ((γ + 1)(1 + γc)), gives "
                "0.56× at the defaults.",
            ),
        ),
    )
}


def get_calculator(slug: str) -> Calculator:
    """Return the calculator with this slug (KeyError for an unknown slug)."""
    return CALCULATORS[slug]
