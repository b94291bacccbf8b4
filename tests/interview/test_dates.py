"""Dates and times are written one way across the site, by interview.dates: "1 Dec 2026, 15:12 UTC"."""

import re
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from django.conf import settings
from django.template import engines

from interview.dates import utc_text, when

MOMENT = datetime(2026, 12, 1, 15, 12, 42, 123456, tzinfo=UTC)


def render(source: str, **context) -> str:
    return engines["jinja2"].from_string(source).render(context)


def test_a_time_reads_day_month_year_then_hours_and_minutes_in_utc():
    assert utc_text(MOMENT) == "1 Dec 2026, 15:12 UTC"
    # Whole seconds in the attribute: HTML allows at most three digits of a fraction.
    assert render("{{ t|when }}", t=MOMENT) == '<time datetime="2026-12-01T15:12:42+00:00">1 Dec 2026, 15:12 UTC</time>'
    assert render('{{ t|when("lines") }}', t=MOMENT) == (
        '<time datetime="2026-12-01T15:12:42+00:00">1 Dec 2026<br>15:12 UTC</time>'
    )


def test_a_time_from_another_zone_is_shown_in_utc_and_a_naive_one_is_taken_as_utc():
    paris = MOMENT.astimezone(timezone(timedelta(hours=1)))
    assert render("{{ t|when }}", t=paris) == render("{{ t|when }}", t=MOMENT)
    assert utc_text(MOMENT.replace(tzinfo=None)) == "1 Dec 2026, 15:12 UTC"


def test_no_time_gives_nothing_and_an_unknown_style_is_a_mistake_said_at_once():
    assert render("{{ t|when }}", t=None) == ""
    with pytest.raises(ValueError, match="Unknown style"):
        when(MOMENT, "iso")


def test_no_template_writes_a_date_or_time_itself():
    """Every date and time goes through |when: no |date: format, no strftime or isoformat of its own (Jinja2 can
    call them), no hand-made <time> element; in the Jinja2 pages (jinja2/) and Django's templates (templates/)."""
    found = []
    for folder in ("jinja2", "templates"):
        for path in Path(settings.BASE_DIR, folder).rglob("*.html"):
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
                if re.search(r"\|date\b|\|time\b|<time\b|\.strftime\b|\.isoformat\b", line):
                    found.append(f"{path.relative_to(settings.BASE_DIR)}:{number}")
    assert found == []


def test_how_long_until_is_said_to_the_nearest_minute():
    """Read seconds apart, one moment is not "4 hours" on one line and "3 hours, 59 minutes" on the next."""
    from interview.dates import until

    assert until(MOMENT + timedelta(hours=4), MOMENT) == "4\xa0hours"
    assert until(MOMENT + timedelta(hours=4), MOMENT + timedelta(seconds=20)) == "4\xa0hours"
    assert until(MOMENT + timedelta(minutes=29), MOMENT) == "29\xa0minutes"
    assert until(MOMENT + timedelta(seconds=40), MOMENT) == "under a minute"
