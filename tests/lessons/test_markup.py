"""Authored Markdown: sanitised, with {{calc}} numbers from the calculators."""

import pytest

from lessons.markup import MarkupError, check_markup, format_number, render_markdown


@pytest.mark.parametrize(
    "text",
    [
        "<script>alert(1)</script>hello",
        '<img src=x onerror="alert(1)">',
        "[click](javascript:alert(1))",
        '<a href="#" onclick="steal()">x</a>',
        "<iframe src='https://example.com'></iframe>",
    ],
)
def test_no_script_handler_or_javascript_url_survives(text):
    html = str(render_markdown(text)).lower()
    assert "<script" not in html
    assert "onerror" not in html
    assert "onclick" not in html
    assert "javascript:" not in html
    assert "<iframe" not in html


def test_markdown_features_are_kept():
    html = str(render_markdown("**bold** and `code`\n\n| a | b |\n|---|---|\n| 1 | 2 |"))
    assert "<strong>bold</strong>" in html
    assert "<code>code</code>" in html
    assert "<table>" in html


def test_calc_reference_is_computed_by_the_calculator():
    assert "327,680" in str(render_markdown("{{calc kv-cache.bytes_per_token | int}} bytes"))
    assert "1.5625%" in str(render_markdown("{{calc routing.round_robin_share cards=64 | pct4}}"))
    assert "393.2 MB" in str(render_markdown("{{calc kv-cache.copy_bytes tokens=1200 | MB}}"))
    assert "375.0 MiB" in str(render_markdown("{{calc kv-cache.copy_bytes | MiB}}"))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("{{calc nope.x}}", "unknown calculator"),
        ("{{calc kv-cache.nothing}}", "no output"),
        ("{{calc kv-cache.copy_bytes layers=abc}}", "bad inputs"),
        ("{{calc kv-cache.copy_bytes | weird}}", "unknown format"),
        ("{{ something else }}", "not a valid"),
    ],
)
def test_bad_calc_references_are_refused(text, message):
    with pytest.raises(MarkupError, match=message):
        check_markup(text)


def test_formats():
    assert format_number(0.015625, "pct4") == "1.5625%"
    assert format_number(24.09375, "points2") == "24.09 points"
    assert format_number(2005000, "usd") == "$2,005,000"
    assert format_number(2.8, "x") == "2.80x"
    assert format_number(True, "bool") == "yes"


def test_a_broken_reference_with_backslashes_renders_a_note_not_an_error():
    html = str(render_markdown(r"before {{calc kv-cache.copy_bytes layers=\g<9> | MB}} after"))
    assert "number unavailable" in html
    assert "before" in html
