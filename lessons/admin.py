"""Authoring in the admin: lessons, sections, deep dives with inline choices, walkthroughs with inline steps."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable

from django import forms
from django.contrib import admin, messages
from django.contrib.admin.widgets import AutocompleteSelect
from django.core.exceptions import NON_FIELD_ERRORS, BadRequest, PermissionDenied, ValidationError
from django.db import models, transaction
from django.forms.models import BaseInlineFormSet
from django.forms.utils import pretty_name
from django.http import Http404, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import urlencode
from django.utils.safestring import mark_safe
from django.utils.text import capfirst

from calculators.formatting import number
from calculators.registry import CALCULATORS, CalculatorInputError
from interview.json_input import JSONFormField
from lessons import content_cache
from lessons.analysis import analyse
from lessons.content.export import lesson_to_data
from lessons.content.validate import (
    MAX_CHECKLIST,
    MIN_CHECKLIST,
    Checker,
    ContentError,
    all_problems,
    check_follow_ups,
    giveaway_warnings,
    hint_list,
    parse_challenge,
    parse_walkthrough,
    reachable,
    repeated_points,
    sentence,
    step_part,
    too_large,
    validate_ask,
)
from lessons.markup import MarkupError, check_markup
from lessons.models import (
    Answer,
    Challenge,
    ChecklistPoint,
    Choice,
    DeepDive,
    Interview,
    InterviewItem,
    Learner,
    Lesson,
    OpenQuestion,
    Section,
    Step,
    Topic,
    Track,
    Walkthrough,
)
from lessons.number_entry import unit_options

# JSON fields refuse NUL characters and absurd nesting with a form error, not a database error.
JSON_FORM_FIELDS = {models.JSONField: {"form_class": JSONFormField}}
MARKDOWN_FIELDS = ("summary", "body", "prompt", "context", "feedback", "intro", "explanation", "text")


def calculator_choices() -> list[tuple[str, str]]:
    return [("", "None: no number is asked")] + [(c.slug, f"{c.title} ({c.slug})") for c in CALCULATORS.values()]


def output_choices(slug: str | None) -> list:
    """Return the outputs one may ask for: the calculator's, or every calculator's grouped when none is chosen."""

    def options(calculator):
        return [(o.name, f"{o.label} ({o.name}, {o.unit})") for o in calculator.outputs if not o.is_check]

    if slug in CALCULATORS:
        return [("", "Choose an output")] + options(CALCULATORS[slug])
    return [("", "Choose a calculator, then an output")] + [(c.title, options(c)) for c in CALCULATORS.values()]


def answer_units(slug: str | None, output: str | None) -> dict[str, float] | None:
    """Return the units the chosen output can be asked in, each with its factor; None until both are chosen."""
    found = next((o for o in CALCULATORS[slug].outputs if o.name == output), None) if slug in CALCULATORS else None
    return unit_options(found.unit) if found is not None and not found.is_check else None


class OutputSelect(forms.Select):
    """The output select: choosing one offers its units in the unit field after it (htmx; without it, on save).

    A hidden ``<output name>-of`` field after it names the calculator its outputs belong to: choosing that
    calculator again (arrowing through the calculator select) then resets nothing.
    """

    def __init__(self, calculator: str | None = None, **kwargs):
        super().__init__(**kwargs)
        self.calculator = calculator  # None: the hidden field is sent apart (out of band)

    def get_context(self, name, value, attrs):
        attrs = {**(attrs or {}), "hx-get": reverse("admin:lessons_answer_units"), "hx-trigger": "change",
                 "hx-include": "closest fieldset", "hx-target": "next .answer-unit", "hx-swap": "outerHTML"}  # fmt: skip
        return super().get_context(name, value, attrs)

    def render(self, name, value, attrs=None, renderer=None):
        select = super().render(name, value, attrs, renderer)
        return select if self.calculator is None else select + output_of(name, self.calculator)


def output_of(name: str, slug: str, oob: bool = False) -> str:
    """Return the hidden field that names the calculator the output select ``name`` offers the outputs of."""
    return format_html(
        '<input type="hidden" name="{0}-of" value="{1}" id="id_{0}-of"{2}>',
        name,
        slug or "",
        mark_safe(' hx-swap-oob="true"') if oob else "",  # noqa: S308 - a constant
    )


def own_unit(options: dict[str, float]) -> str:
    """Return the unit the output itself is in (factor 1): preselected, so an author is not asked µs for ms."""
    return next((unit for unit, factor in options.items() if factor == 1.0), next(iter(options)))


def unit_widget(options: dict[str, float] | None, saved: str = "") -> forms.Widget:
    """Return the answer unit's widget: a select of the output's units, or a text box until an output is chosen."""
    attrs = {"class": "answer-unit"}
    if options is None:
        return forms.TextInput(attrs=attrs)
    choices = [(unit, unit) for unit in options]
    if saved and saved not in options:
        choices.append((saved, f"{saved} (as saved)"))
    return forms.Select(choices=choices, attrs=attrs)


class CalculatorSelect(forms.Select):
    """The calculator select: choosing one narrows the output select after it and shows the calculator's
    parameter tables (htmx; without it, on save). ``tables`` names the form's parameter fields (inputs, ranges).
    """

    def __init__(self, tables: tuple[str, ...] = ("inputs",), **kwargs):
        super().__init__(**kwargs)
        self.tables = tables

    def get_context(self, name, value, attrs):
        url = reverse("admin:lessons_calculator_outputs") + "?" + urlencode({"tables": ",".join(self.tables)})
        # A short pause first: arrowing through the select (each arrow key is a change) asks once, at the end.
        attrs = {**(attrs or {}), "hx-get": url, "hx-trigger": "change delay:400ms", "hx-target": "next select",
                 "hx-swap": "outerHTML", "hx-include": "closest fieldset"}  # fmt: skip
        return super().get_context(name, value, attrs)


def typed_number(raw: str) -> int | float | str:
    """Return what an author typed as a number; text that is none stays text, for the validator to refuse by name."""
    for kind in (int, float):
        try:
            return kind(raw)
        except ValueError:
            pass
    return raw


class ParameterTable(forms.Widget):
    """A numeric question's inputs (or ranges) as a table of the calculator's parameters, not JSON.

    Each row shows a parameter's label, unit, default and bounds; "inputs" takes a fixed value (empty: the
    default), "ranges" a min, max and step for a number drawn per learner (empty: not drawn). The widget
    hands the field the same JSON a content file holds, so the shared validator checks it.
    """

    def __init__(self, calculator, mode: str, oob: bool = False):
        super().__init__()
        self.calculator, self.mode, self.oob = calculator, mode, oob
        self.parts = ("",) if mode == "inputs" else ("min", "max", "step")

    def sub_name(self, name: str, parameter: str, part: str) -> str:
        return f"{name}__{parameter}" + (f"__{part}" if part else "")

    def value_from_datadict(self, data, files, name):
        if self.calculator is None:
            return data.get(name) or "{}"  # JSON until a calculator is chosen; empty or left out: none
        names = [self.sub_name(name, p.name, part) for p in self.calculator.parameters for part in self.parts]
        if name in data and not any(sub in data for sub in names):
            return data[name]  # JSON from a form shown before the calculator was chosen
        found = {}
        for p in self.calculator.parameters:
            raws = [str(data.get(self.sub_name(name, p.name, part), "")).strip() for part in self.parts]
            if any(raws):
                values = [typed_number(raw) if raw else None for raw in raws]
                found[p.name] = values[0] if self.mode == "inputs" else values
        return json.dumps(found)

    def value_omitted_from_data(self, data, files, name):
        return False

    def render(self, name, value, attrs=None, renderer=None):
        """Return the table (JSON text until a calculator is chosen) in a box htmx replaces when it changes."""
        if self.calculator is None:  # empty rather than a bare {}; what was typed, even refused, shows as typed
            typed = "" if value in ("{}", {}) else value
            attrs = {"rows": 2, "cols": 60, "placeholder": "Choose a calculator: its parameters show here as a table."}
            inner = forms.Textarea(attrs=attrs).render(name, typed, {"id": f"id_{name}"})
        else:
            inner = self.table(name, value)
        oob = mark_safe(' hx-swap-oob="true"') if self.oob else ""
        return format_html(
            '<div id="id_{}-params" class="parameter-field" role="region" tabindex="0" aria-label="{}"{}>{}</div>',
            name, "Calculator parameters: drawn ranges" if self.mode == "ranges" else "Calculator parameters: values",
            oob, inner,
        )  # fmt: skip

    def table(self, name, value) -> str:
        try:
            current = json.loads(value) if isinstance(value, str) else (value or {})
        except (ValueError, RecursionError):  # not JSON, or nested too deeply (the field says so)
            current = {}
        current = current if isinstance(current, dict) else {}
        heads = ("Value (empty: default)",) if self.mode == "inputs" else ("Draw from", "to", "in steps of")
        rows = []
        for p in self.calculator.parameters:
            given = current.get(p.name)
            given = [given] if self.mode == "inputs" else (given if isinstance(given, list) else [None] * 3)
            cells = format_html_join("", '<td><input type="text" inputmode="decimal" name="{}" id="id_{}" value="{}" '
                                     'aria-label="{} {}" size="8"></td>',
                                     ((self.sub_name(name, p.name, part), self.sub_name(name, p.name, part),
                                       "" if v is None else v, p.label, head)
                                      for part, v, head in zip(self.parts, given, heads)))  # fmt: skip
            rows.append(format_html(
                '<tr><th scope="row">{} <code>{}</code></th><td>{}</td><td>{}</td><td>{} to {}</td>{}</tr>',
                p.label, p.name, p.unit_label or p.unit, number(p.default), number(p.min), number(p.max), cells,
            ))  # fmt: skip
        return format_html(
            '<table class="parameter-table"><thead><tr><th scope="col">Parameter</th><th scope="col">Unit</th>'
            '<th scope="col">Default</th><th scope="col">Accepted</th>{}</tr></thead><tbody>{}</tbody></table>',
            format_html_join("", '<th scope="col">{}</th>', ((h,) for h in heads)),
            format_html_join("", "{}", ((r,) for r in rows)),
        )


class RowsWidget(forms.Widget):
    """A list (hints, slips) edited as rows of fields, one row per entry plus an empty one to add; not JSON.

    Rows whose fields are all empty are dropped. The field receives the file format's JSON, so the
    shared validator checks it; a form posted as JSON (no row fields) is taken as it is.
    """

    parts: tuple[str, ...] = ()

    def row_fields(self, data, name: str) -> list[dict[str, str]]:
        numbers = sorted(
            {int(k.split("__")[1]) for k in data if k.startswith(f"{name}__") and k.split("__")[1].isdigit()}
        )
        return [{part: str(data.get(f"{name}__{n}__{part}", "")).strip() for part in self.parts} for n in numbers]

    def value_from_datadict(self, data, files, name):
        rows = self.row_fields(data, name)
        if name in data and not rows:
            return data[name]
        return json.dumps([self.entry(row) for row in rows if any(row.values())])

    def value_omitted_from_data(self, data, files, name):
        return False

    def render(self, name, value, attrs=None, renderer=None):
        try:
            entries = json.loads(value) if isinstance(value, str) else (value or [])
        except (ValueError, RecursionError):  # not JSON, or nested too deeply (the field says so)
            entries = []
        entries = [*(entries if isinstance(entries, list) else []), None]  # and an empty row to add one
        rows = format_html_join(
            "", "<li>{}</li>", ((self.render_row(name, n, entry),) for n, entry in enumerate(entries))
        )
        return format_html('<ol class="list-rows">{}</ol>', rows)

    def field(self, name: str, n: int, part: str, label: str, value: str, textarea: bool = False) -> str:
        field_id = f"id_{name}__{n}__{part}"
        if textarea:
            box = format_html('<textarea name="{}__{}__{}" id="{}" rows="2" cols="60">{}</textarea>', name, n, part,
                              field_id, value)  # fmt: skip
        else:
            box = format_html('<input type="text" name="{}__{}__{}" id="{}" value="{}" size="24">', name, n, part,
                              field_id, value)  # fmt: skip
        return format_html('<label for="{}">{}</label> {}', field_id, label, box)


class HintRows(RowsWidget):
    parts = ("text",)

    def entry(self, row: dict) -> str:
        return row["text"]

    def render_row(self, name: str, n: int, hint) -> str:
        return self.field(name, n, "text", f"Hint {n + 1}", hint if isinstance(hint, str) else "", textarea=True)


class SlipRows(RowsWidget):
    """A slip: a factor of the expected answer, or inputs changed ("bytes_per_value=1, layers=40"), and its feedback."""

    parts = ("factor", "inputs", "feedback")

    def entry(self, row: dict) -> dict:
        slip: dict = {"feedback": row["feedback"]}
        if row["factor"]:
            slip["factor"] = typed_number(row["factor"])
        if row["inputs"]:
            pairs = [pair.split("=", 1) for pair in row["inputs"].split(",")]
            slip["inputs"] = {k.strip(): typed_number(v.strip()) for k, v in pairs} if all(len(p) == 2 for p in pairs) \
                else row["inputs"]  # fmt: skip
        return slip

    def render_row(self, name: str, n: int, slip) -> str:
        slip = slip if isinstance(slip, dict) else {}
        changed = slip.get("inputs")
        changed = ", ".join(f"{k}={v}" for k, v in changed.items()) if isinstance(changed, dict) else ""
        return format_html(
            "{} {} {}",
            self.field(name, n, "factor", f"Slip {n + 1}: expected ×", slip.get("factor", "")),
            self.field(name, n, "inputs", "or with inputs changed (name=value, …)", changed),
            self.field(name, n, "feedback", "Feedback", slip.get("feedback", ""), textarea=True),
        )


# What a numeric question needs (a step's once it names a calculator), said beside each field left empty.
QUESTION_NEEDS = {
    "calculator": "A challenge asks for a number: choose the calculator that computes it.",
    "output": "Choose the number the learner is asked for.",
    "unit": "Choose the unit the learner answers in.",
    "tolerance": "Give a tolerance above zero: 0.01 means answers within 1% are right.",
}


class DiagramRows(RowsWidget):
    """Diagram rows: text boxes named by ``labels`` (part, label with {n} for the row number)."""

    labels: tuple[tuple[str, str], ...] = ()

    def entry(self, row: dict) -> dict:
        return dict(row)

    def render_row(self, name: str, n: int, entry) -> str:
        entry = entry if isinstance(entry, dict) else {}
        return format_html_join(
            " ",
            "{}",
            ((self.field(name, n, part, label.format(n=n + 1), entry.get(part, "")),) for part, label in self.labels),
        )


class ComponentRows(DiagramRows):
    """A diagram part: its key (connections name it) and its label. Graphviz places it (lessons.diagram)."""

    parts = ("key", "label")
    labels = (("key", "Part {n}: key"), ("label", "Label"))

    def entry(self, row: dict) -> dict:
        return {**row, "col": 0, "row": 0}


class ConnectionRows(DiagramRows):
    """A diagram connection: the keys of the parts it joins (added in this step or before) and its label."""

    parts = ("from", "to", "label")
    labels = (("from", "Connection {n}: from (key)"), ("to", "to (key)"), ("label", "Label"))


PARAMETER_HELP = {
    "inputs": "The calculator's parameters once it is chosen: a value fixes one; empty keeps its default.",
    "ranges": "Numbers drawn per learner: give a parameter from, to and a step; leave its row empty to keep it fixed.",
}


class NumberQuestionFormMixin:
    """A numeric question's calculator and output are chosen from selects, not typed."""

    always_asks = False  # a challenge always asks for a number; a step only once it names a calculator

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "calculator" not in self.fields:
            return
        self.fields["hints"].widget = HintRows()
        self.fields["slips"].widget = SlipRows()
        slug = self.data.get(self.add_prefix("calculator")) if self.is_bound else self.instance.calculator
        self.fields["calculator"] = forms.ChoiceField(
            choices=calculator_choices(), required=False,
            widget=CalculatorSelect(tuple(n for n in ("inputs", "ranges") if n in self.fields)),
            help_text="The calculator that computes the expected answer.",
        )  # fmt: skip
        self.fields["output"] = forms.ChoiceField(
            choices=output_choices(slug), required=False, widget=OutputSelect(slug if slug in CALCULATORS else ""),
            help_text="The number the learner is asked for.",
        )  # fmt: skip
        output = self.data.get(self.add_prefix("output")) if self.is_bound else self.instance.output
        options = answer_units(slug, output)
        saved = self.instance.unit if self.instance.output == output else ""
        widget = unit_widget(options, saved)
        if options is None:
            self.fields["unit"].widget = widget
            self.fields["unit"].help_text = "Choose the output: the units it can be shown in are offered here."
        else:
            self.fields["unit"] = forms.ChoiceField(
                choices=widget.choices, widget=widget, required=False,
                help_text="The unit the learner answers in; the answer is converted to it.",
                error_messages={"invalid_choice": f"Ask for {output} in one of: {', '.join(options)}."},
            )  # fmt: skip
        for name in ("inputs", "ranges"):
            if name in self.fields:
                self.fields[name].widget = ParameterTable(CALCULATORS.get(slug), name)
                self.fields[name].help_text = PARAMETER_HELP[name]
        self.fields["slips"].help_text = (
            "Predictable wrong answers, one a row: a factor off the answer (0.001 for MB given as GB) or changed "
            "inputs, with the feedback a learner who made that slip sees."
        )
        self.fields["tolerance"].help_text = "How close counts as right: 0.01 is within 1% (relative)."
        self.fields["tolerance_kind"].label = "Tolerance measured"
        self.fields["partial_band"].label = "Half-credit factor"
        self.fields[
            "partial_band"
        ].help_text = "E.g. 2: answers between half and twice the answer earn half. Empty: none."
        if slug in CALCULATORS:
            names = ", ".join(o.name for o in CALCULATORS[slug].outputs if not o.is_check)
            message = f"Output '%(value)s' is not one of the outputs of calculator '{slug}' ({names})."
            self.fields["output"].error_messages["invalid_choice"] = message

    def clean(self):
        """Derive the scale from the chosen unit (bytes asked in MB: 1e-6); a unit kept as saved keeps its scale.

        Say beside each empty field what a question that asks for a number needs (QUESTION_NEEDS).
        """
        cleaned = super().clean()
        if "calculator" in self.fields:
            options = answer_units(cleaned.get("calculator"), cleaned.get("output")) or {}
            cleaned["scale"] = self.instance.scale = options.get(cleaned.get("unit"), self.instance.scale)
            if self.always_asks or cleaned.get("calculator"):
                for name, message in QUESTION_NEEDS.items():
                    if cleaned.get(name) in (None, "") and name not in self.errors:
                        self.add_error(name, message)
        return cleaned


