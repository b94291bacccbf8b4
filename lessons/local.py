"""Process-local memos in front of the shared cache, for what nearly every request reads.

With Redis as the cache each lookup is a network round trip; these spare it. A lesson's
version is remembered for ``VERSION_SECONDS`` (an edit in another worker shows within that
plus the shared cache's own short life); pages are remembered under keys that name the
content version, so they never go stale, and only the most recent are kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from cachetools import LRUCache, TTLCache

VERSION_SECONDS = 1.0
_versions: TTLCache = TTLCache(maxsize=1024, ttl=VERSION_SECONDS)
_pages: LRUCache = LRUCache(maxsize=64)
_lock = threading.Lock()


def version(key: str, load: Callable[[], object]) -> object:
    """Return the remembered version under ``key``, else ``load()`` it and remember it."""
    with _lock:
        value = _versions.get(key)
    if value is None:
        value = load()
        with _lock:
            _versions[key] = value
    return value


def page(key: str) -> str | None:
    with _lock:
        return _pages.get(key)


def keep_page(key: str, html: str) -> None:
    with _lock:
        _pages[key] = html


def forget(keys: Iterable[str] | None = None) -> None:
    """Drop remembered versions (of ``keys``, or all; with no keys, pages too)."""
    with _lock:
        if keys is None:
            _versions.clear()
            _pages.clear()
            return
        for key in keys:
            _versions.pop(key, None)
