"""The lesson outline: a label that tells each item apart, and the follow-ups a learner opened listed under theirs."""

import html
import re
from datetime import timedelta

import pytest
import time_machine
from django.urls import reverse
from django.utils import timezone

from lessons.models import Choice, DeepDive, Lesson, OpenQuestion
from tests.lesson_pages import whole_lesson
from tests.lessons.factories import make_deep_dive, make_lesson, make_open_question

HTMX = {"HTTP_HX_REQUEST": "true"}
# An item's entry in the outline: its id, its link and the label the learner reads.
ENTRY = re.compile(r'<li id="outline-([^"]+)"( hx-swap-oob="true")?><a href="([^"]+)">([^<]+)</a>')


def outline_labels(pages: str) -> list[str]:
    """Return the labels of the items listed in the outline of each page in ``pages``."""
    navs = re.findall(r'<nav aria-label="Lesson outline">(.*?)</nav>', pages, re.S)
    return [html.unescape(label) for nav in navs for *_rest, label in ENTRY.findall(nav)]


def answer_url(dd: DeepDive) -> str:
    return reverse("answer-deep-dive", args=[dd.section.lesson.slug, dd.pk])


def pick(dd: DeepDive, verdict: str) -> dict:
    return {"choice": dd.choices.get(verdict=verdict).pk}


@pytest.fixture
def lesson(db) -> Lesson:
    """The sample lesson with two deep dives of one topic and an open question."""
    lesson = make_lesson(deep_dives=2)
    make_open_question(lesson.sections.get())
    return lesson


@pytest.fixture
def follow_up(lesson) -> DeepDive:
    """A follow-up that dd-1's weak choice leads to."""
    follow = make_deep_dive(lesson.sections.get(), key="dd-follow", order=60)
    Choice.objects.filter(deep_dive__key="dd-1", verdict="weak").update(follow_up=follow)
    return follow


def test_the_outline_tells_deep_dives_of_one_topic_apart_by_the_interviewers_first_words(client, lesson):
    first = DeepDive.objects.get(key="dd-1")
    first.prompt = "“Every token costs **320 KiB** of cache & more: how do you hand out memory?”"
    first.save()
    labels = outline_labels(client.get(lesson.get_absolute_url()).content.decode())
    assert labels[:2] == [
        "Deep dive · KV memory allocation: Every token costs 320 KiB…",  # plain text, cut at a word
        "Deep dive · KV memory allocation: How? (dd-2)",  # short enough to show whole
    ]
    assert "Open question · Routing: Walk me through a replica…" in labels


@pytest.mark.django_db
def test_no_two_outline_entries_of_a_shipped_lesson_read_alike(client, content):
    """Every shipped lesson, read layer by layer with every follow-up opened (answering the choice leading to it)."""
    for lesson in Lesson.objects.filter(published=True):
        links = list(Choice.objects.filter(deep_dive__section__lesson=lesson, follow_up__isnull=False))
        leading = {choice.follow_up_id for choice in links}
        opened: set[int] = set()
        while links:  # a follow-up's own follow-ups open once it is reached
            ready = [c for c in links if c.deep_dive_id not in leading or c.deep_dive_id in opened]
            for choice in ready:
                dd = DeepDive.objects.select_related("section__lesson").get(pk=choice.deep_dive_id)
                assert client.post(answer_url(dd), {"choice": choice.pk}).status_code == 303
                opened.add(choice.follow_up_id)
            links = [c for c in links if c not in ready]
        labels = outline_labels(whole_lesson(client, lesson.get_absolute_url()))
        asked = [label for label in labels if label.startswith(("Deep dive · ", "Follow-up · ", "Open question · "))]
        items = [model.objects.filter(section__lesson=lesson).count() for model in (DeepDive, OpenQuestion)]
        assert len(asked) == sum(items), lesson.slug  # the follow-ups listed too
        assert len(labels) == len(set(labels)), (lesson.slug, sorted(labels))


