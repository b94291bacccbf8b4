"""Limits on log-in and password reset: who is counted, what counts, and what an attacker can learn or block."""

import re
from datetime import UTC, datetime

import pytest
import time_machine
from django.test import Client
from django.urls import reverse

GOOD = {"username": "ada", "password": "correct-horse-battery"}
BAD = {"username": "ada", "password": "wrong"}
FULLWIDTH_ADA = "\uff41da"  # "ａda": NFKC makes it "ada", so it signs in as ada


@pytest.fixture
def limits(settings, stopped_clock):
    """Low limits for these tests; the per-address limit stays high unless a test lowers it."""
    settings.RATE_LIMITS = {
        **settings.RATE_LIMITS,
        "login": "100/min",
        "login_account_address": "3/15min",
        "login_account": "6/h",
        "password_reset": "100/h",
        "password_reset_account": "2/h",
    }
    return settings.RATE_LIMITS


def from_address(address: str) -> Client:
    return Client(REMOTE_ADDR=address)


def signed_in_as(client) -> str | None:
    page = client.get(reverse("account"))
    if page.status_code != 200:
        return None
    return re.search(r"Signed in as <strong>(.*?)</strong>", page.content.decode())[1]


def test_log_ins_per_address_count_every_attempt_whatever_forwarded_for_says(learner_user, limits):
    limits["login"] = "2/min"
    codes = [
        from_address("10.0.0.1").post(reverse("login"), BAD, HTTP_X_FORWARDED_FOR=f"10.5.0.{n}").status_code
        for n in range(3)
    ]
    assert codes == [200, 200, 429]
    refused = from_address("10.0.0.1").post(reverse("login"), GOOD)
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0


def test_an_attacker_elsewhere_cannot_lock_the_owner_out_of_their_own_address(learner_user, limits):
    attacker = from_address("10.6.6.6")
    assert [attacker.post(reverse("login"), BAD).status_code for _ in range(4)] == [200, 200, 200, 429]
    assert attacker.post(reverse("login"), GOOD).status_code == 429  # even the right password, from there
    owner = from_address("10.0.0.1")
    assert owner.post(reverse("login"), GOOD).status_code == 302
    assert signed_in_as(owner) == "ada"


def test_the_lockout_page_gives_the_longest_wait_of_the_limits_reached(learner_user, limits):
    """Past both the address's limit and the account's, the page gives the account's longer wait."""
    limits["login"] = "4/min"
    client = from_address("10.0.0.1")
    assert [client.post(reverse("login"), BAD).status_code for _ in range(4)] == [200, 200, 200, 429]
    refused = client.post(reverse("login"), GOOD)  # now past the per-address limit too
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 60  # 15 minutes' window, not the minute's
    assert "for this account from here" in refused.content.decode()


def test_only_failures_count_against_the_account(learner_user, limits):
    for _ in range(5):
        owner = from_address("10.0.0.1")
        assert owner.post(reverse("login"), GOOD).status_code == 302
        assert signed_in_as(owner) == "ada"
    assert [from_address("10.0.0.1").post(reverse("login"), BAD).status_code for _ in range(4)] == [
        200, 200, 200, 429,
    ]  # fmt: skip


def test_failures_from_many_addresses_reach_the_accounts_ceiling(learner_user, limits):
    assert [from_address(f"10.7.0.{n}").post(reverse("login"), BAD).status_code for n in range(7)] == [200] * 6 + [429]
    newcomer = from_address("10.0.0.1")
    assert newcomer.post(reverse("login"), GOOD).status_code == 429
    assert signed_in_as(newcomer) is None


def test_a_browser_the_owner_signed_in_from_is_spared_the_accounts_ceiling(learner_user, limits):
    """Attackers with many addresses reach the ceiling; the owner's own browser still signs in."""
    owner = from_address("10.0.0.1")
    assert owner.post(reverse("login"), GOOD).status_code == 302
    owner.post(reverse("logout"))
    assert [from_address(f"10.7.0.{n}").post(reverse("login"), BAD).status_code for n in range(7)] == [200] * 6 + [429]
    assert from_address("10.0.0.2").post(reverse("login"), GOOD).status_code == 429  # a new browser: the ceiling holds
    assert owner.post(reverse("login"), GOOD).status_code == 302
    assert signed_in_as(owner) == "ada"


def test_a_forged_known_device_cookie_does_not_lift_the_ceiling(learner_user, limits):
    assert [from_address(f"10.7.0.{n}").post(reverse("login"), BAD).status_code for n in range(7)] == [200] * 6 + [429]
    forger = from_address("10.0.0.3")
    forger.cookies["known_device"] = "ada"
    assert forger.post(reverse("login"), GOOD).status_code == 429
    assert signed_in_as(forger) is None


def test_refused_attempts_do_not_raise_the_accounts_ceiling(learner_user, limits):
    """One address past its own limit keeps trying: that must not lock the account everywhere."""
    attacker = from_address("10.6.6.6")
    assert [attacker.post(reverse("login"), BAD).status_code for _ in range(10)] == [200] * 3 + [429] * 7
    owner = from_address("10.0.0.1")
    assert owner.post(reverse("login"), GOOD).status_code == 302
    assert signed_in_as(owner) == "ada"


