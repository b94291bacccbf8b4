"""Site-wide middleware: refuse NUL characters (PostgreSQL can neither store nor search for one); style bare 405s;
keep pages out of the browser's cache."""

from collections.abc import Iterator

from django.core.exceptions import BadRequest
from django.http import HttpRequest, HttpResponseNotAllowed
from django.shortcuts import render

from interview.api_errors import is_api
from interview.json_input import NUL_MESSAGE


def request_texts(request: HttpRequest) -> Iterator[str]:
    """Yield every name and value of the request's query and form parameters and cookies."""
    for parameters in (request.GET, request.POST) if request.method == "POST" else (request.GET,):
        for name, values in parameters.lists():
            yield name
            yield from values
    for name, value in request.COOKIES.items():
        yield name
        yield value


def reject_nul_characters(get_response):
    """Answer 400 (interview.api_errors.bad_request) to a NUL in any query or form parameter or cookie.

    One check for every view: the admin's search and autocomplete, list filters, page and
    API parameters alike. Form fields already refuse NUL (Django's CharField); this also
    covers what reaches the database without a form. A cookie can carry one too: a quoted
    value may spell it as the octal escape \\000, which Django decodes (the session key).
    """

    def middleware(request):
        if any("\x00" in text for text in request_texts(request)):
            raise BadRequest(NUL_MESSAGE)
        return get_response(request)

    return middleware


def method_not_allowed_page(get_response):
    """Give a page's empty 405 (``require_POST`` and the like) a short page, keeping its Allow header.

    Django has no handler405: its method decorators and class-based views answer with an empty
    body, which a browser shows as a blank page (a bookmarked answer URL, say). The API's 405s
    are DRF's JSON and pass through untouched.
    """

    def middleware(request):
        response = get_response(request)
        if isinstance(response, HttpResponseNotAllowed) and not response.content and not is_api(request):
            allowed = response["Allow"]
            response = render(request, "405.html", status=405)
            response["Allow"] = allowed
        return response

    return middleware


def pages_are_not_stored(get_response):
    """Send every page with ``Cache-Control: no-store``, unless its view chose its own caching.

    A page shows the learner's answers as they were when it was served, and htmx updates it in
    place. The browser's Back button reused the stored copy (Chrome does, however stale, unless
    told not to store it): a lesson page came back without the answers just given on it. Static
    files are served before this (WhiteNoise, with their own long caching); JSON is left alone.
    A page rendered by a POST (a refused answer without htmx) is not stored either: Back to it
    asks to resubmit the form, as browsers do for an unstored POST.
    """

    def middleware(request):
        response = get_response(request)
        if "Cache-Control" not in response and response.get("Content-Type", "").startswith("text/html"):
            response["Cache-Control"] = "no-store"
        return response

    return middleware
