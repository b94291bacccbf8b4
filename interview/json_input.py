"""JSON from outside (API bodies, admin fields): refuse deep nesting and NUL characters with a clear message.

Python 3.11's json module raises RecursionError (not ValueError) on a thousand nested
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

MAX_DEPTH = 100  # far more than any body or field here needs; Python 3.12+ parses 1,000 levels
TOO_DEEP = f"The JSON is nested too deeply (more than {MAX_DEPTH} levels)."
NUL_MESSAGE = ProhibitNullCharactersValidator.message  # Django's own wording, as on every CharField


def json_problem(value) -> str | None:
    """Return why parsed JSON is refused (nested too deeply, a NUL in a string or key), else None.

    A loop, not recursion: the value may be nested nearly as deep as the parser allows.
    """
    pending = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, str) and "\x00" in item:
            return NUL_MESSAGE
        if isinstance(item, dict | list):
            if depth > MAX_DEPTH:
                return TOO_DEEP
            children = [*item.keys(), *item.values()] if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return None


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
        problem = json_problem(data)
        if problem:
            raise ParseError(problem)
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
        problem = json_problem(value)
        if problem:
            raise ValidationError(problem, code="invalid")
