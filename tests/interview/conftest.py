"""Fixtures for the site-wide tests."""

from datetime import UTC, datetime

import pytest


@pytest.fixture
def stopped_clock(time_machine):
    """Stop the clock 15 s into a minute: a rate-limit window that ended mid-test would reset its counts."""
    time_machine.move_to(datetime(2026, 11, 30, 12, 0, 15, tzinfo=UTC), tick=False)
