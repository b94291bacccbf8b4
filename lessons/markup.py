"""Render authored Markdown safely, with {{calc ...}} numbers asked of the calculators."""

from __future__ import annotations

import functools
import re
import string
import threading
from collections.abc import Collection, Mapping
from html import unescape
from html.parser import HTMLParser

import markdown as markdown_lib
import nh3
from django.utils.html import escape, strip_tags
from django.utils.safestring import SafeString, mark_safe
from pygments.token import STANDARD_TYPES

from calculators.formatting import in_format, number
from calculators.registry import CALCULATORS, CalculatorInputError, get_calculator
from calculators.simulator import REFERENCE_SLUGS, simulated_value

CALC_PATTERN = re.compile(r"\{\{\s*calc\s+(?P<ref>[^}|]*?)\s*(?:\|\s*(?P<format>[A-Za-z0-9]+)\s*)?\}\}")

ALLOWED_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "a", "table", "thead",
    "tbody", "tr", "th", "td", "hr", "sub", "sup", "abbr", "span", "h3", "h4", "dl", "dt", "dd", "kbd", "div",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "abbr": {"title"}, "th": {"align"}, "td": {"align"}}
URL_SCHEMES = {"http", "https", "mailto"}
# Fenced code is highlighted by Pygments on the server (static/css/pygments.css colours it):
# only its wrapper and its token classes survive the sanitiser, never an author's own classes.
CODE_CLASS = "highlight"
ALLOWED_CLASSES = {"div": {CODE_CLASS}, "span": {name for name in STANDARD_TYPES.values() if name}}
CODE_BLOCK = f'<div class="{CODE_CLASS}"><pre>'
# What makes a box a scroll region, as the templates write it (README, "Scroll regions"): a tab stop while it overflows.
SCROLL_REGION = 'data-scroll-region tabindex="0" role="region"'
FOCUSABLE_CODE_BLOCK = f'<div class="{CODE_CLASS}"><pre {SCROLL_REGION} aria-label="Code sample">'
MARKDOWN_EXTENSIONS = ["fenced_code", "codehilite", "tables", "sane_lists", "smarty"]
MARKDOWN_CONFIG = {"codehilite": {"css_class": CODE_CLASS, "guess_lang": False}}


TABLE_PATTERN = re.compile(r"<table>.*?</table>", re.S)


def wrap_tables(html: str, where: str = "") -> str:
    """Wrap each table in a scroll region named after where it is, its place among this text's tables,
    its headings and first cell: "Tokens per month, table 2 of 2: Tier, Tokens; first row: Free".

    Each text (a section's body, a step's) is rendered alone when it is saved, so a number counted
    here restarts in every text; naming the text ("where": its section's title) keeps two sections'
    tables apart on one page, and "of N" says the count is the text's own.
    """
    total = len(TABLE_PATTERN.findall(html))
    count = iter(range(1, total + 1))
    return TABLE_PATTERN.sub(lambda match: wrap_table(match, table_name(where, next(count), total)), html)


def table_name(where: str, number: int, total: int) -> str:
    name = "table" if total == 1 else f"table {number} of {total}"
    return f"{where}, {name}" if where else name[0].upper() + name[1:]


def wrap_table(match: re.Match, name: str) -> str:
    def cells(tag: str) -> list[str]:
        found = re.findall(rf"<{tag}[^>]*>(.*?)</{tag}>", match.group(0), re.S)
        return [re.sub(r"<[^>]+>", "", cell).strip() for cell in found]

    headings, first_cell = cells("th"), next(iter(cells("td")), "")
    label = f"{name}: " + ", ".join(h for h in headings if h)[:80]
    label = escape(f"{label}; first row: {first_cell[:40]}" if first_cell else label)
    return f'<div class="table-scroll" {SCROLL_REGION} aria-label="{label}">{match.group(0)}</div>'


class MarkupError(ValueError):
    """A {{calc ...}} reference that cannot be computed or formatted."""


def format_number(value: float | int | bool | None, fmt: str) -> str:
    """Return ``value`` written in the ``fmt`` of docs/content-format.md (calculators.formatting)."""
    try:
        return in_format(value, fmt)
    except ValueError as error:
        raise MarkupError(str(error)) from None


