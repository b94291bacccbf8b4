"""Number entry: what a learner types, with or without a unit, read in the question's unit."""

import contextlib

import pytest

from lessons.number_entry import EntryError, asked_unit, read_number, unit_options


@pytest.mark.parametrize(
    ("typed", "unit", "value"),
    [
        ("$1.14", "$", 1.14),
        ("1.14 USD", "$", 1.14),
        ("2.08%", "%", 2.08),
        ("2.08", "%", 2.08),
        ("1,200", "requests", 1200),
        ("1.2k", "requests", 1200),
        ("1.2M", "cards", 1_200_000),
        ("3e9", "requests", 3e9),
        ("3e9 tokens", "billion tokens", 3),
        ("3 billion", "billion tokens", 3),
        ("393 MB", "MB", 393),
        ("375 MiB", "MB", 393.216),
        ("327.68 kB", "KiB", 320),
        ("0.5 s", "ms", 500),
        ("9,000 requests/min", "requests/s", 150),
        ("2.5e−3 s", "ms", 2.5),  # a typographic minus in the exponent
        ("320 KB", "KiB", 320),  # JEDEC's KB, as write-ups print a token's KV ("320 KB"; the lesson says so)
        ("320 kB", "KiB", 312.5),  # the SI prefix is a thousand
        ("0", "requests", 0),
        ("3 gpus", "GPUs", 3),  # the same thing, however written
        ("1.2 thousand requests", "requests", 1200),
        ("2 ktokens", "tokens", 2000),
        ("123 requests", "requests/GPU", 123),  # part of what the question counts: per GPU is understood
        ("320 KB", "KiB/token", 320),
        ("1.5 ×", "×", 1.5),
        ("7", "a unit pint does not know", 7),
    ],
)
def test_numbers_are_read_in_the_asked_unit(typed, unit, value):
    assert read_number(typed, unit) == pytest.approx(value)


@pytest.mark.parametrize(
    ("typed", "unit", "message"),
    [
        ("393 ms", "MB", "“393 ms” is a time, but this question asks for a size in MB."),
        ("12 MB", "%", "“12 MB” is a size, but this question asks for a percentage, such as 5 or 5%."),
        ("$5", "MB", "is an amount of money, but this question asks for a size in MB"),
        ("5 EUR", "$", "“EUR” is not a unit this lab knows"),
        # A lowercase b read as a barn (an area): "a quantity of another kind" told a learner nothing.
        ("320 kb", "KiB", "“320 kb”: a lowercase b is not a byte. Write B for bytes, as in kB."),
        ("320 Kib", "KiB", "as in KiB"),
        ("10 kib", "KiB", "as in KiB."),  # not "kiB", which the parser would refuse in turn
        ("4 Mb", "MB", "as in MB"),
        ("100 Mb/s", "MB/s", "“100 Mb/s”: a lowercase b is not a byte. Write B for bytes, as in MB/s."),
        # Units pint knows but cannot scale (an offset, a log scale) raised its own error: a 500 on every page.
        ("5 degC", "MB", "“degC” is not a unit this lab knows. Write the number in MB."),
        ("5 dB", "requests", "“dB” is not a unit this lab knows"),
        # Counted things are all the number 1 to pint: another thing counted was read as the asked one.
        ("76 tokens", "requests", "“76 tokens” is in tokens, but this question asks for requests."),
        ("76 ktokens", "requests", "“76 ktokens” is in ktokens, but this question asks for requests."),  # kilotokens
        ("3 Gtokens/s", "requests/s", "is in Gtokens/s, but this question asks for requests/s."),
        (
            "9,000 tokens/min",
            "requests/s",
            "“9,000 tokens/min” is in tokens/min, but this question asks for requests/s.",
        ),
        # A share is a plain number to pint as well: "50%" for a count was read as 0.5 requests.
        ("50%", "requests", "“50%” is a share, but this question asks for requests."),
        ("5 percent", "GPUs", "“5 percent” is a share, but this question asks for GPUs."),
        ("3 ppm", "requests", "“3 ppm” is a share, but this question asks for requests."),
        ("5%", "MB", "“5%” is a share, but this question asks for a size in MB."),
        ("50 requests", "%", "“50 requests” is in requests, but this question asks for a percentage, such as 5 or 5%."),
        ("2 tokens", "×", "“2 tokens” is in tokens, but this question asks for a plain number."),
        ("123 tokens", "$", "“123 tokens” is in tokens, but this question asks for an amount of money in $."),
        ("5 replicas", "GPUs", "“5 replicas” is in replicas, but this question asks for GPUs."),
        ("123 GPUs", "requests/GPU", "“123 GPUs” is in GPUs, but this question asks for requests/GPU."),
        ("5 octave", "ms", "“octave” is not a unit this lab knows"),
        ("1,5", "MB", "Use a dot for decimals"),
        ("abc", "MB", "Enter a number such as"),
        ("", "MB", "Enter a number."),
        ("1e999", "ms", "Enter a finite number."),
        ("2**9999", "ms", "not a unit"),
        ("$5 MB", "$", "mixes a dollar sign"),
        # A newcomer typed the question's own words: told what to type instead (it said the first half only).
        (
            "$1.14 per million",
            "$",
            "“$1.14 per million” mixes a dollar sign with another unit: type the amount alone, such as $1.14.",
        ),
        # The amount as the app writes money (it suggested "$1.14e+06"); an answer asked in MB is not money.
        ("$1,140,000 per year", "$", "type the amount alone, such as $1,140,000."),
        ("$1.5k per hour", "$", "type the amount alone, such as $1,500."),
        ("$5 MB", "MB", "“$5 MB” mixes a dollar sign with another unit: this question asks for MB."),
        ("393 /", "MB", "not a unit"),
        ("393 *", "MB", "not a unit"),
        ("1 MB/", "MB", "not a unit"),
        ("1 ·", "MB", "not a unit"),
        ("1 MB//s", "MB", "not a unit"),
        ("1 / MB", "MB", "not a unit"),
        # Every answer is a size, time, count, rate or share: a negative one is refused, not graded (and scored).
        ("-5", "MB", "Enter a number of 0 or more: no answer here is negative."),
        ("−3.5", "ms", "Enter a number of 0 or more"),
        ("-2 GB", "MB", "Enter a number of 0 or more"),
        ("$-1", "$", "Enter a number of 0 or more"),
    ],
)
def test_bad_entries_say_what_is_wrong(typed, unit, message):
    with pytest.raises(EntryError, match=message.replace("$", r"\$").replace("*", r"\*")):
        read_number(typed, unit)


