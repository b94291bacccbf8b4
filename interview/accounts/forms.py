"""Forms of the account pages."""

from django import forms
from django.contrib.auth import get_user_model
from django.contrib.auth.forms import UserCreationForm

EMAIL_LABEL = "E-mail (optional)"
EMAIL_HELP = "Only used to reset your password if you forget it."


class SignUpForm(UserCreationForm):
    """User name, an optional e-mail address for password reset, and the password twice.

    An address another account already uses is accepted: refusing it would tell anyone which
    addresses have accounts, and a reset mails a link for every account that uses the address.
    """

    def validate_password_for_user(self, user, password_field_name="password1"):  # noqa: S107 - a field name
        # Django puts "too short", "too common"... under the confirmation; they are about the password.
        super().validate_password_for_user(user, password_field_name=password_field_name)

    class Meta(UserCreationForm.Meta):
        model = get_user_model()
        fields = ("username", "email")
        labels = {"email": EMAIL_LABEL}
        help_texts = {"email": EMAIL_HELP}


class EmailForm(forms.ModelForm):
    """The account page's form to set, change or clear the e-mail address used for password reset."""

    class Meta:
        model = get_user_model()
        fields = ("email",)
        labels = {"email": EMAIL_LABEL}
        help_texts = {"email": EMAIL_HELP}


class TokenForm(forms.Form):
    name = forms.CharField(
        max_length=100, strip=True, help_text="What the token is for, e.g. 'study scripts'.",
        error_messages={"required": "Give the token a name."},
    )  # fmt: skip


def focus_first_error(form: forms.Form) -> None:
    """Give the first field with an error (else the first field, for a form-wide error) autofocus."""
    if not form.errors:
        return
    names = [name for name in form.fields if name in form.errors] or list(form.fields)[:1]
    for field in form.fields.values():
        field.widget.attrs.pop("autofocus", None)  # Django's user-name fields ask for it themselves
    form.fields[names[0]].widget.attrs["autofocus"] = True
