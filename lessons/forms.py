"""Forms for answering: a choice of a deep dive, a number for a step or a challenge."""

from __future__ import annotations

import math
import re

from django import forms

from lessons.models import Choice

NUMBER_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
# Commas only as thousands separators: "5,436" and "1,200,000.5", never "1,5".
GROUPED_RE = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")


class ChoiceForm(forms.Form):
    choice = forms.IntegerField(
        error_messages={"required": "Pick one of the approaches.", "invalid": "Pick one of the approaches."}
    )

    def __init__(self, *args, choices: list[Choice], **kwargs):
        super().__init__(*args, **kwargs)
        self.choices = {choice.pk: choice for choice in choices}

    def clean_choice(self) -> Choice:
        choice = self.choices.get(self.cleaned_data["choice"])
        if choice is None:
            raise forms.ValidationError("That approach is not one of this question's choices.")
        return choice


class NumberForm(forms.Form):
    """A number as a learner types it: "5,436", "1.5e9", "393.2" (thousands separators allowed)."""

    value = forms.CharField(
        max_length=40,
        strip=True,
        error_messages={"required": "Enter a number.", "max_length": "That is too long for a number."},
    )

    def clean_value(self) -> float:
        return parse_number(self.cleaned_data["value"])


def parse_number(text: str) -> float:
    """Return the number a learner typed ("5,436", "1.5e9"); raise ValidationError with a plain message."""
    raw = text.strip().replace("_", "").replace(" ", "").replace("\u202f", "")
    if "," in raw:
        if not GROUPED_RE.match(raw):
            raise forms.ValidationError("Use a dot for decimals (1.5); commas only separate thousands (5,436).")
        raw = raw.replace(",", "")
    if not NUMBER_RE.match(raw):
        raise forms.ValidationError("Enter a plain number such as 110, 393.2 or 1.5e9 (no units).")
    value = float(raw)
    if not math.isfinite(value):
        raise forms.ValidationError("Enter a finite number.")
    return value
