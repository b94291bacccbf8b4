"""The accounts app: sign-up, log-in, password change and reset, the account page and API tokens."""

from django.apps import AppConfig
from django.conf import settings


class AccountsConfig(AppConfig):
    name = "interview.accounts"
    label = "accounts"
    verbose_name = "Accounts"

    def ready(self) -> None:
        from interview import ratelimit
        from interview.accounts import schema  # noqa: F401 - registers the OpenAPI authentication extensions

        # A mistyped rate stops start-up with a clear message instead of failing the first request.
        for rate in settings.RATE_LIMITS.values():
            ratelimit.parse_rate(rate)
