"""The calculator form's number input writes the same markup as Django's widget template."""

import pytest
from django import forms

from calculators.forms import CalculatorForm, NumberInput
from calculators.registry import get_calculator


@pytest.mark.parametrize(
    ("value", "attrs"),
    [
        ("80", {"min": "1", "max": "1000", "step": "1", "id": "id_layers"}),
        ('<script>"x"</script>', {"aria-invalid": "true", "aria-describedby": "a b", "id": "id_x"}),
        (None, {"required": True, "disabled": False, "data-x": "it's"}),
    ],
)
def test_number_input_matches_djangos_template(value, attrs):
    assert NumberInput().render("layers", value, attrs) == forms.NumberInput().render("layers", value, attrs)


def test_bad_input_marks_the_field_invalid():
    form = CalculatorForm(get_calculator("kv-cache"), {"layers": "0"})
    form.is_valid()
    rows = {row["name"]: row for row in form.rows()}
    assert 'aria-invalid="true"' in str(rows["layers"]["field"])
    assert "aria-invalid" not in str(rows["tokens"]["field"])
    assert rows["layers"]["range"] == "1 to 1,000"