def parse_reference(ref: str) -> tuple[str, str, dict[str, str]]:
    """Split ``slug.output a=1 b=2`` into its slug, output and parameters."""
    head, *pairs = ref.split()
    if "." not in head:
        raise MarkupError(f"'{head}' should be calculator.output, e.g. kv-cache.copy_bytes")
    slug, output = head.split(".", 1)
    params: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name or not value:
            raise MarkupError(f"'{pair}' should be name=value")
        params[name] = value
    return slug, output, params


# A pure function of the reference's text (the calculators' maths never changes while a process
# runs), so this memo can never be stale: the JSON API's Markdown twins and answer messages,
# which are not stored rendered, then skip the calculators on each request.
@functools.lru_cache(maxsize=4096)
def calc_value(ref: str) -> float | int | bool | None:
    """Return the calculator output named by a reference such as ``routing.round_robin_share cards=64``."""
    slug, output, params = parse_reference(ref)
    if slug in REFERENCE_SLUGS:  # a number from a fleet-simulator run (a preset or given inputs)
        try:
            return simulated_value(slug, output, params)
        except ValueError as error:
            raise MarkupError(str(error)) from None
    try:
        calculator = get_calculator(slug)
    except KeyError:
        raise MarkupError(f"unknown calculator '{slug}' (the calculators: {', '.join(CALCULATORS)})") from None
    try:
        result = calculator.evaluate(params)
    except CalculatorInputError as error:
        problems = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in error.errors.items())
        raise MarkupError(f"bad inputs for {slug}: {problems}") from None
    if output not in result.outputs:
        raise MarkupError(f"calculator '{slug}' has no output '{output}' (its outputs: {', '.join(result.outputs)})")
    return result.outputs[output]


def expand_calcs(text: str) -> str:
    """Replace every {{calc ...}} in ``text`` with its formatted number."""

    def replace(match: re.Match) -> str:
        fmt = match.group("format") or "f2"
        return format_number(calc_value(match.group("ref")), fmt)

    return CALC_PATTERN.sub(replace, text)


def check_markup(text: str) -> None:
    """Raise MarkupError if any {{calc ...}} in ``text`` cannot be rendered, or if it holds HTML that is
    removed when shown (a script, an image, an event handler, a javascript: link): said, not silently dropped."""
    expanded = expand_calcs(text)
    rest = CALC_PATTERN.sub("", text)
    leftover = re.search(r"\{\{.*?\}\}", rest)
    if leftover:
        raise MarkupError(f"'{leftover.group(0)}' is not a valid {{{{calc slug.output ... | format}}}}")
    unclosed = re.search(r"\{\{\s*calc\b[^\n]{0,60}", rest)  # "{{calc x.y | MB} here": learners saw it as typed
    if unclosed:
        raise MarkupError(f"'{unclosed.group(0)}' is not closed: write {{{{calc slug.output ... | format}}}}")
    removed = removed_html(convert_markdown(expanded))
    if removed:
        raise MarkupError(
            f"{', '.join(removed)} would be removed when shown: lessons show Markdown and plain formatting, "
            "never scripts, images or event handlers (to show a tag as text, put it in `backticks`)"
        )


