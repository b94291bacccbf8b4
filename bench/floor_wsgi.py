"""The WSGI app `make bench` serves: the real app (interview.wsgi) with bench/floor_urls.py as its URLs."""

import os

import django
from django.conf import settings

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interview.settings")
django.setup()
settings.ROOT_URLCONF = "bench.floor_urls"

from interview.wsgi import application  # noqa: E402, F401
