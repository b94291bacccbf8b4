"""Fixtures of the bench's tests: servers that share this test's database."""

import pytest
from django.db import connection

from bench import servers


def database_url() -> str:
    """Return the URL of the database this test runs on, so that servers use it too."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def server_env(transactional_db, tmp_path) -> dict:
    """The environment of a gunicorn server on this test's database (committed rows only) and Redis, if set."""
    return servers.settings_env(database_url(), tmp_path / "static", settings="interview.test_settings")
