"""The site's template engine: Jinja2, with the filters and functions its pages use.

The site's pages live in ``jinja2/`` and render through Jinja2, which compiles a template to
Python: a lesson page of deep dives cost about 4 µs a variable in Django's engine, several
times what the view's own work did. The admin (and its overrides in ``templates/``) keeps
Django's engine; settings.TEMPLATES lists Jinja2 first, so a page's name is looked up here first.

Every filter is the one function the rest of the code uses (calculators.formatting for numbers,
interview.dates for times, lessons.markup for Markdown), registered under the name the
templates write. Django's backend adds ``request``, ``csrf_input`` and ``csrf_token`` to each
page's context and runs the context processors in settings.
"""

from __future__ import annotations

from django.contrib.humanize.templatetags.humanize import naturaltime
from django.template import defaultfilters
from django.templatetags.static import static
from django.urls import reverse
from django_htmx.jinja import htmx_script
from jinja2 import ChainableUndefined, Environment

from calculators.formatting import amount, number, tolerance_text
from interview.dates import until, when
from lessons.markup import drawn_prompt, render_inline
from lessons.number_entry import converts_units, counts_things


def url(name: str, *args, **kwargs) -> str:
    """``{{ url("lesson", slug) }}``: Django's reverse, with positional or keyword arguments."""
    return reverse(name, args=args or None, kwargs=kwargs or None)


def md_inline(text: str | None) -> str:
    """``{{ answer.message|md_inline }}``: Markdown made for one answer; authored content is stored rendered."""
    return render_inline(text or "")


def right_answers(item) -> str:
    """``{{ challenge|right_answers }}``: how close a graded number must be, as a sentence.

    "Right answers are within 1% of the exact one." A count graded within half a unit ("± 0.5 requests") takes
    only the exact whole number, which is said first: a learner read the half request as a puzzle.
    """
    words = tolerance_text(item.tolerance or 0, item.tolerance_kind, item.unit)
    if item.tolerance_kind == "nominal" and 0 < (item.tolerance or 0) <= 0.5 and counts_things(item.unit):
        return f"Right answers are the exact count, a whole number ({words})."
    return f"Right answers are {words} of the exact one."


def ratio(value, of, scale=100) -> int | str:
    """``{{ ratio(points, max_points) }}``: value / of × scale, rounded; Django's ``widthratio``.

    A zero ``of`` gives 0 and a missing value "", as widthratio does.
    """
    try:
        value, of = float(value), float(of)
    except (TypeError, ValueError):
        return ""
    if of == 0:
        return 0
    return round(value / of * scale)


def pluralize(value, suffixes: str = "s") -> str:
    """Django's ``pluralize``: ``{{ n|pluralize }}``, ``{{ n|pluralize("y,ies") }}``."""
    return defaultfilters.pluralize(value, suffixes)


def linebreaks(value) -> str:
    """Django's ``linebreaks``, escaping the text first: paragraphs and <br> from plain text."""
    return defaultfilters.linebreaks_filter(value, autoescape=True)


def linebreaksbr(value) -> str:
    """Django's ``linebreaksbr``, escaping the text first."""
    return defaultfilters.linebreaksbr(value, autoescape=True)


def environment(**options) -> Environment:
    # {{ errors.dd }} with no errors is empty, as in Django's engine, with DEBUG on or off (Django's backend
    # passes DebugUndefined or Undefined here: the first would print "{{ errors }}" on a page).
    options["undefined"] = ChainableUndefined
    options.pop("autoescape", None)  # always on: Django's backend sets it too, said here where it is seen
    env = Environment(autoescape=True, **options)
    env.globals |= {
        "url": url,
        "static": static,
        "htmx_script": htmx_script,
        "ratio": ratio,
        "drawn_prompt": drawn_prompt,
    }
    env.filters |= {
        "number": number,
        "amount": amount,  # {{ value|amount(unit) }}: "1 request", "3 requests"
        "md_inline": md_inline,
        "right_answers": right_answers,
        "converts_units": converts_units,
        "when": when,  # {{ moment|when }}, {{ moment|when("lines") }}, {{ moment|when("ago") }}
        "pluralize": pluralize,
        "linebreaks": linebreaks,
        "linebreaksbr": linebreaksbr,
        "urlencode": defaultfilters.urlencode,
        "floatformat": defaultfilters.floatformat,
        "truncatechars": defaultfilters.truncatechars,
        "truncatewords": defaultfilters.truncatewords,
        "until": until,  # {{ moment|until }}: "3 hours, 30 minutes", "under a minute"
        "capfirst": defaultfilters.capfirst,
        "naturaltime": naturaltime,
    }
    return env