class MarkdownCheckMixin:
    """Refuse Markdown whose {{calc ...}} numbers cannot be computed, or that holds HTML removed when shown
    (markup.check_markup), with the reason beside the field."""

    def clean(self):
        cleaned = super().clean()
        for name in MARKDOWN_FIELDS:
            value = cleaned.get(name)
            if isinstance(value, str) and value:
                try:
                    check_markup(value)
                except MarkupError as error:
                    self.add_error(name, sentence(str(error)))
        return cleaned


def filled(cleaned: dict, names: tuple[str, ...]) -> dict:
    """Return the fields ``names`` of a form's cleaned data that hold something, as a content file omits empty ones."""
    return {name: cleaned[name] for name in names if cleaned.get(name) not in (None, "", [], {})}


def ask_data(cleaned: dict, ranges: dict | None = None) -> dict:
    """Return a numeric question's fields in the content-file shape, for the shared validator."""
    ask = filled(cleaned, ("calculator", "inputs", "output", "scale", "unit", "tolerance", "tolerance_kind",
                           "partial_band", "points", "slips"))  # fmt: skip
    if ranges:
        ask["ranges"] = ranges
    return ask


def validator_problems(check: Checker, validate: Callable[[], object]) -> list[ContentError]:
    """Return every problem a content-file validator (lessons.content.validate) finds: none when it passes."""
    try:
        with check.gather():
            validate()
    except ContentError as refused:
        return all_problems(refused)
    return []


