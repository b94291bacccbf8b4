"""One JSON shape for every API error: {"errors": {"<field>": ["message"]}} plus "detail" when not a field."""

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
