"""Sign-up and log-in return the learner to the page they came from; errors sit under their field, focused."""

import re

from django.urls import reverse

PASSWORD = "a-long-pass-phrase"


def _field_block(html: str, name: str) -> str:
    """The form row of one field: from its label to the next row."""
    start = html.index(f'for="id_{name}"')
    end = html.find('<div class="field">', start)
    return html[start : end if end != -1 else len(html)]


def test_header_links_carry_the_page_the_learner_is_on(client, db):
    html = client.get(reverse("calculators:detail", args=["kv-cache"])).content.decode()
    assert f'href="{reverse("login")}?next=/calculators/kv-cache/"' in html
    assert f'href="{reverse("signup")}?next=/calculators/kv-cache/"' in html


def test_the_log_in_page_links_to_sign_up_with_the_page_it_came_from(client, db):
    html = client.get(reverse("login"), {"next": "/calculators/kv-cache/"}).content.decode()
    # Not back to the log-in page itself: the learner follows "Sign up" and returns to the calculator.
    assert f'href="{reverse("signup")}?next=/calculators/kv-cache/"' in html
    form = {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD, "next": "/calculators/kv-cache/"}
    response = client.post(reverse("signup"), form)
    assert response["Location"] == "/calculators/kv-cache/"


def test_sign_up_returns_to_next(client, db):
    page = client.get(reverse("signup"), {"next": "/calculators/kv-cache/?tokens=5"}).content.decode()
    assert 'name="next" value="/calculators/kv-cache/?tokens=5"' in page
    form = {
        "username": "newbie",
        "password1": PASSWORD,
        "password2": PASSWORD,
        "next": "/calculators/kv-cache/?tokens=5",
    }
    response = client.post(reverse("signup"), form)
    assert response.status_code == 302
    assert response["Location"] == "/calculators/kv-cache/?tokens=5"
    assert client.get(response["Location"]).status_code == 200


def test_sign_up_ignores_a_next_on_another_site(client, db):
    form = {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD, "next": "https://evil.example/"}
    response = client.post(reverse("signup"), form)
    assert response["Location"] == reverse("results")


def test_log_in_returns_to_next(client, learner_user):
    form = {"username": "ada", "password": "correct-horse-battery", "next": "/simulator/"}
    response = client.post(reverse("login"), form)
    assert response.status_code == 302
    assert response["Location"] == "/simulator/"
    bad = client.post(reverse("login"), {**form, "next": "//evil.example/"})
    assert bad["Location"] != "//evil.example/"


def test_a_short_password_is_reported_under_the_password_and_focused(client, db):
    response = client.post(reverse("signup"), {"username": "newbie", "password1": "short", "password2": "short"})
    assert response.status_code == 400
    html = response.content.decode()
    assert "This password is too short" in _field_block(html, "password1")
    assert "This password is too short" not in _field_block(html, "password2")
    # Focus goes to the first field with an error, and only there.
    assert re.search(r'<input[^>]*name="password1"[^>]*autofocus', html)
    assert html.count("autofocus") == 1


def test_a_bad_log_in_focuses_the_first_field(client, learner_user):
    html = client.post(reverse("login"), {"username": "ada", "password": "wrong"}).content.decode()
    assert re.search(r'<input[^>]*name="username"[^>]*autofocus', html)
    assert html.count("autofocus") == 1
