"""Read a learner's number the way they type it, in the unit a question asks for.

The one parser of typed answers, used by the lesson forms and the JSON API. It
accepts "1,200", "1.2k", "3e9", "$1.14", "2.08%", "393 MB", "375 MiB" and
"9,000 requests/min", and converts a number given with a unit to the asked unit
with pint. A bare number is taken to be in the asked unit. A unit of another kind
("393 ms" for a size) or another thing counted ("76 tokens" for requests) is refused with
a message saying what was expected, and so is a
negative number: every answer is a size, time, count, rate or share (the content
validator refuses an item whose expected value is negative). The examples its messages
give are no lesson's answer (tests/lessons/test_number_entry.py checks them).
"""

from __future__ import annotations

import functools
import importlib.resources
import math
import re

import pint

from calculators.formatting import money

# Counted things are plain numbers: "150 requests" is 150. Bytes get a dimension of their own
# (pint's default registry makes them dimensionless, which would turn "393 MB" into a percentage).
# Each counted thing, pint's name first, then how else it may be written. All are the number 1 to pint, so pint
# alone would read "76 tokens" as 76 requests: an answer must count what the question counts (counted_things).
COUNTED = {
    "request": ("requests", "req"),
    "GPU": ("GPUs", "gpu", "gpus"),
    "card": ("cards",),
    "copy": ("copies",),
    "point": ("points",),
    "token": ("tokens",),
    "replica": ("replicas",),
    "opening": ("openings",),
}
# Shares of a whole, which pint also takes for plain numbers: never an answer to a question counting things.
SHARES = ("percent", "permille", "ppm")
_DEFINITIONS = (
    "USD = [currency] = dollar = dollars",
    *(" = ".join((name, "1", *aliases)) for name, aliases in COUNTED.items()),
    "thousand = 1e3",
    "million = 1e6",
    "billion = 1e9",
    "trillion = 1e12",
    "KB = kibibyte",  # capital K is no SI prefix: JEDEC's KB, 1,024 bytes, as write-ups use it ("320 KB" of KV)
)
# How an item's unit is written in content, where pint spells it otherwise.
_ASKED = {"%": "percent", "$": "USD", "×": "1", "x": "1"}
# A number as typed: sign, optional $, digits with optional thousands separators, an exponent,
# then optionally k / M / bn glued to it ("1.2k"), then the rest, which must be a unit.
_ENTRY = re.compile(
    r"(?P<sign>[+-]?)\s*(?P<dollar>\$?)\s*(?P<sign2>[+-]?)"
    r"(?P<number>(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
    r"(?:(?P<multiplier>k|K|M|bn)(?![A-Za-z]))?"
    r"\s*(?P<unit>.*)"
)
_GROUPED = re.compile(r"\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?")
# Unit words, joined by spaces or by one operator between two words ("requests/min", "GB · s").
_UNIT_TEXT = re.compile(r"[A-Za-zµμ%]+(?:(?:\s*[/*·]\s*|\s+)[A-Za-zµμ%]+)*")
_UNIT_LENGTH = 30
_MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "bn": 1e9}
_LOWERCASE_B = re.compile(r"(?P<prefix>[kKmMgGtTpP]?i?)b(?P<per>/\w+)?")  # "kb", "Mb/s", "kib": a byte is B
_KINDS = {
    "[information]": "a size",
    "[time]": "a time",
    "1/[time]": "a rate",
    "[currency]": "an amount of money",
    "[information]/[time]": "a bandwidth",
    "": "a plain number",
    "[length]": "a length",
    "[mass]": "a mass",
    "[temperature]": "a temperature",
}


class EntryError(ValueError):
    """The typed text is not a number in the asked unit; ``str()`` is the message for the learner."""


@functools.cache
def registry() -> pint.UnitRegistry:
    """Return pint's default units, with bytes as their own dimension and the lab's counted things."""
    source = importlib.resources.files("pint")
    text = (source / "default_en.txt").read_text(encoding="utf-8")
    text = text.replace("bit = []", "bit = [information]", 1)
    text = text.replace("@import constants_en.txt", (source / "constants_en.txt").read_text(encoding="utf-8"))
    units = pint.UnitRegistry(None, cache_folder=None)
    units.load_definitions(text.splitlines())
    for definition in _DEFINITIONS:
        units.define(definition)
    return units


def asked_unit(unit: str) -> pint.Unit | None:
    """Return the pint unit of a question's unit text ("MB", "%", "requests/s"); None if pint has none."""
    text = _ASKED.get(unit.strip(), unit.strip())
    if text == "1":
        return registry().dimensionless
    quantity = parse_unit(text)
    return quantity.units if isinstance(quantity, pint.Quantity) and quantity.magnitude == 1 else None


