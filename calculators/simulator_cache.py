"""Serve identical simulator runs from Django's cache: a run is a pure function of its inputs and seed.

The key is a hash of the mode, the piece asked for and the normalised inputs
(every parameter, defaults filled), so `?seed=1` and `?seed=1&replicas=64` share
an entry. The cache only saves time: when it fails or is away the run is
computed, with a logged warning.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.core.cache import cache

logger = logging.getLogger(__name__)

T = TypeVar("T")
VERSION = 2  # raise when the simulation's numbers change, so old entries are not served
TIMEOUT_S = 24 * 3600


def cache_key(mode: str, piece: str, inputs: Mapping[str, Any]) -> str:
    """Return the cache key of one run: mode, piece and a hash of the inputs in canonical JSON."""
    canonical = json.dumps(inputs, sort_keys=True, separators=(",", ":"), default=list)
    return f"simulator:v{VERSION}:{mode}:{piece}:{hashlib.sha256(canonical.encode()).hexdigest()[:40]}"


def cached_run(mode: str, piece: str, inputs: Mapping[str, Any], compute: Callable[[], T]) -> T:
    """Return the cached result of `compute` for these inputs, computing and storing it on a miss."""
    key = cache_key(mode, piece, inputs)
    try:
        found = cache.get(key)
    except Exception:
        logger.warning("Simulator cache not read: the cache failed", exc_info=True)
        found = None
    if found is not None:
        return found
    value = compute()
    try:
        cache.set(key, value, TIMEOUT_S)
    except Exception:
        logger.warning("Simulator cache not written: the cache failed", exc_info=True)
    return value
