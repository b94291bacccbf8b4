"""Forms for answering: a choice of a deep dive, a number for a step or a challenge."""

from __future__ import annotations

from django import forms

from lessons.models import ChecklistPoint, Choice
from lessons.number_entry import EntryError, read_number
from lessons.services import WRITE_BEFORE_CHECKLIST


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
    """A number as a learner types it, in the question's unit or with its own: "5,436", "1.2k", "393 MB"."""

    value = forms.CharField(
        max_length=40,
        strip=True,
        error_messages={"required": "Enter a number.", "max_length": "That is too long for a number."},
    )

    def __init__(self, *args, unit: str = "", **kwargs):
        super().__init__(*args, **kwargs)
        self.unit = unit

    def clean_value(self) -> float:
        try:
            return read_number(self.cleaned_data["value"], self.unit)
        except EntryError as error:
            raise forms.ValidationError(str(error)) from None


class WrittenAnswerForm(forms.Form):
    """An open question's written answer."""

    text = forms.CharField(
        max_length=5000,
        strip=True,
        error_messages={
            "required": WRITE_BEFORE_CHECKLIST,
            "max_length": "Keep it under 5,000 characters, as you would in an interview.",
        },
    )


class ChecklistForm(forms.Form):
    """The checklist points a learner says their written answer covered (none is a valid answer)."""

    point = forms.TypedMultipleChoiceField(
        coerce=int,
        required=False,
        error_messages={"invalid_choice": "Tick only this question's checklist points."},
    )

    def __init__(self, *args, checklist: list[ChecklistPoint], **kwargs):
        super().__init__(*args, **kwargs)
        self.checklist = checklist
        self.fields["point"].choices = [(p.pk, p.text) for p in checklist]

    def ticked(self) -> list[ChecklistPoint]:
        chosen = set(self.cleaned_data["point"])
        return [p for p in self.checklist if p.pk in chosen]


class InterviewAnswerForm(forms.Form):
    """An interview answer as the page posts it: a choice, a number, a written answer or its ticks."""

    item = forms.IntegerField(required=False, error_messages={"invalid": "Answer the question shown on the page."})
    choice = forms.IntegerField(
        required=False, error_messages={"invalid": "That is not one of this question's choices."}
    )
    value = forms.CharField(required=False, strip=False)
    text = forms.CharField(required=False, strip=False)
    ticking = forms.BooleanField(required=False)  # an open question's checklist: no box ticked sends no "ticked"
    ticked = forms.TypedMultipleChoiceField(
        coerce=int,
        required=False,
        error_messages={"invalid_choice": "Tick only this question's checklist points."},
    )

    def __init__(self, *args, checklist: list[int], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["ticked"].choices = [(pk, pk) for pk in checklist]

    def payload(self) -> dict:
        """Return what was answered, as lessons.interviews.answer reads it (only the fields sent)."""
        data = {name: self.cleaned_data[name] for name in ("choice", "value", "text") if name in self.data}
        if self.cleaned_data["ticking"]:
            data["ticked"] = self.cleaned_data["ticked"]
        return data

    def first_error(self) -> str:
        return next(iter(self.errors.values()))[0]
