"""The layout's fixed links (pages and static files), worked out once per process, not on every page."""

from __future__ import annotations

import functools

from django.core.signals import setting_changed
from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.templatetags.static import static
from django.urls import get_script_prefix, reverse
from django.utils.functional import SimpleLazyObject
from django.utils.html import format_html

# Settings the links are derived from: a test that overrides one gets them worked out again.
LINK_SETTINGS = {"ROOT_URLCONF", "FORCE_SCRIPT_NAME", "STATIC_URL", "STORAGES"}


@functools.cache
def layout_links(script_prefix: str = "/") -> dict[str, str]:
    """Return the URLs base.html links to for a site mounted at ``script_prefix`` (the request's).

    Reversing them with ``{% url %}`` and ``{% static %}`` on every page cost more CPU than
    a trivial view does in all (about 2,400 Python calls a page): they are worked out once per
    prefix (Django reverses with the prefix of the request being served, which this is called in).
    """
    names = {"home": "home", "calculators": "calculators:index", "simulator": "simulator:routing",
             "results": "results", "review": "review", "interviews": "interviews", "admin": "admin:index",
             "account": "account", "logout": "logout", "login": "login", "signup": "signup",
             "api_docs": "api-docs", "healthz": "healthz"}  # fmt: skip
    links = {key: reverse(name) for key, name in names.items()}
    links |= {"favicon": static("img/favicon.svg"), "css": static("css/site.css"),
              "pygments_css": static("css/pygments.css"), "js": static("js/site.js")}  # fmt: skip
    return links


ACCOUNT_PAGES = {"login", "signup"}

# Which header link a page belongs to (base.html marks it aria-current="page"), by URL name, else by app.
NAV_BY_URL_NAME = {"home": "home", "lesson": "home", "walkthrough-step": "home", "review": "review",
                   "results": "results", "interviews": "interviews", "interview": "interviews",
                   "account": "account", "login": "login", "signup": "signup"}  # fmt: skip
NAV_BY_APP = {"calculators": "calculators", "simulator": "simulator"}


def csrf(request: HttpRequest) -> dict:
    """Return the page's CSRF token and its hidden input: one token per page, worked out on first use.

    Django's Jinja2 backend gives ``csrf_token`` and ``csrf_input`` as lazy strings that mask a new token
    each time one is written; Django's engine (``{% csrf_token %}``) writes one per page, as this does.
    """
    token = SimpleLazyObject(lambda: get_token(request))
    field = '<input type="hidden" name="csrfmiddlewaretoken" value="{}">'
    return {"csrf_token": token, "csrf_input": SimpleLazyObject(lambda: format_html(field, token))}


def layout(request: HttpRequest) -> dict:
    return {
        "layout": layout_links(get_script_prefix()),
        "return_to": return_to(request),
        "nav_current": nav_current(request),
    }


def nav_current(request: HttpRequest) -> str:
    """Return the header link the request's page belongs to ("" for none): one lookup, not one per link."""
    match = request.resolver_match
    if match is None:
        return ""
    return NAV_BY_APP.get(match.app_name) or NAV_BY_URL_NAME.get(match.url_name, "")


def return_to(request: HttpRequest) -> str:
    """Return where "Log in" and "Sign up" should bring the visitor back to.

    The page they are on; on the log-in or sign-up page itself, the page that sent them there.
    """
    match = request.resolver_match
    if match is not None and match.url_name in ACCOUNT_PAGES:
        return request.GET.get("next", "")
    return request.get_full_path()


def forget_links(*, setting: str, **kwargs) -> None:
    if setting in LINK_SETTINGS:
        layout_links.cache_clear()


setting_changed.connect(forget_links)
