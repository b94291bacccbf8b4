"""A Django form generated from a calculator's parameters, validated by the registry itself."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from django import forms
from django.utils.safestring import SafeString, mark_safe

from calculators.calculator import Calculator, Parameter, Result
from calculators.errors import CalculatorInputError
from calculators.formatting import input_text, number


class CalculatorForm(forms.Form):
    """One text-free number field per parameter; `Calculator.evaluate` does all the checking.

    Validation goes through the registry so the page shows exactly the messages
    the API returns. The form is always bound: parameters missing from `data`
    take their defaults, so a URL carrying only some inputs still shows all.
    After `is_valid()`, `result` holds the evaluated Result (or None).
    """

    def __init__(self, calculator: Calculator, data: Mapping[str, object] | None = None) -> None:
        self.calculator = calculator
        self.result: Result | None = None
        values = {p.name: input_text(p.default) for p in calculator.parameters}
        given = {p.name: data[p.name] for p in calculator.parameters if data is not None and p.name in data}
        self.given = given
        super().__init__({**values, **given}, label_suffix="")
        for parameter in calculator.parameters:
            self.fields[parameter.name] = ParameterField(parameter)

    def clean(self) -> dict[str, object]:
        try:
            self.result = self.calculator.evaluate(self.given)
        except CalculatorInputError as error:
            for name, messages in error.errors.items():
                for message in messages:
                    self.add_error(name if name in self.fields else None, message)
            return {}
        return dict(self.result.inputs)

    def rows(self) -> list[dict[str, object]]:
        """Return what the page shows of each parameter, in registry order (see `parameter_rows`)."""
        return parameter_rows(self, self.calculator.parameters)

    def current_values(self) -> dict[str, str]:
        """Return the inputs as text, with valid values kept and invalid ones back to defaults."""
        values = {}
        for parameter in self.calculator.parameters:
            if self.result is not None:
                values[parameter.name] = input_text(self.result.inputs[parameter.name])
            elif parameter.name in self.errors or parameter.name not in self.given:
                values[parameter.name] = input_text(parameter.default)
            else:
                values[parameter.name] = str(self.given[parameter.name]).strip()
        return values


def parameter_rows(form: forms.Form, parameters: tuple[Parameter, ...]) -> list[dict[str, object]]:
    """Return what a page shows of each parameter's field, in order, as plain values.

    Plain dicts, which the templates read by key (row['id']), keep their lookups
    cheap: Jinja2 looks a key up directly, where row.id would try an attribute first.
    """
    rows = []
    for parameter in parameters:
        field = form[parameter.name]
        rows.append(
            {
                "field": field,
                "id": field.auto_id,
                "errors": field.errors,
                "label": parameter.label,
                "unit": parameter.unit_label,
                "help": parameter.help,
                "name": parameter.name,
                "range": f"{number(parameter.min)} to {number(parameter.max)}",
            }
        )
    return rows


class NumberInput(forms.NumberInput):
    """Django's number input, written in one `format_html` call instead of three nested templates.

    The markup is the same as `django/forms/widgets/input.html`; rendering those
    templates for every field was the largest cost of a calculator page.
    """

    def render(self, name: str, value: object, attrs: dict | None = None, renderer: object = None) -> SafeString:
        widget = self.get_context(name, value, attrs)["widget"]
        html = f'<input type="{widget["type"]}" name="{escape(name)}"'
        if widget["value"] is not None:
            html += f' value="{escape(widget["value"])}"'
        # In the order given, as the template writes them (flatatt would sort them).
        for key, attribute in widget["attrs"].items():
            if attribute is True:
                html += f" {key}"
            elif attribute is not False and attribute is not None:
                html += f' {key}="{escape(str(attribute))}"'
        return mark_safe(html + ">")  # noqa: S308 - every value is escaped above


class ParameterField(forms.CharField):
    """The text box of one parameter: a number input carrying its bounds; the registry checks the value.

    The input's attributes come from `widget_attrs`, as Django's own IntegerField
    sets min, max and step, so no widget instance is deep-copied per request.
    """

    widget = NumberInput

    def __init__(self, parameter: Parameter) -> None:
        self.parameter = parameter
        super().__init__(
            label=f"{parameter.label} ({parameter.unit_label})" if parameter.unit_label else parameter.label,
            required=False,  # blank is reported by the registry ("Enter a number.")
            strip=True,
            help_text=parameter.help,
        )

    def widget_attrs(self, widget: forms.Widget) -> dict[str, str]:
        parameter, auto_id = self.parameter, f"id_{self.parameter.name}"
        return {
            **super().widget_attrs(widget),
            "min": input_text(parameter.min),
            "max": input_text(parameter.max),
            "step": parameter.step,
            "inputmode": "numeric" if parameter.type == "int" else "decimal",
            # Always point at the error slot so an htmx swap of the message is announced.
            "aria-describedby": f"{auto_id}_error {auto_id}_helptext",
            "autocomplete": "off",
        }
