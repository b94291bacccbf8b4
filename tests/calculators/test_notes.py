"""Calculator notes: their figures are computed from the maths, never typed by hand (no database)."""

import ast
import importlib
import inspect
import re
import textwrap

import pytest

from calculators import maths
from calculators.registry import CALCULATORS

# A number of two digits or more standing on its own: "384", "1,200", "0.56"; not "70B", "H100", "10⁶".
TYPED_NUMBER = re.compile(r"(?<![\w.])[0-9][0-9,]*(?:\.[0-9]+)?(?!\w)")
# Numbers that are names or scales, not figures: a paper's year, a theorem's number, an HTTP
# status, a model's version (Llama-3.1-70B), and 100 for percentages.
NOT_FIGURES = {"2023", "3.8", "429", "3.1", "100"}


def _module(slug):
    return importlib.import_module("calculators.definitions." + slug.replace("-", "_"))


def _function_tree(function):
    return ast.parse(textwrap.dedent(inspect.getsource(function)))


def _text_in(function, seen=None):
    """Yield every piece of literal text in `function` and in the definition helpers it calls."""
    seen = seen if seen is not None else set()
    if function in seen:
        return
    seen.add(function)
    tree = _function_tree(function)
    format_specs = {id(node.format_spec) for node in ast.walk(tree) if isinstance(node, ast.FormattedValue)}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr) and id(node) in format_specs:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called = function.__globals__.get(node.func.id)
            if inspect.isfunction(called) and called.__module__.startswith("calculators.definitions"):
                yield from _text_in(called, seen)


def _typed_numbers(function):
    texts = []
    for text in _text_in(function):
        texts += [number for number in TYPED_NUMBER.findall(text) if number not in NOT_FIGURES]
    return [number for number in texts if sum(c.isdigit() for c in number) >= 2]


@pytest.mark.parametrize("slug", CALCULATORS)
def test_notes_type_no_figures(slug):
    assert _typed_numbers(_module(slug).notes) == []


def test_the_check_finds_a_typed_figure():
    def notes():
        return (f"takes {maths.BYTES_PER_GB} B: **393.2 MB**, not the source's 384 MB", "up to 1,200 tokens")

    assert sorted(_typed_numbers(notes)) == ["1,200", "384", "393.2"]


def _scaled(value):
    """Return a result of the maths made 37% larger: numbers scale, checks and None stay."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return round(value * 1.37) + 1
    if isinstance(value, float):
        return value * 1.37
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(_scaled(field) for field in value))
    if isinstance(value, tuple):
        return tuple(_scaled(item) for item in value)
    return value


@pytest.fixture
def skewed_maths(monkeypatch):
    """Every formula in calculators.maths returns larger numbers than it should."""
    for name, function in inspect.getmembers(maths, inspect.isfunction):
        if function.__module__ == maths.__name__:
            monkeypatch.setattr(maths, name, lambda *a, _f=function, **k: _scaled(_f(*a, **k)))


# Shedding's notes explain a rule and carry no figures at all.
WITH_FIGURES = [slug for slug in CALCULATORS if slug != "shed"]


@pytest.mark.parametrize("slug", WITH_FIGURES)
def test_notes_follow_the_maths(slug, skewed_maths):
    assert _module(slug).notes() != CALCULATORS[slug].notes


def test_notes_quote_the_maths_figures():
    # The worked example of the KV cache: 1,200 tokens of Llama-3-70B, an 8 GB cache.
    kv = maths.kv_cache(80, 8, 128, 2, 1200, 8.0)
    notes = " ".join(CALCULATORS["kv-cache"].notes)
    assert f"{kv.copy_bytes:,} B" in notes and f"{kv.copies_per_cache} whole copies" in notes


def test_spec_decode_notes_correct_the_course_notes_compute_bound():
    # F11's bound E / ((g + 1)(1 + g c)) = 3.3616 / 6 = 0.56x at a = 0.8, g = 4, c = 0.05 prices the
    # draft steps g + 1 times; a round is g + 1 + g c = 5.2 plain steps, so 3.3616 / 5.2 = 0.646x.
    expected = maths.spec_decode(0.8, 4, 0.05).expected_tokens
    (slip,) = [note for note in CALCULATORS["spec-decode"].notes if "course notes' figure slips" in note]
    assert f"{expected:.4f} ÷ 6 = {expected / 6:.2f}×" in slip
    assert "γ + 1 + γc = 5.2 plain steps, not 6" in slip
    assert maths.spec_decode_compute_bound(0.8, 4, 0.05) == pytest.approx(expected / 5.2)
    assert f"**{expected / 5.2:.3f}×**" in slip


def test_shed_notes_have_no_figures():
    assert not any(re.search(r"\d{2}", note.replace("429", "")) for note in CALCULATORS["shed"].notes)


def test_calculator_text_copies_no_run_of_eight_words_from_the_seeds():
    """Notes, help, purposes and preset labels are written afresh, as the lessons are."""
    from tests.content.test_originality import runs, seed_runs

    seeds = seed_runs()
    copied = {}
    for slug, calculator in CALCULATORS.items():
        texts = [*calculator.notes, calculator.purpose, *(p.help for p in calculator.parameters)]
        texts += [preset.label for preset in calculator.presets]
        found = {" ".join(run) for text in texts for run in runs(text) & seeds}
        if found:
            copied[slug] = found
    assert copied == {}
