"""url_maker: one reverse per page gives the same links as reversing each one."""

import pytest
from django.urls import reverse

from lessons.links import url_maker


@pytest.mark.parametrize(
    ("name", "fixed", "values"),
    [
        ("lesson", [], ["kv-cache-basics"]),
        ("answer-deep-dive", ["a-lesson"], [4242424240]),
        ("reveal", ["a-lesson"], ["step", 12]),
        ("walkthrough-step", ["a-lesson"], ["request-path", 3]),
    ],
)
def test_url_maker_gives_what_reverse_gives(name, fixed, values):
    make = url_maker(name, *fixed, variables=len(values))
    assert make(*values) == reverse(name, args=[*fixed, *values])
