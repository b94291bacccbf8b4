"""An instructor authors a lesson entirely in the admin, previews and publishes it; a learner answers it;
the instructor sees the answers in the item analysis."""

import re

import pytest
from django.contrib.auth.models import Group, User
from playwright.sync_api import expect

from calculators.registry import get_calculator
from lessons.models import Challenge, DeepDive, Lesson
from tests.browser.conftest import describe

PASSWORD = "correct-horse-battery"


def save_and_continue(page):
    page.locator('input[name="_continue"]').first.click()
    expect(page.locator(".messagelist .success")).to_be_visible()


@pytest.mark.django_db(transaction=True)
def test_instructor_authors_previews_and_publishes_a_lesson_that_a_learner_answers(
    live_server, page, browser, console_errors
):
    instructor = User.objects.create_user("ines", "ines@example.com", PASSWORD, is_staff=True)
    instructor.groups.add(Group.objects.get(name="Instructors"))
    admin = live_server.url + "/admin/"
    page.goto(admin)
    page.get_by_label("Username").fill("ines")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    # A track, then the lesson with one section.
    page.goto(admin + "lessons/track/add/")
    page.locator("#id_title").fill("Authoring")
    page.locator("#id_title").press("Tab")
    page.locator('input[name="_save"]').first.click()
    page.goto(admin + "lessons/lesson/add/")
    page.locator("#id_track").select_option(label="Authoring")
    page.locator("#id_title").fill("Sizing a cache")
    page.locator("#id_title").press("Tab")
    expect(page.locator("#id_slug")).to_have_value("sizing-a-cache")  # filled in from the title
    page.locator("#id_kind").select_option("concept")
    page.locator("#id_summary").fill("How big a prefix copy is, and how many fit.")
    page.locator("#id_order").fill("1")
    page.get_by_role("button", name="Add another Section").click()
    expect(page.locator("#id_sections-0-order")).to_have_value("1")
    page.locator("#id_sections-0-key").fill("core")
    page.locator("#id_sections-0-title").fill("Core")
    save_and_continue(page)
    outline = page.locator("#outline")
    expect(outline).to_contain_text("Core")

    # A deep dive, added from the outline: the section is filled in.
    outline.get_by_role("link", name="Add a deep dive").click()
    page.locator("#id_key").fill("where-to-cache")
    page.locator("#id_topic").select_option(label="Prefix caching")
    page.locator("#id_prompt").fill("Where does a shared system prompt's KV cache live?")
    choices = [("best", "Once per replica, reused by every request"), ("weak", "Recomputed on every request"),
               ("acceptable", "On the CPU, copied in per batch")]  # fmt: skip
    for n, (verdict, text) in enumerate(choices):
        expect(page.locator(f"#id_choices-{n}-order")).to_have_value(str(n + 1))  # the empty rows come numbered
        page.locator(f"#id_choices-{n}-text").fill(text)
        page.locator(f"#id_choices-{n}-verdict").select_option(verdict)
        page.locator(f"#id_choices-{n}-feedback").fill(f"Feedback for {verdict}.")
    save_and_continue(page)
    page.get_by_role("link", name=re.compile("Back to the outline")).click()

    # An envelope walkthrough with a step asking for MB: the output select follows the calculator (htmx).
    page.locator("#outline").get_by_role("link", name="Add a walkthrough").click()
    page.locator("#id_key").fill("size-it")
    page.locator("#id_kind").select_option("envelope")
    page.locator("#id_title").fill("Size it")
    page.locator("#id_topic").select_option(label="Prefix caching")
    page.get_by_role("button", name="Add another Step").click()
    expect(page.locator("#id_steps-0-order")).to_have_value("1")  # numbered as it is added (admin_rows.js)
    page.locator("#id_steps-0-title").fill("How big is one copy of the prefix?")
    page.locator("#id_steps-0-calculator").select_option("kv-cache")
    expect(page.locator("#id_steps-0-output optgroup")).to_have_count(0)  # narrowed to kv-cache's outputs
    page.locator("#id_steps-0-output").select_option("copy_bytes")
    expect(page.locator("#id_steps-0-unit option")).to_have_count(9)  # the units a size can be shown in (htmx)
    page.locator("#id_steps-0-unit").select_option("MB")
    page.locator("#id_steps-0-tolerance").fill("0.01")
    save_and_continue(page)
    page.get_by_role("link", name=re.compile("Back to the outline")).click()

    # A challenge whose cache size is drawn per learner.
    page.locator("#outline").get_by_role("link", name="Add a challenge").click()
    page.locator("#id_key").fill("copies")
    page.locator("#id_topic").select_option(label="Prefix caching")
    page.locator("#id_title").fill("Copies in your cache")
    page.locator("#id_prompt").fill("A cache of {cache_gb} GB holds how many copies?")
    page.locator("#id_calculator").select_option("kv-cache")
    expect(page.locator("#id_output optgroup")).to_have_count(0)
    page.locator("#id_output").select_option("copies_per_cache")
    # The calculator's parameters show as a table at once (htmx): draw the cache size per learner.
    page.locator("#id_ranges__cache_gb__min").fill("4")
    page.locator("#id_ranges__cache_gb__max").fill("40")
    page.locator("#id_ranges__cache_gb__step").fill("4")
    expect(page.locator("#id_unit option[value='copies']")).to_have_count(1)
    page.locator("#id_unit").select_option("copies")
    page.locator("#id_tolerance").fill("0.01")
    save_and_continue(page)
    expect(page.locator(".field-expected_answer")).to_contain_text("copies")
    page.get_by_role("link", name=re.compile("Back to the outline")).click()

    # Preview the draft as a learner would see it, then publish.
    lesson_form = page.url
    page.get_by_role("link", name="View on site").first.click()
    expect(page.locator(".kind")).to_contain_text("draft (visible to staff only)")
    expect(page.locator("#dd-where-to-cache")).to_be_visible()
    page.goto(lesson_form)
    page.locator("#id_published").check()
    save_and_continue(page)

    # A learner answers all three.
    learner = browser.new_page()
    learner.goto(live_server.url + "/lessons/sizing-a-cache/")
    expect(learner.locator(".kind")).not_to_contain_text("draft")
    learner.locator("#dd-where-to-cache").get_by_role("button", name=re.compile("Once per replica")).click()
    expect(learner.locator("#dd-where-to-cache-feedback")).to_contain_text("Best")
    copy_mb = get_calculator("kv-cache").evaluate({}).outputs["copy_bytes"] / 1e6
    envelope = learner.locator("#wt-size-it")
    envelope.get_by_label("Your answer").fill(f"{copy_mb:.2f}")
    envelope.get_by_role("button", name="Check").click()
    expect(learner.locator("#wt-size-it-feedback")).to_contain_text("Correct")
    challenge = learner.locator("#ch-copies")
    cache_gb = int(re.search(r"A cache of (\d+) GB", challenge.inner_text()).group(1))
    copies = get_calculator("kv-cache").evaluate({"cache_gb": cache_gb}).outputs["copies_per_cache"]
    challenge.get_by_label("Your answer").fill(str(copies))
    challenge.get_by_role("button", name="Check").click()
    expect(learner.locator("#ch-copies")).to_contain_text("Correct")

    # The instructor sees the three first answers in the item analysis.
    page.goto(admin + "lessons/lesson/")
    page.get_by_role("link", name="How learners answer").click()
    rows = page.locator("#item-analysis tbody tr")
    expect(rows).to_have_count(3)
    for n in range(3):
        expect(rows.nth(n).locator("td").first).to_have_text("1")
    expect(rows.nth(0)).to_contain_text("best: Once per replica, reused by every request: 1 (100%)")
    # Leaving an admin page at once (as this test does) aborts loads of Django's own admin files (icons,
    # filters.js); a missing file would be a 404 response, not a failed request. Nothing else may fail.
    assert [e for e in console_errors if "/static/admin/" not in e] == []


