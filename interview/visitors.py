"""Who is asking: the client's address (through trusted proxies only) and the key a visitor is counted by."""

from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """Return the client's IP address.

    ``X-Forwarded-For`` is read only behind ``settings.NUM_PROXIES`` proxies (BEHIND_PROXY):
    each proxy appends the address it saw, so the one NUM_PROXIES from the right is the one
    the nearest trusted proxy saw; anything further left is whatever the client wrote.
    """
    if settings.NUM_PROXIES:
        forwarded = [part.strip() for part in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")]
        forwarded = [part for part in forwarded if part]
        if forwarded:
            return forwarded[-min(settings.NUM_PROXIES, len(forwarded))]
    return request.META.get("REMOTE_ADDR", "")


def visitor_key(request: HttpRequest) -> str:
    """Return "user:<id>" for a signed-in account (session or API token), else "address:<ip>".

    Works on Django's request and on DRF's (whose ``user`` is the token's account).
    """
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return f"address:{client_address(request)}"
