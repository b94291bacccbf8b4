"""The benchmark helper used by `make bench` (timing itself is not asserted here)."""

from calculators.bench import time_evaluate, time_maths
from calculators.registry import CALCULATORS


def test_time_maths_reports_every_calculator():
    timings = time_maths(number=20, repeat=3)
    assert list(timings) == list(CALCULATORS)
    assert all(value > 0 for value in timings.values())


def test_time_evaluate_reports_every_calculator():
    assert list(time_evaluate(number=5, repeat=3)) == list(CALCULATORS)
