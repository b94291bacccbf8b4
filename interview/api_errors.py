"""One JSON shape for every API error: {"errors": {"<field>": ["message"]}} plus "detail" when not a field.

DRF's views answer with it through ``api_exception_handler``; the error handlers below give
the same shape to what happens outside DRF under /api/ (no such path, an oversized or bad
request, a failed CSRF check, a server error), while pages keep their HTML error pages.
"""

from django.conf import settings
from django.core.exceptions import BadRequest, RequestDataTooBig
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import defaults
from rest_framework.views import exception_handler


def api_exception_handler(exc, context):
    response = exception_handler(exc, context)
    if response is None:
        return None
    data = response.data
    if isinstance(data, dict) and "errors" in data:
        return response
    if isinstance(data, dict) and set(data) == {"detail"}:
        response.data = {"detail": data["detail"], "errors": {"__all__": [str(data["detail"])]}}
    elif isinstance(data, dict):
        response.data = {"errors": {k: [str(m) for m in (v if isinstance(v, list) else [v])] for k, v in data.items()}}
    else:
        response.data = {"errors": {"__all__": [str(m) for m in data]}}
    return response


def is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def api_error(message: str, status: int) -> JsonResponse:
    return JsonResponse({"detail": message, "errors": {"__all__": [message]}}, status=status)


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler400: a body over DATA_UPLOAD_MAX_MEMORY_SIZE is a 413; other refusals a 400.

    Only messages written for the visitor are shown (BadRequest); other 400s, such as a
    bad Host header, keep Django's terse page.
    """
    if isinstance(exception, RequestDataTooBig):
        status, message = 413, f"The request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."
    elif type(exception) is BadRequest:
        status, message = 400, str(exception)
    else:
        status, message = 400, "Bad request."
    if is_api(request):
        return api_error(message, status)
    # Rendered without the request (as Django's own handler does): the request itself is what was wrong.
    return HttpResponse(loader.render_to_string("400.html", {"message": message}), status=status)


def not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    """handler404: JSON under /api/, the HTML page elsewhere."""
    if is_api(request):
        return api_error("No API endpoint at this address.", 404)
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: JSON under /api/, the HTML page elsewhere; the details go to the log only."""
    if is_api(request):
        return api_error("Server error. It was logged; try again later.", 500)
    return defaults.server_error(request)


def csrf_failure(request: HttpRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a 403 page saying the form expired and offering the form again.

    A stale or missing token is almost always a form left open too long (or cookies blocked),
    not an attack: say so in words and link back to the page the form came from, when that
    page is on this site.
    """
    if is_api(request):
        return api_error("CSRF check failed: send the session's CSRF token, or use a token.", 403)
    referer = request.META.get("HTTP_REFERER", "")
    same_site = url_has_allowed_host_and_scheme(referer, {request.get_host()}, request.is_secure())
    return render(request, "403_csrf.html", {"form_page": referer if same_site else None}, status=403)