@functools.cache
def converts_units(unit: str) -> bool:
    """Return whether an answer in ``unit`` may be typed in another unit of its kind: bytes, time, money, a percentage.

    Counted things ("requests", "GPUs") are plain numbers: there is no other unit to convert from.
    """
    asked = asked_unit(unit)
    return unit.strip() == "%" or (asked is not None and not asked.dimensionless)


def counts_things(unit: str) -> bool:
    """Return whether ``unit`` counts things one by one ("requests", "GPUs", "replicas"): one plural word that no
    other unit converts to. Not "thousand requests", "requests/GPU", "×", a size, a time or a percentage."""
    return bool(_PLURAL_WORD.fullmatch(unit.strip())) and not converts_units(unit)


_PLURAL_WORD = re.compile(r"[A-Za-z]{2,}s")


def parse_unit(text: str) -> pint.Quantity | None:
    """Return what unit text such as "MB" or "requests/min" means to pint; None if it is not unit words."""
    if len(text) > _UNIT_LENGTH or not _UNIT_TEXT.fullmatch(text):
        return None
    try:
        quantity = registry().parse_expression(text.replace("·", "*"))
    except (pint.errors.PintError, AssertionError, AttributeError, TypeError, ValueError, SyntaxError):
        return None  # pint's expression parser asserts on some malformed text
    return quantity if isinstance(quantity, pint.Quantity) else registry().Quantity(quantity)


def kind(quantity: pint.Quantity) -> str:
    """Return what a quantity measures, in words: "a size", "a time", "a share" (50%), "a plain number", ..."""
    if any(name in SHARES for name, _ in quantity.unit_items()):
        return "a share"
    key = str(quantity.dimensionality).replace(" ", "").replace("dimensionless", "")
    return _KINDS.get(key, "a quantity of another kind")


def read_number(text: str, unit: str = "") -> float:
    """Return the number ``text`` means, in ``unit`` (the question's unit); raise EntryError if none."""
    raw = text.strip().replace("\u2212", "-").replace("\u202f", "").replace("\u00a0", " ").replace("_", "")
    if not raw:
        raise EntryError("Enter a number.")
    match = _ENTRY.fullmatch(raw)
    if not match or (match["sign"] and match["sign2"]):
        raise EntryError(f"Enter a number such as 7,000, 0.6, 2e9 or 9k{example_unit(unit)}.")
    number = match["number"]
    if "," in number:
        if not _GROUPED.fullmatch(number):
            raise EntryError("Use a dot for decimals (1.5); commas only separate thousands (5,436).")
        number = number.replace(",", "")
    value = float(number) * _MULTIPLIERS.get(match["multiplier"] or "", 1.0)
    if "-" in (match["sign"] + match["sign2"]):
        value = -value
    written = match["unit"].strip()
    if match["dollar"]:
        if written not in ("", "USD"):
            # "$1.14 per million": the question names what the amount is per; the amount alone is the answer.
            money_asked = unit.strip() in ("$", "USD")
            hint = (
                f"type the amount alone, such as {money(abs(value))}"
                if money_asked
                else f"this question asks for {asked_phrase(unit)}"
            )
            raise EntryError(f"“{text.strip()}” mixes a dollar sign with another unit: {hint}.")
        written = "USD"
    if written:
        value = convert(value, written, unit, text.strip())
    if not math.isfinite(value):
        raise EntryError("Enter a finite number.")
    if value < 0:
        raise EntryError("Enter a number of 0 or more: no answer here is negative.")
    return value + 0.0  # "-0" is 0


def example_unit(unit: str) -> str:
    return (
        f", or with its unit, such as 7,000 {unit.strip()}"
        if asked_unit(unit) is not None and unit not in ("", "%", "$")
        else ""
    )


def byte_prefix(prefix: str) -> str:
    """Return a size prefix as bytes take it: "kib" → "Ki", "k" → "k" (the SI kilo), "m" or "M" → "M"."""
    if prefix.endswith("i"):
        return prefix[0].upper() + "i"
    return prefix if prefix == "k" else prefix.upper()


