"""Settings for the test suite: the real settings with fast, offline tweaks."""

import os

os.environ.setdefault("SECRET_KEY", "test-secret-key-not-for-production-0123456789abcdef")
os.environ.setdefault("HTTPS", "false")
# Generous limits so fuzzing is not throttled; the throttle tests set their own low rates.
for scope in ("ANON", "USER", "ANSWERS", "LOGIN"):
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
