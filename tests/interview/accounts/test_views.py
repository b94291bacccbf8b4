"""Accounts: progress follows the session, then merges into the account on sign-up or log-in; tokens.

Every action is followed by the next request a user would make, as the signed-in (or signed-out) user.
"""

import re
from datetime import timedelta

import pytest
from django.urls import reverse

from lessons.models import Answer, ApiToken, DeepDive, Learner
from tests.lessons.factories import answer_deep_dive as answer
from tests.lessons.factories import make_lesson


@pytest.fixture
def lesson(db):
    return make_lesson(deep_dives=2)


def assert_signed_in_as(client, username: str) -> None:
    """The account page answers (no redirect to log-in) and names the account."""
    page = client.get(reverse("account"))
    assert page.status_code == 200
    assert f"Signed in as <strong>{username}</strong>" in page.content.decode()


def assert_signed_out(client) -> None:
    page = client.get(reverse("account"))
    assert page.status_code == 302
    assert page["Location"].startswith(reverse("login"))


def test_anonymous_progress_is_tied_to_the_session_and_stored(client, lesson):
    answer(client, lesson, "dd-1", "best")
    learner = Learner.objects.get()
    assert learner.user is None
    assert client.session["learner_id"] == learner.pk
    assert Answer.objects.get().learner == learner