def test_a_follow_up_is_listed_under_its_deep_dive_once_an_answer_opens_it(client, lesson, follow_up):
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert 'id="outline-dd-dd-1"' in page
    assert "dd-follow" not in page  # not reached: the outline does not tell which choice leads on
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), pick(dd, "best"), **HTMX)
    assert "dd-follow" not in client.get(lesson.get_absolute_url()).content.decode()

    sent = client.post(answer_url(dd), pick(dd, "weak"), **HTMX).content.decode()  # a retry that opens it
    # Sent along with the answer: the deep dive's entry, the follow-up under it, each id once.
    oob = re.search(r'<li id="outline-dd-dd-1" hx-swap-oob="true">.*</li>', sent).group(0)
    assert '<ol class="outline-items"><li id="outline-dd-dd-follow">' in oob
    page = client.get(lesson.get_absolute_url()).content.decode()
    nav = page.split('<nav aria-label="Lesson outline">', 1)[1].split("</nav>", 1)[0]
    parent = re.search(r'<li id="outline-dd-dd-1">(.*?)</li></ol></li>', nav).group(1)
    assert re.search(
        r'<span class="mark mark-done" id="mark-dd-dd-1">.*</span><ol class="outline-items">'
        r'<li id="outline-dd-dd-follow"><a href="/lessons/sample/\?layer=2&amp;section=core#dd-dd-follow">'
        r"Follow-up · KV memory allocation: How\? \(dd-follow\)</a> "
        r'<span class="mark mark-todo" id="mark-dd-dd-follow">',
        parent,
    )
    for id_ in ("outline-dd-dd-follow", "mark-dd-dd-follow", "dd-dd-follow"):
        assert page.count(f'id="{id_}"') == 1, id_


def test_answering_a_follow_up_updates_its_own_mark_in_the_outline(client, lesson, follow_up):
    """Sent as its parent's entry with the follow-up under it: a page opened in another tab before the follow-up
    was reached lists the parent but not the follow-up, and an update aimed at the follow-up found no place."""
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), pick(dd, "weak"), **HTMX)
    sent = client.post(answer_url(follow_up), pick(follow_up, "best"), **HTMX).content.decode()
    assert re.search(
        r'<li id="outline-dd-dd-1" hx-swap-oob="true"><a href="[^"]+#dd-dd-1">Deep dive · [^<]+</a> '
        r'<span class="mark mark-missed" id="mark-dd-dd-1">.*</span><ol class="outline-items">'  # its weak first answer
        r'<li id="outline-dd-dd-follow"><a href="[^"]+#dd-dd-follow">Follow-up · [^<]+</a> '
        r'<span class="mark mark-done" id="mark-dd-dd-follow">',
        sent,
    )
    assert 'id="outline-dd-dd-follow" hx-swap-oob' not in sent
    assert '<p class="eyebrow">Follow-up · KV memory allocation</p>' in sent  # still shown as a follow-up
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert '<span class="mark mark-done" id="mark-dd-dd-follow">' in page
    assert '<span class="mark mark-missed" id="mark-dd-dd-1">' in page  # its parent was answered too, missed


def test_a_follow_up_placed_in_another_section_is_linked_from_its_parents_page_after_an_answer(client, lesson):
    """A follow-up is drawn under its parent: the outline entry sent with an answer links to the parent's page,
    as the page's own outline does, even when an author put the follow-up in a section of another layer."""
    from lessons.models import Section

    deeper = Section.objects.create(lesson=lesson, key="deeper", layer=3, order=2, title="Deeper", minutes=2, body="x")
    follow = make_deep_dive(deeper, key="dd-far", order=1)
    Choice.objects.filter(deep_dive__key="dd-1", verdict="weak").update(follow_up=follow)
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), pick(dd, "weak"), **HTMX)
    sent = client.post(answer_url(follow), pick(follow, "best"), **HTMX).content.decode()
    oob = re.search(
        r'<li id="outline-dd-dd-1" hx-swap-oob="true">.*<li id="outline-dd-dd-far"><a href="([^"]+)">', sent
    )
    assert html.unescape(oob.group(1)) == "/lessons/sample/?layer=2&section=core#dd-dd-far"
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert 'href="/lessons/sample/?layer=2&amp;section=core#dd-dd-far"' in page  # the page's outline says the same
    # The Resume button sent with the answer goes there too, and the place kept for the next visit.
    assert 'id="lesson-resume" href="/lessons/sample/?layer=2&amp;section=core#dd-dd-far"' in sent
    from lessons.models import LessonProgress

    assert LessonProgress.objects.get().url == "/lessons/sample/?layer=2&section=core#dd-dd-far"