@pytest.mark.django_db(transaction=True)
def test_the_admin_lesson_page_and_a_challenge_form_pass_axe(live_server, page, content, axe_violations):
    User.objects.create_superuser("boss", "boss@example.com", PASSWORD)
    page.goto(live_server.url + "/admin/login/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    lesson = Lesson.objects.get(slug="how-the-lab-works")
    page.goto(f"{live_server.url}/admin/lessons/lesson/{lesson.pk}/change/")
    expect(page.locator("#outline")).to_be_visible()
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    # A deep dive's choices each have a follow-up autocomplete: named by its label, a row added later too.
    deep_dive = DeepDive.objects.filter(section__lesson=lesson).first()
    page.goto(f"{live_server.url}/admin/lessons/deepdive/{deep_dive.pk}/change/")
    page.get_by_text("Add another Choice").click()
    follow_ups = page.get_by_role("combobox", name=re.compile(r"^Follow up"))
    expect(follow_ups).to_have_count(deep_dive.choices.count() + 1)
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    follow_ups.first.focus()  # opened from the keyboard: its search box, list and highlighted option too
    page.keyboard.press("Enter")
    expect(page.get_by_role("searchbox", name="Search: Follow up")).to_be_focused()
    expect(page.locator(".select2-results__option--highlighted").first).to_be_visible()
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    page.keyboard.press("Escape")
    challenge = Challenge.objects.filter(section__lesson=lesson).first()
    page.goto(f"{live_server.url}/admin/lessons/challenge/{challenge.pk}/change/")
    expect(page.locator("div.breadcrumbs")).to_be_visible()
    violations = axe_violations(page)
    assert violations == [], describe(violations)
    # Arrowing through the calculator select back to its own calculator keeps the output, unit and answer.
    calculator, output = page.locator("#id_calculator"), page.locator("#id_output")
    kept_output, kept_unit = output.input_value(), page.locator("#id_unit").input_value()
    expected = page.locator("output.expected-answer")
    kept_answer = expected.inner_text()
    with page.expect_response(re.compile(r"calculator-outputs")) as same:
        calculator.dispatch_event("change")
    assert same.value.status == 204
    expect(output).to_have_value(kept_output)
    expect(page.locator("select#id_unit")).to_have_value(kept_unit)
    expect(expected).to_have_text(kept_answer)
    # Another calculator resets them, and the expected answer follows.
    calculator.select_option("routing")
    expect(output).to_have_value("")
    expect(page.locator("input#id_unit")).to_have_value("")
    expect(expected).to_have_text("Choose an output, then the unit to ask for.")
    output.select_option("duplicate_copies")  # the unit select follows, its first unit chosen: an answer shows
    expect(expected).to_contain_text("copies")


def test_after_a_refused_save_the_expected_answer_follows_the_inputs_as_typed(live_server, page, content):
    """A save refused for an input out of range showed the answer for the saved (or default) inputs beside the
    typed ones: the expected answer is worked out again from the form as the page shows it."""
    User.objects.create_superuser("boss", "boss@example.com", PASSWORD)
    page.goto(live_server.url + "/admin/login/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    challenge = Challenge.objects.filter(calculator="kv-cache").exclude(output="").first()
    page.goto(f"{live_server.url}/admin/lessons/challenge/{challenge.pk}/change/")
    expected = page.locator("output.expected-answer")
    expect(expected).to_contain_text("empty parameters take their defaults")
    page.locator("#id_inputs__layers").fill("5000")
    page.locator('input[name="_continue"]').first.click()  # Save and continue editing
    expect(page.locator(".errornote")).to_be_visible()  # refused
    expect(page.locator("#id_inputs__layers")).to_have_value("5000")
    expect(expected).to_contain_text("The calculator refuses these inputs")


@pytest.mark.django_db(transaction=True)
def test_an_output_chosen_the_moment_the_calculator_swaps_it_in_offers_its_units(live_server, page):
    """What an htmx swap brings in answers at once: htmx's default 20 ms settle delay left a newly swapped
    output select inert, and choosing in that window (as a quick hand or a test does) never asked for units."""
    User.objects.create_superuser("boss", "boss@example.com", PASSWORD)
    page.goto(live_server.url + "/admin/login/?next=/admin/lessons/challenge/add/")
    page.get_by_label("Username").fill("boss")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#id_calculator")).to_be_visible()
    # Choose the output in the first task after the swap, before any 20 ms timer could fire.
    page.evaluate("""() => document.body.addEventListener("htmx:afterSwap", (event) => {
        if (event.target.id !== "id_output") return;
        setTimeout(() => {
            const output = document.getElementById("id_output");
            output.value = "copies_per_cache";
            output.dispatchEvent(new Event("change", {bubbles: true}));
        }, 0);
    })""")
    page.locator("#id_calculator").select_option("kv-cache")
    # Two requests after a 400 ms wait: on a loaded machine (two suites at once) 5 s was not always enough.
    expect(page.locator("#id_unit option[value='copies']")).to_have_count(1, timeout=15_000)
