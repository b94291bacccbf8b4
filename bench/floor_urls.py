"""The real URLs plus one bench-only URL, ``POST /bench-floor/``: the floor of an answer.

It checks the CSRF token and loads the session and the signed-in user, as every answer
must before doing any work of its own, and returns a short fragment. Its requests per
second bound what any answer can reach on the machine. Served only by ``make bench``.
"""

from django.http import HttpResponse
from django.urls import path
from django.views.decorators.http import require_POST

import interview.urls


@require_POST
def floor(request):
    if not request.user.is_authenticated:  # loads the session and the user
        return HttpResponse("Sign in first.", status=403)
    return HttpResponse("<p>ok</p>")


urlpatterns = [path("bench-floor/", floor), *interview.urls.urlpatterns]
