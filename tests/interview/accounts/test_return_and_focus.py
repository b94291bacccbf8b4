"""Sign-up and log-in return the learner to the page they came from; errors sit under their field, focused."""

import re

import pytest
from django.urls import reverse

from tests.lessons.factories import answer_deep_dive as answer
from tests.lessons.factories import make_lesson

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


@pytest.mark.parametrize("elsewhere", ["https://evil.example/", "//evil.example/", "/\\evil.example/"])
def test_sign_up_ignores_a_next_on_another_site(client, db, elsewhere):
    # The form does not even carry it, and a posted one is refused: the new account lands on the lessons.
    assert 'name="next"' not in client.get(reverse("signup"), {"next": elsewhere}).content.decode()
    form = {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD, "next": elsewhere}
    response = client.post(reverse("signup"), form)
    assert response.status_code == 302
    assert response["Location"] == reverse("home")


def test_sign_up_without_a_next_lands_on_the_lessons_with_a_start_button(client, db):
    make_lesson()
    page = client.get(reverse("signup")).content.decode()
    assert 'name="next"' not in page
    form = {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD}
    response = client.post(reverse("signup"), form)
    assert response.status_code == 302
    assert response["Location"] == reverse("home")
    home = client.get(response["Location"]).content.decode()
    assert "Account created. Your progress so far is saved to it." in home
    assert "Practise the system-design interview about serving LLMs</h1>" in home
    assert "Start with Lesson sample</a>" in home  # nothing answered yet: no empty results page


def test_log_in_without_a_next_lands_on_the_lessons_where_continue_appears(client, learner_user):
    lesson = make_lesson()
    answer(client, lesson, "dd-1", "best")  # answered before logging in: merged into the account
    page = client.get(reverse("login")).content.decode()
    assert 'name="next" value=""' in page
    response = client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery", "next": ""})
    assert response.status_code == 302
    assert response["Location"] == reverse("home")
    home = client.get(response["Location"]).content.decode()
    assert "Continue with Lesson sample</a>" in home


def test_log_in_returns_to_next(client, learner_user):
    form = {"username": "ada", "password": "correct-horse-battery", "next": "/simulator/"}
    response = client.post(reverse("login"), form)
    assert response.status_code == 302
    assert response["Location"] == "/simulator/"


@pytest.mark.parametrize("elsewhere", ["https://evil.example/", "//evil.example/", "/\\evil.example/"])
def test_log_in_ignores_a_next_on_another_site(client, learner_user, elsewhere):
    form = {"username": "ada", "password": "correct-horse-battery", "next": elsewhere}
    response = client.post(reverse("login"), form)
    assert response.status_code == 302
    assert response["Location"] == reverse("home")


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
