"""Lesson pages, answering (htmx fragments and plain form posts), progress, results, reset."""

import html
import json
import re

import pytest
from django.db.models import Max
from django.urls import reverse

from lessons import content_cache
from lessons.models import Answer, Challenge, ChallengeDraw, Choice, DeepDive, Learner, Step, Walkthrough
from tests.lesson_pages import whole_lesson
from tests.lessons.factories import (
    answer_steps_before,
    make_deep_dive,
    make_lesson,
    make_open_question,
    store_answer_skipping_earlier_steps,
)

HTMX = {"HTTP_HX_REQUEST": "true"}


def choice(lesson, verdict, key="dd-1"):
    return Choice.objects.get(deep_dive__key=key, deep_dive__section__lesson=lesson, verdict=verdict)


def answer_url(dd):
    return reverse("answer-deep-dive", args=[dd.section.lesson.slug, dd.pk])


def test_a_draft_lessons_deep_dive_cannot_be_reached_through_a_published_lessons_urls(client, lesson):
    """Answering, taking a hint or revealing answers under a lesson's URL reads only that lesson's items."""
    hidden = make_lesson(slug="draft", published=False).sections.get().deepdives.get(key="dd-1")
    hidden.hints = ["A hint of the draft."]
    hidden.save()
    best = hidden.choices.get(verdict="best")
    slug = lesson.slug
    for headers in ({}, HTMX):
        refused = client.post(reverse("answer-deep-dive", args=[slug, hidden.pk]), {"choice": best.pk}, **headers)
        assert refused.status_code == 404
        assert client.post(reverse("take-hint", args=[slug, "deep_dive", hidden.pk]), **headers).status_code == 404
        revealed = client.post(reverse("reveal", args=[slug, "deep_dive", hidden.pk]), **headers)
        assert revealed.status_code == 404 and best.text not in revealed.content.decode()
    assert not Answer.objects.exists()


def test_lesson_page_groups_sections_by_layer_with_minutes(client, lesson):
    response = client.get(lesson.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert "Layer 2 · Core" in html
    assert "4&nbsp;min" in html  # the number kept with its unit
    assert "Your move. Pick an approach:" in html


def test_draft_is_hidden_from_learners_but_previewable_by_staff(client, admin_client, db):
    draft = make_lesson(slug="draft", published=False)
    assert client.get(draft.get_absolute_url()).status_code == 404
    preview = admin_client.get(draft.get_absolute_url())
    assert preview.status_code == 200
    assert "draft (visible to staff only)" in preview.content.decode()


def test_htmx_answer_returns_fragment_with_feedback_and_announcement(client, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    response = client.post(answer_url(dd), {"choice": choice(lesson, "best").pk}, **HTMX)
    html = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in html
    assert "Holds up." in html
    assert 'id="announcer" hx-swap-oob="innerHTML"' in html
    assert html.count('id="announcer"') == 1
    assert re.search(r'id="announcer" hx-swap-oob="innerHTML">Correct: 10 of 10 points\. Best\.</div>', html)
    assert "data-focus" in html


def test_tries_and_csrf_tokens_in_an_answer_fragment_are_each_learners_own(client, lesson):
    from django.test import Client

    dd = DeepDive.objects.get(key="dd-1")
    best, weak = choice(lesson, "best"), choice(lesson, "weak")
    other = Client()
    first = [c.post(answer_url(dd), {"choice": best.pk}, **HTMX).content.decode() for c in (client, other)]
    tokens = [html.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0] for html in first]
    assert tokens[0] != tokens[1]
    client.post(answer_url(dd), {"choice": weak.pk}, **HTMX)
    for tries in (3, 4):
        html = client.post(answer_url(dd), {"choice": weak.pk}, **HTMX).content.decode()
        assert f"Tries recorded: {tries}." in html
    html = other.post(answer_url(dd), {"choice": weak.pk}, **HTMX).content.decode()
    assert "Tries recorded: 2. First answer: correct, 10 of 10 points." in html


def test_plain_form_post_redirects_to_the_item_and_page_shows_feedback(client, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    response = client.post(answer_url(dd), {"choice": choice(lesson, "acceptable").pk})
    assert response.status_code == 303
    assert response["Location"].endswith("/lessons/sample/?layer=2&section=core#dd-dd-1")  # the page holding it
    page = client.get(response["Location"]).content.decode()
    assert "Meh." in page
    assert "5 of 10 points" in page


def test_first_answer_scores_and_retries_are_recorded_without_changing_it(client, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk}, **HTMX)
    retry = client.post(answer_url(dd), {"choice": choice(lesson, "best").pk}, **HTMX)
    answers = list(Answer.objects.order_by("pk"))
    assert [(a.is_first, a.points) for a in answers] == [(True, 0), (False, 10)]
    html = retry.content.decode()
    # The retry's feedback says so at once, and never shows the retry's points as if they were earned.
    assert "Best</span> on a retry (not scored). Your score stays 0 of 10." in html
    assert "10 of 10 points" not in html
    results = client.get(reverse("results")).content.decode()
    assert "0 of 40 points" in results  # the first answer (weak) scores, the retry does not


def test_an_author_changing_an_answered_items_points_never_puts_a_score_past_100_percent(client, lesson):
    """Lowered from 10 to 2 after a best answer, the item counted 10 of 2: results said 500% for its topic."""
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk}, **HTMX)
    DeepDive.objects.filter(pk=dd.pk).update(points=2)
    DeepDive.objects.get(pk=dd.pk).save()  # a content save: a new generation, as the admin's would be
    results = client.get(reverse("results")).content.decode()
    assert "<strong>10 of 40 points</strong> (25%)" in results  # the answer counts what the item was worth then
    topic = client.get("/api/v1/results/").json()["topics"]
    assert all(row["mastery"] <= 1 for row in topic), topic
    page = client.get(f"{lesson.get_absolute_url()}?layer=2").content.decode()
    assert "10 of 40 points" in page
    step = Step.objects.get(title="Requests per replica")  # an item not yet answered counts its points as now
    step.points = 4
    step.save()
    assert "<strong>10 of 34 points</strong>" in client.get(reverse("results")).content.decode()


def test_resume_and_continue_never_lead_to_a_walkthrough_an_author_renamed(client, lesson):
    """The kept place was the step's URL: renamed, its walkthrough was a 404 behind both buttons."""
    step = Step.objects.get(walkthrough__key="size", order=1)
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "27"})
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert re.search(r'id="lesson-resume" href="/lessons/sample/walkthroughs/size/1/#', page)
    walkthrough = Walkthrough.objects.get(key="size")
    walkthrough.key = "size-it"
    walkthrough.save()
    home = client.get(reverse("home")).content.decode()
    page = client.get(lesson.get_absolute_url()).content.decode()
    resume = re.search(r'id="lesson-resume" href="([^"]+)"', page).group(1)
    assert "/walkthroughs/size/" not in home and "/walkthroughs/size/" not in resume
    assert client.get(resume.partition("#")[0]).status_code == 200
    gone = client.get("/lessons/sample/walkthroughs/size/1/")  # an old bookmark: a 404 that leads back
    assert gone.status_code == 404 and f'href="{lesson.get_absolute_url()}"' in gone.content.decode()


def test_choice_of_another_deep_dive_is_refused_with_a_clear_message(client, lesson):
    section = lesson.sections.get()
    other = make_deep_dive(section, key="dd-other", order=50)
    dd = DeepDive.objects.get(key="dd-1")
    foreign = other.choices.first()
    response = client.post(answer_url(dd), {"choice": foreign.pk})
    assert response.status_code == 400
    assert "not one of this question" in response.content.decode()
    assert not Answer.objects.exists()


def test_missing_choice_gives_422_fragment_for_htmx(client, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    response = client.post(answer_url(dd), {}, **HTMX)
    assert response.status_code == 422
    assert "Pick one of the approaches." in response.content.decode()


def test_follow_up_appears_only_after_the_choice_that_leads_to_it(client, lesson):
    section = lesson.sections.get()
    follow = make_deep_dive(section, key="dd-follow", order=60)
    weak = choice(lesson, "weak")
    weak.follow_up = follow
    weak.save()
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert "How? (dd-follow)" not in page
    response = client.post(answer_url(weak.deep_dive), {"choice": weak.pk}, **HTMX)
    assert "How? (dd-follow)" in response.content.decode()
    assert "Follow-up" in response.content.decode()
    assert response.content.decode().count('id="announcer"') == 1


def test_walkthrough_step_navigation_full_page_and_fragment(client, lesson):
    url = reverse("walkthrough-step", args=[lesson.slug, "build", 2])
    full = client.get(url)
    assert full.status_code == 200
    assert "Step 2 of 2" in full.content.decode()
    assert "<html" in full.content.decode()
    fragment = client.get(url, **HTMX).content.decode()
    assert "<html" not in fragment
    assert "Step 2 of 2" in fragment
    assert "New in this step:</strong> Router" in fragment
    assert 'class="box new"' in fragment
    assert "Step 2 of 2: Router" in fragment  # announced


def answer_first_step(client, lesson, value="1"):
    """Answer step 1 of the sample's envelope walkthrough (“Size it”), which opens its step 2."""
    step = Step.objects.get(walkthrough__key="size", title="Requests per replica")
    return client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": value}, **HTMX)


def test_a_step_that_asks_for_a_number_opens_the_next_step_once_answered(client, lesson):
    """Step 2's body gives step 1's answer (so a slip does not carry through): Next before answering step 1 read it
    off. Step 1 offers no Next until it is answered, right or wrong; then Next leads on."""
    first = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 1]), **HTMX).content.decode()
    second_url = reverse("walkthrough-step", args=[lesson.slug, "size", 2])
    assert second_url not in first
    assert "Step 2 opens once you have answered this one, right or wrong." in first
    answered = answer_first_step(client, lesson, value="1").content.decode()  # wrong
    assert f'href="{second_url}#wt-size"' in answered and "opens once you have answered" not in answered
    assert "Step 2 of 2" in client.get(second_url, **HTMX).content.decode()


def test_a_later_step_asked_for_before_its_earlier_steps_are_answered_shows_the_step_to_answer(client, lesson):
    """A typed or bookmarked address of step 2 sends the browser to step 1's own address, at the walkthrough (a page
    at its top hid why), which says why; step 2's body is never shown. Resume keeps the step shown."""
    response = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 2]))
    assert response.status_code == 302
    assert response["Location"] == "/lessons/sample/walkthroughs/size/1/?opens=2#wt-size"
    html = client.get(response["Location"]).content.decode()  # the browser follows it
    walkthrough = html[html.index('id="wt-size"') :]
    assert re.search(
        r'<p class="message message-info" role="status" tabindex="-1" data-focus-on-load>Step 2 opens once the steps before it are answered: here is step 1, the '
        r'first to answer.</p>\s*<p class="step-count">Step 1 of 2</p>',
        walkthrough,
    )
    assert "Preamble size" not in walkthrough
    answer_first_step(client, lesson)
    html = client.get("/lessons/sample/walkthroughs/size/1/?opens=2").content.decode()
    assert "Step 1 of 2" in html and "opens once the steps before it" not in html  # open now: nothing to say
    html = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 2])).content.decode()
    assert "Step 2 of 2" in html and "opens once" not in html