def show_problems(form: forms.Form, problems: list[ContentError], item: str, *, skip: set[str] = frozenset()) -> None:
    """Show each validator problem on ``form``: beside the field at fault, named as the form labels it, or above.

    ``item`` is how the checker named the form's row; a part within it (a slip, a diagram part) is named first.
    A field that already shows an error, or is in ``skip``, gets nothing more: the problem would be that error
    again (a field Django refused reaches the validator as missing), or another check reports it.
    """
    taken = set(form.errors) | set(skip)
    for error in problems:
        if error.field in taken:
            continue
        field = error.field if error.field in form.fields else None
        problem = error.problem
        if field:  # the field as the form labels it, not as a content file spells it
            rest = problem.removeprefix(field)
            if rest[:1] in (" ", ":"):
                problem = str(form.fields[field].label or pretty_name(field)) + rest
        part = error.item.removeprefix(item).removeprefix(", ")
        message = sentence(capfirst(f"{part}: {problem}" if part else problem))
        if message not in form.errors.get(field or NON_FIELD_ERRORS, []):
            form.add_error(field, message)


def run_validator(form: forms.Form, check: Checker, validate: Callable[[], object], **options) -> None:
    """Run a content-file validator and show every problem it finds on ``form`` at once (see show_problems)."""
    show_problems(form, validator_problems(check, validate), check.item, **options)


def in_part(item: str, part: str) -> bool:
    """Return whether a problem of ``item`` lies in ``part`` of a checked item (a step, or one of its slips)."""
    return item == part or item.startswith(f"{part}, ")


