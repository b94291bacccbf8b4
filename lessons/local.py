"""Process-local memos in front of the shared cache, for what nearly every request reads.

With Redis as the cache each lookup is a network round trip; these spare it. A lesson's
version is remembered for ``VERSION_SECONDS`` (an edit in another worker shows within that
plus the shared cache's own short life). Pages and answer fragments are remembered under
keys that name the content version, so they never go stale; only the most recent are kept.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable

from cachetools import Cache, LRUCache, TTLCache

VERSION_SECONDS = 1.0


class Memo:
    """A bounded cache of this process, safe to share between threads."""

    def __init__(self, cache: Cache) -> None:
        self._cache = cache
        self._lock = threading.Lock()

    def get(self, key: str):
        with self._lock:
            return self._cache.get(key)

    def set(self, key: str, value) -> None:
        with self._lock:
            self._cache[key] = value

    def pop(self, key: str) -> None:
        with self._lock:
            self._cache.pop(key, None)

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()

    def __len__(self) -> int:
        return len(self._cache)


versions = Memo(TTLCache(maxsize=1024, ttl=VERSION_SECONDS))
pages = Memo(LRUCache(maxsize=64))  # pages every first-time visitor sees alike
fragments = Memo(LRUCache(maxsize=4096))  # answered deep dives, per state learners share


def version(key: str, load: Callable[[], object]) -> object:
    """Return the remembered version under ``key``, else ``load()`` it and remember it."""
    value = versions.get(key)
    if value is None:
        value = load()
        versions.set(key, value)
    return value


def forget(keys: Iterable[str] | None = None) -> None:
    """Drop remembered versions (of ``keys``, or all; with no keys, pages and fragments too)."""
    if keys is None:
        for memo in (versions, pages, fragments):
            memo.clear()
        return
    for key in keys:
        versions.pop(key)
