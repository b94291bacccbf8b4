"""Forms of the account pages."""

from django import forms


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, strip=True, help_text="What the token is for, e.g. 'study scripts'.",
        error_messages={"required": "Give the token a name."},
    )  # fmt: skip
