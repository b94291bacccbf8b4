"""Human-readable numbers for derivations, pages and charts: pure Python, no Django."""

from __future__ import annotations

import math
import re

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_DECIMAL_UNITS = ((1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB"))
_BINARY_UNITS = ((2**40, "TiB"), (2**30, "GiB"), (2**20, "MiB"), (2**10, "KiB"))


def _trim(text: str) -> str:
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def power_of_ten(exponent: int) -> str:
    """Return 10 to a power in superscript, e.g. "10¹³"."""
    return "10" + str(exponent).translate(_SUPERSCRIPT)


def scientific(x: float, sig: int = 4) -> str:
    """Return x as "9.198 × 10¹²" (or "10¹³" when the mantissa is 1)."""
    if x == 0:
        return "0"
    mantissa, _, exponent_text = f"{x:.{sig - 1}e}".partition("e")
    exponent = int(exponent_text)
    text = _trim(mantissa)
    if text == "1":
        return power_of_ten(exponent)
    if text == "-1":
        return "−" + power_of_ten(exponent)
    return f"{text.replace('-', '−')} × {power_of_ten(exponent)}"


def number(x: float | int | bool | None, sig: int = 3) -> str:
    """Return a number for a learner: thousands separators, about `sig` significant digits.

    Integers print in full (327,680); very large or very small values use
    powers of ten (10¹³, 3.1 × 10⁻⁵); other values keep `sig` significant
    digits without trailing zeros (0.0156, 80.3, 2.88), and values of 1,000
    and more are rounded to a whole number (12,346), never to tens.
    """
    if x is None:
        return "—"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return scientific(x, max(sig, 4)) if abs(x) >= 10**15 else f"{x:,}".replace("-", "−")
    if not math.isfinite(x):
        return "—"
    if x == 0:
        return "0"
    magnitude = abs(x)
    if magnitude >= 1e12 or magnitude < 1e-4:
        return scientific(x, 4 if magnitude >= 1e12 else sig)
    decimals = max(0, sig - 1 - math.floor(math.log10(magnitude)))
    text = _trim(f"{x:,.{decimals}f}")
    return "0" if text in ("-0", "0") else text.replace("-", "−")


def milliseconds(ms: float | None, sig: int = 3) -> str:
    """Return a simulated time in milliseconds as a person reads it: "850 ms" below a second, seconds from one on
    ("1.23 s", "594 s": an overloaded pool's waits read "593,614 ms"), as the TTFT chart's axis writes them. The
    calculators' derivations keep milliseconds: their steps compute with them."""
    if ms is None or not math.isfinite(ms):
        return number(ms)  # "—"
    if abs(ms) >= 999.5:  # as written: 999.6 ms would read "1,000 ms"
        return f"{number(ms / 1000, sig)} s"
    return f"{number(ms, sig)} ms"


def percent(fraction: float, sig: int = 3) -> str:
    """Return a fraction as a percentage to at most one decimal: 0.456621 -> "45.7%", 0.66 -> "66%".

    Shares below 0.05% keep `sig` significant digits rather than reading as 0%.
    """
    value = fraction * 100
    if value and abs(value) < 0.05:
        return f"{number(value, sig)}%"
    return f"{_trim(f'{value:,.1f}')}%".replace("-", "−")


def bytes_text(n: float | int) -> str:
    """Return bytes with decimal and binary sizes to 4 figures: "393,216,000 B (393.2 MB, 375.0 MiB)"."""
    if isinstance(n, float) and n.is_integer():
        n = int(n)
    plain = f"{number(n)} B"
    magnitude = abs(n)
    if magnitude < 1000:
        return plain
    decimal = next(_sized(n, size, name) for size, name in _DECIMAL_UNITS if magnitude >= size)
    binary = next((_sized(n, size, name) for size, name in _BINARY_UNITS if magnitude >= size), None)
    sizes = decimal if binary is None else f"{decimal}, {binary}"
    return f"{plain} ({sizes})"


def short_bytes(n: float | int) -> str:
    """Return a size in decimal and binary units only: "140.0 GB (130.4 GiB)"."""
    magnitude = abs(n)
    if magnitude < 1000:
        return f"{number(n)} B"
    decimal = next(_sized(n, size, name) for size, name in _DECIMAL_UNITS if magnitude >= size)
    binary = next((_sized(n, size, name) for size, name in _BINARY_UNITS if magnitude >= size), None)
    return decimal if binary is None else f"{decimal} ({binary})"


def _sized(n: float, size: float, name: str) -> str:
    scaled = n / size
    if abs(scaled) >= 1000:
        return f"{scaled:,.0f} {name}"
    return f"{scaled:.{max(0, 3 - math.floor(math.log10(abs(scaled))))}f} {name}"


def money(x: float, sig: int = 3) -> str:
    """Return US dollars to the cent: "$2,005,000" for large sums, "$0.57", "$0.00123" below a cent."""
    sign = "−" if x < 0 else ""
    x = abs(x)
    if round(x, 2) >= 1000:
        text = f"{x:,.0f}"
    elif x == 0 or round(x, 2) >= 0.01:
        text = f"{x:.2f}"
    else:
        text = number(x, sig)
    return f"{sign}${text}"


def value_text(value: float | int | bool | None, unit: str) -> str:
    """Return a value with its unit, the way pages show outputs and derivation steps."""
    if value is None:
        return "none: the queue is unstable"
    if isinstance(value, bool):
        return "pass" if value else "fail"
    if unit == "B":
        return bytes_text(value)
    if unit == "fraction":
        return percent(value)
    if unit == "ratio":
        return number(value)
    if unit == "USD":
        return money(value)
    if unit == "USD/h":
        return f"{money(value)} per hour"
    if unit == "USD per 1M tokens":
        return f"{money(value)} per 1M tokens"
    if unit == "×":
        return f"{number(value)}×"
    return amount(value, unit)  # the units content names too: "1 request", "$1.14", "12.5%"


def input_text(value: float | int) -> str:
    """Return a parameter value the way an input box and a URL carry it: "80", "0.9", "1e13"."""
    if isinstance(value, bool):
        raise TypeError("A parameter value is a number, not a boolean.")
    if isinstance(value, int):
        return str(value)
    if value.is_integer() and abs(value) < 1e9:
        return str(int(value))
    if abs(value) >= 1e9 or abs(value) < 1e-4:
        mantissa, exponent = f"{value:.15e}".split("e")
        short = f"{_trim(mantissa)}e{int(exponent)}"
        if float(short) == value:
            return short
    return repr(value)


_SINGULAR = {"requests": "request", "copies": "copy", "cards": "card", "GPUs": "GPU", "points": "point",
             "tokens": "token", "replicas": "replica"}  # fmt: skip


def amount(value: float | int | None, unit: str, sig: int = 3) -> str:
    """Return a number with its unit, singular for one: "1 request", "2.5 requests", "393 MB", "$11.51", "12.5%".

    ``sig``: significant digits (``number``); a learner's own answer is echoed with more, so 10.45 reads 10.45.
    """
    if value is None:
        return number(value)
    if unit == "$":
        return money(value)
    text = number(value, sig)
    if unit == "%":
        return f"{text}%"
    if text == "1":
        unit = _SINGULAR.get(unit, unit)
    return f"{text} {unit}".strip()


def tolerance_text(tolerance: float, kind: str, unit: str = "") -> str:
    """Return a grading tolerance in words: "within 1%", "within ± 2 requests", "within a factor of 1.05"."""
    if kind == "nominal":
        return f"within ± {value_text(tolerance, unit)}"
    if kind == "geometric":
        return f"within a factor of {number(1 + tolerance)} either way"
    return f"within {percent(tolerance)}"


def plural(count: float | int, word: str) -> str:
    """Return `word` as is for a count of one, else with an "s": "1 card", "64 cards"."""
    return word if count == 1 else word + "s"


# The formats a lesson's {{calc ...}} reference may name (docs/content-format.md), for bytes.
_FORMAT_BYTES = {"kB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30}
_FIXED = re.compile(r"f[0-4]")
_PERCENT = re.compile(r"pct[1-4]?")
_POINTS = re.compile(r"points[12]")


def in_format(value: float | int | bool | None, fmt: str) -> str:
    """Return `value` written in one of the content formats of docs/content-format.md.

    `int`, `f0`..`f4`, `pct`, `pct1`..`pct4`, `points1`, `points2`, a byte unit
    (`kB` ... `GiB`), `usd`, `usd2`, `x`, `sci`, `bool`; "n/a" for a missing or
    non-finite value. Raise ValueError for an unknown format.
    """
    if value is None:
        return "n/a"
    if fmt == "bool":
        return "yes" if value else "no"
    value = float(value)
    if not math.isfinite(value):
        return "n/a"
    if fmt == "int":
        return f"{round(value):,}"
    if _FIXED.fullmatch(fmt):
        return f"{value:,.{fmt[1]}f}"
    if _PERCENT.fullmatch(fmt):
        return f"{value * 100:,.{int(fmt[3:] or 0)}f}%"
    if _POINTS.fullmatch(fmt):
        return f"{value:,.{fmt[6]}f} points"
    if fmt in _FORMAT_BYTES:
        return f"{value / _FORMAT_BYTES[fmt]:,.1f} {fmt}"
    if fmt in ("usd", "usd2"):
        return f"${value:,.{0 if fmt == 'usd' else 2}f}"
    if fmt == "x":
        return f"{value:,.2f}x"
    if fmt == "sci":
        return f"{value:.2e}"
    raise ValueError(f"unknown format '{fmt}'")