class ItemPlaceMixin:
    """Where an item sits. Its key is unique within its lesson (links and follow-ups name items by it), and its
    position within its section, whatever the kind: a deep dive at 3 beside a walkthrough at 3 had no order, and
    a content file, a list, never has two items in one place. Each is told beside its own field.

    A saved item stays in its lesson: its section is chosen among its lesson's sections only, since its key,
    its follow-ups and the follow-ups leading to it are checked within one lesson. A new item may go in any
    section, each named "Lesson title · Section title"."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "section" not in self.fields:  # a staff member who may only view the item: the admin shows no fields
            return
        sections = Section.objects.select_related("lesson")  # each option names its lesson
        if self.instance.section_id is not None:
            sections = sections.filter(lesson_id=self.instance.section.lesson_id)
            self.fields["section"].error_messages["invalid_choice"] = (
                "Choose one of this lesson's sections: an item stays in its lesson (its key and follow-ups belong "
                "to it)."
            )
        self.fields["section"].queryset = sections

    def clean(self):
        cleaned = super().clean()
        section, key, order = cleaned.get("section"), cleaned.get("key"), cleaned.get("order")
        if section is not None and key:
            for _name, model, _label in ITEM_MODELS:  # the lesson outline's list of item kinds
                if self.others(model).filter(section__lesson_id=section.lesson_id, key=key).exists():
                    name = model._meta.verbose_name
                    self.add_error("key", f"A {name} in this lesson already uses the key '{key}'; keys name items.")
                    break
        if section is not None and order is not None:
            for _name, model, label in ITEM_MODELS:
                taken = self.others(model).filter(section=section, order=order).first()
                if taken is not None:
                    self.add_error(
                        "order",
                        f"Position {order} of this section is taken by the {label.lower()} “{item_title(taken)}”; "
                        "choose a free one (the lesson's outline lists them).",
                    )
                    break
        return cleaned

    def others(self, model):
        """Return ``model``'s rows, this form's own row left out."""
        rows = model.objects.all()
        return rows.exclude(pk=self.instance.pk) if model is self._meta.model else rows


def item_title(item) -> str:
    """Return how an item is named to an author: its title, else its key."""
    return getattr(item, "title", "") or item.key


class StepForm(NumberQuestionFormMixin, MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = Step
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "components" in self.fields:
            self.fields["components"].widget = ComponentRows()
            self.fields["connections"].widget = ConnectionRows()
            self.fields["components"].help_text = "Build-up steps only: the diagram's boxes this step adds, one a row."
            self.fields[
                "connections"
            ].help_text = "Build-up steps only: the arrows this step adds, between boxes so far."

    def clean(self):
        """Check the number asked as a content file's is, even beside fields Django refused: all in one save."""
        cleaned = super().clean()
        if cleaned.get("calculator"):
            check = Checker("admin", f"step '{cleaned.get('title', '')}'")
            run_validator(self, check, lambda: validate_ask(check, ask_data(cleaned), allow_ranges=False))
        return cleaned


def kept_forms(formset: BaseInlineFormSet) -> list[forms.Form]:
    """Return the inline forms whose rows stay (filled in and not marked for deletion)."""
    return [f for f in formset.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]


def kept_rows(formset: BaseInlineFormSet) -> list[dict]:
    """Return the cleaned data of the inline rows that stay (not marked for deletion)."""
    return [f.cleaned_data for f in kept_forms(formset)]


class RowsFormSet(BaseInlineFormSet):
    """Inline rows checked together (``problems``), reported in one save with Django's own refusal of two rows
    in one position (each model keeps its rows' order unique), which would otherwise stop the check."""

    def problems(self, rows_valid: bool) -> list[str]:
        """Return the rows' problems as a whole (``rows_valid``: no row shows a problem of its own)."""
        return []

    def _construct_form(self, i, **kwargs):
        """Number the empty rows shown after the saved ones (1, 2, 3 after none), as static/js/admin_rows.js
        numbers a row added with "Add another": they would all start at 0 and clash on save. The same numbers
        on a save, so a row sent back with only its number is unchanged, and skipped as empty."""
        if i >= self.initial_form_count():
            highest = max((row.order for row in self.get_queryset()), default=0)  # the rows already read
            kwargs.setdefault("initial", {"order": highest + i - self.initial_form_count() + 1})
        return super()._construct_form(i, **kwargs)

    def clean(self):
        rows_valid = not any(self.errors)  # read before Django marks the rows that share a position
        try:
            super().clean()
        except ValidationError as refused:
            found = refused.messages
        else:
            found = []
        found += self.problems(rows_valid)
        if found:
            raise ValidationError(found)


class StepFormSet(RowsFormSet):
    """Validate the steps together, as a content file is: diagram keys, connections, envelope numbers.

    Every problem shows in one save: each in its step, beside the field at fault; the walkthrough's above the steps.
    """

    def problems(self, rows_valid: bool) -> list[str]:
        walkthrough = self.instance
        rows = sorted(kept_forms(self), key=lambda f: f.cleaned_data.get("order") or 0)
        orders = [f.cleaned_data.get("order") for f in rows]
        # Without every step's own position (Django refuses a missing or repeated one and drops it), the steps'
        # order is unknown: connections, which name parts added by earlier steps, are checked once it is.
        ordered = None not in orders and len(set(orders)) == len(orders)
        steps = []
        for form in rows:
            step = filled(form.cleaned_data, ("title", "body", "hints", "explanation", "components", "connections"))
            if "components" in form.errors:  # refused by Django: its connections are not told again
                step["components"] = "refused"
            if not ordered:
                step.pop("connections", None)
            if form.cleaned_data.get("calculator"):
                step["ask"] = ask_data(form.cleaned_data)
            steps.append(step)
        payload = {"key": walkthrough.key or "walkthrough", "kind": walkthrough.kind, "title": walkthrough.title or "-",
                   "topic": walkthrough.topic_id, "steps": steps}  # fmt: skip
        check = Checker("admin", f"walkthrough '{walkthrough.key}'")
        problems = validator_problems(check, lambda: parse_walkthrough(check, payload))
        in_steps = {f"{check.item}, {step_part(number)}": form for number, form in enumerate(rows, start=1)}
        for item, form in in_steps.items():
            show_problems(form, [e for e in problems if in_part(e.item, item)], item)
        return [
            sentence(f"{e.item}: {e.problem}") for e in problems if not any(in_part(e.item, item) for item in in_steps)
        ]


class ChallengeForm(NumberQuestionFormMixin, ItemPlaceMixin, MarkdownCheckMixin, forms.ModelForm):
    always_asks = True

    class Meta:
        model = Challenge
        fields = "__all__"

    def clean(self):
        """Check the challenge as a content file's is, even beside fields Django refused: all in one save."""
        cleaned = super().clean()
        payload = filled(cleaned, ("key", "title", "prompt", "hints", "explanation"))
        payload["topic"] = cleaned["topic"].slug if cleaned.get("topic") else ""
        payload["ask"] = ask_data(cleaned, cleaned.get("ranges"))
        check = Checker("admin", f"challenge '{cleaned.get('key', '')}'")
        # The prompt's own problems are shown beside it by the mixin and Challenge.clean().
        run_validator(self, check, lambda: parse_challenge(check, payload), skip={"prompt"})
        for name in ("inputs", "ranges"):
            if name in self.errors:  # refused, so not saved: Challenge.clean checks the prompt against the names
                # as written ({tokens} named in a refused range is no unknown parameter), not the saved ones
                raw = self.fields[name].widget.value_from_datadict(self.data, self.files, self.add_prefix(name))
                try:
                    written = json.loads(raw)
                except (TypeError, ValueError, RecursionError):
                    continue
                if isinstance(written, dict):
                    setattr(self.instance, name, written)
        return cleaned


