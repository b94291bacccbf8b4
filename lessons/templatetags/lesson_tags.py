"""Template helpers for lessons: safe Markdown, numbers with units, diagrams, drawn prompts."""

from __future__ import annotations

from django import template
from django.utils.safestring import SafeString, mark_safe

from calculators.formatting import amount, number, tolerance_text
from lessons import diagram
from lessons.markup import fill_prompt, render_inline, render_markdown
from lessons.number_entry import converts_units

register = template.Library()


@register.filter
def md_inline(text: str) -> SafeString:
    """Render Markdown made for one answer (an answer's message); authored content is stored rendered."""
    return render_inline(text or "")


# Numbers on lesson pages are written as the calculators write them: one formatter for the site.
register.filter("number", number)
register.filter("amount", amount)  # {{ value|amount:unit }}: "1 request", "3 requests"
register.filter("converts_units", converts_units)  # {% if unit|converts_units %}: "393 MB" is accepted for a KiB


@register.filter
def tolerance(item) -> str:
    """Return how close a graded number must be, in words: "within 1%"."""
    return tolerance_text(item.tolerance or 0, item.tolerance_kind, item.unit)


@register.simple_tag
def drawn_prompt(challenge, inputs: dict) -> SafeString:
    """Render a challenge prompt with the learner's drawn (or fixed) inputs written in.

    A prompt with fixed inputs was rendered when it was saved; one with ranges shows numbers
    drawn for this learner, so it is the one authored text rendered on each request.
    """
    if not challenge.ranges:
        return mark_safe(challenge.prompt_html)  # noqa: S308 - sanitised by lessons.markup when saved
    return render_markdown(fill_prompt(challenge.prompt, {**challenge.inputs, **inputs}))


@register.inclusion_tag("lessons/_diagram.html")
def walkthrough_diagram(view) -> dict:
    components, connections = diagram.normalize(view.diagram["components"], view.diagram["connections"])
    uid = f"diagram-{view.walkthrough.key}-{view.current}"
    title = f"{view.walkthrough.title}, step {view.current} of {view.total}: {view.step.step.title}"
    layout = view.walkthrough.diagram
    if not diagram.covers(layout, components, connections):  # a row changed without save(): lay it out now
        every = diagram.normalize(*view.all_parts)
        layout = diagram.lay_out(*every)
    svg = diagram.render_svg(layout, components, connections, title, uid)
    text = diagram.describe(components, connections)
    return {"svg": mark_safe(svg), "text": text, "uid": uid, "title": title}  # noqa: S308
