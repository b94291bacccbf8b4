"""Template filters for calculator pages."""

from django import template

from calculators.formatting import number

register = template.Library()


@register.filter
def num(value):
    """Return a number the way the calculators write it: 1,000,000, 0.015625, 10¹⁸."""
    return number(value)
