"""The header marks the page the visitor is on (aria-current="page"), the account pages included."""

import re

from django.urls import reverse

PASSWORD = "a-long-pass-phrase"


def header_link(html: str, text: str) -> str:
    """Return the opening <a> tag of the main navigation's link whose text is ``text``."""
    nav = re.search(r'<nav aria-label="Main">.*?</nav>', html, re.S).group(0)
    return re.search(rf"<a [^>]*>(?={re.escape(text)}</a>)", nav).group(0)


def marked(html: str) -> list[str]:
    """Return the texts of the main navigation's links marked as the current page."""
    nav = re.search(r'<nav aria-label="Main">.*?</nav>', html, re.S).group(0)
    return re.findall(r'<a [^>]*aria-current="page"[^>]*>([^<]*)</a>', nav)


def href(tag: str) -> str:
    return re.search(r'href="([^"]*)"', tag).group(1).replace("&amp;", "&")


def test_the_log_in_and_sign_up_pages_mark_their_own_header_link(client, db):
    home = client.get(reverse("home")).content.decode()
    assert marked(home) == ["Lessons"]
    # The visitor follows the header's "Log in", then its "Sign up".
    log_in = client.get(href(header_link(home, "Log in")))
    assert log_in.status_code == 200
    assert marked(log_in.content.decode()) == ["Log in"]
    sign_up = client.get(href(header_link(log_in.content.decode(), "Sign up")))
    assert sign_up.status_code == 200
    assert marked(sign_up.content.decode()) == ["Sign up"]


def test_the_account_page_marks_the_account_link(client, db):
    form = {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD}
    landing = client.post(reverse("signup"), form, follow=True).content.decode()
    assert "newbie" not in marked(landing)
    account = client.get(href(header_link(landing, "newbie")))
    assert account.status_code == 200
    assert marked(account.content.decode()) == ["newbie"]
    # Elsewhere the account link is not the current page.
    assert marked(client.get(reverse("results")).content.decode()) == ["Results"]


def test_a_walkthrough_step_and_a_mock_interview_mark_their_section(client, db):
    """A walkthrough step's own page is a lesson page (Lessons); one interview is under Mock interviews."""
    from tests.lessons.factories import make_lesson

    lesson = make_lesson()
    step = client.get(reverse("walkthrough-step", args=[lesson.slug, "build", 1]))
    assert step.status_code == 200 and marked(step.content.decode()) == ["Lessons"]
    type(lesson).objects.filter(pk=lesson.pk).update(kind="case_study")  # a scenario
    started = client.post(reverse("interview-start"), {"scenario": lesson.slug}, follow=True)
    assert started.status_code == 200 and "/interviews/" in started.redirect_chain[-1][0]
    assert marked(started.content.decode()) == ["Mock interviews"]
    assert marked(client.get(reverse("calculators:detail", args=["kv-cache"])).content.decode()) == ["Calculators"]
