"""Site-wide views: the readiness probe; the one status of a page re-shown with bad input."""

from django.core.cache import caches
from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponsePermanentRedirect, HttpResponseRedirect, JsonResponse
from django.templatetags.static import static
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from django_redis import get_redis_connection
from django_redis.cache import RedisCache
from redis.exceptions import RedisError


def bad_input_status(fragment: bool) -> int:
    """Return the status of a page or fragment re-shown with the errors of bad input: 422 for an htmx
    fragment (base.html's htmx-config swaps it in), 400 for a whole page. Lessons, calculators and the
    simulator all answer so."""
    return 422 if fragment else 400


def database_status() -> str:
    """Return "ok" when the database answers a query, else "down"."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return "down"
    return "ok"


def cache_status() -> str:
    """Return "ok" when the cache answers a round trip, else "down".

    The Redis cache ignores connection errors (they become misses), so a cache.get cannot
    tell an outage from an empty cache: ping Redis through the backend's own pool instead.
    The local-memory cache (no REDIS_URL) lives in the process, so it is always "ok".
    """
    if not isinstance(caches["default"], RedisCache):
        return "ok"
    try:
        get_redis_connection("default").ping()
    except (RedisError, OSError):
        return "down"
    return "ok"


@require_safe
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Report each dependency: 200 "ok", 200 "degraded" without the cache, 503 without the database.

    The site keeps serving when Redis is down (sessions come from the database, caches
    miss), so a load balancer should keep sending traffic; without the database it cannot.
    """
    checks = {"database": database_status(), "cache": cache_status()}
    if checks["database"] != "ok":
        return JsonResponse({"status": "unavailable", **checks}, status=503)
    return JsonResponse({"status": "ok" if checks["cache"] == "ok" else "degraded", **checks})


@require_safe
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Send browsers that ask for /favicon.ico to the SVG icon."""
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))