def test_a_plain_form_answer_to_a_follow_up_in_another_section_returns_to_its_parents_page(client, lesson):
    """Without JavaScript the answer redirects back to where the follow-up is drawn: its parent's page."""
    from lessons.models import Section

    deeper = Section.objects.create(lesson=lesson, key="deeper", layer=3, order=2, title="Deeper", minutes=2, body="x")
    follow = make_deep_dive(deeper, key="dd-far", order=1)
    Choice.objects.filter(deep_dive__key="dd-1", verdict="weak").update(follow_up=follow)
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), pick(dd, "weak"))
    response = client.post(answer_url(follow), pick(follow, "best"))
    assert response.status_code == 303
    assert response["Location"] == "/lessons/sample/?layer=2&section=core#dd-dd-far"
    assert "dd-dd-far" in client.get(response["Location"]).content.decode()


def test_results_and_review_link_a_missed_follow_up_in_another_section_to_its_parents_page(client, lesson):
    """Lists of items (the results' misses, the API's results and review queue) open a follow-up where it is drawn:
    under its parent, on the parent's page, not on the page of the section an author put it in."""
    from lessons.models import Section

    deeper = Section.objects.create(lesson=lesson, key="deeper", layer=3, order=2, title="Deeper", minutes=2, body="x")
    follow = make_deep_dive(deeper, key="dd-far", order=1)
    Choice.objects.filter(deep_dive__key="dd-1", verdict="weak").update(follow_up=follow)
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), pick(dd, "weak"))
    client.post(answer_url(follow), pick(follow, "weak"))
    where = "/lessons/sample/?layer=2&section=core#dd-dd-far"
    misses = client.get("/results/").content.decode().split("First answers missed or partly right")[1]
    links = [html.unescape(href) for href in re.findall(r'<a href="([^"]+)">', misses)]
    assert where in links
    # Said to be a follow-up (its question reads as the next push on another), its parent not.
    assert f'<li><span class="meta">Follow-up:</span> <a href="{html.escape(where)}">' in misses
    assert re.search(r'<li><a href="[^"]+#dd-dd-1">', misses)
    assert "/lessons/sample/?layer=3&section=deeper#dd-dd-far" not in links  # its own section's page
    retry = {miss["id"]: miss["retry_url"] for miss in client.get("/api/v1/results/").json()["misses"]}
    assert retry[follow.pk] == f"http://testserver{where}"
    with time_machine.travel(timezone.now() + timedelta(hours=1)):  # a miss comes back after ten minutes
        due = {item["id"]: item["url"] for item in client.get("/api/v1/review/").json()}
        assert due[follow.pk] == f"http://testserver{where}"
    assert "dd-dd-far" in client.get(where).content.decode()  # the link opens a page that shows it


def test_a_follow_up_is_drawn_under_the_top_of_its_chain_and_a_loop_stops_the_walk():
    from lessons.links import drawn_under

    parent_of = {3: 2, 2: 1, 9: 8, 8: 9}  # 3 follows 2, which follows 1; 8 and 9 lead to each other
    assert [drawn_under(pk, parent_of) for pk in (1, 2, 3)] == [1, 1, 1]
    assert drawn_under(9, parent_of) == 8 and drawn_under(8, parent_of) == 9  # stops before going round
    assert drawn_under(5, parent_of) == 5  # no follow-up: itself


def test_a_layers_minutes_never_wrap_apart_from_their_unit(client, lesson):
    """In the outline's narrow column "11 min" broke over two lines: the number and "min" stay together."""
    page = client.get(lesson.get_absolute_url()).content.decode()
    outline = page.split('<nav aria-label="Lesson outline">')[1].split("</nav>")[0]
    assert re.search(r'<span class="meta">\d+&nbsp;min</span>', outline)
    assert re.search(r'<span class="meta">· \d+&nbsp;min</span></h2>', page)  # the layer's heading too


def sign_up(client) -> None:
    """Sign up as a learner does (the new account stays signed in)."""
    password = "a-long-pass-phrase"
    response = client.post(reverse("signup"), {"username": "lea", "password1": password, "password2": password})
    assert response.status_code == 302