class ChoiceFormSet(RowsFormSet):
    """A deep dive needs at least three choices and exactly one best; follow-ups may not loop back."""

    def save_new_objects(self, commit=True):
        """Django's, saving the added rows in ``Choice.creation_order``: keys that do not rank the choices."""
        self.new_objects = []
        for form in Choice.creation_order(self.extra_forms, self.instance.key):
            if not form.has_changed() or (self.can_delete and self._should_delete_form(form)):
                continue
            self.new_objects.append(self.save_new(form, commit=commit))
            if not commit:
                self.saved_forms.append(form)
        return self.new_objects

    def problems(self, rows_valid: bool) -> list[str]:
        # A row Django refused keeps the fields it accepted: its verdict still counts, so two best choices are
        # told in the same save as an empty feedback. None best is only certain when every verdict was accepted.
        live = kept_rows(self)
        problems = []
        if len(live) < 3:
            problems.append("A deep dive needs at least three choices.")
        verdicts = [data.get("verdict") for data in live]
        best = [number for number, verdict in enumerate(verdicts, start=1) if verdict == "best"]
        if len(best) > 1:
            listed = ", ".join(map(str, best[:-1])) + f" and {best[-1]}"
            problems.append(f"A deep dive needs exactly one best choice; this one has {len(best)} (choices {listed}).")
        elif not best and all(verdicts):
            problems.append("A deep dive needs exactly one best choice; this one has 0.")
        if not rows_valid:  # the follow-ups need every row as accepted
            return problems
        follow_ups = [data["follow_up"] for data in live if data.get("follow_up") is not None]
        if follow_ups and self.instance.section_id:
            lesson_id = self.instance.section.lesson_id
            if any(follow_up.section.lesson_id != lesson_id for follow_up in follow_ups):
                problems.append("A follow-up must be a deep dive of the same lesson.")
                self.mark_follow_ups(lambda follow_up: follow_up.section.lesson_id != lesson_id,
                                     "This deep dive is in another lesson: pick one of this lesson's.")  # fmt: skip
            else:
                check = Checker("admin", f"deep_dive '{self.instance.key}'")
                graph = self.follow_up_graph(lesson_id, follow_ups)
                found = validator_problems(check, lambda: check_follow_ups(check, graph))
                problems += [sentence(f"{e.item}: {e.problem}") for e in found]
                if found:  # beside each choice at fault: it leads to this deep dive, or back to it later
                    key = self.instance.key
                    self.mark_follow_ups(
                        lambda follow_up: follow_up.pk == self.instance.pk or key in reachable(follow_up.key, graph),
                        f"This follow-up leads back to “{key}”, the deep dive it follows: a learner would go round "
                        "in a loop. Pick a deep dive that does not lead back.",
                    )
        return problems

    def mark_follow_ups(self, at_fault, message: str) -> None:
        """Put ``message`` beside the follow-up of each choice whose follow-up is ``at_fault``."""
        for form in kept_forms(self):
            follow_up = form.cleaned_data.get("follow_up")
            if follow_up is not None and at_fault(follow_up):
                form.add_error("follow_up", message)

    def follow_up_graph(self, lesson_id: int, follow_ups: list[DeepDive]) -> dict[str, set[str]]:
        """Return the lesson's follow-up graph by key, with this deep dive's choices as edited (two queries)."""
        keys = dict(DeepDive.objects.filter(section__lesson_id=lesson_id).values_list("pk", "key"))
        if self.instance.pk:
            keys[self.instance.pk] = self.instance.key  # the key as edited in this form
        graph: dict[str, set[str]] = {key: set() for key in keys.values()} | {self.instance.key: set()}
        edges = Choice.objects.filter(deep_dive__section__lesson_id=lesson_id, follow_up__isnull=False)
        for deep_dive_id, follow_up_id in edges.exclude(deep_dive_id=self.instance.pk).values_list(
            "deep_dive_id", "follow_up_id"
        ):
            graph[keys[deep_dive_id]].add(keys[follow_up_id])
        graph[self.instance.key] = {keys[follow_up.pk] for follow_up in follow_ups}
        return graph


class ChoiceForm(MarkdownCheckMixin, forms.ModelForm):
    """A choice's text and feedback are Markdown: checked as every other authored text is."""

    class Meta:
        model = Choice
        fields = "__all__"


class FollowUpSelect(AutocompleteSelect):
    """A choice's follow-up autocomplete: its URL forwards the lesson whose deep dives it offers and the deep
    dive being edited (ChoiceInline.get_formset; DeepDiveAdmin.get_search_results reads them). Django's
    autocomplete.js appends its own fields (term, field_name, ...) to this URL."""

    forwarded: dict[str, int] = {}

    def get_url(self) -> str:
        url = super().get_url()
        return f"{url}?{urlencode(self.forwarded)}" if self.forwarded else url


class FollowUpSearch(forms.Form):
    """What a follow-up autocomplete forwards (FollowUpSelect): the lesson, and the deep dive that cannot follow itself."""

    lesson = forms.IntegerField(min_value=1, max_value=2**63 - 1)  # ids are 64-bit: beyond, the database refuses
    deep_dive = forms.IntegerField(min_value=1, max_value=2**63 - 1, required=False)


class ChoiceInline(admin.StackedInline):
    model = Choice
    form = ChoiceForm
    formset = ChoiceFormSet
    fk_name = "deep_dive"
    extra = 0
    min_num = 3
    fields = ("order", "text", "verdict", "feedback", "follow_up")
    autocomplete_fields = ("follow_up",)

    def formfield_for_foreignkey(self, db_field, request, **kwargs):
        if db_field.name == "follow_up":
            kwargs["widget"] = FollowUpSelect(db_field, self.admin_site, using=kwargs.get("using"))
        return super().formfield_for_foreignkey(db_field, request, **kwargs)

    def get_formset(self, request, obj=None, **kwargs):
        """Offer as follow-ups the deep dives of this deep dive's lesson, itself left out. A new deep dive's lesson
        is its section's when the page was opened with one (the outline's "Add a deep dive"); else every lesson's
        are offered. Another lesson's deep dive is refused on save in any case (ChoiceFormSet)."""
        formset = super().get_formset(request, obj, **kwargs)
        if obj is not None:
            forwarded = {"lesson": obj.section.lesson_id, "deep_dive": obj.pk}
        else:
            section = request.GET.get("section", "")  # the add form's initial section: a number, or ignored
            found = Section.objects.filter(pk=section) if section.isdecimal() else Section.objects.none()
            lesson = found.values_list("lesson_id", flat=True).first()
            forwarded = {"lesson": lesson} if lesson else {}
        formset.form.base_fields["follow_up"].widget.widget.forwarded = forwarded  # inside the add/change links
        return formset


class ExpectedAnswerMixin:
    """A numeric question's expected answer for its inputs, shown beside them (a challenge and each envelope step)."""

    @admin.display(description="Expected answer")
    def expected_answer(self, obj) -> str:
        """Return the expected answer, recomputed as the author edits the question (htmx; without it, on save)."""
        drawn = getattr(obj, "ranges", None)
        text = expected_text(obj.calculator, obj.output, obj.inputs, obj.scale, obj.unit, drawn) if obj else ""
        return format_html(
            '<output class="expected-answer" aria-live="polite" hx-get="{}" '
            # On load too: after a refused save the page shows the inputs as typed, not as saved.
            'hx-trigger="load, change from:closest fieldset, calculator-changed from:closest fieldset" '
            'hx-include="closest fieldset" hx-swap="innerHTML">{}</output>',
            reverse("admin:lessons_challenge_expected"),
            text or "Shown once a calculator and an output are chosen.",
        )


class StepInline(ExpectedAnswerMixin, admin.StackedInline):
    model = Step
    formfield_overrides = JSON_FORM_FIELDS
    form = StepForm
    formset = StepFormSet
    extra = 0
    readonly_fields = ("expected_answer",)
    fieldsets = (
        (None, {"fields": ("order", "title", "body")}),
        ("Diagram (build-up and request-flow walkthroughs)", {"fields": ("components", "connections")}),
        (
            "A graded number (envelope walkthroughs)",
            {
                "fields": (
                    "calculator",
                    "output",
                    "unit",
                    "inputs",
                    "expected_answer",
                    "tolerance",
                    "tolerance_kind",
                    "partial_band",
                    "points",
                    "slips",
                    "hints",
                    "explanation",
                )  # fmt: skip
            },
        ),
    )
    # Which of the two parts a walkthrough of each kind leaves unused (fieldsets' index): it comes folded.
    UNUSED_PART = {"envelope": 1, "build_up": 2, "request_flow": 2}

    def get_fieldsets(self, request, obj=None):
        """Fold the part this kind of walkthrough does not use (a new walkthrough, of no kind yet, shows both)."""
        unused = self.UNUSED_PART.get(getattr(obj, "kind", None))
        return tuple(
            (name, {**options, "classes": ("collapse",)}) if index == unused else (name, options)
            for index, (name, options) in enumerate(self.fieldsets)
        )