def test_sign_up_leaves_the_learner_signed_in_with_the_sessions_progress(client, lesson):
    answer(client, lesson, "dd-1", "best")
    response = client.post(
        reverse("signup"), {"username": "newbie", "password1": "a-long-pass-phrase", "password2": "a-long-pass-phrase"}
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("home")  # the lessons, where the learner goes on
    assert f"Continue with {lesson.title}</a>" in client.get(response["Location"]).content.decode()
    results = client.get(reverse("results")).content.decode()
    assert "<strong>10 of " in results  # the session's answer, now the account's
    assert_signed_in_as(client, "newbie")
    learner = Learner.objects.get(user__username="newbie")
    assert learner.answers.count() == 1
    assert Learner.objects.count() == 1


def test_log_in_merges_session_progress_and_keeps_accounts_first_answers(client, lesson, learner_user):
    account = Learner.objects.create(user=learner_user)
    dd = DeepDive.objects.get(key="dd-1")
    Answer.objects.create(
        learner=account, deep_dive=dd, choice=dd.choices.get(verdict="weak"), outcome="incorrect", points=0,
        max_points=10, is_first=True,
    )  # fmt: skip
    answer(client, lesson, "dd-1", "best")
    answer(client, lesson, "dd-2", "best")
    response = client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery"})
    assert response.status_code == 302
    # The page it leads to says so, as signing up and logging out do (it said nothing: newcomer's finding).
    landed = client.get(response["Location"]).content.decode()
    assert "You are logged in. What you answered before logging in is added to your account." in landed
    assert_signed_in_as(client, "ada")
    # The account's first answer to dd-1 (0 points) stands; dd-2 comes from the session (10 points).
    assert "<strong>10 of " in client.get(reverse("results")).content.decode()
    # The lesson page agrees: the session's answer to dd-1 is now a retry of the account's.
    assert (
        "on a retry (not scored). Your score stays 0 of 10." in client.get(lesson.get_absolute_url()).content.decode()
    )
    firsts = {a.deep_dive.key: a.points for a in Answer.objects.filter(learner=account, is_first=True)}
    assert firsts == {"dd-1": 0, "dd-2": 10}
    assert Answer.objects.filter(learner=account).count() == 3
    assert Learner.objects.count() == 1


def test_bad_login_shows_an_error_and_stays_signed_out(client, learner_user):
    response = client.post(reverse("login"), {"username": "ada", "password": "wrong"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()
    assert_signed_out(client)


def test_signup_form_errors_are_shown_beside_fields(client, db):
    response = client.post(reverse("signup"), {"username": "", "password1": "x", "password2": "y"})
    assert response.status_code == 400
    assert "errorlist" in response.content.decode()
    assert_signed_out(client)


def test_logout_is_post_only_and_signs_out(client, learner_user):
    client.force_login(learner_user)
    assert client.get(reverse("logout")).status_code == 405
    assert_signed_in_as(client, "ada")
    response = client.post(reverse("logout"))
    assert response.status_code == 302
    assert_signed_out(client)
    # Said on the page it leads to, which puts focus on it once loaded (a status there on load is not read out).
    html = client.get(response["Location"]).content.decode()
    assert '<div class="messages" id="messages" role="status" tabindex="-1" data-focus-on-load>' in html
    assert "You are logged out. Log in to pick up where you left off." in html


def test_account_page_creates_shows_once_and_revokes_tokens(client, learner_user):
    client.force_login(learner_user)
    response = client.post(reverse("account"), {"name": "scripts"}, follow=True)
    assert response.redirect_chain == [(f"{reverse('account')}#new-token", 302)]  # the browser focuses the key's box
    html = response.content.decode()
    assert '<div class="feedback outcome-correct" role="status" tabindex="-1" id="new-token">' in html
    token = ApiToken.objects.get()
    assert 'id="new-key" readonly rows="1" spellcheck="false">sil_' in html
    assert token.prefix in html
    key = html.split('spellcheck="false">')[1].split("<")[0]
    page = client.get(reverse("account")).content.decode()
    assert key not in page
    assert token.key_hash != key
    # The key works for a script, as that account.
    results = client.get("/api/v1/results/", HTTP_AUTHORIZATION=f"Token {key}")
    assert results.status_code == 200
    revoked = client.post(reverse("account"), {"revoke": token.pk})
    assert revoked["Location"] == f"{reverse('account')}#messages"  # focus on "Token revoked"
    assert not ApiToken.objects.exists()
    assert client.get("/api/v1/results/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 401
    assert_signed_in_as(client, "ada")


def test_the_account_page_writes_a_tokens_times_as_every_time_on_the_site(client, learner_user, stopped_clock):
    client.force_login(learner_user)
    created = client.post(reverse("account"), {"name": "scripts"}, follow=True).content.decode()
    key = created.split('spellcheck="false">')[1].split("<")[0]
    page = client.get(reverse("account")).content.decode()
    # Created at 12:00:15 on the stopped clock; the column headings need not say UTC: each time does.
    assert '<th scope="col">Created</th><th scope="col">Last used</th>' in page
    assert (
        '<td data-label="Created"><time datetime="2026-11-30T12:00:15+00:00">30 Nov 2026, 12:00 UTC</time></td>' in page
    )
    assert '<td data-label="Last used">never</td>' in page
    stopped_clock.shift(timedelta(days=1, hours=3, minutes=12))
    assert client.get("/api/v1/results/", HTTP_AUTHORIZATION=f"Token {key}").status_code == 200
    page = client.get(reverse("account")).content.decode()
    assert '<td data-label="Last used"><time datetime="2026-12-01T15:12:15+00:00">1 Dec 2026, 15:12 UTC</time>' in page


def test_account_page_needs_login(client, db):
    assert_signed_out(client)


def test_token_without_name_is_refused(client, learner_user):
    client.force_login(learner_user)
    response = client.post(reverse("account"), {"name": ""})
    assert response.status_code == 400
    assert "Give the token a name." in response.content.decode()
    assert re.search(r'<input[^>]*name="name"[^>]*autofocus', response.content.decode())  # the browser goes there
    assert not ApiToken.objects.exists()


def test_password_change_keeps_the_learner_signed_in(client, learner_user):
    client.force_login(learner_user)
    response = client.post(
        reverse("password_change"),
        {
            "old_password": "correct-horse-battery",
            "new_password1": "another-long-phrase",
            "new_password2": "another-long-phrase",
        },
    )
    assert response.status_code == 302
    assert_signed_in_as(client, "ada")
    learner_user.refresh_from_db()
    assert learner_user.check_password("another-long-phrase")


def test_password_reset_sends_a_working_link(client, learner_user, mailoutbox):
    response = client.post(reverse("password_reset"), {"email": "ada@example.com"})
    assert response.status_code == 302
    assert len(mailoutbox) == 1
    link = next(line for line in mailoutbox[0].body.splitlines() if "/accounts/reset/" in line).strip()
    path = link[link.index("/accounts/reset/") :]
    form_page = client.get(path, follow=True)
    assert "Choose a new password" in form_page.content.decode()
    done = client.post(
        form_page.redirect_chain[-1][0], {"new_password1": "brand-new-phrase-9", "new_password2": "brand-new-phrase-9"}
    )
    assert done.status_code == 302
    assert_signed_out(client)  # the reset does not sign in: the learner logs in with the new password
    client.post(reverse("login"), {"username": "ada", "password": "brand-new-phrase-9"})
    assert_signed_in_as(client, "ada")


def test_revoking_with_a_bad_id_is_harmless(client, learner_user):
    client.force_login(learner_user)
    for bad in ("abc", "1.5", "9" * 40, ""):
        assert client.post(reverse("account"), {"revoke": bad}).status_code == 302
    assert_signed_in_as(client, "ada")


def test_reloading_after_creating_a_token_does_not_create_another(client, learner_user):
    client.force_login(learner_user)
    client.post(reverse("account"), {"name": "once"}, follow=True)
    client.get(reverse("account"))
    assert ApiToken.objects.count() == 1


def sign_up(client, username: str, email: str):
    password = "a-long-pass-phrase"
    return client.post(
        reverse("signup"), {"username": username, "email": email, "password1": password, "password2": password}
    )


def test_sign_up_with_an_e_mail_lets_the_learner_reset_a_forgotten_password(client, db, mailoutbox):
    page = client.get(reverse("signup")).content.decode()
    assert "Only used to reset your password" in page
    response = sign_up(client, "newbie", "newbie@example.com")
    assert response.status_code == 302
    assert_signed_in_as(client, "newbie")
    assert client.post(reverse("password_reset"), {"email": "newbie@example.com"}).status_code == 302
    assert [message.to for message in mailoutbox] == [["newbie@example.com"]]
    assert "newbie" in mailoutbox[0].body


def test_sign_up_refuses_a_malformed_e_mail_beside_the_field(client, db):
    response = sign_up(client, "newbie", "not-an-address")
    assert response.status_code == 400
    assert 'id="id_email_error"' in response.content.decode()
    assert "Enter a valid email address." in response.content.decode()
    assert_signed_out(client)


def test_an_e_mail_already_used_by_another_account_is_accepted_and_both_can_reset(client, learner_user, mailoutbox):
    """Refusing it would tell anyone which addresses have accounts; a reset mails every account that uses it."""
    response = sign_up(client, "ada2", "ada@example.com")
    assert response.status_code == 302
    assert_signed_in_as(client, "ada2")
    client.post(reverse("password_reset"), {"email": "ada@example.com"})
    assert sorted("ada2" in message.body for message in mailoutbox) == [False, True]


def test_the_account_page_sets_the_e_mail_that_password_reset_then_uses(client, django_user_model, mailoutbox):
    user = django_user_model.objects.create_user("noemail", password="a-long-pass-phrase")
    client.force_login(user)
    assert 'name="email"' in client.get(reverse("account")).content.decode()
    response = client.post(reverse("account"), {"email": "found@example.com"})
    assert response.status_code == 302 and response["Location"].endswith("#messages")
    page = client.get(response["Location"]).content.decode()
    assert "E-mail saved" in page
    assert 'value="found@example.com"' in page
    client.post(reverse("logout"))
    assert client.post(reverse("password_reset"), {"email": "found@example.com"}).status_code == 302
    assert [message.to for message in mailoutbox] == [["found@example.com"]]


def test_the_account_page_refuses_a_malformed_e_mail_and_keeps_the_old_one(client, learner_user):
    client.force_login(learner_user)
    response = client.post(reverse("account"), {"email": "nope"})
    assert response.status_code == 400
    assert "Enter a valid email address." in response.content.decode()
    assert re.search(r'<input[^>]*name="email"[^>]*autofocus', response.content.decode())
    assert response.content.decode().count("autofocus") == 1  # the one field with it
    assert "Give the token a name." not in response.content.decode()
    learner_user.refresh_from_db()
    assert learner_user.email == "ada@example.com"
    assert 'value="ada@example.com"' in client.get(reverse("account")).content.decode()


def test_the_account_page_can_remove_the_e_mail_and_says_what_that_means(client, learner_user, mailoutbox):
    client.force_login(learner_user)
    response = client.post(reverse("account"), {"email": ""})
    assert response.status_code == 302
    assert "E-mail removed" in client.get(response["Location"]).content.decode()
    client.post(reverse("password_reset"), {"email": "ada@example.com"})
    assert mailoutbox == []


def test_log_in_merges_the_visitors_hints_reveals_and_draft_into_the_accounts_practice(client, lesson, learner_user):
    from lessons.models import ItemPractice
    from tests.lessons.factories import make_open_question

    account = Learner.objects.create(user=learner_user)
    dd1, dd2 = DeepDive.objects.get(key="dd-1"), DeepDive.objects.get(key="dd-2")
    question = make_open_question(lesson.sections.get())
    answer(client, lesson, "dd-2", "best")  # the visitor now has a learner of their own
    visitor = Learner.objects.get(user=None)
    ItemPractice.objects.create(learner=account, deep_dive=dd1, hints_taken=1)
    ItemPractice.objects.create(learner=visitor, deep_dive=dd1, hints_taken=2, revealed=True)
    ItemPractice.objects.create(learner=account, deep_dive=dd2, hints_taken=3, draft="")
    ItemPractice.objects.create(learner=visitor, deep_dive=dd2, hints_taken=0)
    ItemPractice.objects.create(learner=account, open_question=question, draft="")
    ItemPractice.objects.create(learner=visitor, open_question=question, draft="Drain, then re-run.")
    response = client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery"})
    assert response.status_code == 302
    rows = {p.item_key: p for p in ItemPractice.objects.filter(learner=account)}
    assert (rows["deep_dive", dd1.pk].hints_taken, rows["deep_dive", dd1.pk].revealed) == (2, True)
    assert (rows["deep_dive", dd2.pk].hints_taken, rows["deep_dive", dd2.pk].revealed) == (3, False)
    assert rows["open_question", question.pk].draft == "Drain, then re-run."
    assert ItemPractice.objects.count() == 3 and Learner.objects.count() == 1
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert "Drain, then re-run." in page  # the draft is back in the open question's box
