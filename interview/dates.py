"""Dates and times as the site shows them: "1 Dec 2026, 15:12 UTC", always in UTC and saying so.

The one place that format is written. Templates use the ``when`` filter (interview/jinja2.py registers
it); Python code that writes a time for people uses ``utc_text``.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django.contrib.humanize.templatetags.humanize import naturaltime
from django.utils import dateformat, timezone
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.timesince import timeuntil

from calculators.formatting import plural

DATE = "j M Y"  # 1 Dec 2026
TIME = "H:i"  # 15:12 (a deadline too: cut to the minute, it is never later than the real one)


def in_utc(value: datetime) -> datetime:
    """Return ``value`` in UTC; a naive datetime is taken to be UTC already (the site's TIME_ZONE)."""
    return value.astimezone(UTC) if value.tzinfo is not None else value.replace(tzinfo=UTC)


def utc_text(value: datetime) -> str:
    """Return "1 Dec 2026, 15:12 UTC"."""
    moment = in_utc(value)
    return f"{dateformat.format(moment, DATE)}, {dateformat.format(moment, TIME)} UTC"


def when(value: datetime | None, style: str = "") -> SafeString | str:
    """Return a <time> element reading "1 Dec 2026, 15:12 UTC", its datetime attribute the exact moment.

    ``{{ value|when:"lines" }}`` puts the time under the date ("1 Dec 2026" / "15:12 UTC"), for a
    narrow table column; ``{{ value|when:"ago" }}`` says how long ago ("10 minutes ago", "now"), the
    moment itself in its title. None (a token never used, say) gives "", for the template to say what that means.
    """
    if value is None or value == "":
        return ""
    if style not in ("", "lines", "ago"):
        raise ValueError(f'Unknown style for |when: {style!r} (use "", "lines" or "ago").')
    moment = in_utc(value)
    # HTML allows at most three digits of a second: whole seconds, as the page shows minutes anyway.
    stamp = moment.isoformat(timespec="seconds")
    if style == "lines":
        text = format_html("{}<br>{} UTC", dateformat.format(moment, DATE), dateformat.format(moment, TIME))
    elif style == "ago":
        return format_html('<time datetime="{}" title="{}">{}</time>', stamp, utc_text(moment), naturaltime(moment))
    else:
        text = utc_text(moment)
    return format_html('<time datetime="{}">{}</time>', stamp, text)


GAP_UNITS = (  # (unit, its length, the gap below which it is the largest unit used)
    ("minute", timedelta(minutes=1), timedelta(hours=1)),
    ("hour", timedelta(hours=1), timedelta(days=1)),
    ("day", timedelta(days=1), timedelta(days=60)),
    ("month", timedelta(days=30), timedelta.max),
)


def gap_text(gap: timedelta) -> str:
    """Return a gap in the largest unit that fits it, "about" when that rounds it: "10 minutes",
    "about 2 hours" (2 h 5 min), "11 days", "about 5 months"."""
    if gap <= timedelta(0):
        raise ValueError(f"a gap is positive: {gap}")
    for unit, length, below in GAP_UNITS:
        count = max(round(gap / length), 1)
        if count * length < below:  # 59 min 40 s is "about 1 hour", not "about 60 minutes"
            text = f"{count}\N{NO-BREAK SPACE}{plural(count, unit)}"
            return text if gap == count * length else f"about {text}"
    raise ValueError(gap)


def until(value: datetime, now: datetime | None = None) -> str:
    """Return how long until ``value`` as "3 hours, 30 minutes" (Django's timeuntil, to the nearest minute),
    "under a minute" when it is that close (timeuntil says "0 minutes"), from ``now`` (by default the time now)."""
    now = now or timezone.now()
    if value - now < timedelta(minutes=1):
        return "under a minute"
    # To the nearest minute: read seconds apart, "4 hours" and "3 hours, 59 minutes" named one moment.
    return timeuntil(value, now - timedelta(seconds=30))