def test_next_on_a_page_from_before_shows_the_step_to_answer_at_its_own_address(client, lesson):
    """Next from a page loaded before the learner's answers were reset (another tab): the fragment is step 1, saying
    why, and the address bar and the saved place say step 1, not the step 2 asked for."""
    answer_first_step(client, lesson)  # a learner now, with a place
    Answer.objects.all().delete()  # as a reset in another tab does
    url = reverse("walkthrough-step", args=[lesson.slug, "size", 2])
    response = client.get(url, **HTMX)
    html = response.content.decode()
    assert "Step 1 of 2" in html and "Step 2 opens once the steps before it are answered" in html
    assert response["HX-Push-Url"] == "/lessons/sample/walkthroughs/size/1/#wt-size"
    resume = re.search(r'id="lesson-resume" href="([^"]+)"', client.get(lesson.get_absolute_url()).content.decode())
    assert resume[1] == "/lessons/sample/walkthroughs/size/1/#wt-size"


def test_a_step_already_answered_stays_open_whatever_came_before(client, lesson):
    """A learner who answered step 2 before step 1 (before this rule, or through the API) has read it: it stays open,
    and a plain form post's answer lands on it with its verdict (it showed step 1, the verdict out of sight)."""
    step = Step.objects.get(title="Preamble size")
    store_answer_skipping_earlier_steps(client, step, "1")
    response = client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "393.2"})
    assert response.status_code == 303 and response["Location"].endswith("/walkthroughs/size/2/#wt-size")
    html = client.get(response["Location"]).content.decode()
    assert "Step 2 of 2" in html and "You answered <strong>393.2 MB</strong>" in html


def test_an_answered_step_opens_itself_only(client, db):
    """Step 3 answered before step 1 (through the API) stays open, but step 2, between them, does not: the furthest
    answered step opened every step before it (code review's finding)."""
    from rest_framework.test import APIClient

    lesson = make_lesson(slug="three", steps=3)
    third = Step.objects.get(walkthrough__section__lesson=lesson, walkthrough__key="size", order=3)
    store_answer_skipping_earlier_steps(client, third, "1")
    api = APIClient()
    api.cookies = client.cookies  # the session, which the API shares
    response = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 2]))
    assert response["Location"] == f"/lessons/{lesson.slug}/walkthroughs/size/1/?opens=2#wt-size"
    assert "Step 3 of 3" in client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 3])).content.decode()
    items = api.get(f"/api/v1/lessons/{lesson.slug}/").json()["sections"][0]["items"]
    steps = next(item for item in items if item.get("title") == "Size it")["steps"]
    assert [step["locked"] for step in steps] == [False, True, False]


def test_the_step_the_note_names_is_the_one_to_answer(client, db):
    """Three numeric steps: on step 1 the note is about step 2; on step 2, answered before step 1 (as the page and
    the API took until they refused it), it names step 1, the step still to answer, not 'this one'."""
    lesson = make_lesson(slug="three", steps=3)
    first = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 1]), **HTMX).content.decode()
    assert "Step 2 opens once you have answered this one, right or wrong." in first
    second = Step.objects.get(walkthrough__section__lesson=lesson, walkthrough__key="size", order=2)
    store_answer_skipping_earlier_steps(client, second, "1")
    shown = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 2]), **HTMX).content.decode()
    assert "Step 2 of 3" in shown and "Step 3 opens once you have answered step 1, right or wrong." in shown
    response = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 3]))
    assert response["Location"] == f"/lessons/{lesson.slug}/walkthroughs/size/1/?opens=3#wt-size"
    html = client.get(response["Location"]).content.decode()
    assert "Step 3 opens once the steps before it are answered: here is step 1, the first to answer." in html


def test_a_hint_waits_as_its_step_does(client, api, db):
    """A step's hints start from the earlier steps' answers ("60% of its 123 requests"): the page's and the API's
    hint endpoints gave them for a step not open yet (code review's finding). Refused (409) until it opens."""
    lesson = make_lesson(slug="three", steps=3)
    second = Step.objects.get(walkthrough__section__lesson=lesson, walkthrough__key="size", order=2)
    second.hints = ["Step 1 gave 110 requests."]
    second.save()
    refused = client.post(reverse("take-hint", args=[lesson.slug, "step", second.pk]), **HTMX)
    html = refused.content.decode()
    assert refused.status_code == 409 and "Step 1 gave" not in html
    # Step 1 is shown, saying why (its notice takes focus), not step 2: its text starts from step 1's answer.
    notice = "Step 2 opens once the steps before it are answered: here is step 1, the first to answer."
    assert "Step 1 of 3" in html and f"data-focus>No hint was shown. {notice}</p>" in html
    api.cookies = client.cookies
    refused = api.post(f"/api/v1/steps/{second.pk}/hint/")
    assert refused.status_code == 409 and "Step 1 gave" not in refused.content.decode()
    first = Step.objects.get(walkthrough__section__lesson=lesson, walkthrough__key="size", order=1)
    client.post(reverse("answer-step", args=[lesson.slug, first.pk]), {"value": "1"})
    assert api.post(f"/api/v1/steps/{second.pk}/hint/").json()["hints"] == ["Step 1 gave 110 requests."]


def test_a_build_up_walkthrough_steps_on_freely(client, lesson):
    """Steps that ask for nothing are read in turn: Next is there from the start."""
    first = client.get(reverse("walkthrough-step", args=[lesson.slug, "build", 1])).content.decode()
    assert f'href="{reverse("walkthrough-step", args=[lesson.slug, "build", 2])}#wt-build"' in first


@pytest.mark.parametrize("number", [3, 0, 9])
def test_a_step_the_walkthrough_lacks_shows_its_first_step_and_says_why(client, lesson, number):
    """/build/3/ of a two-step walkthrough (a saved place or a bookmark from before steps were removed) is not
    step 1 in disguise, nor an error page behind the Resume button: step 1, saying why at the walkthrough's
    top, where the page lands (a message at the page's top was out of sight, far above it)."""
    response = client.get(reverse("walkthrough-step", args=[lesson.slug, "build", number]))
    assert response.status_code == 302
    assert response["Location"] == f"/lessons/sample/walkthroughs/build/1/?missing={number}#wt-build"
    page = client.get(response["Location"]).content.decode()  # the browser follows it
    walkthrough = page[page.index('id="wt-build"') :]
    notice = re.search(
        r'<p class="message message-info" role="status" tabindex="-1" data-focus-on-load>(.*?)</p>\s*<p class="step-count">Step 1 of 2</p>',
        walkthrough,
    )
    assert (
        notice
        and notice[1] == f"The walkthrough “Build it” has 2 steps: there is no step {number}. Here is its first step."
    )
    assert "Front end" in page
    assert "there is no step" not in client.get("/lessons/sample/walkthroughs/build/1/").content.decode()
    assert "there is no step" not in client.get("/lessons/sample/walkthroughs/build/1/?missing=2").content.decode()


@pytest.mark.parametrize(("query", "problem"), [("9", "This lesson has no layer 9"), ("abc", "A layer is a number")])
def test_a_layer_the_lesson_lacks_is_a_404_naming_its_layers_and_linking_to_it(client, content, query, problem):
    response = client.get(f"/lessons/how-the-lab-works/?layer={query}")
    assert response.status_code == 404
    html = response.content.decode()
    assert f"{problem}: its layers are 1, 2 and 3." in html
    assert '<a href="/lessons/how-the-lab-works/">Open “How the lab works” at its first layer</a>' in html


def test_a_missing_layer_of_a_lesson_with_a_gap_names_the_layers_it_has(client, lesson):
    lesson.sections.update(layer=3)  # the validator allows any of 1 to 3
    html = client.get(lesson.get_absolute_url() + "?layer=1").content.decode()
    assert "This lesson has no layer 1: it has only layer 3." in html


def test_an_htmx_request_for_a_missing_step_is_a_404(client, lesson):
    """Next on a stale page (the step was removed since) gets a 404, which htmx does not swap in (base.html's
    htmx-config): the page stays as it was and site.js says the request failed, rather than step 1 replacing it."""
    response = client.get(reverse("walkthrough-step", args=[lesson.slug, "build", 3]), **HTMX)
    assert response.status_code == 404
    assert "has 2 steps: there is no step 3" in response.content.decode()
    assert client.get(reverse("walkthrough-step", args=[lesson.slug, "build", 2]), **HTMX).status_code == 200


def test_a_missing_steps_message_is_escaped_and_counts_steps_ordered_otherwise(client, lesson):
    """Steps ordered 0, 5 (as the admin allows) are two steps, and /size/1/ is neither; a title is text, never markup."""
    Step.objects.filter(title="Requests per replica").update(order=0)
    Step.objects.filter(title="Preamble size").update(order=5)
    Walkthrough.objects.filter(key="size").update(title="Size <b>it</b>")
    response = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 1]), follow=True)
    assert response.redirect_chain == [("/lessons/sample/walkthroughs/size/0/?missing=1#wt-size", 302)]
    html = response.content.decode()
    assert "The walkthrough “Size &lt;b&gt;it&lt;/b&gt;” has 2 steps: none is at that address." in html


def test_resume_to_a_step_removed_since_lands_on_the_walkthrough(client, lesson):
    """The Resume button keeps a walkthrough step's own address; when that step is gone, it still leads somewhere."""
    step = Step.objects.get(walkthrough__key="build", order=2)
    numbered = Step.objects.get(walkthrough__key="size", order=1)
    client.post(reverse("answer-step", args=[lesson.slug, numbered.pk]), {"value": "1"})  # a learner now
    assert client.get(reverse("walkthrough-step", args=[lesson.slug, "build", 2])).status_code == 200
    resume = re.search(r'id="lesson-resume" href="([^"]+)"', client.get(lesson.get_absolute_url()).content.decode())[1]
    assert resume.startswith("/lessons/sample/walkthroughs/build/2/")
    step.delete()  # an author removes the step the learner was on
    response = client.get(resume, follow=True)
    assert response.status_code == 200
    assert "Step 1 of 1" in response.content.decode()


