"""WSGI entry point (gunicorn interview.wsgi)."""

import gc
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "interview.settings")

application = get_wsgi_application()

# Built now rather than inside the first answer a learner types a number into: pint's units take over half a
# second to build, and each worker would have made one learner wait for them.
from lessons.number_entry import registry  # noqa: E402 - after the app is set up

registry()

# What start-up loaded (modules, settings, models, URL patterns) lives as long as the worker:
# take it out of the garbage collector's generations, so the collections a page's allocations
# trigger scan only what requests create (they cost ~4 ms of a signed-in lesson page, and a
# full collection every ~50 pages scanned 120,000 start-up objects). Python's gc.freeze().
gc.freeze()

# A page allocates tens of thousands of objects that reference counting frees; Python's default
# first-generation threshold (700 container objects allocated and not yet freed) still ran about two
# collections a page, 0.5 to 0.7 ms of a signed-in lesson page or results page (gc.callbacks, in
# bench.profile's setup). At 10,000 a collection comes every few pages, and each finds little more
# to scan: 0.1 ms a page on average.
GC_THRESHOLD = 10_000
gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
