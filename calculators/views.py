"""HTML pages of the calculators: the list and one page per calculator (htmx-enhanced)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from calculators.calculator import Calculator, Result
from calculators.formatting import input_text, value_text
from calculators.forms import CalculatorForm
from calculators.registry import CALCULATORS, get_calculator
from interview.views import bad_input_status
from lessons.markup import render_markdown


@require_safe
def index(request: HttpRequest) -> HttpResponse:
    return render(request, "calculators/index.html", {"calculators": CALCULATORS.values()})


@require_safe
@vary_on_headers("HX-Request")
def detail(request: HttpRequest, slug: str) -> HttpResponse:
    try:
        calculator = get_calculator(slug)
    except KeyError:
        raise Http404(f"No calculator called “{slug}”.") from None
    form = CalculatorForm(calculator, request.GET)
    form.is_valid()
    current = form.current_values()
    # A history restore asks for the whole page even though it comes from htmx.
    fragment = request.htmx and not request.htmx.history_restore_request
    context = {
        "calculator": calculator,
        "form": form,
        "rows": form.rows(),
        "result": _result_context(calculator, form.result),
        "presets": _preset_links(calculator, current),
        "notes": NOTES_HTML[slug],
        "page_url": reverse("calculators:detail", args=[slug]),
        "api_url": reverse("calculator-detail", args=[slug]),
        "api_query": urlencode(current),
        "is_htmx": fragment,
    }
    template = "calculators/_detail_result.html" if fragment else "calculators/detail.html"
    return render(request, template, context, status=200 if form.result is not None else bad_input_status(fragment))


def _result_context(calculator: Calculator, result: Result | None) -> dict | None:
    if result is None:
        return None
    outputs = [
        {
            "name": output.name,
            "label": output.label,
            "unit": output.unit,
            "value": result.outputs[output.name],
            "text": value_text(result.outputs[output.name], output.unit),
            "is_check": output.is_check,
            "check_text": (output.yes if result.outputs[output.name] else output.no) if output.is_check else "",
        }
        for output in calculator.outputs
    ]
    headline = calculator.output(calculator.headline)
    chart = calculator.draw(result)
    return {
        "outputs": outputs,
        "steps": result.steps,  # each with .label, .expression and .text
        "chart": chart,
        "chart_rows": [{"head": row[0], "cells": row[1:]} for row in chart.table.rows] if chart else [],
        "chart_svg": mark_safe(chart.svg) if chart else "",  # noqa: S308 - every text node is escaped in charts.py
        "status": f"{headline.label}: {value_text(result.outputs[headline.name], headline.unit)}",
    }


def _preset_links(calculator: Calculator, current: dict[str, str]) -> list[dict[str, str]]:
    """Return each preset as a link that keeps the learner's other inputs.

    Each query is urlencode({**current, **preset}): the learner's inputs are encoded once, not once per
    preset (encoding them for each of nine presets cost a tenth of the page), the presets' own when this
    module loads (PRESET_PAIRS).
    """
    pairs = {name: urlencode({name: value}) for name, value in current.items()}
    return [
        {"label": preset.label, "query": "&".join({**pairs, **own}.values())}
        for preset, own in zip(calculator.presets, PRESET_PAIRS[calculator.slug], strict=True)
    ]


def _notes_html(notes: tuple[str, ...]) -> SafeString:
    """Return a calculator's notes (Markdown paragraphs) as sanitised HTML."""
    return mark_safe("".join(render_markdown(note) for note in notes))  # noqa: S308 - each part is sanitised


# The notes change only with the code, so they are rendered once, when this module loads.
NOTES_HTML = {slug: _notes_html(calculator.notes) for slug, calculator in CALCULATORS.items()}
# Each preset's own values, encoded as name=value pairs (_preset_links); they too change only with the code.
PRESET_PAIRS = {
    slug: [
        {name: urlencode({name: input_text(value)}) for name, value in preset.values.items()}
        for preset in calculator.presets
    ]
    for slug, calculator in CALCULATORS.items()
}