def outline_mark(page: str, anchor: str) -> tuple[str, str]:
    """Return the class and the words of an item's mark in ``page`` (a lesson page or an answer's fragment)."""
    found = re.search(rf'<span class="mark mark-(\w+)" id="mark-{anchor}">(.*?)</span>(?=</li>|<ol)', page)
    return found.group(1), re.sub(r'<span aria-hidden="true">[^<]*</span>', "", found.group(2))


def sent_entry(sent: str, anchor: str) -> str:
    """Return the outline entry an answer's fragment sends out of band for ``anchor``."""
    return re.search(rf'<li id="outline-{anchor}" hx-swap-oob="true">.*?</li>', sent, re.S).group(0)


def test_a_deep_dive_whose_first_answer_missed_is_marked_missed(client, lesson):
    """A learner's finding: "✓ answered" in green beside an item in the results' "Misses to retry" read as success.
    The mark says answered and missed, sent along with the answer and kept on the next visit, as results list it."""
    sign_up(client)
    dd = DeepDive.objects.get(key="dd-1")
    sent = client.post(answer_url(dd), pick(dd, "weak"), **HTMX).content.decode()
    assert outline_mark(sent_entry(sent, "dd-dd-1"), "dd-dd-1") == ("missed", "answered · missed")
    assert '<span aria-hidden="true">↻ </span>answered · missed' in sent  # the glyph hidden, the words read
    assert outline_mark(client.get(lesson.get_absolute_url()).content.decode(), "dd-dd-1") == (
        "missed",
        "answered · missed",
    )
    client.post(answer_url(dd), pick(dd, "acceptable"), **HTMX)  # a retry still not right changes nothing
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert outline_mark(page, "dd-dd-1") == ("missed", "answered · missed")
    misses = client.get(reverse("results")).content.decode().split("First answers missed or partly right")[1]
    assert "#dd-dd-1" in misses


def test_a_first_answer_partly_right_is_marked_partly_right_as_the_results_say_it(client, lesson):
    """A newcomer's finding: "Acceptable · 5 of 10 points" was marked "↻ answered · missed" in the outline while the
    results said "Partly right, 5 of 10 points". The mark says partly right (amber, as a miss: not fully right)."""
    sign_up(client)
    dd = DeepDive.objects.get(key="dd-1")
    sent = client.post(answer_url(dd), pick(dd, "acceptable"), **HTMX).content.decode()
    partly = ("missed", "answered · partly&nbsp;right")
    assert outline_mark(sent_entry(sent, "dd-dd-1"), "dd-dd-1") == partly
    assert outline_mark(client.get(lesson.get_absolute_url()).content.decode(), "dd-dd-1") == partly
    listed = client.get(reverse("results")).content.decode().split("First answers missed or partly right")[1]
    assert "#dd-dd-1" in listed and "Partly right, 5 of 10 points" in listed  # listed, as a miss is
    client.post(answer_url(dd), pick(dd, "best"), **HTMX)  # right on a retry, as any miss
    assert outline_mark(client.get(lesson.get_absolute_url()).content.decode(), "dd-dd-1") == RETRIED


RETRIED = ("retried", "answered · right&nbsp;on&nbsp;a&nbsp;retry")  # "right on a retry" kept on one line


def test_a_missed_deep_dive_retried_right_says_so_in_the_outline_and_a_wrong_retry_takes_it_back(client, lesson):
    """A learner's finding: after a right retry the outline still said "↻ answered · missed", which reads as
    "retry this". The mark says it was right on a retry, sent along with the retry and kept on the next visit;
    the first answer still scores. The latest answer decides: a wrong one after it marks the item missed again."""
    sign_up(client)
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), pick(dd, "weak"), **HTMX)
    sent = client.post(answer_url(dd), pick(dd, "best"), **HTMX).content.decode()
    assert outline_mark(sent_entry(sent, "dd-dd-1"), "dd-dd-1") == RETRIED
    assert '<span aria-hidden="true">✓ </span>answered · right' in sent  # the glyph hidden, the words read
    assert "lesson-progress-line" not in sent  # the score is unchanged: the first answer scores
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert outline_mark(page, "dd-dd-1") == RETRIED
    assert re.search(r"<span>1 of \d+ answered · 0 of \d+ points</span>", page)  # the weak first answer's
    sent = client.post(answer_url(dd), pick(dd, "weak"), **HTMX).content.decode()
    assert outline_mark(sent_entry(sent, "dd-dd-1"), "dd-dd-1") == ("missed", "answered · missed")
    assert outline_mark(client.get(lesson.get_absolute_url()).content.decode(), "dd-dd-1") == (
        "missed",
        "answered · missed",
    )


