"""The scoring rules for numbers: tolerance types, the partial-credit band, targeted slips."""

import pytest

from lessons.grading import Slip, grade, within


def test_relative_tolerance_accepts_inside_and_refuses_outside():
    assert within(110, 112, 0.02, "relative")
    assert not within(110, 113, 0.02, "relative")


def test_nominal_tolerance_is_absolute():
    assert within(0.5, 0.59, 0.1, "nominal")
    assert not within(0.5, 0.61, 0.1, "nominal")


def test_geometric_tolerance_is_symmetric_in_log_space():
    assert within(100, 199, 1.0, "geometric")
    assert within(100, 51, 1.0, "geometric")
    assert not within(100, 49, 1.0, "geometric")
    assert not within(100, -100, 1.0, "geometric")


def test_exact_answer_is_correct_with_full_credit():
    result = grade(393.216, 393.2, tolerance=0.01)
    assert (result.outcome, result.fraction) == ("correct", 1.0)


def test_inside_partial_band_earns_half_credit_and_says_how_close():
    """The message said "Right order of magnitude … Half credit" for 120 against 123 (a 2.4% miss), and "Half credit"
    on a retry, which scores nothing (newcomer's finding): it says within what, which way, and that the tolerance was
    missed ("close" misled for 1.9× off: code review); the verdict and the points are said beside it."""
    result = grade(110, 180, tolerance=0.02, partial_band=2)
    assert (result.outcome, result.fraction) == ("partial", 0.5)
    assert result.message == (
        "Within 2× of the answer, but high: outside its tolerance. Check each factor of your working."
    )
    assert grade(123, 120, tolerance=1, kind="nominal", partial_band=2).message.startswith(
        "Within 2× of the answer, but low:"
    )


@pytest.mark.parametrize("given", [198, 196])
def test_a_whole_count_one_away_is_said_to_be_a_rounding_slip(given):
    """198 for 197 requests (rounded up, where whole requests that fit round down) read "Check each factor of your
    working", when every factor was right (newcomer's finding in review)."""
    result = grade(197, given, tolerance=0.5, kind="nominal", partial_band=2)
    assert result.outcome == "partial"
    assert result.message == (
        f"One {'above' if given > 197 else 'below'} the answer: outside its tolerance. Check how you rounded: a count"
        " of what fits rounds down, a count of what is needed rounds up."
    )
    assert grade(197, 199, tolerance=0.5, kind="nominal", partial_band=2).message.endswith(
        "each factor of your working."
    )
    assert grade(197.4, 198, tolerance=0.001, partial_band=2).message.endswith("each factor of your working.")


def test_outside_the_band_earns_nothing():
    result = grade(110, 300, tolerance=0.02, partial_band=2)
    assert (result.outcome, result.fraction) == ("incorrect", 0.0)


def test_known_slip_gets_its_own_feedback():
    slips = (Slip(375.0, "That is MiB; the question asks for MB."),)
    result = grade(393.2, 375, tolerance=0.01, slips=slips)
    assert result.outcome == "incorrect"
    assert result.message == "That is MiB; the question asks for MB."


def test_power_of_ten_slip_is_named():
    result = grade(393.2, 393200, tolerance=0.01)
    assert "power of ten" in result.message


def test_non_finite_answer_is_refused():
    assert grade(1.0, float("nan"), tolerance=0.1).outcome == "incorrect"


def test_a_slip_inside_the_band_keeps_the_bands_half_credit():
    result = grade(1000, 986, tolerance=0.01, partial_band=2, slips=(Slip(986.3, "A 30-day month."),))
    assert (result.outcome, result.fraction, result.message) == ("partial", 0.5, "A 30-day month.")


def test_geometric_tolerance_works_for_negative_answers():
    assert within(-100, -101, 0.05, "geometric")
    assert not within(-100, 101, 0.05, "geometric")


def test_huge_misses_are_not_called_a_slip():
    result = grade(1e-300, 1e300, tolerance=0.1)
    assert result.outcome == "incorrect"
    assert "slipped" not in result.message


def test_a_vanishingly_small_answer_does_not_divide_by_zero():
    # Found by the form fuzzer: 5e-324 / 110 underflows to 0.
    result = grade(110, 5e-324, tolerance=0.02)
    assert result.outcome == "incorrect"
    assert "slipped" not in result.message


@pytest.mark.parametrize("given", [1, 3, 100, 30, 250])
def test_an_answer_off_by_a_factor_that_is_no_power_of_ten_is_not_called_a_slip(given):
    result = grade(29, given, tolerance=0.01)
    assert result.outcome == "incorrect"
    assert "power of ten" not in result.message
    assert result.message == "Not within tolerance. Check each factor of your working."


@pytest.mark.parametrize(("given", "factor", "direction"), [(2.9, "10", "too low"), (29_000, "1,000", "too high")])
def test_an_answer_off_by_exactly_a_power_of_ten_is_named(given, factor, direction):
    result = grade(29, given, tolerance=0.01)
    assert f"Off by a factor of {factor} ({direction})" in result.message


@pytest.mark.parametrize(
    ("given", "factor", "direction"), [(327_680, "1,024", "too high"), (320 / 1024**2, "1,048,576", "too low")]
)
def test_an_answer_off_by_a_power_of_1024_is_named_a_binary_unit_slip(given, factor, direction):
    """320 MiB written where 320 KiB is asked read "Check each factor of your working": the number was right."""
    result = grade(320, given, tolerance=0.01)
    assert result.message == (
        f"Off by a factor of {factor} ({direction}): a binary unit slipped (KiB, MiB and GiB are 1,024 apart; "
        "check the unit you wrote)."
    )
    assert "binary" not in grade(320, 320 * 1000, tolerance=0.01).message  # a thousand is a power of ten


@pytest.mark.parametrize(
    ("ticked", "total", "share", "outcome", "points"),
    [(3, 3, 1.0, "correct", 10), (2, 3, 2 / 3, "partial", 7), (0, 3, 0.0, "incorrect", 0), (0, 0, 0.0, "incorrect", 0)],
)
def test_one_checklist_grade_serves_lessons_review_and_interviews(ticked, total, share, outcome, points):
    from lessons.scoring import checklist_grade

    graded = checklist_grade(ticked, total)
    assert graded.share == pytest.approx(share)
    assert graded.outcome == outcome
    assert graded.points(10) == points
    assert graded.message == f"You covered {ticked} of the {total} points a strong answer makes."


def test_hints_are_owed_only_until_the_first_answer():
    from lessons.scoring import hints_owed

    assert hints_owed(answered=False, hints_taken=2) == 2
    assert hints_owed(answered=True, hints_taken=2) == 0