class SectionForm(MarkdownCheckMixin, forms.ModelForm):
    """A section, on its own page or on its lesson's: its Markdown checked alike on both.

    A saved section stays in its lesson, as its items do (ItemPlaceMixin): moved, its items' keys and
    follow-ups would cross lessons (a key twice on one page, a follow-up in another lesson).
    """

    class Meta:
        model = Section
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.instance.pk is not None and "lesson" in self.fields:
            self.fields["lesson"].disabled = True
            self.fields["lesson"].help_text = (
                "A section stays in its lesson: its items' keys and follow-ups belong to it. To move its text, "
                "make a section in the other lesson."
            )


class SectionInline(admin.StackedInline):
    """A lesson's sections with their Markdown bodies, edited on the lesson's own page."""

    model = Section
    form = SectionForm
    extra = 0
    fields = (("order", "key", "layer", "minutes"), "title", "body")
    show_change_link = True


class ContentAdmin(admin.ModelAdmin):
    """The admin of an authored content row."""

    save_on_top = True
    formfield_overrides = JSON_FORM_FIELDS


ITEM_MODELS = (("deepdive", DeepDive, "Deep dive"), ("walkthrough", Walkthrough, "Walkthrough"),
               ("challenge", Challenge, "Challenge"), ("openquestion", OpenQuestion, "Open question"))  # fmt: skip


def lesson_outline(lesson: Lesson) -> str:
    """Return the lesson's shape as HTML: each section with its items in order, linking into each (four queries)."""
    sections = list(Section.objects.filter(lesson=lesson).order_by("order"))
    items: dict[int, list] = {section.pk: [] for section in sections}
    for name, model, label in ITEM_MODELS:
        for item in model.objects.filter(section__lesson=lesson).only("pk", "key", "order", "section_id"):
            url = reverse(f"admin:lessons_{name}_change", args=[item.pk])
            items[item.section_id].append((item.order, label, item.key, url, name, item.pk))
    parts = []
    for section in sections:
        rows = sorted(items[section.pk])
        following = (rows[-1][0] + 1) if rows else 1
        adds = format_html_join(
            " · ", '<a href="{}?section={}&amp;order={}">Add {} {}</a>',
            ((reverse(f"admin:lessons_{name}_add"), section.pk, following,
              "an" if label[0].lower() in "aeiou" else "a", label.lower())
             for name, _model, label in ITEM_MODELS),
        )  # fmt: skip
        entries = format_html_join(
            "",
            '<li>{} <a href="{}">{}</a> (position {}) {}</li>',
            ((lbl, url, key, order, move_buttons(lesson, name, pk, f"{lbl} {key}"))
             for order, lbl, key, url, name, pk in rows),
        )  # fmt: skip
        parts.append(format_html(
            '<li><a href="{}">{}</a> ({}, {} min)<ol>{}</ol><p>{}</p></li>',
            reverse("admin:lessons_section_change", args=[section.pk]), section.title, section.get_layer_display(),
            section.minutes, entries, adds,
        ))  # fmt: skip
    if not parts:
        return "Add a section below, save, and its items can be added from here."
    return format_html(
        '<ol class="lesson-outline" id="outline">{}</ol><p class="help">↑ and ↓ move an item at once and reload '
        "this page: save the lesson's other edits first.</p>",
        format_html_join("", "{}", ((p,) for p in parts)),
    )


def move_buttons(lesson: Lesson, name: str, pk: int, what: str) -> str:
    """Return the up and down buttons of an outline entry: they post the lesson form to the move view."""
    return format_html_join(
        " ",
        '<button type="submit" formmethod="post" formnovalidate formaction="{}" aria-label="Move {} {}">{}</button>',
        ((reverse("admin:lessons_lesson_move", args=[lesson.pk, name, pk, direction]), what, direction, arrow)
         for direction, arrow in (("up", "↑"), ("down", "↓"))),
    )  # fmt: skip


def move_item(lesson: Lesson, name: str, pk: int, direction: str) -> bool:
    """Swap an item's position with its neighbour's in the section, as the outline orders them; False at an end."""
    models_by_name = {model_name: model for model_name, model, _label in ITEM_MODELS}
    item = get_object_or_404(models_by_name[name], pk=pk, section__lesson=lesson)
    siblings = sorted(
        (row.order, model_name, row.pk)
        for model_name, model, _label in ITEM_MODELS
        for row in model.objects.filter(section_id=item.section_id).only("pk", "order")
    )
    place = siblings.index((item.order, name, item.pk))
    other = place + (-1 if direction == "up" else 1)
    if not 0 <= other < len(siblings):
        return False
    (mine, _, _), (theirs, other_name, other_pk) = siblings[place], siblings[other]
    with transaction.atomic():
        if mine == theirs:  # a tie across kinds: step past the neighbour instead
            theirs = max(theirs - 1, 0) if direction == "up" else theirs + 1
            models_by_name[name].objects.filter(pk=pk).update(order=theirs)
        else:  # within one kind the positions are unique: park one on a free value first
            models_by_name[other_name].objects.filter(pk=other_pk).update(order=32767)
            models_by_name[name].objects.filter(pk=pk).update(order=theirs)
            models_by_name[other_name].objects.filter(pk=other_pk).update(order=mine)
        content_cache.new_generation()  # update() sends no signal: learners' pages must show the new order
    return True


class InLessonMixin:
    """An item's form links back to its lesson's outline."""

    @admin.display(description="Lesson")
    def in_lesson(self, obj) -> str:
        if obj is None or obj.pk is None:
            return "-"
        lesson = obj.section.lesson
        url = reverse("admin:lessons_lesson_change", args=[lesson.pk])
        return format_html('<a href="{}#outline">Back to the outline of {}</a>', url, lesson.title)


class GiveawayWarningsMixin:
    """Show the lesson's give-away warnings (lessons.content.validate.giveaway_warnings) at the top of the form.

    They warn and never refuse, as when loading a file: a draft can be saved and worked on.
    """

    readonly_fields = ("give_aways",)

    def get_fields(self, request, obj=None):
        return ["give_aways", *(name for name in super().get_fields(request, obj) if name != "give_aways")]

    def lesson_of(self, obj) -> Lesson:
        return obj

    @admin.display(description="Give-aways")
    def give_aways(self, obj) -> str:
        if obj is None or obj.pk is None:
            return "Checked once saved: whether a choice's length or wording, not its content, points at the answer."
        warnings = giveaway_warnings(lesson_to_data(self.lesson_of(obj)))
        if not warnings:
            return "None: no choice gives the answer away by its length or wording."
        return format_html(
            '<ul class="messagelist giveaways">{}</ul>',
            format_html_join("", '<li class="warning">{}</li>', ((w,) for w in warnings)),
        )


def expected_text(slug: str, output: str, inputs, scale: float, unit: str, drawn=None) -> str:
    """Return the expected answer for these inputs (others at the calculator's defaults), or why there is none.

    ``drawn`` (a challenge's ranges) names the parameters drawn per learner: the answer shown is then only
    the one for the defaults, and says so.
    """
    if slug not in CALCULATORS or not output:
        return "Choose a calculator and an output."
    if not isinstance(inputs, dict):
        return "The inputs must name parameters."
    if too_large(inputs):
        return f"The calculator refuses these inputs: {too_large(inputs)}"
    try:
        value = CALCULATORS[slug].evaluate(inputs).outputs.get(output)
    except CalculatorInputError as error:
        return "The calculator refuses these inputs: " + "; ".join(
            f"{k}: {' '.join(v)}" for k, v in error.errors.items()
        )
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return "The output is not a number for these inputs."
    answer = f"{number(value * scale)} {unit}".strip() + " (empty parameters take their defaults)"
    names = sorted(drawn) if isinstance(drawn, dict) else []
    if names:
        answer += f"; each learner draws their own {', '.join(names)}, so their answers differ"
    return answer


