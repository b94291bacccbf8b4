"""The content formats of docs/content-format.md, written by calculators.formatting (no database)."""

import pytest

from calculators.formatting import in_format


@pytest.mark.parametrize(
    ("value", "fmt", "text"),
    [
        (5436.4, "int", "5,436"),
        (1234.5678, "f2", "1,234.57"),
        (0.015625, "pct4", "1.5625%"),
        (0.3, "pct", "30%"),
        (24.09375, "points2", "24.09 points"),
        (393_216_000, "MB", "393.2 MB"),
        (393_216_000, "MiB", "375.0 MiB"),
        (2_005_000, "usd", "$2,005,000"),
        (1.2505, "usd2", "$1.25"),
        (2.8, "x", "2.80x"),
        (1.84e9, "sci", "1.84e+09"),
        (True, "bool", "yes"),
        (None, "f2", "n/a"),
        (float("nan"), "f2", "n/a"),
    ],
)
def test_content_formats(value, fmt, text):
    assert in_format(value, fmt) == text


def test_unknown_format_is_refused():
    with pytest.raises(ValueError, match="unknown format 'pct9'"):
        in_format(0.5, "pct9")


def test_tolerances_and_shares_read_in_plain_words():
    from calculators.formatting import money, percent, tolerance_text

    assert tolerance_text(0.01, "relative") == "within 1%"
    assert tolerance_text(2, "nominal", "requests") == "within ± 2 requests"
    assert tolerance_text(0.5, "nominal", "%") == "within ± 0.5%"
    assert tolerance_text(0.05, "geometric") == "within a factor of 1.05 either way"
    assert (percent(0.456621), percent(0.66), percent(0.0000012)) == ("45.7%", "66%", "0.00012%")
    assert (money(0.57078), money(0.001234), money(2_005_000.4)) == ("$0.57", "$0.00123", "$2,005,000")


def test_one_of_a_counted_unit_is_singular():
    from calculators.formatting import amount

    assert (amount(1, "requests"), amount(1.0, "copies"), amount(2, "requests")) == (
        "1 request",
        "1 copy",
        "2 requests",
    )
    assert (amount(1, "MB"), amount(393.216, "MB")) == ("1 MB", "393 MB")


def test_dollars_and_percentages_read_as_they_are_written():
    """An answer in $ reads "$125.00" as the working's "$11.51" does, not "125 $"; a share "12.5%"."""
    from calculators.formatting import amount

    assert (amount(125, "$"), amount(11.514, "$"), amount(0.00123, "$")) == ("$125.00", "$11.51", "$0.00123")
    assert amount(12.5, "%") == "12.5%"
    assert amount(None, "$") == amount(None, "%") == "—"  # no value: no stray unit


def test_a_calculators_values_and_a_lessons_amounts_are_written_alike():
    """value_text (calculator units) hands the units content also names to amount(): one way to write each."""
    from calculators.formatting import amount, value_text

    for value, unit in ((1, "requests"), (2, "requests"), (125, "$"), (12.5, "%"), (393.216, "MB"), (7, "")):
        assert value_text(value, unit) == amount(value, unit)
    assert (value_text(2924800, "USD"), value_text(0.117, "fraction")) == ("$2,924,800", "11.7%")


def test_a_simulated_time_reads_in_seconds_from_a_second_on():
    """An overloaded pool's waits read "593,614 ms" in the simulator's table (newcomer's finding); minutes from a
    minute on then mixed with 5-digit milliseconds in one row (the re-check): seconds from a second on, as the
    TTFT chart's axis writes its ticks."""
    from calculators.formatting import milliseconds

    assert milliseconds(35.24) == "35.2 ms"
    assert milliseconds(999) == "999 ms"
    assert milliseconds(999.6) == "1 s"  # it would be written "1,000 ms"
    assert milliseconds(36_803) == "36.8 s"
    assert milliseconds(593_614) == "594 s"
    assert milliseconds(None) == "—"
