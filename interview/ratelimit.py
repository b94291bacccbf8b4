"""Rate limits for the whole site: fixed-window counters in Django's cache that fail open.

One mechanism serves the pages (log-in, password reset, answers) and the API (a DRF throttle
class). Each limit is named in ``settings.RATE_LIMITS`` with a rate such as "10/min" or
"5/15min". A counter is one integer per limit, window and identity, under keys of its own
(``ratelimit:<name>:<window>:<hash of identity>``), raised by ``cache.incr`` (made by
``cache.add`` for a window's first request): both are atomic in Redis and in local memory, so concurrent requests cannot
overshoot a limit. A fixed window lets a burst of up to twice the limit straddle a window's
end; that is the price of one integer per counter, and is fine for these limits.

When the cache cannot count (Redis down: the backend raises, or returns None when it ignores
connection errors), the request is let through with a logged warning: a cache outage must not
take the site down, and the limits come back with the cache.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import re
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.defaultfilters import pluralize
from rest_framework.throttling import BaseThrottle

from interview.visitors import visitor_key

logger = logging.getLogger("interview.ratelimit")

KEY_PREFIX = "ratelimit"
UNIT_SECONDS = {"s": 1, "sec": 1, "min": 60, "h": 3600, "hour": 3600, "d": 86400, "day": 86400}
RATE_FORMAT = re.compile(r"(?P<count>\d+)/(?P<multiple>\d*)(?P<unit>[a-z]+)")


@dataclass(frozen=True)
class Rate:
    count: int
    seconds: int


@functools.cache
def parse_rate(text: str) -> Rate:
    """Return the rate in ``text``: "<count>/<unit>" or "<count>/<n><unit>", units s, min, h, day."""
    match = RATE_FORMAT.fullmatch(text.strip())
    if match is None or match["unit"] not in UNIT_SECONDS or match["multiple"] in ("0", "00"):
        raise ImproperlyConfigured(f"Rate {text!r} is not like '10/min' or '5/15min' (units: s, min, h, day).")
    return Rate(int(match["count"]), int(match["multiple"] or 1) * UNIT_SECONDS[match["unit"]])


@dataclass(frozen=True)
class Hit:
    """One request counted against a limit."""

    allowed: bool
    retry_after: int  # seconds until the window ends and the count starts again
    key: str | None = None  # None when the cache could not count
    name: str = ""  # the limit counted against

    def undo(self) -> None:
        """Give the request back (a log-in that succeeded is not a failure)."""
        if self.key is not None:
            try:
                cache.decr(self.key)
            except Exception:  # expired, or the cache is down: nothing to give back
                logger.warning("Rate limit counter %s not decremented", self.key, exc_info=True)


def count_in(key: str, charge: int, timeout: int) -> int | None:
    """Add ``charge`` to the window's counter ``key`` and return its count: one cache round trip, two for the
    window's first request (which makes the counter; a concurrent first request may make it just before)."""
    try:
        return cache.incr(key, charge)
    except ValueError:  # no counter yet: this window's first request
        if cache.add(key, charge, timeout=timeout):
            return charge
        return cache.incr(key, charge)


def hit(name: str, identity: str, charge: int = 1) -> Hit:
    """Count a request by ``identity`` against the limit ``name``; return whether it is allowed.

    ``charge`` is what the request costs in requests (a large simulator run counts as several)."""
    rate = parse_rate(settings.RATE_LIMITS[name])
    now = time.time()
    window = int(now // rate.seconds)
    retry_after = max(1, math.ceil((window + 1) * rate.seconds - now))
    # Hashed: identities hold user names and e-mail addresses, which have no place in cache keys.
    key = f"{KEY_PREFIX}:{name}:{window}:{hashlib.sha256(identity.encode()).hexdigest()[:32]}"
    try:
        count = count_in(key, charge, timeout=retry_after + 1)
    except ValueError:  # the counter expired between add and incr: the window just ended
        return Hit(True, retry_after, name=name)
    except Exception:
        logger.warning("Rate limit %r not checked: the cache failed", name, exc_info=True)
        return Hit(True, retry_after, name=name)
    if count is None:  # a cache that ignores connection errors answers None
        logger.warning("Rate limit %r not checked: the cache did not answer", name)
        return Hit(True, retry_after, name=name)
    return Hit(count <= rate.count, retry_after, key, name)


# What a visitor past each limit is told, in plain words (README's Security table lists the rates).
LIMIT_REACHED = {
    "answers": "Too many answers in a short time.",
    "login": "Too many log-in attempts from here.",
    "login_account_address": "Too many failed log-ins for this account from here.",
    "login_account": "Too many failed log-ins for this account.",
    "password_reset": "Too many password-reset requests from here.",
    "password_reset_account": "Too many password-reset requests for this e-mail address.",
    "signup": "Too many sign-ups from here.",
    "simulations": "Too many simulation runs in a short time.",
}


def wait_in_words(seconds: int) -> str:
    """Return a wait as a person says it: "45 seconds", "about 11 minutes", "about 1 hour"."""
    if seconds < 60:
        return f"{seconds} second{pluralize(seconds)}"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} minute{pluralize(minutes)}"
    hours = round(seconds / 3600)
    return f"about {hours} hour{pluralize(hours)}"


def too_many_requests(request: HttpRequest, over: Hit, template_name: str = "429.html") -> HttpResponse:
    """Return the 429 page, saying which limit was reached and for how long, with Retry-After."""
    context = {"reason": LIMIT_REACHED.get(over.name), "wait": wait_in_words(over.retry_after)}
    response = render(request, template_name, context, status=429)
    response["Retry-After"] = str(over.retry_after)
    return response


def limit_per_visitor(name: str, charge=None):
    """Decorate a page view so a visitor (account, else address) over the limit ``name`` gets a 429.

    ``charge(request)``, if given, says what the request costs against the limit (default one)."""

    def decorator(view):
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            counted = hit(name, visitor_key(request), charge(request) if charge else 1)
            if not counted.allowed:
                return too_many_requests(request, counted)
            return view(request, *args, **kwargs)

        return wrapper

    return decorator


class VisitorThrottle(BaseThrottle):
    """The API's limit per visitor: "api_user" for an account, "api_anon" per address otherwise."""

    def limit_name(self, request) -> str:
        return "api_user" if request.user and request.user.is_authenticated else "api_anon"

    def charge(self, request, view) -> int:
        return 1

    def allow_request(self, request, view) -> bool:
        self.counted = hit(self.limit_name(request), visitor_key(request), self.charge(request, view))
        return self.counted.allowed

    def wait(self) -> float | None:
        return self.counted.retry_after


class SimulationsThrottle(VisitorThrottle):
    """Simulator runs through the API: one budget with runs through the pages (each costs CPU seconds)."""

    def limit_name(self, request) -> str:
        return "simulations"

    def charge(self, request, view) -> int:
        """A run costs what it simulates (calculators.simulator.run_charge), the same as on the pages."""
        from calculators.simulator import run_charge

        return run_charge(view.mode, request.query_params)


class AnswersThrottle(VisitorThrottle):
    """Answers through the API: one budget with answers through the pages (same limit, same key)."""

    def limit_name(self, request) -> str:
        return "answers"
