"""HTML views: home, lessons and their interactions, results, accounts."""

from __future__ import annotations

from datetime import datetime

from django.contrib import messages
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import push_url, replace_url, retarget

from calculators.formatting import number, plural
from interview.ratelimit import limit_per_visitor
from interview.views import bad_input_status
from lessons import quiz as quiz_module
from lessons import review, services
from lessons.content_cache import visible_lessons
from lessons.forms import ChecklistForm, ChoiceForm, NumberForm, WrittenAnswerForm
from lessons.models import ChallengeDraw, Lesson, Track, page_query
from lessons.pages import (
    build_lesson_page,
    item_of,
    latest_place,
    layer_holding,
    learner_filter,
    lesson_content,
    listed,
    load_lesson_data,
    outline_entry,
)
from lessons.results import compute_results


@require_safe
@vary_on_headers("Cookie")
def home(request: HttpRequest) -> HttpResponse:
    lessons = visible_lessons(request.user)
    return render(request, "lessons/home.html", home_context(request, lessons))


def home_context(request: HttpRequest, lessons: list[Lesson]) -> dict:
    results = compute_results(request, lessons, with_misses=False)
    tracks = []
    for track in Track.objects.all():
        rows = [(lesson, results.score_for(lesson)) for lesson in lessons if lesson.track_id == track.pk]
        if rows:
            tracks.append((track, rows))
    # Once something is answered, the main button goes back to where the learner left off (one more query).
    place = latest_place(learner_filter(request), lessons) if results.total.answered else None
    return {"tracks": tracks, "total": results.total, "due": results.due, "place": place}


def get_lesson(request: HttpRequest, slug: str) -> Lesson:
    """Return a lesson the request may see (drafts for staff only), else raise Http404."""
    lesson = next((lesson for lesson in visible_lessons(request.user) if lesson.slug == slug), None)
    if lesson is None:
        raise Http404("No such lesson.")
    return lesson


def render_lesson(
    request: HttpRequest,
    lesson: Lesson,
    *,
    positions: dict | None = None,
    status: int = 200,
    errors: dict | None = None,
    layer: int | None = None,
    section: str | None = None,
) -> HttpResponse:
    page = build_lesson_page(request, lesson, positions, layer=layer, section=section)
    if page.current is None and page.layers:
        return no_such_layer(request, lesson, f"This lesson has no layer {layer}")
    if section is not None and page.current is not None and page.current.part_holding(section) is None:
        # A saved place or a bookmark from before an author moved the section: to the layer holding it now
        # (the browser keeps the address's #anchor); a section no longer there at all leaves the layer's start.
        moved = next((view for view in page.layers if view.part_holding(section) is not None), None)
        if moved is not None:
            return redirect(f"{lesson.get_absolute_url()}{page_query(moved.number, section)}")
    context = {"page": page, "lesson": lesson, "errors": item_errors(errors)}
    if note := request.session.pop(OPENED_NOTE, None):  # an answer without htmx opened a follow-up (answered)
        context["announce_for"], context["opened"] = note
    return render(request, "lessons/lesson.html", context, status=status)


