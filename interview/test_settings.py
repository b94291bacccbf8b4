"""Settings for the test suite: the real settings with fast, offline tweaks."""

import os

os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production-0123456789abcdef")
os.environ.setdefault("HTTPS", "false")
# Generous limits so fuzzing is not throttled; the throttle tests set their own low rates.
for scope in ("ANON", "USER", "ANSWERS", "LOGIN", "LOGIN_ACCOUNT_ADDRESS", "LOGIN_ACCOUNT", "PASSWORD_RESET",
              "PASSWORD_RESET_ACCOUNT", "SIGNUP"):  # fmt: skip
    os.environ.setdefault(f"THROTTLE_{scope}", "100000/min")

from interview.settings import *  # noqa: E402,F403
from interview.settings import BASE_DIR, DATABASES  # noqa: E402

# Tests need no collectstatic: the manifest storage 404s under live_server.
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

# A file, not shared-cache memory, so threads in transactional tests wait for SQLite's lock
# (busy timeout) instead of failing with "database table is locked".
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["TEST"] = {"NAME": str(BASE_DIR / f".test-db-{os.getpid()}.sqlite3")}

# Parallel workers must not share a Redis database: one worker's cache.clear() flushes it,
# which would drop another worker's cached sessions mid-test. Worker gwN uses database N + 1.
_worker = os.environ.get("PYTEST_XDIST_WORKER", "")
if REDIS_URL and _worker.startswith("gw"):  # noqa: F405
    import re as _re

    _database = int(_worker[2:]) + 1
    _url = _re.sub(r"/\d+$", "", REDIS_URL.rstrip("/")) + f"/{_database}"  # noqa: F405
    CACHES["default"]["LOCATION"] = _url  # noqa: F405