def test_a_deep_dive_answered_right_first_is_marked_answered_not_missed(client, lesson):
    sign_up(client)
    dd = DeepDive.objects.get(key="dd-1")
    sent = client.post(answer_url(dd), pick(dd, "best"), **HTMX).content.decode()
    assert outline_mark(sent_entry(sent, "dd-dd-1"), "dd-dd-1") == ("done", "answered")
    client.post(answer_url(dd), pick(dd, "weak"), **HTMX)  # a wrong retry changes nothing either
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert outline_mark(page, "dd-dd-1") == ("done", "answered")
    assert "mark-missed" not in page


def test_a_follow_up_listed_under_its_deep_dive_has_its_own_missed_mark(client, lesson, follow_up):
    sign_up(client)
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), pick(dd, "weak"), **HTMX)  # opens the follow-up
    sent = client.post(answer_url(follow_up), pick(follow_up, "weak"), **HTMX).content.decode()
    entry = sent_entry(sent, "dd-dd-1")  # the parent's entry, the follow-up under it
    assert outline_mark(entry, "dd-dd-follow") == ("missed", "answered · missed")
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert outline_mark(page, "dd-dd-1") == ("missed", "answered · missed")
    assert outline_mark(page, "dd-dd-follow") == ("missed", "answered · missed")


def test_a_walkthrough_says_how_many_steps_it_missed_once_every_step_is_answered(client, lesson):
    """Partly answered it keeps "n of m answered" (what is left to do); all answered, a missed step marks it missed,
    saying how many of its steps; all right first time, answered."""
    from lessons import services
    from lessons.models import Step

    sign_up(client)
    first, second = Step.objects.filter(walkthrough__key="size", calculator__gt="").order_by("order")

    def answer(step, value):
        return client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": value}, **HTMX)

    sent = answer(first, "1").content.decode()  # far off: missed
    assert outline_mark(sent_entry(sent, "wt-size"), "wt-size") == ("partial", "1 of 2 answered")
    sent = answer(second, repr(services.expected_for(second).value)).content.decode()
    assert outline_mark(sent_entry(sent, "wt-size"), "wt-size") == ("missed", "answered · 1&nbsp;of&nbsp;2&nbsp;missed")
    sent = answer(first, "2").content.decode()  # a retry still wrong: the first answer still scores
    assert outline_mark(sent_entry(sent, "wt-size"), "wt-size") == ("missed", "answered · 1&nbsp;of&nbsp;2&nbsp;missed")
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert outline_mark(page, "wt-size") == ("missed", "answered · 1&nbsp;of&nbsp;2&nbsp;missed")


def test_a_walkthrough_whose_missed_steps_were_all_partly_right_says_partly_right(client, lesson):
    """A walkthrough said "1 of 2 missed" for a step the results list as "Partly right, 5 of 10 points" (code review's
    finding, after the single question's mark said partly right): when every step not fully right was partly right,
    the mark says so; one step missed outright keeps "missed"."""
    from lessons import services
    from lessons.models import Step

    sign_up(client)
    first, second = Step.objects.filter(walkthrough__key="size", calculator__gt="").order_by("order")

    def answer(step, value):
        return client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": value}, **HTMX)

    answer(first, repr(services.expected_for(first).value * 1.5))  # within the partial band: partly right
    sent = answer(second, repr(services.expected_for(second).value)).content.decode()
    partly = ("missed", "answered · 1&nbsp;of&nbsp;2&nbsp;partly&nbsp;right")
    assert outline_mark(sent_entry(sent, "wt-size"), "wt-size") == partly
    assert outline_mark(client.get(lesson.get_absolute_url()).content.decode(), "wt-size") == partly
    assert "Partly right, 5 of 10 points" in client.get(reverse("results")).content.decode()