def test_walkthrough_urls_follow_step_order_not_position(client, lesson):
    """Steps ordered 0, 5, 10 (as the admin allows): links, answers and retries land on the right step."""
    Step.objects.filter(title="Preamble size").update(order=50)
    Step.objects.filter(title="Requests per replica").update(order=0)
    Step.objects.filter(title="Preamble size").update(order=5)
    first = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 0])).content.decode()
    assert "Step 1 of 2" in first
    assert "/walkthroughs/size/5/" not in first  # no Next link before step 1 is answered
    first_step = Step.objects.get(title="Requests per replica")
    response = client.post(reverse("answer-step", args=[lesson.slug, first_step.pk]), {"value": "1"})
    assert response["Location"].endswith("/walkthroughs/size/0/#wt-size")
    assert "/walkthroughs/size/5/" in client.get(response["Location"]).content.decode()  # the Next link
    step = Step.objects.get(title="Preamble size")
    response = client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})
    assert response["Location"].endswith("/walkthroughs/size/5/#wt-size")
    page = client.get(response["Location"]).content.decode()
    assert "Step 2 of 2" in page
    assert "Preamble size" in page
    results = client.get(reverse("results")).content.decode()
    assert "/walkthroughs/size/5/#wt-size" in results


def test_history_restore_gets_the_whole_page(client, lesson):
    url = reverse("walkthrough-step", args=[lesson.slug, "build", 2])
    html = client.get(url, HTTP_HX_REQUEST="true", HTTP_HX_HISTORY_RESTORE_REQUEST="true").content.decode()
    assert "<html" in html
    assert html.count('id="announcer"') == 1


def test_envelope_step_grades_then_reveals_the_arithmetic(client, lesson):
    step = Step.objects.get(title="Requests per replica")
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    response = client.post(url, {"value": "110"}, **HTMX)
    html = response.content.decode()
    assert "Correct" in html
    assert "The worked arithmetic" in html
    assert "Budget over per-request KV." in html
    answer = Answer.objects.get()
    assert answer.expected == pytest.approx(110)
    assert answer.points == 10


def test_envelope_partial_band_and_slip_feedback(client, lesson):
    step_1 = Step.objects.get(title="Requests per replica")
    partial = client.post(reverse("answer-step", args=[lesson.slug, step_1.pk]), {"value": "200"}, **HTMX)
    assert "Within 2× of the answer, but high: outside its tolerance." in partial.content.decode()
    assert Answer.objects.get(step=step_1).points == 5
    step = Step.objects.get(title="Preamble size")
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    slip = client.post(url, {"value": "375"}, **HTMX).content.decode()
    assert "MiB" in slip


@pytest.mark.parametrize(
    "bad", ["", "abc", "1e999", "12 GB", "nan", "393 /", "1 MB/", "1 ·", "393 *", "5 degC", "5 dB"]
)
def test_bad_numbers_get_a_clear_message_and_nothing_is_stored(client, lesson, bad):
    step = Step.objects.get(title="Requests per replica")
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    fragment = client.post(url, {"value": bad}, **HTMX)
    assert fragment.status_code == 422
    assert 'role="alert"' in fragment.content.decode()
    # Said once, by the error line: the live announcer was sent the same sentence, and screen readers read it twice.
    assert 'id="announcer"' not in fragment.content.decode()
    full = client.post(url, {"value": bad})
    assert full.status_code == 400
    assert not Answer.objects.exists()


def test_number_with_thousands_separator_is_accepted_and_a_decimal_comma_is_refused(client, lesson):
    step = Step.objects.get(title="Requests per replica")
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    refused = client.post(url, {"value": "1,5"}, **HTMX)
    assert refused.status_code == 422
    assert "Use a dot for decimals" in refused.content.decode()
    assert 'data-focus value="1,5"' in refused.content.decode()  # the box keeps what was typed, and takes focus
    client.post(url, {"value": "1,100"}, **HTMX)
    assert Answer.objects.get().value == 1100


def test_a_negative_number_is_refused_and_does_not_use_up_the_scored_answer(client, lesson):
    """A learner typing "-5" was graded Missed, 0 points: their one scored answer gone on a slip of the keyboard."""
    step = Step.objects.get(title="Preamble size")  # asks for MB
    answer_steps_before(client, step)
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    refused = client.post(url, {"value": "-393"}, **HTMX)
    assert refused.status_code == 422
    assert "Enter a number of 0 or more: no answer here is negative." in refused.content.decode()
    assert not Answer.objects.filter(step=step).exists()
    client.post(url, {"value": "393.2"}, **HTMX)
    first = Answer.objects.get(step=step)
    assert first.is_first and first.points == first.max_points  # the first answer the learner meant


def test_a_count_of_another_thing_is_refused_not_relabelled(client, lesson):
    """Counted things are all the number 1 to pint: "123 GPUs" for a step asking for requests was graded as 123
    requests (right, 10 of 10) and shown back as "You answered 123 requests" (newcomer's finding)."""
    step = Step.objects.get(title="Requests per replica")  # asks for requests
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    for typed in ("123 GPUs", "123 tokens"):
        refused = client.post(url, {"value": typed}, **HTMX)
        assert refused.status_code == 422
        written = typed.split(" ", 1)[1]
        message = f"“{typed}” is in {written}, but this question asks for requests."
        assert message in refused.content.decode()
    assert not Answer.objects.exists()
    client.post(url, {"value": "1.2 thousand requests"}, **HTMX)  # the same thing, counted in thousands
    assert Answer.objects.get().value == 1200
    assert "You answered <strong>1,200 requests</strong>" in client.get(step.get_absolute_url()).content.decode()


def test_a_number_with_a_unit_is_converted_and_a_wrong_kind_of_unit_is_refused(client, lesson):
    step = Step.objects.get(title="Preamble size")  # asks for MB
    answer_steps_before(client, step)  # step 2's page, where the answer below lands
    url = reverse("answer-step", args=[lesson.slug, step.pk])
    refused = client.post(url, {"value": "393 ms"}, **HTMX)
    assert refused.status_code == 422
    assert "“393 ms” is a time, but this question asks for a size in MB." in refused.content.decode()
    assert not Answer.objects.filter(step=step).exists()
    response = client.post(url, {"value": "375 MiB"})
    assert response.status_code == 303
    assert Answer.objects.get(step=step).value == pytest.approx(393.216)
    page = client.get(response["Location"]).content.decode()
    assert "You answered <strong>393.216 MB</strong>" in page  # 375 MiB in the question's unit, digits kept
    assert "Correct" in page


def shown_cache_gb(html: str) -> int:
    return int(html.split("A cache of ")[1].split(" GB")[0].replace(",", ""))


def test_a_challenge_moved_to_another_calculator_after_answers_draws_anew_for_those_learners(client, lesson):
    """The stored draw kept the old calculator's numbers (cache_gb): the new one refused them, and the lesson
    page and every answer were 500s for each learner who had answered, for good."""
    from lessons.services import expected_for

    challenge = Challenge.objects.get(key="copies")
    url = reverse("answer-challenge", args=[lesson.slug, challenge.pk])
    client.post(url, {"value": "1"}, **HTMX)
    assert ChallengeDraw.objects.get().inputs.keys() == {"cache_gb"}
    right = expected_for(challenge, ChallengeDraw.objects.get().inputs).value
    assert "The worked arithmetic" in client.post(url, {"value": str(right)}, **HTMX).content.decode()  # earned
    challenge.calculator, challenge.output, challenge.unit = "replica", "requests_per_replica", "requests"
    challenge.inputs, challenge.ranges = {}, {"gpus": [2, 8, 2]}
    challenge.prompt = "With {gpus} GPUs, how many requests fit?"
    challenge.save()
    page = client.get(f"{lesson.get_absolute_url()}?layer=2")
    assert page.status_code == 200
    gpus = int(re.search(r"With (\d+) GPUs, how many requests fit\?", page.content.decode()).group(1))
    assert client.post(url, {"value": "1"}, **HTMX).status_code == 200
    assert ChallengeDraw.objects.get().inputs == {"gpus": gpus}  # the numbers the page showed, kept for retries
    assert Answer.objects.filter(challenge=challenge).count() == 3
    # The API's reveal of an answer given before the change has no working (it 500ed on the old numbers).
    Answer.objects.filter(challenge=challenge).order_by("-pk").first().delete()
    ChallengeDraw.objects.update(inputs={"cache_gb": 8})  # as the draw stood before the author's change
    reveal = client.post(f"/api/v1/challenges/{challenge.pk}/reveal/")
    assert reveal.status_code == 200 and reveal.json()["steps"] == []
    assert client.get(f"{lesson.get_absolute_url()}?layer=2").status_code == 200


def test_challenge_is_graded_against_the_learners_own_drawn_numbers(client, lesson):
    from calculators.registry import get_calculator
    from lessons.models import Challenge

    challenge = Challenge.objects.get()
    first_view = client.get(lesson.get_absolute_url()).content.decode()
    cache_gb = shown_cache_gb(first_view)
    assert shown_cache_gb(client.get(lesson.get_absolute_url()).content.decode()) == cache_gb  # stable on reload
    expected = get_calculator("kv-cache").evaluate({"cache_gb": cache_gb}).outputs["copies_per_cache"]
    url = reverse("answer-challenge", args=[lesson.slug, challenge.pk])
    assert client.post(url, {"value": "not a number"}, **HTMX).status_code == 422
    response = client.post(url, {"value": str(expected)}, **HTMX)
    assert "Correct" in response.content.decode()
    draw = ChallengeDraw.objects.get()
    assert draw.inputs == {"cache_gb": cache_gb}
    client.post(url, {"value": str(expected)}, **HTMX)  # a retry is graded on the same numbers
    assert [a.drawn_inputs for a in Answer.objects.order_by("pk")] == [{"cache_gb": cache_gb}] * 2


def test_learners_get_their_own_numbers_and_no_shared_page(lesson):
    from django.test import Client

    seen = {shown_cache_gb(Client().get(lesson.get_absolute_url()).content.decode()) for _ in range(12)}
    assert len(seen) > 1  # ten possible values; twelve fresh learners do not all share one


def test_resume_lands_on_the_item_last_answered(client, lesson):
    page = client.get(lesson.get_absolute_url()).content.decode()
    # Nothing answered: "Start" is the beginning of the reading, not the first question.
    assert '<a class="button" id="lesson-resume" href="/lessons/sample/?layer=2#layer-2">Start</a>' in page
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "393.2"})
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert "Resume where you stopped" in page
    assert "/walkthroughs/size/2/#wt-size" in page


