"""The site's template engine (interview/jinja2.py): what a page gets when a value is missing."""

import pytest
from django.template import engines
from django.test import override_settings


@pytest.mark.parametrize("debug", [False, True])
def test_a_missing_value_renders_empty_with_debug_on_or_off(debug):
    """As Django's engine did: {{ errors.dd }} on a page with no errors is empty, never "{{ errors }}" or a 500."""
    with override_settings(DEBUG=debug):
        engine = engines["jinja2"]
        template = engine.from_string("[{{ errors.dd.pk }}]{% if errors.dd == 3 %}no{% endif %}")
        assert template.render({}) == "[]"
