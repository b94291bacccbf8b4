"""Rate limits for the HTML views (log-in, answers), sharing DRF's counters and rates.

The counters live in Django's cache: Redis when REDIS_URL is set, so limits hold
across workers, and local memory otherwise.
"""

from __future__ import annotations

import functools
import math

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.throttling import SimpleRateThrottle


class LoginThrottle(SimpleRateThrottle):
    scope = "login"

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class PageAnswerThrottle(SimpleRateThrottle):
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