@pytest.mark.parametrize("unit", ["/", "MB/", "*", "·", "MB *"])
def test_a_question_unit_that_is_only_operators_is_not_a_unit(unit):
    assert asked_unit(unit) is None


def test_an_empty_unit_never_ends_a_message_with_in_nothing():
    with pytest.raises(EntryError) as refused:
        read_number("5 MB", "")
    assert not str(refused.value).endswith("in .")
    assert "plain number" in str(refused.value)


def test_every_unit_in_shipped_content_is_understood():
    from pathlib import Path

    import yaml

    units = set()

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("unit"), str):
                units.add(node["unit"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for path in Path("content/lessons").glob("*.yaml"):
        walk(yaml.safe_load(path.read_text()))
    assert units
    assert [unit for unit in sorted(units) if asked_unit(unit) is None] == []


def test_an_output_is_offered_in_the_units_it_can_be_shown_in_with_the_factor_to_each():
    assert unit_options("fraction") == {"%": 100.0, "fraction": 1.0}
    assert unit_options("s") == {"µs": 1e6, "ms": 1e3, "s": 1.0, "min": 1 / 60, "h": 1 / 3600}
    assert unit_options("B")["GiB"] == 2**-30 and unit_options("B")["MB"] == 1e-6
    assert unit_options("tokens/s")["tokens/min"] == 60.0
    assert unit_options("tokens")["billion tokens"] == 1e-9
    assert unit_options("USD per 1M tokens") == {"USD per 1M tokens": 1.0}  # not one pint reads: offered as it is


@pytest.mark.django_db
def test_the_examples_an_error_gives_are_no_lessons_answer(content):
    """The example in "Enter a number such as ..., or with its unit, such as 393 MB" was the answer to a step."""
    import re

    from lessons.models import Challenge, Step
    from lessons.services import expected_for

    items = [*Step.objects.exclude(calculator=""), *Challenge.objects.all()]
    assert len(items) > 50
    for item in items:
        with pytest.raises(EntryError) as refused:
            read_number("what?", item.unit)
        message = str(refused.value)
        examples = [
            float(number.replace(",", "")) * (1000 if k else 1)
            for number, k in re.findall(r"(\d[\d,]*(?:\.\d+)?(?:e\d+)?)(k?)", message)
        ]
        assert examples, message
        expected = expected_for(item).value
        close = [n for n in examples if abs(n - expected) <= 0.25 * expected]
        assert not close, f"{item}: {message} (the answer is {expected})"


@pytest.mark.parametrize("unit", ["MB", "requests", "%", "ms", "$", "tokens/s"])
def test_every_unit_pint_knows_is_read_or_refused_with_a_message(unit):
    """Whatever unit a learner writes after a number, the answer is read or refused with a message, never a 500
    (offset and log-scale units such as degC and dB raised pint's own errors)."""
    from lessons.number_entry import registry

    for name in registry():
        with contextlib.suppress(EntryError):  # a clear refusal is fine; any other exception fails the test
            read_number(f"5 {name}", unit)
