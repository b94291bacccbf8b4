"""Authored Markdown: sanitised, with {{calc}} numbers from the calculators."""

import re

import pytest

from lessons.markup import MarkupError, check_markup, format_number, plain_text, render_markdown, truncate_words


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
        # A missing brace: it saved, and learners read the reference as typed.
        (
            "Cost {{calc kv-cache.copy_bytes tokens=1200 | MB} here.",
            "'{{calc kv-cache.copy_bytes tokens=1200 | MB} here.' is not closed",
        ),
        ("Cost {{calc kv-cache.copy_bytes", "is not closed"),
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


def test_typographic_quotes_never_touch_code():
    html = str(render_markdown('Say "hi" and `{"a": "b"}`\n\n```\n{"it\'s": "x"}\n```'))
    assert "\u201chi\u201d" in html
    assert '<code>{"a": "b"}</code>' in html
    assert '{"it\'s": "x"}' in html
    assert html.count("\u201d") == 1


def test_fenced_code_keeps_angle_brackets_as_text_and_highlights_a_named_language():
    html = str(render_markdown('```python\nx = "<script>alert(1)</script>"\n```'))
    assert "<script" not in html
    assert "&lt;script&gt;" in html
    assert '<div class="highlight"><pre data-scroll-region tabindex="0" role="region" aria-label="Code sample">' in html
    assert '<span class="s2">' in html


def test_a_table_is_a_labelled_scroll_region_as_the_templates_ones_are():
    html = str(render_markdown("| GPU | HBM |\n|---|---|\n| H100 | 80 GB |"))
    assert (
        '<div class="table-scroll" data-scroll-region tabindex="0" role="region" '
        'aria-label="Table: GPU, HBM; first row: H100"><table>' in html
    )


def test_tables_are_named_by_their_text_and_counted_within_it():
    table = "| GPU | HBM |\n|---|---|\n| {} | 80 GB |"
    html = str(render_markdown(f"{table.format('H100')}\n\nThen:\n\n{table.format('A100')}", where="Memory"))
    labels = re.findall(r'aria-label="([^"]+)"><table>', html)
    assert labels == [
        "Memory, table 1 of 2: GPU, HBM; first row: H100",
        "Memory, table 2 of 2: GPU, HBM; first row: A100",
    ]
    escaped = str(render_markdown(table.format("H100"), where='Costs <"b">'))
    assert 'aria-label="Costs &lt;&quot;b&quot;&gt;, table: GPU, HBM; first row: H100"' in escaped


def test_only_pygments_classes_survive_the_sanitiser():
    html = str(render_markdown('<span class="k evil" onclick="x()">a</span> <div class="highlight hijack">b</div>'))
    assert 'class="k"' in html
    assert "evil" not in html and "hijack" not in html and "onclick" not in html


def test_the_pygments_stylesheet_passes_contrast_in_light_and_dark():
    import re
    from pathlib import Path

    from lessons.management.commands.pygments_css import stylesheet

    css = (Path(__file__).resolve().parents[2] / "static" / "css" / "pygments.css").read_text()
    assert css == stylesheet()  # the committed file is what `manage.py pygments_css` writes
    light, dark = css.split("@media (prefers-color-scheme: dark)")
    backgrounds = {"light": "#f5f6fa", "dark": "#1c1e28"}  # --surface, the background of <pre> in site.css

    def luminance(hex_color):
        hex_color = hex_color.lstrip("#")
        if len(hex_color) == 3:
            hex_color = "".join(c * 2 for c in hex_color)
        channels = [int(hex_color[i : i + 2], 16) / 255 for i in (0, 2, 4)]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    def ratio(a, b):
        high, low = sorted((luminance(a), luminance(b)), reverse=True)
        return (high + 0.05) / (low + 0.05)

    for scheme, rules in (("light", light), ("dark", dark)):
        colours = 0
        for declarations in re.findall(r"\.highlight [^{]*\{([^}]*)\}", rules):
            colour = re.search(r"(?<!-)color:\s*(#[0-9a-fA-F]{3,6})", declarations)
            if colour:
                colours += 1
                background = re.search(r"background-color:\s*(#[0-9a-fA-F]{3,6})", declarations)
                against = background.group(1) if background else backgrounds[scheme]
                assert ratio(colour.group(1), against) >= 4.5, (scheme, declarations)
        assert colours > 20


def test_a_prompt_field_can_give_a_plural_its_s():
    from lessons.markup import check_prompt, fill_prompt

    prompt = "Split over **{shards}** home card{shards:s}, of **{cards}** cards."
    check_prompt(prompt, {"shards", "cards"})  # accepted as authored
    assert fill_prompt(prompt, {"shards": 1, "cards": 48}) == "Split over **1** home card, of **48** cards."
    assert fill_prompt(prompt, {"shards": 3, "cards": 48}) == "Split over **3** home cards, of **48** cards."
    with pytest.raises(MarkupError, match="for the s of a plural"):
        check_prompt("{shards:es}", {"shards"})


def test_shipped_drawn_prompts_read_as_sentences(content):
    """No "card(s)", and no bold phrase run up against punctuation ("**48 cards**,"), which screen
    readers and text views show as "48 cards ," (each bold run is its own text)."""
    import re

    from lessons.markup import drawn_prompt
    from lessons.models import Challenge

    challenge = Challenge.objects.get(key="busiest-card-share")
    one = str(drawn_prompt(challenge, {"shards": 1, "cards": 48}))
    assert "over <strong>1</strong> home replica. " in one and "all <strong>48</strong> replicas, home" in one
    assert "home replicas. " in str(drawn_prompt(challenge, {"shards": 2, "cards": 48}))
    for prompt in Challenge.objects.exclude(ranges={}).values_list("prompt", flat=True):
        assert "(s)" not in prompt
    assert not re.search(r"\{cards\} cards\*\*[,.]", challenge.prompt)


def test_a_mistyped_calc_reference_is_refused_with_what_it_could_have_named():
    """An instructor's "{{calc kv-cache.bytes_per_tokn}}" was refused without the outputs to choose from."""
    from lessons.markup import MarkupError, check_markup

    with pytest.raises(MarkupError, match=r"has no output 'bytes_per_tokn' \(its outputs: .*bytes_per_token"):
        check_markup("{{calc kv-cache.bytes_per_tokn | int}}")
    with pytest.raises(MarkupError, match=r"unknown calculator 'kv-cach' \(the calculators: .*kv-cache"):
        check_markup("{{calc kv-cach.bytes_per_token | int}}")


def test_a_short_label_from_rendered_markdown_reads_as_plain_words():
    """Outline labels, results and practise links shorten rendered text: no markup, no "&amp;", no "ring.…"."""
    text = plain_text(str(render_markdown("Say you **move** to a Q&A `ring`. Then what?")))
    assert text.strip() == "Say you move to a Q&A ring. Then what?"
    assert truncate_words(text, 7) == "Say you move to a Q&A ring…"
    assert truncate_words(text, 9) == "Say you move to a Q&A ring. Then what?"
