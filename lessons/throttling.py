"""Rate limits for the HTML views (log-in, answers), sharing DRF's counters and rates.

The counters live in Django's cache: Redis when REDIS_URL is set, so limits hold
across workers, and local memory otherwise.
"""

from __future__ import annotations

import functools
import hashlib
import math

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.throttling import SimpleRateThrottle


class ConstantCostThrottle(SimpleRateThrottle):
    """The same limit as DRF's throttle, kept as one number per visitor (GCRA) instead of a list.

    DRF's throttle stores the time of every request in the window, so each request reads
    and writes up to ``num_requests`` timestamps; this stores when the visitor's allowance
    is next full (the "theoretical arrival time"), so its cost does not grow with the rate.
    ``num_requests`` may arrive at once; after that, one per ``duration / num_requests``.
    """

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        self.key = self.get_cache_key(request, view)
        if self.key is None:
            return True
        self.now = self.timer()
        interval = self.duration / self.num_requests
        arrival = max(self.cache.get(self.key, self.now), self.now)
        self.excess = arrival + interval - self.now - self.duration
        if self.excess > 0:
            return False
        self.cache.set(self.key, arrival + interval, self.duration)
        return True

    def wait(self) -> float | None:
        return self.excess if getattr(self, "excess", 0) > 0 else None


class LoginThrottle(SimpleRateThrottle):
    """Log-in attempts per address."""

    scope = "login"

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class AccountLoginThrottle(LoginThrottle):
    """Failed log-ins per account name, whatever address they come from.

    Only failures count, so nobody can lock a learner out while they type the right password.
    """

    def get_cache_key(self, request, view) -> str:
        username = str(request.POST.get("username", ""))[:150].strip().lower()
        return self.cache_format % {"scope": "login-account", "ident": hashlib.sha256(username.encode()).hexdigest()}

    def locked(self, request) -> int:
        """Return the seconds to wait when the account is over its limit of failures, else 0."""
        self.key = self.get_cache_key(request, None)
        self.now = self.timer()
        self.history = [t for t in self.cache.get(self.key, []) if t > self.now - self.duration]
        return math.ceil(self.wait() or 1) if len(self.history) >= self.num_requests else 0

    def record_failure(self, request) -> None:
        self.locked(request)
        self.cache.set(self.key, [self.now, *self.history], self.duration)


class PageAnswerThrottle(ConstantCostThrottle):
    """Answers posted through the pages: per account, or per address for anonymous learners."""

    scope = "answers"

    def get_cache_key(self, request, view) -> str:
        user = getattr(request, "user", None)
        ident = f"user-{user.pk}" if user is not None and user.is_authenticated else self.get_ident(request)
        return self.cache_format % {"scope": self.scope, "ident": ident}


def too_many(request: HttpRequest, throttle_class) -> HttpResponse | None:
    """Return a 429 page with Retry-After when ``request`` is over its limit, else None."""
    throttle = throttle_class()
    if throttle.allow_request(request, None):
        return None
    wait = math.ceil(throttle.wait() or 1)
    response = render(request, "429.html", {"wait": wait}, status=429)
    response["Retry-After"] = str(wait)
    return response


def throttled(throttle_class):
    """Decorate a view so requests over the rate get a 429 with Retry-After."""

    def decorator(view):
        @functools.wraps(view)
        def wrapper(request, *args, **kwargs):
            return too_many(request, throttle_class) or view(request, *args, **kwargs)

        return wrapper

    return decorator


class VisitorRateThrottle(ConstantCostThrottle):
    """One counter per visitor: the "user" rate for accounts, the "anon" rate by address otherwise.

    DRF's AnonRateThrottle and UserRateThrottle together would both count an anonymous
    request, doubling the cache traffic of every API call.
    """

    def get_cache_key(self, request, view) -> str:
        if request.user and request.user.is_authenticated:
            return self.cache_format % {"scope": "user", "ident": request.user.pk}
        return self.cache_format % {"scope": "anon", "ident": self.get_ident(request)}

    def allow_request(self, request, view) -> bool:
        self.scope = "user" if request.user and request.user.is_authenticated else "anon"
        self.rate = self.get_rate()
        self.num_requests, self.duration = self.parse_rate(self.rate)
        return super().allow_request(request, view)

    def __init__(self):  # the rate depends on the request, so it is read in allow_request
        pass
