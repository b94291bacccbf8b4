"""Read typed settings from the environment, refusing bad values clearly."""

import os

from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS = {"1", "true", "yes", "on"}
FALSE_WORDS = {"0", "false", "no", "off", ""}


def envbool(name: str, default: bool) -> bool:
    """Return the boolean in ``name``; accept 1/0, true/false, yes/no, on/off."""
    raw = os.environ.get(name)
    if raw is None:
        return default
    word = raw.strip().lower()
    if word in TRUE_WORDS:
        return True
    if word in FALSE_WORDS:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean: use true or false.")


def envint(name: str, default: int, minimum: int | None = None) -> int:
    """Return the integer in ``name``, at least ``minimum`` when given."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number.") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={value} is below the minimum of {minimum}.")
    return value


def envlist(name: str, default: list[str]) -> list[str]:
    """Return a comma-separated list from ``name``, blanks dropped."""
    raw = os.environ.get(name)
    if raw is None:
        return list(default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def envstr(name: str, default: str = "") -> str:
    """Return the string in ``name`` with surrounding white space removed."""
    return os.environ.get(name, default).strip()


def envurl(name: str, schemes: tuple[str, ...]) -> str:
    """Return the URL in ``name`` (or "") after checking its scheme."""
    raw = envstr(name)
    if raw and not raw.startswith(tuple(f"{scheme}://" for scheme in schemes)):
        allowed = ", ".join(f"{scheme}://" for scheme in schemes)
        raise ImproperlyConfigured(f"{name} must start with one of {allowed}; got {raw!r}.")
    return raw
