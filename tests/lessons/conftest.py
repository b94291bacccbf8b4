"""Fixtures shared by the lessons tests."""

import shutil
from pathlib import Path

import pytest

CONTENT = Path(__file__).resolve().parents[2] / "content"


@pytest.fixture
def content_copy(tmp_path):
    """A writable copy of the shipped content folder."""
    target = tmp_path / "content"
    shutil.copytree(CONTENT, target)
    return target
