"""WSGI entry point (gunicorn interview.wsgi)."""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interview.settings")

application = get_wsgi_application()

# What start-up loaded (modules, settings, models, URL patterns) lives as long as the worker:
# take it out of the garbage collector's generations, so the collections a page's allocations
# trigger scan only what requests create (they cost ~4 ms of a signed-in lesson page, and a
# full collection every ~50 pages scanned 120,000 start-up objects). Python's gc.freeze().
gc.freeze()