def test_results_show_totals_lessons_topics_and_misses_with_retry_links(client, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk})
    step = Step.objects.get(title="Requests per replica")
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "110"})
    html = client.get(reverse("results")).content.decode()
    assert "10 of 40 points" in html
    assert "KV memory allocation" in html
    assert "Capacity planning" in html
    assert f'href="{lesson.get_absolute_url()}?layer=2&amp;section=core#dd-dd-1"' in html
    misses = html.split("First answers missed or partly right")[1].split("Start over")[0]
    assert (
        f'<a href="{lesson.get_absolute_url()}?layer=2&amp;section=core#dd-dd-1">How? (dd-1)</a> <span class="meta">· Lesson sample · Missed'
        in misses
    )
    assert client.get("/api/v1/results/").json()["misses"][0]["lesson"] == "sample"  # its slug


def test_a_partly_right_first_answer_is_listed_under_a_heading_that_says_so(client, lesson):
    """The list read "Missed first answers" above "Partly right, 5 of 10 points": a newcomer took that row for not
    missed. The heading names both."""
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "acceptable").pk})
    html = client.get(reverse("results")).content.decode()
    listed = html.split("<h2>First answers missed or partly right</h2>", 1)[1].split("<h2>", 1)[0]
    assert 'How? (dd-1)</a> <span class="meta">· Lesson sample · Partly right, 5 of 10 points</span>' in listed


def test_the_results_say_nothing_is_listed_before_any_answer_and_when_every_first_answer_was_right(client, lesson):
    html = client.get(reverse("results")).content.decode()
    assert "<p>None yet: nothing answered.</p>" in html
    client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": choice(lesson, "best").pk})
    assert "<p>None: every first answer was right.</p>" in client.get(reverse("results")).content.decode()


def test_reset_needs_confirmation_then_deletes_own_answers_only(client, lesson, django_user_model):
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk})
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk})  # a retry: an answer, not a question
    from django.test import Client

    other = Client()
    other.post(answer_url(dd), {"choice": choice(lesson, "best").pk})
    # The page says what goes and what stays (it did not say whether mock interviews are kept).
    page = html.unescape(re.sub(r"\s+", " ", client.get(reverse("reset-progress")).content.decode()))
    assert "every answer you have given in the lessons (2 answers to 1 question; a retry is an answer too)" in page
    for deleted in ("the hints you took", "your review schedule", "where you stopped in each lesson"):
        assert f"<li>{deleted}" in page
    assert "Your mock interviews and their scorecards are kept. The reset cannot be undone." in page
    other.force_login(django_user_model.objects.create_user("ada", password="pw-long-enough-1"))
    signed_in = other.get(reverse("reset-progress")).content.decode()
    assert "are kept, and so are your account and its API tokens." in signed_in
    refused = client.post(reverse("reset-progress"), {})
    assert refused.status_code == 400
    # The page asked again says how many answers would go ("( recorded)" lost the count), focus on the box.
    assert "(2 answers to 1 question; a retry" in refused.content.decode()
    assert 'aria-describedby="confirm-error" autofocus' in refused.content.decode()
    assert Answer.objects.count() == 3
    done = client.post(reverse("reset-progress"), {"confirm": "yes"})
    assert Answer.objects.count() == 1
    # The results open at the message saying what was deleted, which the browser focuses (tabindex -1). It
    # counts the questions too: "2 answers deleted" beside the results' "1 of … questions answered" looked wrong.
    assert done["Location"] == reverse("results") + "#messages"
    page = client.get(done["Location"]).content.decode()
    assert '<div class="messages" id="messages" role="status" tabindex="-1" data-focus-on-load><ul>' in page
    assert "Progress reset: 2 answers to 1 question deleted." in page
    assert (
        "Progress reset: 0 answers deleted."
        in client.post(reverse("reset-progress"), {"confirm": "yes"}, follow=True).content.decode()
    )


def count_queries(client, url, warm: bool = True) -> int:
    """Count the queries of a GET of ``url``; ``warm``: after a first GET has filled the content cache."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    if warm:
        client.get(url)
    with CaptureQueriesContext(connection) as ctx:
        assert client.get(url).status_code == 200
    return len(ctx.captured_queries)


def learner_with_history(client, lesson, retries=1):
    """Answer every deep dive, step and challenge of ``lesson``, each ``retries`` times."""
    from lessons.models import Challenge

    for _ in range(retries):
        for dd in DeepDive.objects.filter(section__lesson=lesson):
            client.post(answer_url(dd), {"choice": dd.choices.first().pk})
        for step in Step.objects.filter(walkthrough__section__lesson=lesson).exclude(calculator=""):
            client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "3"})
        for challenge in Challenge.objects.filter(section__lesson=lesson):
            client.post(reverse("answer-challenge", args=[lesson.slug, challenge.pk]), {"value": "3"})


@pytest.mark.parametrize("signed_in", [False, True])
def test_lesson_page_query_count_does_not_grow_with_content_or_history(client, learner_user, signed_in):
    """The same queries for 1 and for 20 deep dives, steps and challenges; for one answer each or many retries."""
    if signed_in:
        client.force_login(learner_user)
    small = make_lesson(slug="small", deep_dives=1)
    large = make_lesson(slug="large", deep_dives=20, steps=20, challenges=20)
    fresh = make_lesson(slug="fresh", deep_dives=20, steps=20, challenges=20)
    for lesson in (small, large, fresh):  # every kind of item, so every read is counted
        make_open_question(lesson.sections.get())
    learner_with_history(client, small)
    learner_with_history(client, large, retries=4)
    urls = [lesson.get_absolute_url() for lesson in (small, large, fresh)]
    counts = [count_queries(client, url) for url in urls]
    # At most: the session (none when Redis holds it), the account, the content generation (the lesson
    # itself comes from lessons/content_cache.py), 4 of the learner (review cards, practice, challenge draws,
    # the resume position).
    assert counts[0] == counts[1] == counts[2] <= (7 if signed_in else 6)
    # An edit starts a new generation: the content is read again, 8 queries more (sections, deep dives,
    # choices, walkthroughs, steps, challenges, open questions, checklist points), and the first page
    # reads the lessons too. Not cache.clear(): with Redis that also drops the cached session.
    content_cache.new_generation()
    cold = [count_queries(client, url, warm=False) for url in urls]
    assert cold == [counts[0] + 9, counts[0] + 8, counts[0] + 8]


def test_anonymous_first_visit_query_count_does_not_grow_with_content(db):
    from django.test import Client

    small = make_lesson(slug="small", deep_dives=1)
    large = make_lesson(slug="large", deep_dives=20, steps=20, challenges=20)
    for lesson in (small, large):
        make_open_question(lesson.sections.get())
    counts = [count_queries(Client(), lesson.get_absolute_url()) for lesson in (small, large)]
    # The lesson, 8 of content, and the session the drawn numbers need: at most a read, and an insert
    # and an update each in its savepoint (on SQLite; fewer with Redis holding sessions).
    assert counts[0] == counts[1] <= 16


@pytest.mark.parametrize("signed_in", [False, True])
def test_an_htmx_answer_query_count_does_not_grow_with_content_or_history(client, learner_user, signed_in):
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    if signed_in:
        client.force_login(learner_user)
    small = make_lesson(slug="small", deep_dives=1)
    large = make_lesson(slug="large", deep_dives=20, steps=20, challenges=20)
    learner_with_history(client, small)
    learner_with_history(client, large, retries=3)
    counts = []
    for lesson in (small, large):
        dd = DeepDive.objects.get(section__lesson=lesson, key="dd-1")
        with CaptureQueriesContext(connection) as ctx:
            response = client.post(answer_url(dd), {"choice": dd.choices.last().pk}, **HTMX)
        assert response.status_code == 200
        counts.append(len(ctx.captured_queries))
    # A first answer too (a newcomer's: the learner is made with it), which also sends the progress and outline;
    # after one newcomer's, which filled the content cache's graded-items catalog that the progress reads.
    warm = DeepDive.objects.get(section__lesson=small, key="dd-1")
    assert Client().post(answer_url(warm), {"choice": warm.choices.first().pk}, **HTMX).status_code == 200
    first = []
    for lesson in (small, large):
        dd = DeepDive.objects.get(section__lesson=lesson, key="dd-1")
        with CaptureQueriesContext(connection) as ctx:
            response = Client().post(answer_url(dd), {"choice": dd.choices.last().pk}, **HTMX)
        assert response.status_code == 200 and 'hx-swap-oob="true"' in response.content.decode()
        first.append(len(ctx.captured_queries))
    assert counts[0] == counts[1] and first[0] == first[1]
    # And no more than today (savepoints and this test's own reads of the deep dive included): one more fails here.
    assert counts[0] <= 13 and first[0] <= 30, (counts, first)


def test_home_and_results_query_counts_do_not_grow(client, db):
    """The same queries for one lesson and one answer as for 21 lessons and 50 answers."""
    counts = {"home": [], "results": []}
    for n in range(21):
        make_lesson(slug=f"l{n}", deep_dives=3)
        if n == 0:
            dd = DeepDive.objects.filter(section__lesson__slug="l0").first()
            client.post(answer_url(dd), {"choice": dd.choices.last().pk})
            assert Answer.objects.count() == 1
            counts["home"].append(count_queries(client, reverse("home")))
            counts["results"].append(count_queries(client, reverse("results")))
    for dd in DeepDive.objects.exclude(answer__isnull=False)[:49]:
        client.post(answer_url(dd), {"choice": dd.choices.last().pk})
    assert Answer.objects.filter(is_first=True, outcome="partial").count() == 50
    counts["home"].append(count_queries(client, reverse("home")))
    counts["results"].append(count_queries(client, reverse("results")))
    assert counts["home"][0] == counts["home"][1] <= 10
    assert counts["results"][0] == counts["results"][1] <= 10
    assert client.get(reverse("results")).content.decode().count("Partly right, 5 of 10 points") == 50  # each miss


def test_each_first_time_visitor_gets_a_csrf_token_of_their_own(lesson):
    from django.test import Client

    first = Client().get(lesson.get_absolute_url())
    second = Client().get(lesson.get_absolute_url())
    token_1 = first.content.decode().split('"x-csrftoken": "')[1].split('"')[0]
    token_2 = second.content.decode().split('"x-csrftoken": "')[1].split('"')[0]
    assert token_1 != token_2
    assert 'name="csrfmiddlewaretoken" value="' + token_2 in second.content.decode()
    assert "csrftoken" in second.cookies


def test_editing_content_in_the_admin_shows_at_once_to_learners(client, instructor, lesson):
    from django.test import Client

    instructor_client = Client()
    instructor_client.force_login(instructor)
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk})  # a learner with an answer
    assert "Read me." in client.get(lesson.get_absolute_url()).content.decode()
    section = lesson.sections.get()
    data = {"lesson": lesson.pk, "key": section.key, "layer": 2, "order": 1, "title": "Core", "minutes": 4,
            "body": "Freshly edited."}  # fmt: skip
    response = instructor_client.post(f"/admin/lessons/section/{section.pk}/change/", data)
    assert response.status_code == 302
    for reader in (client, Client()):
        page = reader.get(lesson.get_absolute_url()).content.decode()
        assert "Freshly edited." in page
        assert "Read me." not in page


def test_a_page_accepts_a_no_javascript_answer_with_its_own_token(lesson):
    from django.test import Client

    browser = Client(enforce_csrf_checks=True)
    html = browser.get(lesson.get_absolute_url()).content.decode()
    token = html.split('name="csrfmiddlewaretoken" value="')[1].split('"')[0]
    dd = DeepDive.objects.get(key="dd-1")
    response = browser.post(answer_url(dd), {"choice": choice(lesson, "best").pk, "csrfmiddlewaretoken": token})
    assert response.status_code == 303
    assert "Holds up." in browser.get(response["Location"]).content.decode()


def test_home_follows_content_changes(lesson):
    from django.test import Client

    assert lesson.title in Client().get("/").content.decode()
    lesson.title = "Renamed lesson"
    lesson.save()
    assert "Renamed lesson" in Client().get("/").content.decode()


def test_results_page_is_rebuilt_after_each_new_answer(client, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk})
    assert "0 of 40 points" in client.get(reverse("results")).content.decode()
    step = Step.objects.get(title="Requests per replica")
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "110"})
    assert "10 of 40 points" in client.get(reverse("results")).content.decode()
    client.post(reverse("reset-progress"), {"confirm": "yes"})
    page = client.get(reverse("results")).content.decode()
    assert "Progress reset" in page
    assert "0 of 40 points" in page


def test_lesson_page_home_and_results_agree_on_totals_when_a_follow_up_opens(client, lesson):
    """A follow-up counts once reachable: the total does not jump when it is answered."""
    section = lesson.sections.get()
    follow = make_deep_dive(section, key="dd-follow", order=60)
    weak = choice(lesson, "weak")
    weak.follow_up = follow
    weak.save()
    assert "0 of 4 answered" in client.get(lesson.get_absolute_url()).content.decode()  # not reachable yet
    response = client.post(answer_url(weak.deep_dive), {"choice": weak.pk}, **HTMX)
    assert "1 of 5 answered" in response.content.decode()  # the out-of-band counters count it at once
    assert "1 of 5 answered · 0 of 50 points" in client.get(lesson.get_absolute_url()).content.decode()
    assert "1 of 5 answered · 0 of 50 points" in client.get("/").content.decode()  # the home page says it alike
    assert "0 of 50 points" in client.get(reverse("results")).content.decode()
    client.post(answer_url(follow), {"choice": follow.choices.get(verdict="best").pk})
    assert "2 of 5 answered · 10 of 50 points" in client.get(lesson.get_absolute_url()).content.decode()
    assert "10 of 50 points" in client.get(reverse("results")).content.decode()


def test_a_lesson_with_follow_ups_says_its_total_grows_when_one_opens(client, lesson):
    """ "0 of 4" becoming "1 of 5" after one answer reads as a miscount unless the page says why."""
    note = "Follow-up questions join the total when one of your answers opens them."
    assert note not in client.get(lesson.get_absolute_url()).content.decode()  # no follow-ups: nothing to say
    Choice.objects.filter(pk=choice(lesson, "weak").pk).update(
        follow_up=make_deep_dive(lesson.sections.get(), key="dd-follow", order=60)
    )
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert note in page and page.index("0 of 4 answered") < page.index(note)  # under the progress line


def test_a_retry_that_opens_a_follow_up_counts_it_at_once(client, lesson, follow_up):
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk})
    assert "1 of 4 answered" in client.get(lesson.get_absolute_url()).content.decode()
    response = client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk}, **HTMX)  # a retry
    assert "1 of 5 answered" in response.content.decode()  # the counters are sent again, out of band
    assert "1 of 5 answered" in client.get(lesson.get_absolute_url()).content.decode()
    assert "10 of 50 points" in client.get(reverse("results")).content.decode()
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk})  # the follow-up stays open
    assert "1 of 5 answered" in client.get(lesson.get_absolute_url()).content.decode()


def test_diagram_rows_saved_before_validation_still_render(client, lesson):
    Step.objects.filter(title="Front end").update(components=[{"key": "fe"}, {"label": "no key"}, "junk"],
                                                  connections=[{"from": "fe"}])  # fmt: skip
    Step.objects.filter(title="Preamble size").update(slips=[{"feedback": "x"}, {"inputs": "bad", "feedback": "y"}])
    assert client.get(reverse("walkthrough-step", args=[lesson.slug, "build", 1])).status_code == 200
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    assert client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "3"}).status_code == 303


def test_numbers_shown_on_any_first_page_are_the_numbers_graded(lesson):
    from django.test import Client

    from calculators.registry import get_calculator
    from lessons.models import Challenge

    challenge = Challenge.objects.get()
    for landing in (reverse("walkthrough-step", args=[lesson.slug, "build", 2]), "/api/v1/lessons/sample/"):
        browser = Client()
        page = browser.get(landing).content.decode()
        if landing.startswith("/api/"):
            shown = json.loads(page)["sections"][0]["items"][3]["inputs"]["cache_gb"]
            assert browser.get(landing).json()["sections"][0]["items"][3]["inputs"]["cache_gb"] == shown
        else:
            shown = shown_cache_gb(page)
            assert shown_cache_gb(browser.get(landing).content.decode()) == shown
        expected = get_calculator("kv-cache").evaluate({"cache_gb": shown}).outputs["copies_per_cache"]
        response = browser.post(reverse("answer-challenge", args=[lesson.slug, challenge.pk]), {"value": str(expected)})
        assert response.status_code == 303
        assert Answer.objects.filter(challenge=challenge).latest("pk").outcome == "correct"


def test_worked_arithmetic_stops_at_the_number_asked(client, lesson):
    step = Step.objects.get(title="Preamble size")  # copy_bytes in MB: copies per cache is not this question
    answer_steps_before(client, step)
    html = client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "393.2"}, **HTMX).content.decode()
    assert "The worked arithmetic" in html
    assert "copies that fit" not in html.lower()


@pytest.mark.parametrize("edit", ["shell", "delete"])
def test_content_changed_outside_the_admin_shows_at_once(client, lesson, edit):
    """Saving or deleting a content row anywhere (shell, data migration) moves its lesson's version."""
    dd = DeepDive.objects.get(section__lesson=lesson, key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk})  # a returning learner
    assert "Paged blocks" in client.get(lesson.get_absolute_url()).content.decode()
    best = choice(lesson, "best")
    if edit == "shell":
        best.text = "Paged blocks, edited in the shell"
        best.save()
        assert "edited in the shell" in client.get(lesson.get_absolute_url()).content.decode()
    else:
        make_deep_dive(dd.section, key="dd-2", order=2)
        assert "How? (dd-2)" in client.get(lesson.get_absolute_url()).content.decode()
        DeepDive.objects.filter(key="dd-2").delete()
        assert "How? (dd-2)" not in client.get(lesson.get_absolute_url()).content.decode()


