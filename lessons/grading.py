"""Grade a number against an expected value: tolerance types, a partial-credit band, known slips."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Slip:
    """A predictable wrong answer (e.g. GiB given for GB) with its own feedback."""

    value: float
    feedback: str


@dataclass(frozen=True)
class Grade:
    outcome: str  # "correct" | "partial" | "incorrect"
    fraction: float  # share of the points earned, 0 to 1
    message: str


def within(expected: float, given: float, tolerance: float, kind: str) -> bool:
    """Return whether ``given`` is inside Moodle's tolerance of ``kind`` around ``expected``."""
    if kind == "nominal":
        return abs(given - expected) <= tolerance
    if kind == "geometric":
        if expected == 0:
            return given == 0
        if given == 0 or (given > 0) != (expected > 0):
            return False
        size, target = abs(given), abs(expected)  # symmetric in log space, for either sign
        return target / (1 + tolerance) <= size <= target * (1 + tolerance) or math.isclose(given, expected)
    return abs(given - expected) <= abs(expected) * tolerance or math.isclose(given, expected)


def within_factor(expected: float, given: float, factor: float) -> bool:
    """Return whether ``given`` has the sign of ``expected`` and is within ``factor`` of it."""
    if expected == 0 or given == 0 or (given > 0) != (expected > 0):
        return False
    ratio = given / expected
    return 1 / factor <= ratio <= factor


def grade(
    expected: float,
    given: float,
    *,
    tolerance: float,
    kind: str = "relative",
    partial_band: float | None = None,
    slips: tuple[Slip, ...] = (),
) -> Grade:
    """Grade ``given``: full credit inside the tolerance, half inside the band, targeted slips."""
    if not math.isfinite(given):
        return Grade("incorrect", 0.0, "That is not a finite number.")
    if within(expected, given, tolerance, kind):
        return Grade("correct", 1.0, "Right: that is within tolerance.")
    in_band = bool(partial_band) and within_factor(expected, given, partial_band)
    for slip in slips:
        if within(slip.value, given, tolerance, kind):
            # A recognised slip never earns less than an unrecognised answer as close would.
            return Grade("partial", 0.5, slip.feedback) if in_band else Grade("incorrect", 0.0, slip.feedback)
    if in_band:
        direction = "high" if abs(given) > abs(expected) else "low"
        if rounded_the_other_way(expected, given):  # a rounding slip, not a factor (198 for 197 requests)
            return Grade(
                "partial",
                0.5,
                f"One {'above' if given > expected else 'below'} the answer: outside its tolerance. Check how you "
                "rounded: a count of what fits rounds down, a count of what is needed rounds up.",
            )
        return Grade(
            "partial",
            0.5,
            f"Within {partial_band:g}× of the answer, but {direction}: outside its tolerance. "
            "Check each factor of your working.",
        )
    exponent = power_slip(expected, given)
    if exponent:
        return Grade(
            "incorrect",
            0.0,
            f"Off by a factor of {10 ** abs(exponent):,} ({'too high' if exponent > 0 else 'too low'}): "
            "a unit or a power of ten slipped.",
        )
    exponent = power_slip(expected, given, base=1024)
    if exponent:  # 320 MiB written for 320 KiB: the number is right, its binary unit is not
        return Grade(
            "incorrect",
            0.0,
            f"Off by a factor of {1024 ** abs(exponent):,} ({'too high' if exponent > 0 else 'too low'}): "
            "a binary unit slipped (KiB, MiB and GiB are 1,024 apart; check the unit you wrote).",
        )
    return Grade("incorrect", 0.0, "Not within tolerance. Check each factor of your working.")


def rounded_the_other_way(expected: float, given: float) -> bool:
    """Whether ``given`` is the whole number next to a whole ``expected``: what fits rounds down (whole requests
    in a budget), what is needed rounds up (replicas for a load), and the other rounding lands one away."""
    return float(expected).is_integer() and float(given).is_integer() and abs(given - expected) == 1


def power_slip(expected: float, given: float, base: int = 10, closeness: float = 0.02) -> int:
    """Return n when ``given`` is ``expected`` × baseⁿ (n ≠ 0, within ``closeness``), else 0.

    1 against 29 is no slip; 2.9 or 2,900 against 29 is (base 10), and 327,680 against 320 (base 1,024).
    """
    if not expected or not given or (given > 0) != (expected > 0):
        return 0
    ratio = abs(given) / abs(expected)
    if not math.isfinite(ratio) or ratio == 0:
        return 0
    exponent = round(math.log(ratio, base))
    if exponent == 0 or abs(exponent) > 15:
        return 0
    return exponent if math.isclose(ratio, float(base) ** exponent, rel_tol=closeness) else 0