@pytest.mark.parametrize("spelling", [FULLWIDTH_ADA, " ada ", "ada"])
def test_the_account_is_counted_as_authentication_reads_its_name(learner_user, limits, spelling):
    client = from_address("10.0.0.1")
    for _ in range(3):
        client.post(reverse("login"), {"username": spelling, "password": "wrong"})
    # Django would sign "ａda" in as "ada": the limit must already hold for it.
    assert client.post(reverse("login"), {"username": FULLWIDTH_ADA, "password": GOOD["password"]}).status_code == 429
    assert client.post(reverse("login"), GOOD).status_code == 429
    assert signed_in_as(client) is None


def reset(client: Client, email: str):
    return client.post(reverse("password_reset"), {"email": email})


def comparable(response) -> tuple:
    """What a visitor sees of a reset request, minus the per-request CSRF token."""
    body = re.sub(r"[A-Za-z0-9]{64}", "", response.content.decode())
    return response.status_code, response.get("Location"), response.get("Retry-After"), body


def test_password_reset_is_limited_per_e_mail_address_in_any_spelling(learner_user, limits, mailoutbox):
    spellings = ["ada@example.com", "ADA@example.com", " \uff41da@example.com"]
    codes = [reset(from_address(f"10.8.0.{n}"), email).status_code for n, email in enumerate(spellings)]
    assert codes == [302, 302, 429]
    assert len(mailoutbox) == 2


def test_password_reset_is_limited_per_address(learner_user, limits, mailoutbox):
    limits["password_reset"] = "2/h"
    client = from_address("10.0.0.9")
    codes = [reset(client, f"someone{n}@example.com").status_code for n in range(2)]
    assert codes + [reset(client, "ada@example.com").status_code] == [302, 302, 429]
    assert mailoutbox == []


def test_password_reset_looks_the_same_for_existing_and_unknown_accounts(learner_user, limits, mailoutbox):
    """Within the limits and past them, an attacker sees the same answers for both; only the owner gets mail."""
    with time_machine.travel(datetime(2026, 11, 30, 12, 0, tzinfo=UTC), tick=False):
        existing = [comparable(reset(from_address("10.0.0.1"), "ada@example.com")) for _ in range(4)]
        unknown = [comparable(reset(from_address("10.0.0.2"), "nobody@example.com")) for _ in range(4)]
    assert existing == unknown
    assert [status for status, *_ in existing] == [302, 302, 429, 429]
    assert len(mailoutbox) == 2  # no more mail past the limit
    assert {message.to[0] for message in mailoutbox} == {"ada@example.com"}
    done = Client().get(existing[0][1])
    assert "If an account uses that address" in done.content.decode()


def sign_up(client: Client, username: str, password: str = "a-long-pass-phrase"):
    return client.post(reverse("signup"), {"username": username, "password1": password, "password2": password})


def test_sign_ups_are_limited_per_address_whatever_the_outcome(learner_user, limits, time_machine):
    """Each attempt counts, so trying user names to learn which exist ("already exists") is bounded."""
    limits["signup"] = "3/h"
    codes = [sign_up(from_address("10.0.0.3"), name).status_code for name in ("ada", "ada", "newbie", "other")]
    assert codes == [400, 400, 302, 429]
    refused = sign_up(from_address("10.0.0.3"), "other")
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert "Too many sign-ups from here" in refused.content.decode()
    assert signed_in_as(from_address("10.0.0.3")) is None
    assert sign_up(from_address("10.0.0.4"), "other").status_code == 302  # another address is not held up
    time_machine.move_to(datetime(2026, 11, 30, 13, 0, 15, tzinfo=UTC), tick=False)  # the next hour's window
    later = from_address("10.0.0.3")
    assert sign_up(later, "third").status_code == 302
    assert signed_in_as(later) == "third"


def test_a_locked_out_log_in_says_why_for_how_long_and_what_to_do(learner_user, limits):
    client = from_address("10.0.0.1")
    for _ in range(3):
        client.post(reverse("login"), BAD)
    refused = client.post(reverse("login"), GOOD)
    assert refused.status_code == 429
    assert refused["Retry-After"] == "885"  # 15 s into a 15-minute window
    page = refused.content.decode()
    assert "Too many failed log-ins for this account from here" in page
    assert "about 15 minutes" in page
    assert "885" not in page
    assert f'href="{reverse("password_reset")}"' in page
    assert f'href="{reverse("login")}"' in page
    # The way forward works: the reset form opens and sends the mail.
    assert client.get(reverse("password_reset")).status_code == 200
    assert reset(client, "ada@example.com").status_code == 302


def test_a_refused_password_reset_says_which_limit_and_the_wait_in_minutes(learner_user, limits):
    limits["password_reset"] = "1/h"
    client = from_address("10.0.0.9")
    reset(client, "someone@example.com")
    refused = reset(client, "ada@example.com")
    assert refused.status_code == 429
    assert refused["Retry-After"] == "3585"
    page = refused.content.decode()
    assert "Too many password-reset requests from here" in page
    assert "about 1 hour" in page
    assert f'href="{reverse("login")}"' in page