def test_a_lesson_deleted_or_unpublished_is_gone_from_its_page_and_answers(client, lesson):
    dd = DeepDive.objects.get(section__lesson=lesson, key="dd-1")
    assert client.get(lesson.get_absolute_url()).status_code == 200
    lesson.published = False
    lesson.save()
    assert client.get(lesson.get_absolute_url()).status_code == 404
    assert client.post(answer_url(dd), {"choice": choice(lesson, "best").pk}).status_code == 404
    lesson.delete()
    assert client.get(lesson.get_absolute_url()).status_code == 404


def test_a_signed_in_request_has_the_learner_without_a_query_of_its_own(
    client, lesson, learner_user, django_assert_num_queries
):
    """The account's learner row comes with the user (interview.accounts.backends)."""
    from interview.accounts.backends import LearnerModelBackend

    client.force_login(learner_user)
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk}, **HTMX)  # creates the learner
    user = LearnerModelBackend().get_user(learner_user.pk)
    with django_assert_num_queries(0):
        assert user.learner.answers.model is Answer
        assert user.learner.user_id == learner_user.pk


@pytest.mark.django_db(transaction=True)
def test_an_anonymous_sessions_concurrent_first_answers_all_land_on_one_learner():
    """Six answers sent at once by one visitor (one session cookie) are all kept, for one learner."""
    import threading

    from django.db import connection
    from django.test import Client

    from lessons.models import Learner

    lesson = make_lesson(deep_dives=6)
    visitor = Client()
    assert visitor.get(lesson.get_absolute_url()).status_code == 200  # the visit that starts the session
    assert not Learner.objects.exists()
    barrier = threading.Barrier(6)
    codes = []

    def answer(dd):
        tab = Client()
        tab.cookies = visitor.cookies  # another tab of the same browser
        best = dd.choices.get(verdict="best")
        barrier.wait()
        codes.append(tab.post(answer_url(dd), {"choice": best.pk}, **HTMX).status_code)
        connection.close()

    threads = [threading.Thread(target=answer, args=(dd,)) for dd in DeepDive.objects.select_related("section__lesson")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert codes == [200] * 6
    assert Learner.objects.count() == 1
    results = visitor.get(reverse("results")).content.decode()
    assert "60 of 90 points" in results and "6 of 9 questions answered" in results


@pytest.fixture
def follow_up(lesson):
    """A follow-up that dd-1's weak choice leads to."""
    follow = make_deep_dive(lesson.sections.get(), key="dd-follow", order=60)
    Choice.objects.filter(pk=choice(lesson, "weak").pk).update(follow_up=follow)
    return follow


@pytest.mark.parametrize("htmx", [False, True])
def test_a_follow_up_cannot_be_answered_before_it_is_reached(client, lesson, follow_up, htmx):
    headers = HTMX if htmx else {}
    best = follow_up.choices.get(verdict="best")
    response = client.post(answer_url(follow_up), {"choice": best.pk}, **headers)
    assert response.status_code == 409
    html = response.content.decode()
    assert "Answer the question it follows first" in html
    if htmx:  # the message sits in the follow-up's own error region
        assert '<p class="error" role="alert">Answer the question it follows first' in html
    assert not Answer.objects.exists()
    client.post(answer_url(lesson.sections.get().deepdives.get(key="dd-1")), {"choice": choice(lesson, "best").pk})
    assert client.post(answer_url(follow_up), {"choice": best.pk}, **headers).status_code == 409  # not that way
    assert Answer.objects.count() == 1


def test_a_follow_up_reached_through_any_of_ones_answers_can_be_answered(client, lesson, follow_up):
    from django.test import Client

    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk})
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk})  # a retry that opens the follow-up
    best = follow_up.choices.get(verdict="best")
    assert Client().post(answer_url(follow_up), {"choice": best.pk}).status_code == 409  # another visitor
    response = client.post(answer_url(follow_up), {"choice": best.pk}, **HTMX)
    assert response.status_code == 200
    assert "Correct: 10 of 10 points" in response.content.decode()


