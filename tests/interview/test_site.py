"""Site-wide behaviour: the readiness probe, security headers, the base layout."""

from unittest import mock

import pytest
from django.db import DatabaseError
from django.urls import reverse


@pytest.mark.django_db
def test_healthz_is_ok_when_the_database_answers(client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "cache": "ok"}  # local memory: always ok


@pytest.mark.django_db
def test_healthz_is_503_when_the_database_does_not(client):
    with mock.patch("interview.views.connection.cursor", side_effect=DatabaseError("down")):
        response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json() == {"status": "unavailable", "database": "down", "cache": "ok"}


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy_allowing_only_this_site(client):
    policy = client.get("/")["Content-Security-Policy"]
    assert "script-src 'self'" in policy
    assert "default-src 'self'" in policy
    assert "unsafe-inline" not in policy.split("style-src")[0]


@pytest.mark.django_db
def test_base_layout_has_landmarks_skip_link_live_region_and_csrf_for_htmx(client):
    html = client.get("/").content.decode()
    assert 'class="skip-link" href="#main"' in html
    assert '<main id="main"' in html
    assert 'aria-live="polite"' in html
    assert 'hx-headers=\'{"x-csrftoken": "' in html
    assert 'href="/calculators/"' in html
    assert 'href="/results/"' in html
    assert '<script src="/static/django_htmx/htmx-2.min.js" defer></script>' in html  # htmx 2, served locally
    assert "cdn" not in html.lower()


@pytest.mark.django_db
def test_admin_link_only_for_staff(client, admin_client):
    link = f'<li><a href="{reverse("admin:index")}">Admin</a></li>'
    assert link not in client.get("/").content.decode()
    assert link in admin_client.get("/").content.decode()


@pytest.mark.django_db
def test_favicon_resolves(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert response["Location"].endswith("favicon.svg")


@pytest.mark.django_db
def test_layout_links_are_not_reversed_again_on_each_page(client, django_user_model):
    # The layout's links do not depend on the request: reversing them per page cost more than a trivial view.
    client.force_login(django_user_model.objects.create_user("reader"))
    client.get("/no-such-page/")  # the first page of the process works them out
    with mock.patch("django.urls.reverse", wraps=reverse) as reversed_in_templates:
        html = client.get("/no-such-page/").content.decode()
    assert reversed_in_templates.call_count == 0
    for name in ("home", "calculators:index", "results", "account", "logout", "api-docs", "healthz"):
        assert f'"{reverse(name)}"' in html