class _Tags(HTMLParser):
    """Collect the start tags of an HTML text with their attributes."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append((tag, attrs))


def removed_html(html: str) -> list[str]:
    """Return what ``sanitize`` would remove from ``html`` that an author wrote on purpose, each named once:
    a tag it does not allow ("<script>"), an event handler ("onerror="), a link to another scheme ("javascript:").

    Attributes Markdown itself writes (a table column's alignment) are not the author's and are not named.
    """
    parser = _Tags()
    parser.feed(html)
    parser.close()
    removed: list[str] = []
    for tag, attrs in parser.found:
        problems = [] if tag in ALLOWED_TAGS else [f"<{tag}>"]
        for name, value in attrs:
            if name.startswith("on"):
                problems.append(f"{name}=")
            elif name in ("href", "src") and value and ":" in value.split("/", 1)[0]:
                scheme = value.split(":", 1)[0].strip().lower()
                if scheme not in URL_SCHEMES:
                    problems.append(f"{scheme}:")
        removed += [problem for problem in problems if problem not in removed]
    return removed


def sanitize(html: str) -> str:
    """Return ``html`` with only safe tags and attributes left (no script, handlers or javascript: URLs)."""
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        allowed_classes=ALLOWED_CLASSES,
        url_schemes=URL_SCHEMES,
        link_rel="noopener noreferrer",
    )


_converters = threading.local()


def converter() -> markdown_lib.Markdown:
    """Return this thread's Markdown converter, made once: building one (loading its extensions)
    cost more than converting an answer's message. Python-Markdown's own advice for many
    documents; ``reset()`` clears what the last conversion left, and it is never shared between threads.
    """
    md = getattr(_converters, "md", None)
    if md is None:
        md = _converters.md = markdown_lib.Markdown(
            extensions=MARKDOWN_EXTENSIONS, extension_configs=MARKDOWN_CONFIG, output_format="html"
        )
    return md


# A pure function of its text: an authored text is converted to check it (check_markup) and again to store
# it rendered (render_stored_markup), in the same save or load; the memo makes that one conversion.
@functools.lru_cache(maxsize=4096)  # every text of the shipped lessons, with room
def convert_markdown(text: str) -> str:
    """Return Markdown (its {{calc ...}} numbers filled in) as HTML, not yet sanitised."""
    return converter().reset().convert(text)


def render_markdown(text: str, where: str = "") -> SafeString:
    """Return sanitised HTML for authored Markdown, with its {{calc ...}} numbers computed.

    ``where`` names the text (a section's title) in its tables' labels (wrap_tables).
    """
    if not text:
        return mark_safe("")
    expanded = markdown_text(text)
    # smarty's curly quotes are inline patterns, which never run inside code spans or fenced code.
    html = convert_markdown(expanded)
    # Wide tables and code scroll inside a keyboard-focusable region instead of widening the page.
    html = wrap_tables(sanitize(html), where).replace(CODE_BLOCK, FOCUSABLE_CODE_BLOCK)
    return mark_safe(html)  # noqa: S308 - sanitised just above; the wrapper is ours


def markdown_text(text: str) -> str:
    """Return authored Markdown with its {{calc ...}} numbers filled in (a broken one says so in place)."""
    try:
        return expand_calcs(text or "")
    except MarkupError as error:
        message = f"[number unavailable: {error}]"
        return CALC_PATTERN.sub(lambda _m: message, text)


def plain_text(html: str) -> str:
    """Return rendered HTML as the text a reader sees: tags dropped, "&amp;" read as "&" (escaped again where shown)."""
    return unescape(strip_tags(html))


def truncate_words(text: str, count: int) -> str:
    """Return the first ``count`` words of ``text``, and "…" when there were more (a comma or stop before it dropped)."""
    words = text.split()
    if len(words) <= count:
        return " ".join(words)
    return " ".join(words[:count]).rstrip(",;:.") + "…"


def render_inline(text: str) -> SafeString:
    """Return sanitised inline HTML (no surrounding paragraph) for short authored strings."""
    html = str(render_markdown(text)).strip()
    if html.startswith("<p>") and html.endswith("</p>") and html.count("<p>") == 1:
        html = html[3:-4]
    return mark_safe(html)  # noqa: S308 - produced by render_markdown


# A challenge prompt shows drawn inputs as {name} fields. Only these format specs are allowed:
# none, thousands separators, and fixed or percent with one digit of precision. Widths, fills
# and nested fields are refused, so a field can never pad the page to megabytes.
PROMPT_SPEC = re.compile(r",?(?:\.\d[f%])?")
PLURAL_SPEC = "s"  # {name:s}: "s" unless the value is 1, so "{cards} card{cards:s}" reads "1 card", "4 cards"


def prompt_fields(prompt: str) -> list[tuple[str, str, str | None, str]]:
    """Return (literal text before, field name, conversion, format spec) for each part of a prompt.

    Raise MarkupError for a brace that is not a field.
    """
    try:
        return [
            (literal, name, conversion, spec or "")
            for literal, name, spec, conversion in string.Formatter().parse(prompt)
        ]
    except ValueError as error:
        raise MarkupError(f"a brace that is not a field ({error}); write {{{{ and }}}} for a literal brace") from None


def check_prompt(prompt: str, names: Collection[str]) -> None:
    """Raise MarkupError unless every {field} of a challenge prompt names one of ``names`` with a safe format."""
    for _literal, name, conversion, spec in prompt_fields(prompt):
        if name is None:
            continue
        shown = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        if name not in names:
            known = ", ".join(sorted(names)) or "none"
            raise MarkupError(f"{shown}: '{name}' is not a parameter in this challenge's inputs or ranges ({known})")
        if conversion:
            raise MarkupError(f"{shown} converts its value with '!{conversion}'; write {{{name}}}")
        if spec != PLURAL_SPEC and not PROMPT_SPEC.fullmatch(spec):
            raise MarkupError(
                f"{shown} has the format '{spec}'; a field may only be written {{{name}}}, {{{name}:,}}, "
                f"{{{name}:.2f}} or {{{name}:.0%}} (one digit of precision, no width or fill), "
                f"or {{{name}:s}} for the s of a plural, as in card{{{name}:s}}"
            )


def fill_prompt(prompt: str, values: Mapping[str, float | int | bool | None]) -> str:
    """Return a challenge prompt with its {name} fields replaced by ``values``.

    Checked again here for rows saved before prompts were validated: an unsafe format is
    dropped (the number is written plainly), an unknown field is shown as written, and a
    prompt with a stray brace is shown as written.
    """
    # {{calc ...}} numbers first: the field parser would read their double braces as one literal brace.
    prompt = markdown_text(prompt)
    try:
        parts = prompt_fields(prompt)
    except MarkupError:
        return prompt
    out = []
    for literal, name, conversion, spec in parts:
        out.append(literal)
        if name is None:
            continue
        if name not in values or conversion:
            out.append("{" + name + "}")
        else:
            out.append(prompt_value(values[name], spec))
    return "".join(out)


def prompt_value(value, spec: str) -> str:
    """Return one prompt field: a number in its safe ``spec``, a plural's "s", else the number as the calculators write it.

    Inputs may be written as text ("8"), and a format can still fail on a number (a percent of
    a huge integer): neither may break the page, so the value is then written plainly.
    """
    if spec == PLURAL_SPEC:
        return "" if value == 1 or value == "1" else "s"
    if isinstance(value, str):
        return value
    if spec and PROMPT_SPEC.fullmatch(spec) and isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return format(value, spec)
        except (ValueError, OverflowError):
            pass
    return number(value)


# The authored Markdown of each content model, stored beside its HTML as ``<field>_html``,
# and how it is shown: a block, inline (no surrounding paragraph), a list of blocks (hints),
# or a challenge prompt (filled with its fixed inputs; one with ranges is drawn per learner,
# so ``drawn_prompt`` renders it on each request instead).
STORED_MARKDOWN = {
    "Lesson": {"summary": "block"},
    "Section": {"body": "block"},
    "DeepDive": {"prompt": "inline", "context": "block", "hints": "list"},
    "Choice": {"text": "inline", "feedback": "block"},
    "Walkthrough": {"intro": "block"},
    "Step": {"body": "block", "hints": "list", "explanation": "block"},
    "Challenge": {"prompt": "prompt", "hints": "list", "explanation": "block"},
    "OpenQuestion": {"prompt": "inline"},
    "ChecklistPoint": {"text": "inline"},
}


def render_stored_markup(row, fields: Mapping[str, str] | None = None) -> list[str]:
    """Set a content row's ``<field>_html`` attributes from its authored Markdown; return their names.

    The one place stored HTML is made: the content models' save() calls it (so the admin,
    load_content, the shell and data migrations all refresh it), and so does the migration
    that filled the rows saved before. Numbers asked of the calculators are computed here too.
    """
    names = []
    fields = STORED_MARKDOWN[type(row).__name__] if fields is None else fields
    for name, kind in fields.items():
        value = getattr(row, name)
        if kind == "list":
            html = [str(render_markdown(item)) for item in value or [] if isinstance(item, str)]
        elif kind == "inline":
            html = str(render_inline(value or ""))
        elif kind == "prompt":
            inputs = row.inputs if isinstance(row.inputs, dict) else {}
            html = "" if row.ranges else str(render_markdown(fill_prompt(value or "", inputs)))
        else:
            html = str(render_markdown(value or "", where=getattr(row, "title", "") or ""))
        setattr(row, f"{name}_html", html)
        names.append(f"{name}_html")
    return names


def drawn_prompt(challenge, inputs: dict) -> SafeString:
    """Render a challenge prompt with the learner's drawn (or fixed) inputs written in.

    A prompt with fixed inputs was rendered when it was saved; one with ranges shows numbers
    drawn for this learner, so it is the one authored text rendered on each request.
    """
    if not challenge.ranges:
        return mark_safe(challenge.prompt_html)  # noqa: S308 - sanitised by lessons.markup when saved
    return render_markdown(fill_prompt(challenge.prompt, {**challenge.inputs, **inputs}))