def test_a_walkthrough_is_right_on_a_retry_once_every_missed_steps_latest_answer_is_right(client, lesson):
    from lessons import services
    from lessons.models import Step

    sign_up(client)
    first, second = Step.objects.filter(walkthrough__key="size", calculator__gt="").order_by("order")

    def answer(step, value):
        return client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": value}, **HTMX)

    answer(first, "1")
    answer(second, "1")  # both missed
    sent = answer(first, repr(services.expected_for(first).value)).content.decode()
    assert outline_mark(sent_entry(sent, "wt-size"), "wt-size") == ("missed", "answered · 2&nbsp;of&nbsp;2&nbsp;missed")
    sent = answer(second, repr(services.expected_for(second).value)).content.decode()
    assert outline_mark(sent_entry(sent, "wt-size"), "wt-size") == RETRIED
    assert outline_mark(client.get(lesson.get_absolute_url()).content.decode(), "wt-size") == RETRIED


def test_a_walkthrough_answered_right_first_time_is_marked_answered(client, lesson):
    from lessons import services
    from lessons.models import Step

    sign_up(client)
    for step in Step.objects.filter(walkthrough__key="size", calculator__gt="").order_by("order"):
        url = reverse("answer-step", args=[lesson.slug, step.pk])
        sent = client.post(url, {"value": repr(services.expected_for(step).value)}, **HTMX).content.decode()
    assert outline_mark(sent_entry(sent, "wt-size"), "wt-size") == ("done", "answered")
    assert outline_mark(client.get(lesson.get_absolute_url()).content.decode(), "wt-size") == ("done", "answered")


def results_misses(client) -> list[str]:
    """Return the rows of the results' missed first answers, as text."""
    page = client.get(reverse("results")).content.decode()
    listed = page.split("<h2>First answers missed or partly right</h2>", 1)[1].split("<h2>", 1)[0]
    return [html.unescape(re.sub(r"<[^>]+>", "", row)) for row in re.findall(r"<li>(.*?)</li>", listed)]


def test_results_keep_a_miss_retried_right_and_say_it_was_right_on_a_retry(client, lesson):
    """A learner's finding: after a right retry results still said "Missed, 0 of 10 points" under "Misses to
    retry". The row stays (the first answer scored 0), says it was right on a retry, under a heading that fits."""
    sign_up(client)
    dd, other = DeepDive.objects.filter(key__in=["dd-1", "dd-2"]).order_by("key")
    client.post(answer_url(dd), pick(dd, "weak"), **HTMX)
    client.post(answer_url(other), pick(other, "acceptable"), **HTMX)
    assert results_misses(client) == [
        "How? (dd-1) · Lesson sample · Missed, 0 of 10 points",
        "How? (dd-2) · Lesson sample · Partly right, 5 of 10 points",
    ]
    client.post(answer_url(dd), pick(dd, "best"), **HTMX)
    client.post(answer_url(other), pick(other, "weak"), **HTMX)  # still not right
    assert results_misses(client) == [
        "How? (dd-1) · Lesson sample · Missed, 0 of 10 points · right on a retry",
        "How? (dd-2) · Lesson sample · Partly right, 5 of 10 points",
    ]
    client.post(answer_url(dd), pick(dd, "weak"), **HTMX)  # the latest answer decides, as in the outline
    assert results_misses(client)[0] == "How? (dd-1) · Lesson sample · Missed, 0 of 10 points"


def test_an_item_or_a_section_with_nothing_to_answer_says_so_not_reading(client, lesson):
    """A newcomer's finding: "reading" beside a walkthrough without graded steps read as "you are reading this
    now". It says there is nothing to answer, before any answer and after, as a section of reading only does."""
    from lessons.models import Section

    Section.objects.create(lesson=lesson, key="prose", layer=2, order=2, title="Prose", minutes=1, body="Just read.")
    sign_up(client)
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert outline_mark(page, "wt-build") == ("read", "nothing to answer")  # the build-up: diagrams, no question
    assert '>Prose</a>\n              <span class="mark mark-read">nothing to answer</span>' in page
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), pick(dd, "best"), **HTMX)
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert outline_mark(page, "wt-build") == ("read", "nothing to answer")
    assert ">reading<" not in page


OPENED = "This answer opened the follow-up below, which now counts toward the lesson's total"


def progress_words(page: str) -> str:
    return re.search(r'<div class="progress-line" id="lesson-progress-line".*?<span>(.*?)</span>', page, re.S).group(1)