def test_a_follow_up_a_visitor_reached_stays_open_after_log_in(client, lesson, follow_up, learner_user):
    """The account had taken a hint on the follow-up; the visitor opened it: after log-in it is open, hint kept."""
    from lessons.models import ItemPractice

    account = Learner.objects.create(user=learner_user)
    ItemPractice.objects.create(learner=account, deep_dive=follow_up, hints_taken=1)
    client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": choice(lesson, "weak").pk})
    client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery"})
    row = ItemPractice.objects.get(deep_dive=follow_up)
    assert (row.learner_id, row.reached, row.hints_taken) == (account.pk, True, 1)
    assert 'id="dd-dd-follow"' in client.get(lesson.get_absolute_url()).content.decode()
    best = follow_up.choices.get(verdict="best")
    assert client.post(answer_url(follow_up), {"choice": best.pk}, **HTMX).status_code == 200


def test_every_link_on_a_lesson_page_is_the_routes_own(client, lesson):
    """Links built once per page (lessons.links.url_maker) are what reverse() gives for each item."""
    from lessons.models import Challenge

    html = client.get(lesson.get_absolute_url()).content.decode()
    dd, step, challenge = (
        DeepDive.objects.get(key="dd-1"),
        Step.objects.get(title="Preamble size"),
        Challenge.objects.get(),
    )
    for url in (
        answer_url(dd),
        reverse("answer-step", args=[lesson.slug, Step.objects.get(title="Requests per replica").pk]),
        reverse("answer-challenge", args=[lesson.slug, challenge.pk]),
        reverse("walkthrough-step", args=[lesson.slug, "build", 2]),
        reverse("calculators:detail", args=["kv-cache"]),
    ):
        assert f'"{url}' in html, url
    answer_first_step(client, lesson)
    fragment = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", 2]), **HTMX).content.decode()
    assert f'action="{reverse("answer-step", args=[lesson.slug, step.pk])}"' in fragment
    assert f'href="{reverse("walkthrough-step", args=[lesson.slug, "size", 1])}#wt-size"' in fragment


def test_a_prompt_field_saved_with_a_huge_width_never_makes_the_page_huge(client, lesson):
    from lessons.models import Challenge

    # A row saved before prompts were validated (or written past the admin) still renders small.
    Challenge.objects.update(prompt="A cache of **{cache_gb:>3000000} GB** and {cache_gb:{cache_gb}} GB.")
    response = client.get(lesson.get_absolute_url())
    html = response.content.decode()
    assert response.status_code == 200
    assert len(html) < 100_000
    assert "     " * 4 not in html.split("A cache of", 1)[1][:200]
    assert "A cache of <strong>" in html


def test_a_prompt_format_on_an_input_written_as_text_is_saved_and_shown(client, lesson):
    """Calculator inputs may be written as text ("8"); a number format on one must not break save or page."""
    from lessons.models import Challenge

    challenge = Challenge.objects.get()
    challenge.inputs = {"layers": "80"}
    challenge.prompt = "{layers:,} layers and a cache of **{cache_gb:.1f} GB**."
    challenge.full_clean()
    challenge.save()
    response = client.get(lesson.get_absolute_url())
    assert response.status_code == 200
    assert "80 layers and a cache of <strong>" in response.content.decode()


def test_a_calc_number_in_a_drawn_prompt_is_computed(client, lesson):
    from calculators.formatting import in_format
    from calculators.registry import get_calculator
    from lessons.models import Challenge

    Challenge.objects.update(prompt="One copy is {{calc kv-cache.copy_bytes | MB}}; the cache is {cache_gb} GB.")
    html = client.get(lesson.get_absolute_url()).content.decode()
    copy_bytes = get_calculator("kv-cache").evaluate({}).outputs["copy_bytes"]
    assert f"One copy is {in_format(copy_bytes, 'MB')}; the cache is" in html
    assert "{calc" not in html


def test_the_model_refuses_an_unsafe_prompt_field(lesson):
    from django.core.exceptions import ValidationError

    from lessons.models import Challenge

    challenge = Challenge.objects.get()
    challenge.prompt = "A cache of {cache_gb:>3000000} GB"
    with pytest.raises(ValidationError) as error:
        challenge.full_clean()
    assert "has the format '>3000000'" in str(error.value.message_dict["prompt"])


def test_the_case_study_code_sample_renders_as_highlighted_code_exactly_as_written(client, content):
    import html as html_lib
    import re
    from pathlib import Path

    import yaml

    source = Path(__file__).resolve().parents[2] / "content" / "lessons" / "llm-serving-platform.yaml"
    bodies = [s.get("body", "") for s in yaml.safe_load(source.read_text())["sections"]]
    authored = next(re.search(r"```\w*\n(.*?)```", body, re.S) for body in bodies if "```" in body).group(1)
    page = whole_lesson(client, reverse("lesson", args=["llm-serving-platform"]))
    blocks = re.findall(r"<pre[^>]*>(?:<span></span>)?<code>(.*?)</code></pre>", page, re.S)
    shown = [html_lib.unescape(re.sub(r"<[^>]+>", "", block)) for block in blocks]
    assert authored in shown
    code = blocks[shown.index(authored)]
    assert "Bearer &lt;team key&gt;" in code
    assert '<span class="nt">"model"</span>' in code  # Pygments' spans survive the sanitiser
    assert "&ldquo;" not in code and "\u201c" not in code
    assert "<code>stream: true</code>" in page  # inline code, not literal backticks
    assert "```" not in page
    from pathlib import Path

    from django.contrib.staticfiles import finders

    stylesheet = Path(finders.find("css/pygments.css")).read_text()
    assert ".highlight .nt {" in stylesheet  # the class of the spans above has colours


def test_a_lesson_page_writes_numbers_as_the_calculator_pages_do(client, lesson):
    step = Step.objects.get(title="Requests per replica")
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "0.00001234"})
    page = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", step.order])).content.decode()
    assert "You answered <strong>1.234 × 10⁻⁵ requests</strong>" in page


def test_a_learners_answer_is_echoed_with_the_digits_they_typed(client, lesson):
    """10.45 read back as "10.4" looked like the site had changed the answer."""
    step = Step.objects.get(title="Requests per replica")
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "10.45"})
    page = client.get(reverse("walkthrough-step", args=[lesson.slug, "size", step.order])).content.decode()
    assert "You answered <strong>10.45 requests</strong>" in page


def test_a_session_key_rotated_at_log_in_and_out_keeps_progress_apart(client, lesson, learner_user):
    """The session's learner merges into the account at log-in; after log-out a new session starts afresh."""
    from lessons.models import Learner

    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk})
    client.post(reverse("login"), {"username": "ada", "password": "correct-horse-battery"})
    assert list(Learner.objects.values_list("user", flat=True)) == [learner_user.pk]
    client.post(reverse("logout"))
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk})
    anonymous = Learner.objects.get(user=None)
    assert anonymous.session_key == client.session.session_key
    assert "10 of 40 points" in client.get(reverse("results")).content.decode()
    assert Answer.objects.get(learner__user=learner_user).points == 0


def test_a_signed_in_account_that_never_answered_reads_no_answers(client, lesson, learner_user):
    """Its learner row comes with the user and there is none: the page asks for no rows of it."""
    client.force_login(learner_user)
    before = count_queries(client, lesson.get_absolute_url())
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk})
    html = client.get(lesson.get_absolute_url()).content.decode()
    assert "Try again (recorded, not scored)" in html  # the answer shows once there is one
    assert before < count_queries(client, lesson.get_absolute_url())


def test_answering_a_follow_up_costs_no_more_queries_than_any_deep_dive(client, lesson, follow_up):
    """Whether a follow-up is open is read with the learner's state (ItemPractice.reached): no query of its own."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    dd = DeepDive.objects.get(key="dd-1")
    plain = make_deep_dive(lesson.sections.get(), key="dd-2", order=2)  # no choice leads to it, nor from it
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk}, **HTMX)  # opens the follow-up
    for item in (plain, follow_up):
        client.post(answer_url(item), {"choice": item.choices.get(verdict="weak").pk}, **HTMX)
    counts = {}  # of two retries, which store the same rows
    for item in (plain, follow_up):
        with CaptureQueriesContext(connection) as ctx:
            response = client.post(answer_url(item), {"choice": item.choices.get(verdict="best").pk}, **HTMX)
        assert response.status_code == 200
        assert "Tries recorded: 2." in response.content.decode()  # the follow-up, reached, took the retry
        counts[item.key] = len(ctx.captured_queries)
    assert counts["dd-2"] == counts["dd-follow"]


def test_an_answer_that_another_tab_beat_to_first_shows_the_first_answers_score(client, lesson, monkeypatch):
    """Two tabs answer at once: the one stored second is a retry, and its fragment says what the
    first scored, though the first was stored after this request read the learner's answers."""
    from lessons import services, views

    client.get(lesson.get_absolute_url())
    read_page = views.load_lesson_data

    def read_then_the_other_tab_answers(request, *args, **kwargs):
        data = read_page(request, *args, **kwargs)
        other_tab = choice(lesson, "weak")
        services.answer_deep_dive(services.current_learner(request, create=True), other_tab.deep_dive, other_tab)
        return data

    monkeypatch.setattr(views, "load_lesson_data", read_then_the_other_tab_answers)
    best = choice(lesson, "best")
    response = client.post(answer_url(best.deep_dive), {"choice": best.pk}, **HTMX)
    assert response.status_code == 200
    assert "on a retry (not scored). Your score stays 0 of 10." in response.content.decode()
    assert list(Answer.objects.order_by("pk").values_list("is_first", flat=True)) == [True, False]


def test_ids_in_the_page_are_written_plainly_whatever_the_number_format(client, lesson, settings):
    """A choice's id in its button must post back as is: never as "12,345" under a locale's grouping."""
    import re

    settings.USE_THOUSAND_SEPARATOR = True
    best = choice(lesson, "best")
    big = Choice.objects.aggregate(Max("id"))["id__max"] + 12345  # free whatever PostgreSQL's sequence has given
    Choice.objects.filter(pk=best.pk).update(id=big)
    html = client.get(lesson.get_absolute_url()).content.decode()
    assert str(big) in re.findall(r'name="choice" value="([^"]+)"', html)  # the page's value, posted back as is
    response = client.post(answer_url(best.deep_dive), {"choice": str(big)}, **HTMX)
    assert response.status_code == 200
    assert "Correct: 10 of 10 points" in response.content.decode()


