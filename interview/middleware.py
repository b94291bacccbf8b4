"""Refuse request parameters holding a NUL character: PostgreSQL can neither store nor search for one."""

from django.core.exceptions import BadRequest

from interview.json_input import NUL_MESSAGE


def has_nul(parameters) -> bool:
    return any("\x00" in key or any("\x00" in value for value in values) for key, values in parameters.lists())


def reject_nul_parameters(get_response):
    """Answer 400 (interview.api_errors.bad_request) to a NUL in any query or form parameter.

    One check for every view: the admin's search and autocomplete, list filters, page and
    API parameters alike. Form fields already refuse NUL (Django's CharField); this also
    covers parameters that reach the database without a form.
    """

    def middleware(request):
        if has_nul(request.GET) or (request.method == "POST" and has_nul(request.POST)):
            raise BadRequest(NUL_MESSAGE)
        return get_response(request)

    return middleware