def test_a_retry_that_opens_a_follow_up_says_the_total_now_counts_it(client, lesson, follow_up):
    """A newcomer's finding: a retry opened a follow-up and the lesson's total grew ("… of 11 answered · … of 110"
    to "… of 12 answered · … of 120") with no word why, the percentage dropping. The answer that opened it says so, once, with the new total, in
    the feedback and the announcement; the progress sent along says the same total. Not on the page loaded after,
    nor on the next answer that picks the same choice (the follow-up is counted already)."""
    sign_up(client)
    dd = DeepDive.objects.get(key="dd-1")
    sent = client.post(answer_url(dd), pick(dd, "best"), **HTMX).content.decode()
    assert OPENED not in html.unescape(sent)  # a first answer opening nothing
    total = re.search(
        r"1 of (\d+) answered · 10 of (\d+) points",
        progress_words(client.get(lesson.get_absolute_url()).content.decode()),
    )
    questions, points = int(total.group(1)) + 1, int(total.group(2)) + 10
    sent = client.post(answer_url(dd), pick(dd, "weak"), **HTMX).content.decode()  # a retry that opens it
    said = f"{OPENED} ({questions} questions, {points} points)."
    feedback = html.unescape(sent.split('id="dd-dd-1-feedback">', 1)[1].split("</div>", 1)[0])
    assert f'<p class="opened-follow-up">{said}</p>' in feedback
    announcer = re.search(r'<div id="announcer" hx-swap-oob="innerHTML">(.*?)</div>', sent, re.S).group(1)
    assert html.unescape(announcer).endswith(f"Weak. {said}")  # after the verdict, a sentence of its own
    assert progress_words(sent) == f"1 of {questions} answered · 10 of {points} points"  # sent out of band
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert progress_words(page) == f"1 of {questions} answered · 10 of {points} points"
    assert OPENED not in html.unescape(page)  # said once, with the answer that opened it
    sent = client.post(answer_url(dd), pick(dd, "weak"), **HTMX).content.decode()
    assert OPENED not in html.unescape(sent)  # open already: the total did not change


def test_a_first_answer_that_opens_a_follow_up_says_so_too(client, lesson, follow_up):
    sign_up(client)
    dd = DeepDive.objects.get(key="dd-1")
    sent = html.unescape(client.post(answer_url(dd), pick(dd, "weak"), **HTMX).content.decode())
    assert OPENED in sent.split('id="dd-dd-1-feedback">', 1)[1].split("</div>", 1)[0]
    sent = html.unescape(client.post(answer_url(follow_up), pick(follow_up, "best"), **HTMX).content.decode())
    assert OPENED not in sent  # answering the follow-up opens nothing more


def test_without_javascript_the_page_after_an_answer_that_opened_a_follow_up_says_the_total_counts_it(
    client, lesson, follow_up
):
    """Without JavaScript the answer redirects to the page: the sentence htmx's feedback carries was never said there,
    and the total grew without a word. The page the answer leads to says it once, in the answered item's feedback
    (a message atop the page was scrolled past, to the item's #anchor: code review's finding)."""
    sign_up(client)
    dd = DeepDive.objects.get(key="dd-1")
    before = re.search(
        r"0 of (\d+) answered · 0 of (\d+) points",
        progress_words(client.get(lesson.get_absolute_url()).content.decode()),
    )
    answered = client.post(answer_url(dd), pick(dd, "weak"), follow=True)
    page = html.unescape(answered.content.decode())
    questions, points = int(before.group(1)) + 1, int(before.group(2)) + 10
    said = f"{OPENED} ({questions} questions, {points} points)."
    feedback = page.split('id="dd-dd-1-feedback">', 1)[1].split("</div>", 1)[0]
    assert f'<p class="opened-follow-up">{said}</p>' in feedback and page.count(said) == 1
    assert progress_words(page) == f"1 of {questions} answered · 0 of {points} points"
    assert said not in html.unescape(client.get(lesson.get_absolute_url()).content.decode())  # said once
    answered = client.post(answer_url(follow_up), pick(follow_up, "best"), follow=True)  # opens nothing more
    assert answered.status_code == 200 and OPENED not in html.unescape(answered.content.decode())
