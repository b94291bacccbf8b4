"""JSON from outside (API bodies, admin fields): refuse deep nesting and NUL characters with a clear message.

Python's json module raises RecursionError (not ValueError) on about a thousand nested
arrays, and PostgreSQL cannot store or compare text holding a NUL character, so both
would otherwise end as a 500.
"""

from __future__ import annotations

import io

from django import forms
from django.core.exceptions import ValidationError
from django.core.validators import ProhibitNullCharactersValidator
from django.forms.fields import InvalidJSONInput
from django.http import HttpRequest
from rest_framework import parsers
from rest_framework.exceptions import ParseError

TOO_DEEP = "The JSON is nested too deeply."
NUL_MESSAGE = ProhibitNullCharactersValidator.message  # Django's own wording, as on every CharField


def contains_nul(value) -> bool:
    """Return whether any string or key in parsed JSON holds a NUL character.

    A loop, not recursion: the value may be nested nearly as deep as the parser allows.
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return False


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser, with a 400 for deep nesting and NUL characters and a 413 for oversized bodies."""

    def parse(self, stream, media_type=None, parser_context=None):
        if isinstance(stream, HttpRequest):
            # request.body applies DATA_UPLOAD_MAX_MEMORY_SIZE (RequestDataTooBig, a 413 from
            # interview.api_errors); DRF would otherwise read a body of any size.
            stream = io.BytesIO(stream.body)
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(TOO_DEEP) from None
        if contains_nul(data):
            raise ParseError(NUL_MESSAGE)
        return data


class JSONFormField(forms.JSONField):
    """Django's JSON form field, with a form error (not a 500) for deep nesting and NUL characters."""

    def to_python(self, value):
        try:
            return super().to_python(value)
        except RecursionError:
            raise ValidationError(TOO_DEEP, code="invalid") from None

    def bound_data(self, data, initial):
        try:
            return super().bound_data(data, initial)
        except RecursionError:  # shown back to the author as typed
            return InvalidJSONInput(data)

    def validate(self, value):
        super().validate(value)
        if contains_nul(value):
            raise ValidationError(NUL_MESSAGE, code="null_characters_not_allowed")
