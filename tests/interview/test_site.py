"""Site-wide behaviour: the readiness probe, security headers, the base layout."""

from unittest import mock

import pytest
from django.db import DatabaseError
from django.test import Client
from django.urls import reverse

from lessons.models import DeepDive
from tests.lessons.factories import make_lesson


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


@pytest.mark.django_db
def test_layout_links_carry_the_requests_script_prefix(client):
    """A site mounted under a path (SCRIPT_NAME): the header's links carry it, whatever an earlier request had."""
    from django.urls import get_script_prefix, set_script_prefix

    client.get("/no-such-page/")  # links worked out at "/"
    before = get_script_prefix()
    try:
        set_script_prefix("/lab/")  # as Django's WSGI handler does from SCRIPT_NAME (the test client does not)
        html = client.get("/no-such-page/").content.decode()
    finally:
        set_script_prefix(before)
    assert '<a href="/lab/results/"' in html and '<a href="/results/"' not in html


@pytest.mark.django_db
def test_a_form_posted_without_a_valid_csrf_token_gets_a_styled_page_saying_what_to_do():
    client = Client(enforce_csrf_checks=True)
    client.get(reverse("login"))  # sets the CSRF cookie; the post below leaves the token out, as a stale form would
    response = client.post(
        reverse("login"), {"username": "ada", "password": "x"}, HTTP_REFERER="http://testserver/accounts/login/"
    )
    assert response.status_code == 403
    page = response.content.decode()
    assert "<h1>This form has expired</h1>" in page
    assert 'class="site-header"' in page  # the site's layout, not Django's bare page
    assert "CSRF verification failed" not in page
    assert '<a href="http://testserver/accounts/login/">Reload the form</a>' in page
    assert client.get(reverse("login")).status_code == 200  # reloading the form works


@pytest.mark.django_db
def test_a_page_opened_with_the_wrong_method_gets_a_styled_405_keeping_allow(client):
    response = client.get("/accounts/logout/")
    assert response.status_code == 405
    assert response["Allow"] == "POST, OPTIONS"
    page = response.content.decode()
    assert "<h1>" in page and 'class="site-header"' in page
    assert "cannot be opened" in page


@pytest.mark.django_db
def test_an_answer_address_opened_in_the_browser_gets_the_styled_405(client):
    lesson = make_lesson()
    dd = DeepDive.objects.get(key="dd-1", section__lesson=lesson)
    response = client.get(f"/lessons/{lesson.slug}/deep-dives/{dd.pk}/answer/")
    assert response.status_code == 405
    assert "POST" in response["Allow"]
    assert "cannot be opened as a page" in response.content.decode()
    assert client.get(lesson.get_absolute_url()).status_code == 200  # the way back works


@pytest.mark.django_db
def test_the_api_answers_a_wrong_method_in_json(client):
    response = client.delete("/api/v1/calculators/")
    assert response.status_code == 405
    assert response["Content-Type"] == "application/json"
    assert "detail" in response.json()


def test_the_wsgi_entry_point_leaves_start_up_objects_out_of_garbage_collection():
    # A worker's start-up objects live as long as it does: collections triggered by pages should not rescan them.
    import gc
    import importlib

    threshold = gc.get_threshold()  # before the import, which sets it
    import interview.wsgi

    gc.unfreeze()
    try:
        importlib.reload(interview.wsgi)
        assert gc.get_freeze_count() > 10_000
        # ...and a page's allocations trigger a collection every few pages, not two a page (700 by default).
        assert gc.get_threshold() == (10_000, *threshold[1:])
    finally:
        gc.unfreeze()  # the test process keeps collecting as before
        gc.set_threshold(*threshold)


def test_the_wsgi_entry_point_builds_the_unit_registry_before_any_number_is_typed():
    """Building pint's units takes over half a second: the first learner to type a number into each new worker
    waited for it, inside their answer."""
    import gc
    import importlib

    from lessons.number_entry import registry

    threshold = gc.get_threshold()
    import interview.wsgi

    registry.cache_clear()
    try:
        importlib.reload(interview.wsgi)
        assert registry.cache_info().currsize == 1
    finally:
        gc.unfreeze()  # the test process keeps collecting as before
        gc.set_threshold(*threshold)


@pytest.mark.django_db
def test_pages_are_not_stored_by_the_browser_but_a_views_own_caching_and_json_are_kept(client, content):
    """A stored lesson page came back on Back without the answers given on it (see the browser test)."""
    for url in ("/", "/lessons/how-the-lab-works/?layer=2", "/results/", "/review/", "/calculators/kv-cache/"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response["Cache-Control"] == "no-store", url
    assert client.get("/no-such-page/")["Cache-Control"] == "no-store"  # error pages too
    assert "no-store" in client.get("/healthz")["Cache-Control"]  # never_cache's own header, kept whole
    assert "max-age=0" in client.get("/healthz")["Cache-Control"]
    assert "Cache-Control" not in client.get("/api/v1/calculators/")
