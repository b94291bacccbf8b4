"""API tokens: create (the key is shown once), authenticate by hash, revoke."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.utils import timezone
from rest_framework import authentication, exceptions

from lessons.models import ApiToken

LAST_USED_RESOLUTION = timedelta(minutes=1)  # avoid a write on every request


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


def create_token(user, name: str) -> tuple[ApiToken, str]:
    """Return the new token row and its key, which is never stored in clear."""
    key = f"sil_{secrets.token_urlsafe(32)}"
    token = ApiToken.objects.create(user=user, name=name, prefix=key[:8], key_hash=hash_key(key))
    return token, key


class ApiTokenAuthentication(authentication.TokenAuthentication):
    """``Authorization: Token <key>`` with a key from the account page."""

    def authenticate_credentials(self, key: str):
        token = ApiToken.objects.select_related("user").filter(key_hash=hash_key(key)).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid or revoked token.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("This account is inactive.")
        now = timezone.now()
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token


class CsrfSessionAuthentication(authentication.SessionAuthentication):
    """Session authentication that checks CSRF on unsafe requests from anonymous visitors too.

    DRF checks CSRF only for logged-in users, but anonymous learners have progress
    in their session that a forged request could write to. Requests carrying an
    ``Authorization`` header are left to token authentication (scripts send no cookies).
    """

    def authenticate(self, request):
        if request._request.headers.get("Authorization", "").startswith("Token "):
            return None  # token authentication handles it (and failed if the token was bad)
        user = getattr(request._request, "user", None)
        if user is None or not user.is_active:
            if request.method not in ("GET", "HEAD", "OPTIONS", "TRACE"):
                self.enforce_csrf(request)
            return None
        self.enforce_csrf(request)
        return (user, None)
