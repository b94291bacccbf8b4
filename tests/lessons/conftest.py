"""Fixtures shared by the lessons tests."""

import shutil
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from tests.lessons.factories import make_lesson

CONTENT = Path(__file__).resolve().parents[2] / "content"


@pytest.fixture
def content_copy(tmp_path):
    """A writable copy of the shipped content folder."""
    target = tmp_path / "content"
    shutil.copytree(CONTENT, target)
    return target


@pytest.fixture
def lesson(db):
    """The sample lesson of `make_lesson` (a test module that needs another shape overrides this)."""
    return make_lesson()


@pytest.fixture
def api():
    """A DRF test client, not logged in."""
    return APIClient()