def test_a_challenge_says_its_tolerance_in_words(client, lesson):
    html = client.get(lesson.get_absolute_url()).content.decode()
    assert "Right answers are within 1% of the exact one." in html
    assert "with t = " not in html


def test_a_count_graded_within_half_a_unit_asks_for_the_exact_whole_number(client, lesson):
    """ "Right answers are within ± 0.5 requests" read as a puzzle to a learner: half a request is no answer."""
    step = Step.objects.get(title="Requests per replica")
    step.tolerance, step.tolerance_kind = 0.5, "nominal"
    step.save()
    html = client.get(step.get_absolute_url()).content.decode()
    assert "Right answers are the exact count, a whole number (within ± 0.5 requests)." in html
    # Half a unit of a size, a percentage, a multiple or thousands is no whole count: said as a tolerance.
    cases = (("%", "± 0.5%"), ("MB", "± 0.5 MB"), ("×", "± 0.5×"), ("thousand requests", "± 0.5 thousand requests"))
    for unit, words in cases:
        step.unit = unit
        step.save()
        assert (
            f"Right answers are within {words} of the exact one."
            in client.get(step.get_absolute_url()).content.decode()
        )


def test_a_challenge_says_where_its_working_comes_from_once_answered(client, lesson):
    html = client.get(lesson.get_absolute_url()).content.decode()
    # When, as the reveal rule says (scoring.reveal_earned): not after any answer, as it had said.
    assert "is shown once you are right, after a second try, or when you ask for it after answering." in html
    assert "once you have answered. Right answers" not in html


def test_a_walkthrough_step_says_its_tolerance_as_a_challenge_does(client, lesson):
    """A step said only "graded within a tolerance": 2.3% off got half credit with nothing to say why."""
    step = Step.objects.get(title="Requests per replica")  # tolerance 2%
    html = client.get(step.get_absolute_url()).content.decode()
    assert "Right answers are within 2% of the exact one." in html
    after = client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"}, **HTMX).content.decode()
    assert "Right answers are within 2% of the exact one." in after  # still there after an answer swaps it in


def test_an_htmx_answer_updates_the_lessons_counters_out_of_band(client, lesson):
    before = client.get(lesson.get_absolute_url()).content.decode()
    assert "0 of 4 answered · 0 of 40 points" in before
    dd = DeepDive.objects.get(key="dd-1")
    html = client.post(answer_url(dd), {"choice": choice(lesson, "best").pk}, **HTMX).content.decode()
    assert html.count('id="lesson-progress-line" hx-swap-oob="true"') == 1
    assert "1 of 4 answered · 10 of 40 points" in html
    assert '<progress id="lesson-progress" max="100" value="25">' in html
    assert "1 of 4 answered · 10 of 40 points" in client.get(lesson.get_absolute_url()).content.decode()


def test_next_and_back_in_a_walkthrough_put_focus_on_the_new_steps_heading(client, lesson):
    url = reverse("walkthrough-step", args=[lesson.slug, "build", 2])
    fragment = client.get(url, **HTMX).content.decode()
    assert 'id="wt-build-step-title" class="interviewer" tabindex="-1" data-focus>' in fragment
    assert "lesson-progress-line" not in fragment  # moving between steps answers nothing


def test_the_outline_calls_a_missed_item_answered_and_missed_not_done(client, lesson):
    """The outline says what is left to answer; a miss is answered, and missed (as results list it): worth a retry."""
    client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": choice(lesson, "weak").pk})
    html = client.get(lesson.get_absolute_url()).content.decode()
    mark = re.search(r'<span class="mark mark-missed" id="mark-dd-dd-1">(.*?)</span></li>', html).group(1)
    assert mark == '<span aria-hidden="true">↻ </span>answered · missed'


def test_the_outline_marks_each_item_and_each_layer_leads_to_the_next(client, lesson):
    html = client.get(lesson.get_absolute_url()).content.decode()
    assert '<nav aria-label="Lesson outline">' in html
    assert '<li><a href="/lessons/sample/?layer=2&amp;section=core#sec-core">Core</a>' in html
    assert '<span class="mark mark-todo" id="mark-dd-dd-1">' in html
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk})
    html = client.get(lesson.get_absolute_url()).content.decode()
    assert '<span class="mark mark-done" id="mark-dd-dd-1">' in html
    assert '<span class="mark mark-todo" id="mark-wt-size">' in html
    assert "1 of 4 answered ·" in html


@pytest.fixture
def two_layers(lesson):
    """The sample lesson (its items in layer 2) with a deeper section in layer 3 holding one deep dive."""
    from lessons.models import Section

    deeper = Section.objects.create(lesson=lesson, key="deeper", layer=3, order=2, title="Deeper", minutes=3)
    return make_deep_dive(deeper, key="dd-deep", order=1)


def test_a_lesson_shows_one_layer_a_page_and_continues_to_the_next(client, lesson, two_layers):
    first = client.get(lesson.get_absolute_url()).content.decode()
    assert 'id="dd-dd-1"' in first and 'id="dd-dd-deep"' not in first  # only layer 2's items
    continue_link = re.search(r'<a class="button" href="([^"]+)">Continue to layer 3', first).group(1)
    assert continue_link == "/lessons/sample/?layer=3#layer-3"
    deeper = client.get(continue_link.split("#")[0]).content.decode()
    assert 'id="dd-dd-deep"' in deeper and 'id="dd-dd-1"' not in deeper
    assert "Continue to layer" not in deeper  # the last layer
    # The outline links every layer and section to its page, the current layer marked.
    assert '<a href="/lessons/sample/?layer=2&amp;section=core#sec-core">Core</a>' in deeper
    assert '<a href="/lessons/sample/?layer=3&amp;section=deeper#sec-deeper">Deeper</a>' in deeper
    assert '<a href="/lessons/sample/?layer=3#layer-3" aria-current="page">' in deeper


RESUME = re.compile(r'<a class="button" id="lesson-resume" href="([^"]+)"( hx-swap-oob="true")?>([^<]+)</a>')


def test_the_first_answer_turns_start_into_resume_without_a_reload(client, lesson, two_layers):
    """The htmx answer sends the header's button along, out of band, as the next page load shows it."""
    assert RESUME.search(client.get(lesson.get_absolute_url()).content.decode()).group(3) == "Start"
    response = client.post(answer_url(two_layers), {"choice": choice(lesson, "weak", key="dd-deep").pk}, **HTMX)
    sent = RESUME.search(response.content.decode())
    assert sent.groups() == (
        "/lessons/sample/?layer=3&amp;section=deeper#dd-dd-deep",
        ' hx-swap-oob="true"',
        "Resume where you stopped",
    )
    shown = RESUME.search(client.get(lesson.get_absolute_url()).content.decode())
    assert shown.groups() == (sent.group(1), None, "Resume where you stopped")
    # Another item answered, then a retry of the first: each keeps its item as the place, and says so at once.
    client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": choice(lesson, "weak").pk}, **HTMX)
    retry = client.post(answer_url(two_layers), {"choice": choice(lesson, "best", key="dd-deep").pk}, **HTMX)
    assert RESUME.search(retry.content.decode()).group(1) == "/lessons/sample/?layer=3&amp;section=deeper#dd-dd-deep"
    assert RESUME.search(client.get(lesson.get_absolute_url()).content.decode()).group(1) == sent.group(1)


def test_a_walkthrough_steps_first_answer_sends_its_step_as_the_place(client, lesson):
    step = Step.objects.get(walkthrough__key="size", order=1)
    response = client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "3"}, **HTMX)
    sent = RESUME.search(response.content.decode()).group(1)
    assert sent == "/lessons/sample/walkthroughs/size/1/#wt-size"
    assert RESUME.search(client.get(lesson.get_absolute_url()).content.decode()).group(1) == sent


def test_an_answer_deep_in_the_lesson_is_resumed_on_its_layer(client, lesson, two_layers):
    response = client.post(answer_url(two_layers), {"choice": choice(lesson, "weak", key="dd-deep").pk})
    assert response["Location"] == "/lessons/sample/?layer=3&section=deeper#dd-dd-deep"  # no JS: back to the item
    page = client.get(lesson.get_absolute_url()).content.decode()
    resume = re.search(r'<a class="button" id="lesson-resume" href="([^"]+)">Resume where you stopped', page).group(1)
    assert resume == "/lessons/sample/?layer=3&amp;section=deeper#dd-dd-deep"
    assert 'id="dd-dd-deep-feedback"' in client.get(html.unescape(resume).split("#")[0]).content.decode()
    # The results' retry link for the miss lands on the same layer.
    assert (
        'href="/lessons/sample/?layer=3&amp;section=deeper#dd-dd-deep"'
        in client.get(reverse("results")).content.decode()
    )


@pytest.mark.parametrize("layer", ["9", "x", "-1", "٢"])
def test_a_layer_the_lesson_lacks_is_a_clear_404(client, lesson, layer):
    response = client.get(lesson.get_absolute_url(), {"layer": layer})
    assert response.status_code == 404
    assert b"layer" in response.content


def test_an_htmx_answer_sends_the_items_outline_mark_out_of_band(client, lesson):
    step = Step.objects.filter(walkthrough__key="size", calculator__gt="").order_by("order").first()
    fragment = client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"}, **HTMX).content
    # One of the envelope's numbers answered: the walkthrough is partly done, said in the same response.
    # The outline's entry for the item is sent whole (it lists the follow-ups an answer opened), its id the page's.
    assert re.search(
        rb'<li id="outline-wt-size" hx-swap-oob="true"><a href="/lessons/sample/\?layer=2&amp;section=core#wt-size">'
        rb'[^<]+</a> <span class="mark mark-partial" id="mark-wt-size">.*1 of 2 answered',
        fragment,
    )
    dd = DeepDive.objects.get(key="dd-1")
    fragment = client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk}, **HTMX).content
    assert re.search(rb'<li id="outline-dd-dd-1" hx-swap-oob="true">.*<span class="mark mark-missed"', fragment)
    page = client.get(lesson.get_absolute_url()).content
    assert b'<span class="mark mark-partial" id="mark-wt-size">' in page


