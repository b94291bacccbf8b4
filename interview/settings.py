"""Settings for Serving Interview Lab, read from the environment (see README)."""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from interview.env import envbool, envint, envlist, envstr, envurl

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = envbool("DEBUG", False)

SECRET_KEY = envstr("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is required when DEBUG is off. Set SECRET_KEY to a long random "
            "string, or DEBUG=true for local development."
        )
    SECRET_KEY = "insecure-development-key-only-used-when-debug-is-on"

ALLOWED_HOSTS = envlist("ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = envlist("CSRF_TRUSTED_ORIGINS", [])
CSRF_FAILURE_VIEW = "interview.api_errors.csrf_failure"  # a styled page saying the form expired

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.humanize",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_htmx",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "interview.accounts",
    "lessons",
    "calculators",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "interview.middleware.pages_are_not_stored",
    "interview.middleware.reject_nul_characters",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "interview.middleware.method_not_allowed_page",  # innermost: renders with the request's user and messages
]

ROOT_URLCONF = "interview.urls"
WSGI_APPLICATION = "interview.wsgi.application"

TEMPLATES = [
    {
        # The site's pages (jinja2/): see interview/jinja2.py for why, and for their filters.
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {
            "environment": "interview.jinja2.environment",
            "context_processors": [
                "interview.context_processors.csrf",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "interview.context_processors.layout",
            ],
        },
    },
    {
        # The admin, its overrides in templates/, and Django's own pages (form widgets, e-mails).
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: a SQLite file in the project unless DATABASE_URL says otherwise.
DATABASE_URL = envurl("DATABASE_URL", ("sqlite", "postgres", "postgresql"))
DATABASES = {
    "default": dj_database_url.parse(
        DATABASE_URL or f"sqlite:///{BASE_DIR / 'db.sqlite3'}",
        conn_max_age=envint("DATABASE_CONN_MAX_AGE", 60, minimum=0),
        conn_health_checks=True,
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # WAL and a busy timeout let several gunicorn workers share one file.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"


def redis_cache(url: str) -> dict:
    """Return the cache settings for the Redis at ``url``, built so that an outage is survivable.

    django-redis turns connection errors into cache misses (IGNORE_EXCEPTIONS, each one
    logged below) and keeps a pool of connections; the short socket timeouts make a dead
    or unreachable Redis cost milliseconds per request instead of hanging it. The pool
    reconnects by itself when Redis is back, so recovery needs no restart.
    """
    return {
        "BACKEND": "django_redis.cache.RedisCache",
        "LOCATION": url,
        "KEY_PREFIX": envstr("CACHE_KEY_PREFIX", "sil"),
        "OPTIONS": {
            "IGNORE_EXCEPTIONS": True,
            "SOCKET_CONNECT_TIMEOUT": 0.1,  # seconds; a healthy Redis answers in well under 1 ms
            "SOCKET_TIMEOUT": 0.1,
            "CONNECTION_POOL_KWARGS": {"max_connections": 50},
        },
    }


# Cache and sessions: Redis when REDIS_URL is set, local memory otherwise. Sessions are
# cached_db, so they are read from the database whenever Redis misses or is down.
REDIS_URL = envurl("REDIS_URL", ("redis", "rediss", "unix"))
if REDIS_URL:
    CACHES = {"default": redis_cache(REDIS_URL)}
    SESSION_ENGINE = "django.contrib.sessions.backends.cached_db"
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
    SESSION_ENGINE = "django.contrib.sessions.backends.db"
DJANGO_REDIS_LOG_IGNORED_EXCEPTIONS = True  # an ignored Redis error still leaves a trace in the log

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# ModelBackend, with the account's learner loaded along with the user.
AUTHENTICATION_BACKENDS = ["interview.accounts.backends.LearnerModelBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

EMAIL_BACKEND = envstr("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = envstr("EMAIL_HOST", "localhost")
EMAIL_PORT = envint("EMAIL_PORT", 25, minimum=1)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = envstr("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "Serving Interview Lab <noreply@localhost>")

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(envstr("STATIC_ROOT") or BASE_DIR / "staticfiles")
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}

# HTTPS: on unless debugging; HTTPS=false turns it off for local load tests.
HTTPS = envbool("HTTPS", not DEBUG)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = envint("SECURE_HSTS_SECONDS", 31536000 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
if envbool("BEHIND_PROXY", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# Trust X-Forwarded-For only behind the proxy that sets it; otherwise a client could pick its own address.
NUM_PROXIES = 1 if envbool("BEHIND_PROXY", False) else 0
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True

# Content-Security-Policy: only this site's own scripts, styles and images.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "interview.accounts.tokens.ApiTokenAuthentication",
        "interview.accounts.tokens.CsrfSessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # Deep nesting and NUL characters are a 400, bodies over DATA_UPLOAD_MAX_MEMORY_SIZE a 413.
    "DEFAULT_PARSER_CLASSES": [
        "interview.json_input.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "interview.api_errors.api_exception_handler",
    "DEFAULT_THROTTLE_CLASSES": ["interview.ratelimit.VisitorThrottle"],
}

# Rate limits (interview/ratelimit.py): "<count>/<unit>" or "<count>/<n><unit>", units s, min, h, day.
RATE_LIMITS = {
    "api_anon": envstr("THROTTLE_ANON", "600/min"),  # API requests per address, anonymous
    "api_user": envstr("THROTTLE_USER", "1200/min"),  # API requests per account
    "answers": envstr("THROTTLE_ANSWERS", "120/min"),  # answers per visitor, pages and API together
    "simulations": envstr("THROTTLE_SIMULATIONS", "60/min"),  # simulator runs per visitor, pages and API together
    "login": envstr("THROTTLE_LOGIN", "10/min"),  # log-in attempts per address
    "login_account_address": envstr("THROTTLE_LOGIN_ACCOUNT_ADDRESS", "5/15min"),  # failures per account and address
    "login_account": envstr("THROTTLE_LOGIN_ACCOUNT", "100/h"),  # failures per account, all addresses
    "password_reset": envstr("THROTTLE_PASSWORD_RESET", "5/h"),  # reset requests per address
    "password_reset_account": envstr("THROTTLE_PASSWORD_RESET_ACCOUNT", "3/h"),  # reset requests per e-mail
    "signup": envstr("THROTTLE_SIGNUP", "10/h"),  # sign-up attempts per address
}
if DEBUG:
    REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"].append("rest_framework.renderers.BrowsableAPIRenderer")

# Mock interviews (lessons/interviews.py): every phase budget is multiplied by this factor (the
# tests shrink it to run a whole interview in seconds), and the page's htmx timer polls this often.
INTERVIEW_BUDGET_SCALE = 1.0
INTERVIEW_TIMER_POLL_SECONDS = 15

SPECTACULAR_SETTINGS = {
    "TITLE": "Serving Interview Lab API",
    "DESCRIPTION": "Lessons, answers, results, mock interviews and the calculators of Serving Interview Lab.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    # The review list's item `type` is what the review answer takes: one enum, under the name it had first.
    "ENUM_NAME_OVERRIDES": {"ReviewAnswerTypeEnum": "lessons.models.ReviewCard.ITEM_KINDS"},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "WARNING") or "WARNING"},
}
