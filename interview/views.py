"""Site-wide views: the readiness probe."""

from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponsePermanentRedirect, HttpResponseRedirect, JsonResponse
from django.templatetags.static import static
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET


@require_GET
@never_cache
def healthz(request: HttpRequest) -> JsonResponse:
    """Answer 200 when the database answers a query, 503 otherwise."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        return JsonResponse({"status": "unavailable", "database": "unreachable"}, status=503)
    return JsonResponse({"status": "ok"})


@require_GET
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """Send browsers that ask for /favicon.ico to the SVG icon."""
    return HttpResponsePermanentRedirect(static("img/favicon.svg"))
