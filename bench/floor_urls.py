"""The real URLs plus two bench-only floors: what any page or answer costs before doing its own work.

``GET /bench-floor/get/`` and ``POST /bench-floor/post/`` go through the full middleware stack
(session, auth, CSRF, CSP, htmx) and touch the signed-in user, as every page and answer must,
then return a short fragment. `make bench` divides each target's CPU per request by its floor's,
measured in the same run. Served only by `make bench` (bench/floor_wsgi.py).
"""

from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

import interview.urls


@require_GET
def floor_get(request: HttpRequest) -> HttpResponse:
    # Every page shows who is signed in: reading the user loads the session and the user row.
    return HttpResponse(f"<p>{'signed in' if request.user.is_authenticated else 'visitor'}</p>")


@require_POST
def floor_post(request: HttpRequest) -> HttpResponse:
    # The CSRF check has run; an answer then needs the signed-in learner.
    if not request.user.is_authenticated:
        return HttpResponse("Sign in first.", status=403)
    return HttpResponse("<p>ok</p>")


urlpatterns = [
    path("bench-floor/get/", floor_get),
    path("bench-floor/post/", floor_post),
    *interview.urls.urlpatterns,
]
