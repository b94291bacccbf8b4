"""Micro-benchmarks of the calculator maths, for `make bench` (pure Python, no Django)."""

from __future__ import annotations

import statistics
import timeit

from calculators.registry import CALCULATORS

__all__ = ["time_evaluate", "time_maths"]


def _median_microseconds(call, number: int, repeat: int) -> float:
    runs = timeit.Timer(call).repeat(repeat=repeat, number=number)
    return statistics.median(runs) / number * 1e6


def time_maths(number: int = 2000, repeat: int = 7) -> dict[str, float]:
    """Return, per slug, the median microseconds of one call of its maths on the defaults.

    Each slug is timed `repeat` times over `number` calls; the budget is 50 µs a call.
    """
    timings = {}
    for slug, calculator in CALCULATORS.items():
        compute, inputs = calculator.compute, calculator.defaults
        timings[slug] = _median_microseconds(lambda compute=compute, inputs=inputs: compute(**inputs), number, repeat)
    return timings


def time_evaluate(number: int = 500, repeat: int = 5) -> dict[str, float]:
    """Return, per slug, the median microseconds of `evaluate({})`: parse, maths and derivation."""
    timings = {}
    for slug, calculator in CALCULATORS.items():
        timings[slug] = _median_microseconds(lambda calculator=calculator: calculator.evaluate({}), number, repeat)
    return timings


if __name__ == "__main__":
    maths_times, evaluate_times = time_maths(), time_evaluate()
    print(f"{'calculator':<14} {'maths µs':>9} {'evaluate µs':>12}")
    for slug in CALCULATORS:
        print(f"{slug:<14} {maths_times[slug]:>9.2f} {evaluate_times[slug]:>12.1f}")