def test_a_retry_sends_no_progress_update_and_the_counters_stay(client, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    client.post(answer_url(dd), {"choice": choice(lesson, "best").pk}, **HTMX)
    html = client.post(answer_url(dd), {"choice": choice(lesson, "best").pk}, **HTMX).content.decode()
    assert "a retry" in html
    assert "lesson-progress-line" not in html  # a retry keeps the first answer's score: nothing to update
    assert "1 of 4 answered · 10 of 40 points" in client.get(lesson.get_absolute_url()).content.decode()


def test_points_in_the_thousands_are_written_with_separators(client, lesson):
    DeepDive.objects.filter(key="dd-1").update(points=1500)  # with two steps and a challenge of 10: 1,530 in all
    client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": choice(lesson, "best").pk})
    home = client.get("/").content.decode()
    assert "1 of 4 questions answered, 1,500 of 1,530 points" in home
    assert "1 of 4 answered · 1,500 of 1,530 points" in home  # the lesson's card
    results = client.get(reverse("results")).content.decode()
    assert "<strong>1,500 of 1,530 points</strong>" in results
    assert '<td role="cell" class="num">1,500 / 1,530</td>' in results
    assert "1 of 1 answered · 1,500 of 1,500 points" in results  # the topic's card
    page = client.get(lesson.get_absolute_url()).content.decode()
    assert "1 of 4 answered · 1,500 of 1,530 points" in page  # the progress line
    assert "· 1,500 of 1,500 points" in page  # the deep dive's verdict


def main_button(html: str) -> str:
    """Return the home page's main button (the first in its hero)."""
    return re.search(r'<p class="button-row">\s*(<a class="button" [^>]*>[^<]*</a>)', html).group(1)


def test_home_offers_to_continue_the_lesson_of_the_latest_answer_where_it_stopped(client, lesson):
    other = make_lesson(slug="other")
    assert (
        main_button(client.get("/").content.decode())
        == f'<a class="button" href="/lessons/sample/">Start with {lesson.title}</a>'
    )
    dd = DeepDive.objects.get(key="dd-1", section__lesson=lesson)
    client.post(answer_url(dd), {"choice": choice(lesson, "weak").pk})
    expected = f'<a class="button" href="/lessons/sample/?layer=2&amp;section=core#{dd.anchor}">Continue with Lesson sample</a>'
    assert main_button(client.get("/").content.decode()) == expected
    step = Step.objects.get(title="Requests per replica", walkthrough__section__lesson=other)
    client.post(reverse("answer-step", args=[other.slug, step.pk]), {"value": "110"})
    expected = '<a class="button" href="/lessons/other/walkthroughs/size/1/#wt-size">Continue with Lesson other</a>'
    assert main_button(client.get("/").content.decode()) == expected


def test_home_continues_at_the_lesson_page_when_an_answer_kept_no_place(api, lesson):
    dd = DeepDive.objects.get(key="dd-1")
    response = api.post(f"/api/v1/deep-dives/{dd.pk}/answer/", {"choice": dd.choices.first().pk}, format="json")
    assert response.status_code == 200  # an API answer keeps no place in the lesson
    html = api.get("/").content.decode()
    assert main_button(html) == '<a class="button" href="/lessons/sample/">Continue with Lesson sample</a>'


def test_the_worked_arithmetic_writes_each_line_in_its_unit(client, content):
    """Dollars read "$2,924,800" and shares "11.7%", as on the calculator pages: not "2,924,800 USD", "0.117 fraction"."""
    from lessons.models import Challenge

    challenge = Challenge.objects.get(title="What the API bills on its share")
    lesson = challenge.section.lesson
    client.post(reverse("answer-challenge", args=[lesson.slug, challenge.pk]), {"value": "1"})
    client.post(reverse("reveal", args=[lesson.slug, "challenge", challenge.pk]))
    html = client.get(f"{lesson.get_absolute_url()}?layer={challenge.section.layer}").content.decode()
    lines = re.findall(r"</code> = (.*?)</li>", html.split(f'id="{challenge.anchor}"')[1].split("</article>")[0])
    assert lines and lines[-1].startswith("$") and not any(line.endswith((" USD", " fraction")) for line in lines)
    assert any(line.endswith("%") for line in lines)


def test_an_answer_whose_choice_was_removed_still_shows_with_its_points(client, lesson):
    """An author removed the approach a learner picked (the answer keeps its points): the page says so."""
    weak = choice(lesson, "weak")
    client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": weak.pk})
    weak.delete()
    response = client.get(lesson.get_absolute_url())
    assert response.status_code == 200
    html = response.content.decode()
    assert "The approach you chose has since been removed from this lesson" in html
    assert '<p><span class="verdict">Missed</span> · 0 of 10 points</p>' in html


def test_a_choice_pointed_at_a_new_follow_up_opens_it_for_those_who_picked_it(client, lesson, follow_up):
    """An author re-points dd-1's weak choice (the admin saves it; load_content updates it): learners who
    picked it reach the new follow-up, as they would by answering after the change; others do not."""
    from django.test import Client

    from lessons import services

    other = Client()
    client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": choice(lesson, "weak").pk})
    other.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": choice(lesson, "best").pk})
    later = make_deep_dive(lesson.sections.get(), key="dd-later", order=61)
    weak = choice(lesson, "weak")
    weak.follow_up = later
    weak.save()  # as the admin saves it
    assert 'id="dd-dd-later"' in client.get(lesson.get_absolute_url()).content.decode()
    assert 'id="dd-dd-later"' not in other.get(lesson.get_absolute_url()).content.decode()
    best = later.choices.get(verdict="best")
    assert client.post(answer_url(later), {"choice": best.pk}, **HTMX).status_code == 200
    # load_content writes the link with update(): it calls reach_through for the choices it re-pointed.
    again = make_deep_dive(lesson.sections.get(), key="dd-again", order=62)
    Choice.objects.filter(pk=weak.pk).update(follow_up=again)
    services.reach_through([weak.pk])
    content_cache.new_generation()
    assert 'id="dd-dd-again"' in client.get(lesson.get_absolute_url()).content.decode()


def test_links_made_once_a_process_follow_the_requests_script_prefix(client, lesson):
    """A site mounted under a path (SCRIPT_NAME): each request's links carry its prefix, whatever the first had."""
    from django.urls import get_script_prefix, set_script_prefix

    from lessons.links import url_maker

    before = get_script_prefix()
    try:
        set_script_prefix("/")
        assert url_maker("lesson")("sample") == "/lessons/sample/"
        set_script_prefix("/lab/")
        assert url_maker("lesson")("sample") == "/lab/lessons/sample/"
        assert lesson.get_absolute_url() == "/lab/lessons/sample/"
    finally:
        set_script_prefix(before)


def test_a_later_layer_says_while_the_questions_before_it_wait(client, lesson):
    """The case study's layer 3 sizes "one 70B replica on four GPUs", the answer to layer 2's last question: a learner
    opening it first read that answer before committing to it. A layer says how many questions the layers before it
    still hold, a follow-up an answer opened among them, linking the first, until each is answered, right or wrong."""
    from lessons.models import Section

    core = lesson.sections.get()
    follow_up = make_deep_dive(core, key="dd-follow", order=50)
    Choice.objects.filter(deep_dive__key="dd-1", verdict="weak").update(follow_up=follow_up)
    later = Section.objects.create(lesson=lesson, key="later", layer=3, order=2, title="Later", minutes=2, body="On.")
    make_deep_dive(later, key="dd-later", order=1)
    skim = Section.objects.create(lesson=lesson, key="skim", layer=1, order=0, title="Skim", minutes=1, body="Hi.")
    make_deep_dive(skim, key="dd-skim", order=1)
    layer_3, core_page = f"{lesson.get_absolute_url()}?layer=3", f"{lesson.get_absolute_url()}?layer=2&amp;section=core"
    notice = re.compile(r'<p class="message message-info" id="layer-3-before">(.*?)</p>')
    said = notice.search(client.get(layer_3).content.decode()).group(1)
    assert said == (
        "Layers 1 and 2 still have 5 questions you have not answered. This layer builds on them and may give their"
        f' answers away. <a href="{lesson.get_absolute_url()}?layer=1&amp;section=skim#dd-dd-skim">Go to the first of'
        " them, in layer 1</a>."
    )
    assert not notice.search(client.get(f"{lesson.get_absolute_url()}?layer=1").content.decode())  # none before it
    client.post(answer_url(DeepDive.objects.get(key="dd-skim")), {"choice": choice(lesson, "best", key="dd-skim").pk})
    said = notice.search(client.get(layer_3).content.decode()).group(1)
    assert said == (
        "Layer 2 still has 4 questions you have not answered. This layer builds on them and may give their answers"
        f' away. <a href="{core_page}#dd-dd-1">Go to the first of them, in layer 2</a>.'
    )
    client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": choice(lesson, "weak").pk})  # opens dd-follow
    said = notice.search(client.get(layer_3).content.decode()).group(1)
    assert said.startswith("Layer 2 still has 4 questions you have not answered.")  # dd-1 answered, dd-follow opened
    assert f'<a href="{core_page}#dd-dd-follow">Go to the first of them, in layer 2</a>' in said  # below dd-1
    client.post(answer_url(follow_up), {"choice": choice(lesson, "best", key="dd-follow").pk})
    step = Step.objects.get(title="Preamble size")
    answer_steps_before(client, step)
    said = notice.search(client.get(layer_3).content.decode()).group(1)
    # A walkthrough's link is the step to answer's own page, not its first step's.
    assert '<a href="/lessons/sample/walkthroughs/size/2/#wt-size">Go to the first of them, in layer 2</a>' in said
    client.post(reverse("answer-step", args=[lesson.slug, step.pk]), {"value": "1"})  # wrong: answered all the same
    said = notice.search(client.get(layer_3).content.decode()).group(1)
    assert said == (
        "Layer 2 still has a question you have not answered. This layer builds on it and may give its answer away."
        f' <a href="{core_page}#ch-copies">Answer it first, in layer 2</a>.'
    )
    client.post(reverse("answer-challenge", args=[lesson.slug, Challenge.objects.get(key="copies").pk]), {"value": "1"})
    assert not notice.search(client.get(layer_3).content.decode())


def test_a_refused_answer_to_a_follow_up_not_reached_links_nothing_the_page_does_not_draw(client, lesson):
    """Without JavaScript the page's top says why an answer was refused and links the question, far below; a
    follow-up no answer has opened yet is not drawn, so there is no link to it (it led nowhere)."""
    follow_up = make_deep_dive(lesson.sections.get(), key="dd-follow", order=50)
    Choice.objects.filter(deep_dive__key="dd-1", verdict="weak").update(follow_up=follow_up)
    response = client.post(answer_url(follow_up), {"choice": choice(lesson, "best", key="dd-follow").pk})
    html = response.content.decode()
    top = re.search(r'<p class="error" role="alert">(.*?)</p>', html).group(1)
    assert response.status_code == 409 and top.startswith("Your answer was not recorded. ")
    assert "<a " not in top and 'id="dd-dd-follow"' not in html
    response = client.post(answer_url(DeepDive.objects.get(key="dd-1")), {"choice": "nope"})  # a drawn item: linked
    top = re.search(r'<p class="error" role="alert">(.*?)</p>', response.content.decode()).group(1)
    assert top.endswith('<a href="#dd-dd-1">Go to the question</a>')