def convert(value: float, written: str, unit: str, typed: str) -> float:
    """Return ``value`` in ``written`` units converted to the question's ``unit``."""
    if written == unit.strip():
        return value
    written = _ASKED.get(written, written)
    target = asked_unit(unit)
    if target is None:
        raise EntryError(
            f"Write the number alone: the answer is in {unit.strip()}."
            if unit.strip()
            else "Write the number alone: the answer is a plain number."
        )
    target_kind = kind(registry().Quantity(1, target))
    lowercase_b = _LOWERCASE_B.fullmatch(written)
    if lowercase_b and target_kind in ("a size", "a bandwidth"):  # pint reads "kb" as kilobarns
        bytes_unit = f"{byte_prefix(lowercase_b['prefix'])}B{lowercase_b['per'] or ''}"
        raise EntryError(f"“{typed}”: a lowercase b is not a byte. Write B for bytes, as in {bytes_unit}.")
    if written == "1":
        given = registry().Quantity(1)
    elif len(written) > _UNIT_LENGTH or not _UNIT_TEXT.fullmatch(written):
        raise EntryError(f"“{typed}” has something after the number that is not a unit. Try a number such as 0.6.")
    else:
        given = parse_unit(written)
        if given is None:
            raise EntryError(f"“{written}” is not a unit this lab knows. Write the number in {unit.strip()}.")
    try:
        converted = float((value * given).to(target).magnitude)
    except pint.errors.DimensionalityError:
        asked = asked_phrase(unit) if unit.strip() == "%" else f"{target_kind} in {unit}"
        what = f"in {written}" if counted_things(given) else kind(given)  # "in tokens", not "a plain number"
        raise EntryError(f"“{typed}” is {what}, but this question asks for {asked}.") from None
    except pint.errors.PintError:  # a unit with an offset or on a log scale (degC, dB): none is an answer here
        raise EntryError(f"“{written}” is not a unit this lab knows. Write the number in {unit.strip()}.") from None
    given_things = counted_things(given)  # "3 billion" counts whatever the question counts
    asked_things = counted_things(registry().Quantity(1, target))
    # What the typed unit counts must be what the question counts, or part of it ("123 requests" for requests/GPU).
    if not given_things.items() <= asked_things.items():
        raise EntryError(f"“{typed}” is in {written}, but this question asks for {asked_phrase(unit)}.")
    if asked_things and kind(given) == "a share":  # "50%" for a question counting requests was 0.5 requests
        raise EntryError(f"“{typed}” is a share, but this question asks for {asked_phrase(unit)}.")
    return converted


def asked_phrase(unit: str) -> str:
    """Return what a question asks for, in words: "a percentage (5 or 5%)", "a plain number", "requests"."""
    unit = unit.strip()
    if unit == "%":
        return "a percentage, such as 5 or 5%"
    return "a plain number" if unit in ("", "×", "x") else unit


def counted_things(quantity: pint.Quantity) -> dict[str, float]:
    """Return the counted things a quantity's unit names, with their powers: "ktokens/s" → {"token": 1}."""
    things: dict[str, float] = {}
    for name, power in quantity.unit_items():
        base = registry().parse_unit_name(name)[0][1]  # "kilotoken" → "token"
        if base in COUNTED:
            things[base] = things.get(base, 0) + power
    return {name: power for name, power in things.items() if power}


# The units an author may ask for, by what the calculator's output measures (see unit_options).
_SIZES = ("B", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB")
_TIMES = ("µs", "ms", "s", "min", "h")
_PER = ("s", "min", "h")
_COUNT_PREFIXES = ("", "thousand ", "million ", "billion ")
# Outputs whose unit text pint does not read as the number itself: what each is in pint's terms.
_OUTPUT_AS = {"fraction": "1", "ratio": "1", "×": "1", "bytes": "B"}


def unit_options(output_unit: str) -> dict[str, float]:
    """Return the units a calculator output in ``output_unit`` can be asked in, each with its factor.

    The factor turns the output into the asked unit (bytes asked in MB: 1e-6; a fraction asked in %: 100).
    A unit pint does not know ("USD per 1M tokens") is offered alone, as it is.
    """
    unit = output_unit.strip()
    if unit in ("fraction", "ratio", "×"):
        candidates = ("%", "×") if unit != "fraction" else ("%", "fraction")
    elif unit == "USD":
        candidates = ("$", "USD")
    elif unit in ("B", "bytes"):
        candidates = _SIZES
    elif unit in _TIMES:
        candidates = _TIMES
    elif unit.endswith("/s"):
        candidates = tuple(f"{unit.removesuffix('/s')}/{per}" for per in _PER)
    elif asked_unit(unit) is not None and asked_unit(unit).dimensionless:
        candidates = tuple(f"{prefix}{unit}" for prefix in _COUNT_PREFIXES)
    else:
        candidates = ()
    source = asked_unit(_OUTPUT_AS.get(unit, unit))
    options = {}
    for candidate in candidates:
        target = registry().dimensionless if candidate == "fraction" else asked_unit(candidate)
        if source is None or target is None:
            continue
        try:
            options[candidate] = float(registry().Quantity(1, source).to(target).magnitude)
        except pint.errors.DimensionalityError:
            continue
    return options or {unit: 1.0}
