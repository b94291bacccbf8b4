"""Lessons name the assumption behind a figure they correct, never an unnamed "source document"."""

import re

import pytest

from tests.content.test_corrections import all_texts

VAGUE_REFERENCES = [r"source documents?", r"\bthe source(?:'s)?\b", r"\bits source\b"]


@pytest.mark.parametrize("phrase", VAGUE_REFERENCES)
def test_no_lesson_points_at_an_unnamed_source(phrase):
    found = [(name, text[:80]) for name, text in all_texts() if re.search(phrase, text, re.IGNORECASE)]
    assert found == [], f"{phrase!r} in {found}"