@require_safe
@vary_on_headers("HX-Request", "Cookie")
def lesson_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Show one layer of a lesson (``?layer=N``, the first by default) with the outline of them all.

    A long layer is shown in parts (``&section=key``: the part holding that section; pages.LayerView.split).
    """
    lesson = get_lesson(request, slug)
    layer = request.GET.get("layer")
    if layer is not None and not (layer.isascii() and layer.isdigit() and len(layer) < 3):
        return no_such_layer(request, lesson, "A layer is a number")
    section = request.GET.get("section") or None
    return render_lesson(request, lesson, layer=int(layer) if layer else None, section=section)


def no_such_layer(request: HttpRequest, lesson: Lesson, problem: str) -> HttpResponse:
    """Answer 404 for a layer the lesson does not have, naming those it has and linking to its start."""
    layers = [str(n) for n in sorted({section.layer for section in lesson_content(lesson).sections})]
    if len(layers) > 1:
        message = f"{problem}: its layers are {listed(layers)}."
    else:
        message = f"{problem}: it has only layer {layers[0]}." if layers else f"{problem}: it has no layers yet."
    back = {"url": lesson.get_absolute_url(), "label": f"Open “{lesson.title}” at its first layer"}
    return render(request, "404.html", {"message": message, "back": back}, status=404)


@require_safe
@vary_on_headers("HX-Request")
def walkthrough_step(request: HttpRequest, slug: str, key: str, number: int) -> HttpResponse:
    """Show one step of a walkthrough: the fragment for htmx, the whole lesson otherwise."""
    lesson = get_lesson(request, slug)
    data = load_lesson_data(request, lesson)
    walkthrough = next((s.walkthrough for s in data.steps if s.walkthrough.key == key), None)
    if walkthrough is None:  # renamed or removed since the link was made: say so, and lead back to the lesson
        back = {"url": lesson.get_absolute_url(), "label": f"Open “{lesson.title}”"}
        message = "That walkthrough is not in this lesson (it may have been renamed or removed)."
        return render(request, "404.html", {"message": message, "back": back}, status=404)
    orders = sorted(s.order for s in data.steps if s.walkthrough_id == walkthrough.pk)
    if number not in orders:
        return missing_step(request, lesson, walkthrough, orders, number)
    section = next((s for s in data.sections if s.pk == walkthrough.section_id), None)
    layer, section_key = (section.layer, section.key) if section else (None, None)
    page = build_lesson_page(request, lesson, {key: number}, data=data, layer=layer, section=section_key)
    view = page.walkthroughs[walkthrough.pk]
    anchor = view.walkthrough.anchor
    fragment = request.htmx and not request.htmx.history_restore_request  # a restore (Back) needs the whole page
    if not view.open_at(view.current) and not fragment:  # not open yet: the step to answer, at its own address
        return redirect(f"{view.step_url(view.current_order)}?opens={number}#{anchor}")
    opens = query_number(request, "opens")  # sent here from a step not open yet (above): said in the walkthrough
    asked = next((sv.number for sv in view.steps if sv.step.order == opens), None)
    if asked is not None and not view.is_open(asked):
        view.notice = view.not_open_notice(asked)
    missing = query_number(request, "missing")  # sent here from a step it lacks (missing_step): said likewise
    if missing is not None and missing not in orders:
        view.notice = f"{missing_step_message(walkthrough, orders, missing)} Here is its first step."
    shown = view.shown_url
    learner = services.current_learner(request)
    if learner is not None:
        services.remember_position(learner, lesson.pk, anchor, shown)
    context = {"page": page, "lesson": lesson, "view": view, "errors": item_errors()}
    if fragment:  # Next on a page from before: the step shown goes in the address bar, not the one asked for
        response = render(request, "lessons/_walkthrough.html", {**context, "as_fragment": True, "moved": True})
        return push_url(response, shown) if view.current_order != number else response
    return render(request, "lessons/lesson.html", context)


def query_number(request: HttpRequest, name: str) -> int | None:
    """Return the query's ``name`` as a small whole number (a step's order), or None when it is not one."""
    value = request.GET.get(name, "")
    return int(value) if value.isascii() and value.isdigit() and len(value) < 6 else None


def missing_step(request: HttpRequest, lesson: Lesson, walkthrough, orders: list[int], number: int) -> HttpResponse:
    """Answer a step the walkthrough does not have: say so, and show its first step.

    A page (a saved place or a bookmark, from before an author removed or renumbered steps) is sent to the
    first step, at the walkthrough, which says why at its top (``?missing=N``), so the Resume button never
    ends on an error page. An htmx request (Next on a page loaded before the change) gets a 404: htmx
    swaps nothing and site.js says the request failed.
    """
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "404.html", {"message": missing_step_message(walkthrough, orders, number)}, status=404)
    first = reverse("walkthrough-step", args=[lesson.slug, walkthrough.key, orders[0]])
    return redirect(f"{first}?missing={number}#{walkthrough.anchor}")


def missing_step_message(walkthrough, orders: list[int], number: int) -> str:
    """Return "The walkthrough “Build it” has 2 steps: there is no step 3." (``orders``: its steps' orders)."""
    count = len(orders)
    # Steps are numbered 1, 2, ... unless an author ordered them otherwise (0, 5, 10): then say only what is there.
    there = f"there is no step {number}" if orders == list(range(1, count + 1)) else "none is at that address"
    return f"The walkthrough “{walkthrough.title}” has {count} {plural(count, 'step')}: {there}."


NOT_RECORDED = "Your answer was not recorded."  # what an answer refused says first (item_errors' lead)


def item_errors(errors: dict | None = None) -> dict:
    """Return the error context lesson.html reads, with every key it reads present.

    Each item asks for its own key; a key missing from a plain dict costs the template a
    failed lookup (three exceptions and a dir()) per item.
    """
    return {"dd": None, "ch": None, "step": None, "oq": None, "message": "", "typed": "",
            "lead": NOT_RECORDED, **(errors or {})}  # fmt: skip


def find(rows, **attrs):
    """Return the first row whose attributes match, or raise Http404."""
    for row in rows:
        if all(getattr(row, name) == value for name, value in attrs.items()):
            return row
    raise Http404("No such item in this lesson.")


@require_POST
@limit_per_visitor("answers")
def answer_deep_dive(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    lesson = get_lesson(request, slug)
    data = load_lesson_data(request, lesson, only="deep_dive", deep_dive=pk)
    choices = [c for c in data.choices if c.deep_dive_id == pk]
    deep_dive = find([c.deep_dive for c in choices], pk=pk)
    form = ChoiceForm(request.POST, choices=choices)
    if not form.is_valid():
        return answer_error(request, lesson, form_message(form), {"dd": deep_dive.pk})
    state = data.state("deep_dive", pk)
    # A follow-up is open once an answer reached it (read with the learner's state); the others are open to all.
    if pk in data.follow_up_ids and not (state.reached or state.count):
        return answer_error(request, lesson, services.FOLLOW_UP_NOT_REACHED, {"dd": deep_dive.pk}, status=409)
    # A retry here would show its verdict and feedback, which may give the open follow-up's answer away.
    if waits := data.why_it_waits("deep_dive", pk):
        return answer_error(request, lesson, waits, {"dd": deep_dive.pk}, status=409)
    learner = services.current_learner(request, create=True)
    picked = form.cleaned_data["choice"]
    with transaction.atomic():  # one commit for the answer and the position
        answer = services.answer_deep_dive(
            learner,
            deep_dive,
            picked,
            answered_before=state.count > 0,
            card=state.card,
            hints=state.hints_before_first,
            follow_up_open=bool(picked.follow_up_id) and data.state("deep_dive", picked.follow_up_id).reached,
        )
        shown_at = deep_dive_url(data, deep_dive)
        services.remember_position(learner, lesson.pk, deep_dive.anchor, shown_at)
    return answered(request, data, deep_dive, "deep_dive", pk, answer, shown_at)


def deep_dive_url(data, deep_dive) -> str:
    """Return where a deep dive is shown: a follow-up on its top parent's page, wherever an author put it."""
    return f"{data.shown_under(deep_dive).get_absolute_url().partition('#')[0]}#{deep_dive.anchor}"


@require_POST
@limit_per_visitor("answers")
def answer_step(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    lesson = get_lesson(request, slug)
    data = load_lesson_data(request, lesson, only="walkthrough", step=pk)
    step = find((s for s in data.steps if s.calculator), pk=pk)
    key = step.walkthrough.key
    if waits := data.why_it_waits("step", pk):  # a wrong try would earn the working: the earlier steps' answers
        return answer_error(request, lesson, waits, {"step": step.pk}, status=409)
    form = NumberForm(request.POST, unit=step.unit)
    if not form.is_valid():
        return answer_error(request, lesson, form_message(form), {"step": step.pk}, {key: step.order})
    learner = services.current_learner(request, create=True)
    state = data.state("step", pk)
    with transaction.atomic():
        answer = services.answer_number(
            learner,
            step,
            form.cleaned_data["value"],
            answered_before=state.count > 0,
            card=state.card,
            hints=state.hints_before_first,
        )
        services.remember_position(learner, lesson.pk, step.walkthrough.anchor, step.get_absolute_url())
    if not request.htmx:
        return HttpResponseRedirect(step.get_absolute_url(), status=303)
    data.record(answer)
    page = build_lesson_page(request, lesson, {key: step.order}, data=data)
    return fragment(
        request, "walkthrough", {"page": page, "lesson": lesson, "view": page.walkthroughs[step.walkthrough_id]}, answer
    )


@require_POST
@limit_per_visitor("answers")
def answer_challenge(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    lesson = get_lesson(request, slug)
    services.ensure_session(request)  # the numbers shown and graded derive from it
    data = load_lesson_data(request, lesson, only="challenge")
    challenge = find(data.challenges, pk=pk)
    form = NumberForm(request.POST, unit=challenge.unit)
    if not form.is_valid():
        return answer_error(request, lesson, form_message(form), {"ch": challenge.pk})
    learner = services.current_learner(request, create=True)
    state = data.state("challenge", pk)
    with transaction.atomic():
        draw = services.store_draw(learner, challenge, services.learner_identity(request))
        answer = services.answer_number(
            learner,
            challenge,
            form.cleaned_data["value"],
            draw,
            answered_before=state.count > 0,
            card=state.card,
            hints=state.hints_before_first,
        )
        services.remember_position(learner, lesson.pk, challenge.anchor, challenge.get_absolute_url())
    data.draws[pk] = ChallengeDraw(challenge=challenge, seed=draw["seed"], inputs=draw["inputs"])
    return answered(request, data, challenge, "challenge", pk, answer)


def answered(request, data, item, partial: str, pk: int, answer, url: str | None = None) -> HttpResponse:
    """Redirect a plain form post back to the item; give htmx the item's fragment.

    ``url``: where the item is shown, when not its own URL (a follow-up: its top parent's page).
    """
    url = url or item.get_absolute_url()
    opened = opens_follow_up(data, answer)  # read before the answer is recorded in the learner's state
    if not request.htmx:
        if opened:  # said in the item's feedback on the page the browser is sent to, once, as htmx's fragment does
            score = compute_results(request, [data.lesson], with_misses=False).score_for(data.lesson)
            request.session[OPENED_NOTE] = [pk, opened_note(score)]
        return HttpResponseRedirect(url, status=303)
    waited = data.waiting_for_follow_up() if partial == "deep_dive" else set()
    data.record(answer)
    page = build_lesson_page(request, data.lesson, data=data)
    views = {"deep_dive": page.deep_dives, "challenge": page.challenges, "open_question": page.open_questions}
    context = {"page": page, "lesson": data.lesson, "view": views[partial][pk], "url": url, "opens_follow_up": opened}
    if partial == "deep_dive" and item.pk in data.follow_up_ids:
        # A follow-up is drawn inside its top parent, whose part may change with this answer (its other approaches
        # wait for the follow-up): the whole top parent is sent, and swapped in for the follow-up's target.
        top = page.deep_dives[data.shown_under(item).pk]
        context["view"] = context["outline_view"] = top
        if waited - data.waiting_for_follow_up():  # said after the answer's own verdict: focus stays on it
            context["also_say"] = (
                "The question it follows now shows the feedback on your answer there and takes another try."
            )
        return retarget(fragment(request, partial, context, answer), f"#{top.deep_dive.anchor}")
    return fragment(request, partial, context, answer)


def fragment(request, partial: str, context: dict, answer=None, announce: str = "", focus: str = "") -> HttpResponse:
    """Render an item's partial for htmx; ``focus`` names what takes focus instead of the feedback ("hint")."""
    view = context["view"]
    item_id = view.walkthrough.pk if partial == "walkthrough" else answer.item_key[1] if answer else item_pk(view)
    score = None
    if answer is not None and (answer.is_first or leads_to_follow_up(answer)):
        # A first answer changes the lesson's counters and progress bar: sent along, out of band.
        # A retry changes neither (the first answer keeps the score), unless its choice opened a
        # follow-up (the total counts it from then on); otherwise nothing is recomputed for it.
        score = compute_results(request, [context["lesson"]], with_misses=False).score_for(context["lesson"])
    # An answer that opened a follow-up grows the lesson's total, and the percentage answered drops: said once, in
    # the feedback and the announcement, with the new total (not on a later page load, nor on other answers).
    opened = opened_note(score) if score is not None and context.get("opens_follow_up") else ""
    said = announcement(answer, opened) if answer else announce
    context = {
        **context,
        "announce": f"{said} {context['also_say']}" if context.get("also_say") else said,
        "announce_for": item_id,
        "opened": opened,
        "errors": item_errors(),
        "as_fragment": True,
        "focus": focus,
    }
    response = render(request, f"lessons/_{partial}.html", context)
    if score is not None:
        response.write(render_to_string("lessons/_progress.html", {"score": score, "oob": True}, request))
    if answer is not None:
        # The item's entry in the outline, sent with every answer, a retry too (a miss retried right changes its
        # mark, and so does a wrong retry after that), read off the states the page was built from (no query):
        # its mark, and the follow-ups its answers opened listed under it, linked to the page showing it (a
        # follow-up's is its top parent's: it is drawn under its parent). For a follow-up that is the top parent's
        # entry, with the follow-up under it: a page opened before another tab reached the follow-up lists the
        # parent but not the follow-up, and the update must find its place.
        url = context.get("url") or item_of(view).get_absolute_url()
        entry = outline_entry(context.get("outline_view", view), url.partition("#")[0])
        response.write(render_to_string("lessons/_outline_entry.html", {"entry": entry, "oob": True}, request))
        # Every answer keeps its item as the place: the header's button goes there now.
        item = view.step.step if view.kind == "walkthrough" else item_of(view)
        resume = {"url": context.get("url") or item.get_absolute_url(), "answered": True, "oob": True}
        response.write(render_to_string("lessons/_resume.html", resume, request))
    return response


OPENED_NOTE = "opened_note"  # the session's (deep dive id, opened_note) for the page an answer without htmx leads to


def leads_to_follow_up(answer) -> bool:
    """Return whether ``answer`` picked a choice that leads to a follow-up (no query: the choice is loaded)."""
    return answer.choice_id is not None and answer.choice.follow_up_id is not None


def opens_follow_up(data, answer) -> bool:
    """Return whether ``answer`` opened a follow-up the lesson's total did not count yet: its choice leads to one
    the learner had neither reached nor answered (scoring.counts_toward_score). Read off the learner's state
    loaded with the page, before the answer is recorded in it: no query."""
    if not leads_to_follow_up(answer):
        return False
    follow_up = data.state("deep_dive", answer.choice.follow_up_id)
    return not (follow_up.reached or follow_up.first)


def opened_note(score) -> str:
    """Return what the feedback and the announcement add when an answer opened a follow-up (``score``: the
    lesson's, counting it): "This answer opened the follow-up below, which now counts toward the lesson's
    total (12 questions, 120 points)." """
    return (
        "This answer opened the follow-up below, which now counts toward the lesson's total "
        f"({number(score.total)} {plural(score.total, 'question')}, {number(score.max_points)} points)."
    )


def item_pk(view) -> int:
    return {"deep_dive": lambda: view.deep_dive.pk, "challenge": lambda: view.challenge.pk,
            "open_question": lambda: view.question.pk}[view.kind]()  # fmt: skip


def announcement(answer, opened: str = "") -> str:
    """Return what the aria-live region says after an answer (a retry's points are not announced: they score nothing);
    ``opened``: the sentence of an answer that opened a follow-up (opened_note), said last, after a full stop."""
    if not answer.is_first:
        said = f"{answer.get_outcome_display()}, on a retry: not scored; your first answer keeps its score. {answer.message}"
    else:
        taken = answer.hints_taken
        hints = f" You took {taken} {plural(taken, 'hint')} before answering" if taken else ""
        if cost := answer.hints_cost:
            hints += f": {'it' if taken == 1 else 'they'} cost {cost} {plural(cost, 'point')}."
        elif taken:  # the answer earned nothing, so the hints took nothing off
            hints += "."
        said = f"{answer.get_outcome_display()}: {answer.points} of {answer.max_points} points.{hints} {answer.message}"
    said = f"{said.rstrip(' .')}."  # a verdict alone ("Best") ends a sentence too, as a number's feedback does
    return f"{said} {opened}" if opened else said


PRACTICE_KINDS = ("deep_dive", "step", "challenge")  # the items with hints and reveals


def practice_item(request, lesson: Lesson, kind: str, pk: int):
    """Return (data, item) for a hint or a reveal on a deep dive, a numeric step or a challenge, else 404."""
    if kind not in PRACTICE_KINDS:
        raise Http404("No such kind of item.")
    if kind == "challenge":
        services.ensure_session(request)  # the numbers shown derive from it
    if kind == "deep_dive":
        data = load_lesson_data(request, lesson, only="deep_dive", deep_dive=pk)
        return data, find([c.deep_dive for c in data.choices], pk=pk)
    if kind == "step":
        data = load_lesson_data(request, lesson, only="walkthrough", step=pk)
        return data, find((s for s in data.steps if s.calculator), pk=pk)
    data = load_lesson_data(request, lesson, only="challenge")
    return data, find(data.challenges, pk=pk)


def practice_response(request, data, kind: str, item, announce: str, focus: str = "") -> HttpResponse:
    """Show the item again after a hint or a reveal: its fragment for htmx, else a redirect to it."""
    lesson = data.lesson
    if kind == "step":
        key = item.walkthrough.key
        url = reverse("walkthrough-step", args=[lesson.slug, key, item.order])
        if not request.htmx:
            return HttpResponseRedirect(f"{url}#{item.walkthrough.anchor}", status=303)
        page = build_lesson_page(request, lesson, {key: item.order}, data=data)
        view = page.walkthroughs[item.walkthrough_id]
        return fragment(
            request, "walkthrough", {"page": page, "lesson": lesson, "view": view}, announce=announce, focus=focus
        )
    if not request.htmx:
        return HttpResponseRedirect(item.get_absolute_url(), status=303)
    page = build_lesson_page(request, lesson, data=data)
    view = (page.deep_dives if kind == "deep_dive" else page.challenges)[item.pk]
    return fragment(request, kind, {"page": page, "lesson": lesson, "view": view}, announce=announce, focus=focus)


@require_POST
@limit_per_visitor("answers")
def take_hint(request: HttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    """Show the next hint of an item; taken before the first answer, it costs points (lessons.scoring)."""
    lesson = get_lesson(request, slug)
    data, item = practice_item(request, lesson, kind, pk)
    errors = practice_errors(kind, item, "No hint was shown.")
    if not item.hints:
        return answer_error(request, lesson, "This question has no hints.", errors, status=409)
    if waits := data.why_it_waits(kind, pk):  # a hint waits as the item does
        return answer_error(request, lesson, waits, errors, status=409)
    learner = services.current_learner(request, create=True)
    state = data.state(kind, pk)
    services.take_hint(learner, {f"{kind}_id": pk}, len(item.hints))
    data = reload(request, lesson, kind, pk)
    taken = min(data.state(kind, pk).hints_taken, len(item.hints))
    cost = "" if state.first else " It costs points if you answer next."
    announce = f"Hint {taken} of {len(item.hints)} shown.{cost}"
    return practice_response(request, data, kind, item, announce, focus="hint")  # the new hint takes focus


@require_POST
@limit_per_visitor("answers")
def reveal(request: HttpRequest, slug: str, kind: str, pk: int) -> HttpResponse:
    """Show every approach of a deep dive, or a number's worked arithmetic, once the learner has answered it."""
    lesson = get_lesson(request, slug)
    data, item = practice_item(request, lesson, kind, pk)
    errors = practice_errors(kind, item, "Nothing was revealed.")
    waits = data.why_it_waits(kind, pk)
    if waits and kind == "step":  # not open yet: said before "answer first", which it cannot be
        return answer_error(request, lesson, waits, errors, status=409)
    if not data.state(kind, pk).first:
        return answer_error(request, lesson, services.ANSWER_BEFORE_REVEAL, errors, status=409)
    if waits:
        return answer_error(request, lesson, waits, errors, status=409)
    services.reveal(services.current_learner(request, create=True), {f"{kind}_id": pk})
    data = reload(request, lesson, kind, pk)
    shown = "Every approach is shown." if kind == "deep_dive" else "The worked arithmetic is shown."
    return practice_response(request, data, kind, item, shown)


def reload(request, lesson, kind: str, pk: int):
    return practice_item(request, lesson, kind, pk)[0]


def practice_errors(kind: str, item, lead: str) -> dict:
    """The error context of a hint or a reveal refused: the item's key, and ``lead``, what the page's top says first."""
    key = {"deep_dive": "dd", "challenge": "ch"}.get(kind, "step")
    return {key: item.pk, "lead": lead}


def open_question_data(request, lesson: Lesson, pk: int):
    data = load_lesson_data(request, lesson, only="open_question")
    checklist = [p for p in data.checklist if p.question_id == pk]
    return data, find([p.question for p in checklist], pk=pk), checklist


@require_POST
@limit_per_visitor("answers")
def write_open_question(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Keep the learner's written answer; the page then shows the checklist to tick."""
    lesson = get_lesson(request, slug)
    data, question, _checklist = open_question_data(request, lesson, pk)
    form = WrittenAnswerForm(request.POST)
    if not form.is_valid():
        return answer_error(request, lesson, form_message(form), {"oq": question.pk})
    learner = services.current_learner(request, create=True)
    with transaction.atomic():
        services.save_draft(learner, question, form.cleaned_data["text"])
        services.remember_position(learner, lesson.pk, question.anchor, question.get_absolute_url())
    if not request.htmx:
        return HttpResponseRedirect(question.get_absolute_url(), status=303)
    data, _question, _checklist = open_question_data(request, lesson, pk)
    page = build_lesson_page(request, lesson, data=data)
    announce = "Your answer is saved. Now tick the points it covered."
    return fragment(request, "open_question", {"page": page, "lesson": lesson, "view": page.open_questions[pk]},
                    announce=announce)  # fmt: skip


@require_POST
@limit_per_visitor("answers")
def answer_open_question(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    """Score the written answer by the checklist points the learner ticked."""
    lesson = get_lesson(request, slug)
    data, question, checklist = open_question_data(request, lesson, pk)
    form = ChecklistForm(request.POST, checklist=checklist)
    if not form.is_valid():
        return answer_error(request, lesson, form_message(form), {"oq": question.pk})
    state = data.state("open_question", pk)
    if not state.draft:
        message = services.WRITE_BEFORE_CHECKLIST
        return answer_error(request, lesson, message, {"oq": question.pk}, status=409)
    learner = services.current_learner(request, create=True)
    with transaction.atomic():
        answer = services.answer_open_question(
            learner, question, checklist, form.ticked(), state.draft, answered_before=state.count > 0, card=state.card
        )
        services.remember_position(learner, lesson.pk, question.anchor, question.get_absolute_url())
    return answered(request, data, question, "open_question", pk, answer)


def form_message(form) -> str:
    return " ".join(e for errs in form.errors.values() for e in errs)


def answer_error(request, lesson, message: str, errors, positions=None, status: int | None = None) -> HttpResponse:
    """Re-show the item with ``message`` in its error region: a fragment for htmx, else the full page.

    Bad input is a 422 fragment (htmx swaps it) or a 400 page, unless ``status`` says otherwise.
    """
    errors = {**errors, "message": message, "typed": request.POST.get("value", "")[:200]}  # a number, kept as typed
    moved = False  # a step asked for but not open yet: the one to answer first is shown instead
    if "step" in errors and positions is None:  # the walkthrough shows the step the message is about
        step = next((s for s in lesson_content(lesson).steps if s.pk == errors["step"]), None)
        positions = {step.walkthrough.key: step.order} if step else None
    page = build_lesson_page(request, lesson, positions)
    if "dd" in errors:
        partial, view = "deep_dive", page.deep_dives[errors["dd"]]
    elif "ch" in errors:
        partial, view = "challenge", page.challenges[errors["ch"]]
    elif "oq" in errors:
        partial, view = "open_question", page.open_questions[errors["oq"]]
    else:
        partial = "walkthrough"
        view = next(w for w in page.walkthroughs.values() if any(s.step.pk == errors["step"] for s in w.steps))
        # A step not open yet is not shown, its text starting from the earlier steps' answers: the step to answer
        # first is, with a notice saying why (it takes focus; the message is for the step not shown).
        moved = not view.open_at(next(s.number for s in view.steps if s.step.pk == errors["step"]))
    if request.htmx:
        item_id = errors.get("dd") or errors.get("ch") or errors.get("oq") or errors.get("step")
        # The message is said once, by its error line (role="alert"): put in the live announcer too, screen
        # readers read it twice. The announcer keeps what it last said.
        if moved:  # the number typed goes with the step it was typed in: said first
            view.notice = f"{errors.get('lead', NOT_RECORDED)} {view.notice}"
        context = {"page": page, "lesson": lesson, "view": view, "errors": item_errors(errors), "announce": "",
                   "announce_for": item_id, "as_fragment": True, "focus": "input"}  # fmt: skip
        response = render(
            request, f"lessons/_{partial}.html", context, status=status or bad_input_status(fragment=True)
        )
        if moved:
            # The step swapped in is not the one asked for (not open yet: the one to answer first), so the address
            # bar names the step shown, as walkthrough_step's does. It pushes because its GET (Next, Back) adds a
            # history entry anyway; an answer, a hint or a reveal is no navigation and adds none, so the address is
            # replaced: a pushed one would leave Back on the step not open yet, which only leads here again.
            return replace_url(response, view.shown_url)
        return response
    item = item_of(view)
    page.current = page.layer_of(item.section.pk)  # the page shows the layer (and part) holding the item
    page.current.part = page.current.part_holding(item.section.key)
    # The message at the page's top links the item when the page draws it (a follow-up not reached yet is not drawn).
    context = {"page": page, "lesson": lesson, "errors": item_errors(errors),
               "error_anchor": item.anchor if layer_holding(page.layers, item.anchor) else ""}  # fmt: skip
    return render(request, "lessons/lesson.html", context, status=status or bad_input_status(fragment=False))


@require_safe
def results(request: HttpRequest) -> HttpResponse:
    """Show the learner's results: totals, lessons, topics and the missed first answers (each with its retry link)."""
    lessons = visible_lessons(request.user)
    results = compute_results(request, lessons)
    context = {"results": results, "due": results.due, "next_due": results.next_due, "returns": review.RETURNS}
    return render(request, "lessons/results.html", context)


LAST_REVIEW_KEY = "review_last"  # the graded answer shown once, after the redirect
FINISHED_REVIEW_KEY = "review_finished"  # a finished session's summary, shown once on the page Finish leads to
REVIEW_DRAFT_KEY = "review_draft"  # an open question's written answer, kept until its checklist is ticked


@require_safe
@vary_on_headers("HX-Request")
def review_queue(request: HttpRequest) -> HttpResponse:
    """The review session: the most overdue item quizzed afresh, the last result, the session's summary.

    "Show a hint" (?hints=N) shows the same item in the same order; htmx gets only the hints region.
    """
    return render_review(request, hints=request.GET.get("hints"))


def render_review(
    request, *, quiz=None, hints=None, error: str = "", written: str = "", typed: str = "", status: int = 200
):
    """Render the review page; after a refused answer, ``typed`` is the number as the learner typed it (kept)."""
    lookup = learner_filter(request)
    lessons = visible_lessons(request.user)
    due = review.due_items(lookup, lessons) if lookup is not None else []  # the "Also due" list (capped)
    # counted as results and the review API count it
    due_count = compute_results(request, lessons, with_misses=False).due if due else 0
    if quiz is None and due:
        card = quiz_module.next_card(lookup, lessons)
        quiz = quiz_module.present(card, services.learner_identity(request)) if card else None
    # Nothing due: say when the next item comes back, and how many are scheduled (one query, only then).
    schedule = review.schedule_summary(lookup, lessons) if lookup is not None and quiz is None and not due else None
    draft = request.session.get(REVIEW_DRAFT_KEY)
    if quiz and not written and draft and draft["card"] == review_draft_key(quiz):
        written = draft["text"]  # written for this review of it: back at its checklist, not an empty box
    shown = quiz_module.hints_shown(quiz, hints) if quiz else 0
    summary = request.session.get(quiz_module.SUMMARY_KEY)
    finished = request.session.pop(FINISHED_REVIEW_KEY, None) if summary is None else None
    summary = summary or finished
    if summary:
        summary = {**summary, "items": [{**i, "due": datetime.fromisoformat(i["due"])} for i in summary["items"]]}
    last = request.session.pop(LAST_REVIEW_KEY, None)
    if last:
        reviewed_at = datetime.fromisoformat(last["reviewed_at"]) if "reviewed_at" in last else timezone.now()
        last = {**last, "due": datetime.fromisoformat(last["due"]), "reviewed_at": reviewed_at}
    context = {
        "quiz": quiz,
        "hints": quiz.hints_html[:shown] if quiz else [],
        "more_hints": bool(quiz) and shown < len(quiz.hints_html),
        "error": error,
        "written": written,
        "typed": typed,
        "last": last,
        "summary": summary,
        "finished": finished is not None,
        "due_count": due_count,
        "upcoming": [item for item in due if not quiz or (item.kind, item.item_id) != (quiz.kind, quiz.item_id)],
        # The list stops at its cap (the item asked is one of those listed): say how many it leaves out.
        "more_due": max(due_count - len(due), 0) if len(due) >= review.DUE_LIST_LIMIT else 0,
        "started": lookup is not None,
        "next_due": schedule.next_due if schedule else None,
        "scheduled": schedule.scheduled if schedule else 0,
        "returns": review.RETURNS,
    }
    if request.htmx and request.method == "GET" and quiz:  # "Show a hint": the hints region only
        return render(request, "lessons/_review_hints.html", context, status=status)
    return render(request, "lessons/review.html", context, status=status)


def review_draft_key(quiz) -> list:
    """Name the review a kept written answer belongs to: the item, and the card's due time (graded another
    way, by the API or another tab, the card moves on and an old text never comes back with it)."""
    return [quiz.kind, quiz.item_id, quiz.card.due.isoformat()]


@require_POST
@limit_per_visitor("answers")
def review_answer(request: HttpRequest) -> HttpResponse:
    """Grade a review answer, reschedule the item and show the next one; lesson scores never change."""
    lookup = learner_filter(request)
    lessons = visible_lessons(request.user)
    try:
        pk = int(request.POST.get("id", ""))
    except ValueError:
        pk = 0
    card = quiz_module.card_for(lookup, lessons, request.POST.get("kind", ""), pk) if lookup is not None else None
    if card is None:
        return render_review(request, error="That item is not in your review queue.", status=404)
    quiz = quiz_module.present(card, services.learner_identity(request))
    hints = quiz_module.hints_shown(quiz, request.POST.get("hints"))
    written = request.POST.get("text", "").strip()
    if quiz.kind == "open_question" and request.POST.get("checked") != "yes":
        if not written:
            message = services.WRITE_BEFORE_CHECKLIST
            return render_review(request, quiz=quiz, hints=hints, error=message, status=400)
        # Kept, then shown with its checklist by a GET: a reload or a visit elsewhere loses nothing, and the
        # answer cannot be rewritten once the checklist was read.
        request.session[REVIEW_DRAFT_KEY] = {"card": review_draft_key(quiz), "text": written[:5000]}
        return HttpResponseRedirect(reverse("review") + "#review-written", status=303)  # focus: the answer
    data = {"choice": request.POST.get("choice"), "value": request.POST.get("value", ""),
            "points": request.POST.getlist("points")}  # fmt: skip
    try:
        graded = quiz_module.grade(quiz, data, hints)
    except quiz_module.AlreadyReviewed as error:
        messages.info(request, str(error))
        return HttpResponseRedirect(reverse("review"), status=303)
    except quiz_module.QuizError as error:
        typed = request.POST.get("value", "")[:200]
        return render_review(
            request, quiz=quiz, hints=hints, error=str(error), written=written, typed=typed, status=400
        )
    quiz_module.tally(request.session, quiz, graded)
    request.session.pop(REVIEW_DRAFT_KEY, None)
    request.session[LAST_REVIEW_KEY] = {
        "outcome": graded.outcome, "label": graded.outcome_label, "feedback_html": graded.feedback_html,
        "answer_html": graded.answer_html, "due": graded.card.due.isoformat(), "title": quiz.title,
        "reviewed_at": graded.reviewed_at.isoformat(),  # "comes back in 10 minutes": from when it was scheduled
    }  # fmt: skip
    return HttpResponseRedirect(reverse("review") + "#review-result", status=303)


@require_POST
def review_finish(request: HttpRequest) -> HttpResponse:
    """End the review session: its summary is cleared, and the page says what it held."""
    summary = request.session.pop(quiz_module.SUMMARY_KEY, None)
    if summary:
        request.session[FINISHED_REVIEW_KEY] = summary  # its table of next due dates, shown once more
        messages.success(
            request, f"Review session finished: {summary['reviewed']} reviewed, {summary['recalled']} recalled."
        )
        return HttpResponseRedirect(reverse("review") + "#messages", status=303)  # the message has focus (tabindex -1)
    return redirect("review")


@require_http_methods(["GET", "HEAD", "POST"])
def reset_progress(request: HttpRequest) -> HttpResponse:
    """Ask for confirmation, then delete the learner's own progress (services.reset_progress: the answers and
    what goes with them; the mock interviews are kept, and the page says both)."""
    learner = services.current_learner(request)
    if request.method == "POST" and request.POST.get("confirm") == "yes":
        deleted = services.reset_progress(learner)
        for key in (quiz_module.SUMMARY_KEY, FINISHED_REVIEW_KEY, LAST_REVIEW_KEY, REVIEW_DRAFT_KEY):  # the session too
            request.session.pop(key, None)
        messages.success(request, f"Progress reset: {answers_text(*deleted)} deleted.")
        return HttpResponseRedirect(reverse("results") + "#messages", status=303)  # the message has focus (tabindex -1)
    error = "Tick the box to confirm." if request.method == "POST" else ""
    context = {"error": error, "answers": answers_text(*services.answer_counts(learner))}
    return render(request, "lessons/reset.html", context, status=400 if error else 200)


def answers_text(answers: int, questions: int) -> str:
    """Say "3 answers to 2 questions": a retry is an answer too, so the answers alone outnumbered the results'
    "2 of 138 questions answered" and looked wrong. No answers is "0 answers"."""
    if not answers:
        return "0 answers"
    return f"{answers} {plural(answers, 'answer')} to {questions} {plural(questions, 'question')}"