class CalculatorFieldsMedia:
    """htmx in the admin, for the calculator and output selects (static/js/admin_calculator.js processes new rows)."""

    class Media:
        js = ("django_htmx/htmx-2.min.js", "js/admin_calculator.js")


@admin.register(Topic)
class TopicAdmin(ContentAdmin):
    list_display = ("name", "slug", "order")
    list_editable = ("order",)
    search_fields = ("name", "slug", "description")
    prepopulated_fields = {"slug": ("name",)}


@admin.register(Track)
class TrackAdmin(ContentAdmin):
    list_display = ("title", "slug", "order")
    prepopulated_fields = {"slug": ("title",)}


class LessonForm(MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = Lesson
        fields = "__all__"


@admin.register(Lesson)
class LessonAdmin(GiveawayWarningsMixin, ContentAdmin):
    form = LessonForm
    list_display = ("title", "track", "kind", "order", "published", "updated_at", "analysis_link")
    list_filter = ("track", "kind", "published")
    list_editable = ("published",)
    search_fields = ("title", "slug", "summary")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [SectionInline]

    readonly_fields = ("give_aways", "outline")

    @admin.display(description="Outline")
    def outline(self, obj) -> str:
        if obj is None or obj.pk is None:
            return "Shown once saved: the sections and their items, each a link to edit it."
        return lesson_outline(obj)

    @admin.display(description="Item analysis")
    def analysis_link(self, obj) -> str:
        return format_html(
            '<a href="{}">How learners answer</a>', reverse("admin:lessons_item_analysis", args=[obj.pk])
        )

    def get_urls(self):
        view = self.admin_site.admin_view(self.item_analysis)
        move = self.admin_site.admin_view(self.move)
        return [
            path("<int:pk>/item-analysis/", view, name="lessons_item_analysis"),
            path("<int:pk>/move/<str:name>/<int:item>/<str:direction>/", move, name="lessons_lesson_move"),
            *super().get_urls(),
        ]

    def move(self, request, pk, name, item, direction):
        """Move an item of the outline up or down (a POST from its arrow button), then show the outline again."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        lesson = get_object_or_404(Lesson, pk=pk)
        if name not in {n for n, _m, _l in ITEM_MODELS} or direction not in ("up", "down"):
            raise Http404("No such item or direction.")
        if not request.user.has_perm(f"lessons.change_{name}"):
            raise PermissionDenied
        if move_item(lesson, name, item, direction):
            self.message_user(request, f"Moved {direction}.", messages.SUCCESS)
        else:
            self.message_user(request, f"Already at the {'top' if direction == 'up' else 'bottom'}.", messages.INFO)
        return redirect(reverse("admin:lessons_lesson_change", args=[pk]) + "#outline")

    def item_analysis(self, request, pk):
        """Show how first answers fall on each of the lesson's items; ?format=csv downloads the same figures."""
        lesson = get_object_or_404(Lesson, pk=pk)
        if not self.has_view_permission(request, lesson):
            raise PermissionDenied
        items = analyse(lesson)
        if request.GET.get("format") == "csv":
            return analysis_csv(lesson, items)
        context = {**self.admin_site.each_context(request), "lesson": lesson, "items": items, "opts": self.opts,
                   "title": f"Item analysis: {lesson.title}"}  # fmt: skip
        return TemplateResponse(request, "admin/lessons/item_analysis.html", context)


def analysis_csv(lesson: Lesson, items) -> HttpResponse:
    """Return the item analysis as CSV: one row per item, then one per choice of each deep dive or checklist point
    of each open question ("picked": learners who ticked it)."""
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="item-analysis-{lesson.slug}.csv"'
    out = csv.writer(response)
    out.writerow(["kind", "item", "choice", "verdict", "first answers", "stopped here", "right", "share right",
                  "discrimination", "picked", "share picked", "common wrong values"])  # fmt: skip
    for item in items:
        wrong = "; ".join(f"{number(value)} ({n})" for value, n in item.wrong_values)
        disc = "" if item.discrimination is None else f"{item.discrimination:.3f}"
        out.writerow([item.kind, item.title, "", "", item.answered, item.stopped_here, item.correct,
                      f"{item.share_correct:.3f}", disc, "", "", wrong])  # fmt: skip
        for choice in item.choices:
            out.writerow([item.kind, item.title, choice.text, choice.verdict, "", "", "", "", "", choice.picked,
                          f"{choice.share:.3f}", ""])  # fmt: skip
    return response


@admin.register(Section)
class SectionAdmin(ContentAdmin):
    form = SectionForm
    list_display = ("title", "lesson", "layer", "order", "minutes")
    list_filter = ("lesson", "layer")
    list_select_related = ("lesson",)
    search_fields = ("title", "body")

    def view_on_site(self, obj):
        return f"{obj.lesson.get_absolute_url()}#{obj.anchor}"


class DeepDiveForm(ItemPlaceMixin, MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = DeepDive
        fields = "__all__"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "hints" in self.fields:  # rows, as a challenge's and a step's hints are; not JSON
            self.fields["hints"].widget = HintRows()

    def clean_hints(self):
        hints = self.cleaned_data.get("hints")
        try:
            return hint_list(Checker("admin", "deep dive"), {"hints": hints if hints is not None else []})
        except ContentError as error:
            raise ValidationError(sentence(capfirst(error.problem))) from None


@admin.register(DeepDive)
class DeepDiveAdmin(InLessonMixin, GiveawayWarningsMixin, ContentAdmin):
    readonly_fields = ("give_aways", "in_lesson")
    form = DeepDiveForm
    list_display = ("key", "topic", "section", "order")
    list_filter = ("topic", "section__lesson")
    list_select_related = ("section__lesson",)
    search_fields = ("key", "prompt")
    inlines = [ChoiceInline]

    def lesson_of(self, obj) -> Lesson:
        return obj.section.lesson

    def get_search_results(self, request, queryset, search_term):
        """Search by key and prompt; a choice's follow-up autocomplete searches the lesson it forwards only,
        the deep dive being edited left out (FollowUpSelect)."""
        queryset, may_have_duplicates = super().get_search_results(request, queryset, search_term)
        if request.GET.get("field_name") == "follow_up" and "lesson" in request.GET:
            forwarded = FollowUpSearch(request.GET)
            if not forwarded.is_valid():
                problems = "; ".join(f"{name}: {' '.join(errors)}" for name, errors in forwarded.errors.items())
                raise BadRequest(f"A follow-up search names its lesson and deep dive by id. {problems}")
            queryset = queryset.filter(section__lesson_id=forwarded.cleaned_data["lesson"])
            if forwarded.cleaned_data["deep_dive"] is not None:
                queryset = queryset.exclude(pk=forwarded.cleaned_data["deep_dive"])
        return queryset, may_have_duplicates


class WalkthroughForm(ItemPlaceMixin, MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = Walkthrough
        fields = "__all__"


@admin.register(Walkthrough)
class WalkthroughAdmin(InLessonMixin, CalculatorFieldsMedia, ContentAdmin):
    readonly_fields = ("in_lesson",)
    form = WalkthroughForm
    list_display = ("title", "kind", "section", "order")
    list_filter = ("kind", "section__lesson")
    list_select_related = ("section__lesson",)
    search_fields = ("title", "key")
    inlines = [StepInline]


@admin.register(Challenge)
class ChallengeAdmin(InLessonMixin, ExpectedAnswerMixin, CalculatorFieldsMedia, ContentAdmin):
    form = ChallengeForm
    fields = ("in_lesson", "section", "key", "order", "topic", "title", "prompt", "calculator", "output", "unit", "inputs",
              "ranges", "expected_answer", "tolerance", "tolerance_kind", "partial_band", "points", "slips", "hints",
              "explanation")  # fmt: skip

    readonly_fields = ("in_lesson", "expected_answer")

    def expected(self, request):
        """Return the expected answer for one question's fields as sent (a step's are prefixed), without saving."""
        data = request.GET
        prefix = next((k for k in data if k.endswith("calculator")), "calculator").removesuffix("calculator")
        slug = data.get(f"{prefix}calculator", "")
        if slug not in CALCULATORS:
            return HttpResponse("Choose a calculator and an output.")
        table = ParameterTable(CALCULATORS[slug], "inputs")
        try:
            inputs = json.loads(table.value_from_datadict(data, {}, f"{prefix}inputs"))
        except (ValueError, RecursionError):  # not JSON, or nested too deeply (the field says so)
            return HttpResponse("The inputs are not valid JSON.")
        output, unit = data.get(f"{prefix}output", ""), data.get(f"{prefix}unit", "")
        units = answer_units(slug, output)
        if units is None:
            return HttpResponse("Choose an output, then the unit to ask for.")
        scale = units.get(unit)
        if scale is None:
            return HttpResponse("Choose the unit to ask for.")
        try:
            ranges = json.loads(
                ParameterTable(CALCULATORS[slug], "ranges").value_from_datadict(data, {}, f"{prefix}ranges")
            )
        except (ValueError, RecursionError):  # the ranges field says what is wrong with them
            ranges = {}
        return HttpResponse(expected_text(slug, output, inputs, scale, unit, drawn=ranges))

    def get_urls(self):
        return [
            path(
                "calculator-outputs/",
                self.admin_site.admin_view(self.calculator_outputs),
                name="lessons_calculator_outputs",
            ),
            path("expected-answer/", self.admin_site.admin_view(self.expected), name="lessons_challenge_expected"),
            path("answer-units/", self.admin_site.admin_view(self.answer_units), name="lessons_answer_units"),
            *super().get_urls(),
        ]

    def calculator_outputs(self, request):
        """Return the output select for the chosen calculator, named after the calculator field sent, with an
        empty unit and parameter tables; nothing (204) when the output already belongs to that calculator."""
        name, slug = next(((k, v) for k, v in request.GET.items() if k.endswith("calculator")), ("calculator", ""))
        name = name.removesuffix("calculator") + "output"
        prefix = name.removesuffix("output")
        slug = slug if slug in CALCULATORS else ""
        if request.GET.get(f"{name}-of") == slug:
            return HttpResponse(status=204)
        parts = [OutputSelect(choices=output_choices(slug)).render(name, "", attrs={"id": f"id_{name}"})]
        parts.append(output_of(name, slug, oob=True))
        parts.append(
            unit_widget(None).render(f"{prefix}unit", "", attrs={"id": f"id_{prefix}unit", "hx-swap-oob": "true"})
        )
        for table in request.GET.get("tables", "").split(","):
            if table in ("inputs", "ranges"):  # the parameter tables of this calculator (htmx swaps them in)
                widget = ParameterTable(CALCULATORS.get(slug), table, oob=True)
                # What the author typed for a parameter the new calculator has too (same name) is kept.
                kept = widget.value_from_datadict(request.GET, {}, f"{prefix}{table}") if slug else ""
                parts.append(widget.render(f"{prefix}{table}", kept))
        # The expected answer was asked on the same change, with the old selects: ask it again.
        return HttpResponse("".join(parts), headers={"HX-Trigger-After-Settle": "calculator-changed"})

    def answer_units(self, request):
        """Return the unit field for the chosen output: a select of the units it can be shown in."""
        get = request.GET
        name = next((k for k in get if k.endswith("output")), "output")
        slug = next((v for k, v in get.items() if k.endswith("calculator")), "")
        name = name.removesuffix("output") + "unit"
        options = answer_units(slug, get.get(name.removesuffix("unit") + "output"))
        widget = unit_widget(options)
        value = get.get(name, "")
        if options is not None and value not in options:  # another output: preselect its own unit, not the first
            value = own_unit(options)
        # The expected answer was asked on the same change, with the old unit field: ask it again.
        return HttpResponse(
            widget.render(name, value, attrs={"id": f"id_{name}"}),
            headers={"HX-Trigger-After-Settle": "calculator-changed"},
        )

    list_display = ("title", "topic", "calculator", "output", "section")
    list_filter = ("topic", "calculator", "section__lesson")
    list_select_related = ("section__lesson",)
    search_fields = ("title", "prompt", "key")


class ChecklistPointFormSet(RowsFormSet):
    """An open question needs two to twelve checklist points, as in content files."""

    def problems(self, rows_valid: bool) -> list[str]:
        rows = kept_rows(self)
        if rows_valid and not MIN_CHECKLIST <= len(rows) <= MAX_CHECKLIST:
            return [
                f"An open question needs {MIN_CHECKLIST} to {MAX_CHECKLIST} checklist points; this one has {len(rows)}."
            ]
        repeated = repeated_points([row.get("text") or "" for row in rows])
        if rows_valid and repeated:  # as a content file's checklist: no point twice
            return [f"The checklist repeats a point: “{repeated[0]}”. Each point must say something of its own."]
        return []


class ChecklistPointForm(MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = ChecklistPoint
        fields = "__all__"


class ChecklistPointInline(admin.TabularInline):
    model = ChecklistPoint
    form = ChecklistPointForm
    formset = ChecklistPointFormSet
    # The count is checked as a whole (ChecklistPointFormSet): a row left empty is skipped, not "required",
    # so one point written says "needs 2 to 12 ... has 1". Empty rows are offered up to the minimum.
    min_num = 0
    fields = ("order", "text")

    def get_extra(self, request, obj=None, **kwargs) -> int:
        return max(MIN_CHECKLIST - (obj.checklist.count() if obj else 0), 0)


class OpenQuestionForm(ItemPlaceMixin, MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = OpenQuestion
        fields = "__all__"


@admin.register(OpenQuestion)
class OpenQuestionAdmin(InLessonMixin, ContentAdmin):
    form = OpenQuestionForm
    readonly_fields = ("in_lesson",)
    list_display = ("key", "topic", "section", "order")
    list_filter = ("topic", "section__lesson")
    list_select_related = ("section__lesson",)
    search_fields = ("key", "prompt")
    inlines = [ChecklistPointInline]


@admin.register(Learner)
class LearnerAdmin(admin.ModelAdmin):
    list_display = ("__str__", "user", "created_at")
    search_fields = ("user__username",)
    list_select_related = ("user",)


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ("learner", "outcome", "points", "max_points", "is_first", "created_at")
    list_filter = ("outcome", "is_first")
    list_select_related = ("learner__user",)
    readonly_fields = [f.name for f in Answer._meta.fields]

    def has_add_permission(self, request):
        return False


class InterviewItemInline(admin.TabularInline):
    """The draw and the answers of a mock interview, to audit it (read only)."""

    model = InterviewItem
    fields = ("position", "phase", "kind", "deep_dive", "step", "challenge", "open_question", "drawn_inputs",
              "options", "answer", "answered_at", "late", "score")  # fmt: skip
    readonly_fields = fields
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(Interview)
class InterviewAdmin(admin.ModelAdmin):
    list_display = ("__str__", "lesson", "surprise", "started_at", "deadline", "finished_at")
    list_filter = ("surprise",)
    list_select_related = ("learner__user", "lesson")
    readonly_fields = [f.name for f in Interview._meta.fields]
    inlines = [InterviewItemInline]

    def has_add_permission(self, request):
        return False
