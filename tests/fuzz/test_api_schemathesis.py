"""schemathesis over the OpenAPI schema: no 5xx and no response that breaks the schema."""

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import not_a_server_error, response_schema_conformance

from tests.lessons.factories import make_lesson


@pytest.fixture
def api_schema(db):
    import gc

    from django.core import signals
    from django.db import close_old_connections

    threshold = gc.get_threshold()
    from interview.wsgi import application  # it freezes the collector's objects and raises its threshold

    make_lesson()
    # As Django's test client does: keep the test's connection (and transaction) open across requests.
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield schemathesis.openapi.from_wsgi("/api/schema/", application)
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)
    gc.unfreeze()  # the rest of the test process collects as before
    gc.set_threshold(*threshold)


@pytest.fixture
def token_header(learner_user):
    from interview.accounts.tokens import create_token

    _token, key = create_token(learner_user, "fuzz")
    return {"Authorization": f"Token {key}"}


def test_api_never_errors_and_matches_its_schema(api_schema, token_header):
    # schemathesis' pytest plugin does not yet support pytest 9, so drive its hypothesis strategies directly.
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 8
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck), database=None)
        def check(case):
            case.call_and_validate(headers=token_header, checks=[not_a_server_error, response_schema_conformance])

        check()
