"""HTML views: home, lessons and their interactions, results."""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib import messages
from django.core.cache import cache
from django.db import transaction
from django.db.models import Count, Max
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe
from django.views.decorators.vary import vary_on_headers

from interview.ratelimit import limit_per_visitor
from lessons import local, review, services
from lessons.forms import ChoiceForm, NumberForm
from lessons.models import Answer, ChallengeDraw, Lesson, Track
from lessons.pages import DeepDiveView, build_lesson_page, learner_filter, load_lesson_data
from lessons.results import compute_results
from lessons.snapshot import visible_content


@require_safe
@vary_on_headers("Cookie")
def home(request: HttpRequest) -> HttpResponse:
    lessons = list(Lesson.objects.visible_to(request.user))
    if is_fresh_visitor(request):
        version = ",".join(f"{lesson.pk}:{lesson.updated_at.timestamp()}" for lesson in lessons)
        return shared_page(request, f"home:{version}", lambda: home_context(request, lessons), "lessons/home.html")
    return render(request, "lessons/home.html", home_context(request, lessons))


def home_context(request: HttpRequest, lessons: list[Lesson]) -> dict:
    results = compute_results(request, lessons, with_misses=False)
    tracks = []
    for track in Track.objects.all():
        rows = [(lesson, results.score_for(lesson)) for lesson in lessons if lesson.track_id == track.pk]
        if rows:
            tracks.append((track, rows))
    lookup = learner_filter(request)
    due = review.due_count(lookup, lessons) if lookup is not None and results.total.answered else 0
    return {"tracks": tracks, "total": results.total, "due": due}


def get_lesson(request: HttpRequest, slug: str) -> Lesson:
    """Return a lesson the request may see (drafts for staff only), from the kept content; else 404."""
    return visible_content(request, slug).lesson


def render_lesson(
    request: HttpRequest,
    lesson: Lesson,
    *,
    positions: dict | None = None,
    status: int = 200,
    errors: dict | None = None,
) -> HttpResponse:
    page = build_lesson_page(request, lesson, positions)
    context = {"page": page, "lesson": lesson, "errors": errors or {}}
    return render(request, "lessons/lesson.html", context, status=status)


CSRF_PLACEHOLDER = "csrf-placeholder-7f3a91"
PAGE_CACHE_SECONDS = 3600
# Pages cached by one release are not served by the next (templates and static names may differ).
RELEASE = hashlib.sha256(
    b"".join(
        path.read_bytes()
        for folder, pattern in (
            ("templates", "*.html"),
            ("static", "*.*"),
            ("lessons", "*.py"),
            ("calculators", "*.py"),
        )
        for path in sorted((settings.BASE_DIR / folder).rglob(pattern))
    )
).hexdigest()[:12]


def is_fresh_visitor(request: HttpRequest) -> bool:
    """Return whether the request carries no session, messages or htmx headers: a page like everyone's."""
    return (
        settings.SESSION_COOKIE_NAME not in request.COOKIES and "messages" not in request.COOKIES and not request.htmx
    )


@require_safe
@vary_on_headers("HX-Request", "Cookie")
def lesson_detail(request: HttpRequest, slug: str) -> HttpResponse:
    """Show a lesson; a first-time visitor's copy is rendered once per lesson version and cached."""
    version = Lesson.published_version(slug) if is_fresh_visitor(request) else None
    if version is None:
        lesson = get_lesson(request, slug)
        return render_lesson(request, lesson)

    def context() -> dict:
        lesson = get_lesson(request, slug)
        return {"page": build_lesson_page(request, lesson), "lesson": lesson, "errors": {}}

    return shared_page(request, f"lesson-page:{version[0]}:{version[1]}", context, "lessons/lesson.html")


def shared_page(request: HttpRequest, key: str, context, template: str, *, shared: bool = True) -> HttpResponse:
    """Serve a page rendered once per ``key`` (a content version, and a learner's if it is theirs).

    ``key`` must change whenever what the page shows does. Every visitor still gets a
    CSRF token of their own in the forms and htmx headers. A page everyone sees
    (``shared``) is also kept in the worker's memory; a learner's own only in the cache.
    """
    key = "page:" + hashlib.sha256(f"{RELEASE}:{key}".encode()).hexdigest()
    html = local.pages.get(key) if shared else None
    if html is None:
        html = cache.get(key)
        if html is None:
            html = render_to_string(template, {**context(), "csrf_token": CSRF_PLACEHOLDER}, request)
            cache.set(key, html, PAGE_CACHE_SECONDS)
        if shared:
            local.pages.set(key, html)
    return HttpResponse(html.replace(CSRF_PLACEHOLDER, get_token(request)))


@require_safe
@vary_on_headers("HX-Request")
def walkthrough_step(request: HttpRequest, slug: str, key: str, number: int) -> HttpResponse:
    """Show one step of a walkthrough: the fragment for htmx, the whole lesson otherwise."""
    lesson = get_lesson(request, slug)
    page = build_lesson_page(request, lesson, {key: number})
    view = next((w for w in page.walkthroughs.values() if w.walkthrough.key == key), None)
    if view is None:
        return render(request, "404.html", {"message": "That walkthrough does not exist."}, status=404)
    if number != view.current_order:
        return redirect("walkthrough-step", slug=slug, key=key, number=view.current_order)
    learner = services.current_learner(request)
    if learner is not None:
        services.remember_position(
            learner, lesson.pk, view.walkthrough.anchor, f"{request.path}#{view.walkthrough.anchor}"
        )
    context = {"page": page, "lesson": lesson, "view": view, "errors": {}}
    # A history restore (Back after a cache miss) also carries HX-Request and needs the whole page.
    if request.htmx and not request.htmx.history_restore_request:
        return render(request, "lessons/lesson.html#walkthrough", {**context, "as_fragment": True})
    return render(request, "lessons/lesson.html", context)


def item_url(lesson: Lesson, anchor: str) -> str:
    return f"{lesson.get_absolute_url()}#{anchor}"


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
        return answer_error(request, lesson, deep_dive.anchor, form, {"dd": deep_dive.pk})
    learner = services.current_learner(request, create=True)
    state = data.state("dd", pk)
    with transaction.atomic():  # one commit for the answer and the position
        answer = services.answer_deep_dive(
            learner, deep_dive, form.cleaned_data["choice"], answered_before=state.count > 0, card=state.card
        )
        services.remember_position(learner, lesson.pk, deep_dive.anchor, item_url(lesson, deep_dive.anchor))
    return answered(request, data, deep_dive.anchor, "deep_dive", pk, answer)


@require_POST
@limit_per_visitor("answers")
def answer_step(request: HttpRequest, slug: str, pk: int) -> HttpResponse:
    lesson = get_lesson(request, slug)
    data = load_lesson_data(request, lesson, only="walkthrough")
    step = find((s for s in data.steps if s.calculator), pk=pk)
    key = step.walkthrough.key
    form = NumberForm(request.POST)
    url = reverse("walkthrough-step", args=[lesson.slug, key, step.order])
    if not form.is_valid():
        return answer_error(request, lesson, step.walkthrough.anchor, form, {"step": step.pk}, {key: step.order})
    learner = services.current_learner(request, create=True)
    state = data.state("step", pk)
    with transaction.atomic():
        answer = services.answer_number(
            learner, step, form.cleaned_data["value"], answered_before=state.count > 0, card=state.card
        )
        services.remember_position(learner, lesson.pk, step.walkthrough.anchor, f"{url}#{step.walkthrough.anchor}")
    if not request.htmx:
        return HttpResponseRedirect(f"{url}#{step.walkthrough.anchor}", status=303)
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
    form = NumberForm(request.POST)
    if not form.is_valid():
        return answer_error(request, lesson, challenge.anchor, form, {"ch": challenge.pk})
    learner = services.current_learner(request, create=True)
    state = data.state("ch", pk)
    with transaction.atomic():
        draw = services.store_draw(learner, challenge, services.learner_identity(request))
        answer = services.answer_number(
            learner, challenge, form.cleaned_data["value"], draw, answered_before=state.count > 0, card=state.card
        )
        services.remember_position(learner, lesson.pk, challenge.anchor, item_url(lesson, challenge.anchor))
    data.draws[pk] = ChallengeDraw(challenge=challenge, seed=draw["seed"], inputs=draw["inputs"])
    return answered(request, data, challenge.anchor, "challenge", pk, answer)


def answered(request, data, anchor: str, partial: str, pk: int, answer) -> HttpResponse:
    """Redirect a plain form post back to the item; give htmx the item's fragment."""
    if not request.htmx:
        return HttpResponseRedirect(item_url(data.lesson, anchor), status=303)
    data.record(answer)
    page = build_lesson_page(request, data.lesson, data=data)
    if partial == "deep_dive":
        return deep_dive_fragment(request, data.lesson, page.deep_dives[pk], answer)
    return fragment(request, partial, {"page": page, "lesson": data.lesson, "view": page.challenges[pk]}, answer)


FRAGMENTS = local.fragments


def deep_dive_fragment(request, lesson: Lesson, view: DeepDiveView, answer) -> HttpResponse:
    """Return the answered deep dive's fragment, rendered once per state that learners share.

    A first answer of a given choice looks the same for every learner, so the template runs
    once per lesson version, choice and state; the CSRF token and the tries counted are
    filled in per request.
    """
    shown = list(shown_views(view))
    announce = announcement(answer)
    signature = [RELEASE, lesson.pk, lesson.updated_at.timestamp(), announce]
    for v in shown:
        first, latest = v.state.first, v.state.latest
        signature.append((v.deep_dive.pk, v.is_follow_up, v.state.retries > 0, answer_signature(first),
                          answer_signature(latest)))  # fmt: skip
    key = hashlib.sha256(repr(signature).encode()).hexdigest()
    html = FRAGMENTS.get(key)
    if html is None:
        for v in shown:
            v.state.tries_marker = f"tries-{v.deep_dive.pk}-{CSRF_PLACEHOLDER}"
        context = {"lesson": lesson, "view": view, "announce": announce, "announce_for": view.deep_dive.pk,
                   "errors": {}, "as_fragment": True, "csrf_token": CSRF_PLACEHOLDER}  # fmt: skip
        html = render_to_string("lessons/lesson.html#deep_dive", context, request)
        FRAGMENTS.set(key, html)
    for v in shown:
        html = html.replace(f"tries-{v.deep_dive.pk}-{CSRF_PLACEHOLDER}", str(v.state.count))
    return HttpResponse(html.replace(CSRF_PLACEHOLDER, get_token(request)))


def shown_views(view: DeepDiveView):
    """Yield the deep dive and the follow-ups its fragment shows."""
    yield view
    for follow in view.follow_up_views:
        yield from shown_views(follow)


def answer_signature(answer) -> tuple | None:
    """Return what the fragment shows of an answer (not who gave it, nor when)."""
    if answer is None:
        return None
    return answer.choice_id, answer.outcome, answer.points, answer.max_points, answer.is_first


def fragment(request, partial: str, context: dict, answer) -> HttpResponse:
    item_id = answer.deep_dive_id or answer.step_id or answer.challenge_id
    context = {**context, "announce": announcement(answer), "announce_for": item_id, "errors": {}, "as_fragment": True}
    return render(request, f"lessons/lesson.html#{partial}", context)


def announcement(answer) -> str:
    scored = "" if answer.is_first else " (a retry: your first answer keeps its score)"
    return f"{answer.get_outcome_display()}: {answer.points} of {answer.max_points} points{scored}. {answer.message}"


def answer_error(request, lesson, anchor, form, errors, positions=None) -> HttpResponse:
    """Re-show the item with the form's error: 422 fragment for htmx, 400 full page otherwise."""
    message = " ".join(e for errs in form.errors.values() for e in errs)
    errors = {**errors, "message": message}
    page = build_lesson_page(request, lesson, positions)
    if request.htmx:
        if "dd" in errors:
            partial, view = "deep_dive", page.deep_dives[errors["dd"]]
        elif "ch" in errors:
            partial, view = "challenge", page.challenges[errors["ch"]]
        else:
            partial = "walkthrough"
            view = next(w for w in page.walkthroughs.values() if any(s.step.pk == errors["step"] for s in w.steps))
        item_id = errors.get("dd") or errors.get("ch") or errors.get("step")
        context = {"page": page, "lesson": lesson, "view": view, "errors": errors, "announce": message,
                   "announce_for": item_id, "as_fragment": True}  # fmt: skip
        return render(request, f"lessons/lesson.html#{partial}", context, status=422)
    return render(request, "lessons/lesson.html", {"page": page, "lesson": lesson, "errors": errors}, status=400)


@require_safe
@vary_on_headers("Cookie")
def results(request: HttpRequest) -> HttpResponse:
    """Show the learner's results; rendered again only after a new answer or a content change."""
    lessons = list(Lesson.objects.visible_to(request.user))
    lookup = learner_filter(request)
    if lookup is None or len(messages.get_messages(request)) or request.user.is_staff:
        due = review.due_count(lookup, lessons) if lookup is not None else 0
        return render(request, "lessons/results.html", {"results": compute_results(request, lessons), "due": due})
    stamp = Answer.objects.filter(**lookup).aggregate(count=Count("pk"), last=Max("pk"))
    due = review.due_count(lookup, lessons)
    owner = f"user-{request.user.pk}" if request.user.is_authenticated else f"learner-{lookup['learner_id']}"
    versions = ",".join(f"{lesson.pk}:{lesson.updated_at.timestamp()}" for lesson in lessons)
    key = f"results:{owner}:{stamp['count']}:{stamp['last']}:{due}:{versions}"

    def context() -> dict:
        return {"results": compute_results(request, lessons), "due": due}

    return shared_page(request, key, context, "lessons/results.html", shared=False)


@require_safe
def review_queue(request: HttpRequest) -> HttpResponse:
    """List the items due for spaced review, most overdue first."""
    lookup = learner_filter(request)
    items = review.due_items(lookup, list(Lesson.objects.visible_to(request.user))) if lookup is not None else []
    return render(request, "lessons/review.html", {"items": items, "started": lookup is not None})


@require_http_methods(["GET", "HEAD", "POST"])
def reset_progress(request: HttpRequest) -> HttpResponse:
    """Ask for confirmation, then delete the learner's own answers."""
    learner = services.current_learner(request)
    if request.method == "POST":
        if request.POST.get("confirm") != "yes":
            return render(request, "lessons/reset.html", {"error": "Tick the box to confirm."}, status=400)
        count = services.reset_progress(learner) if learner else 0
        messages.success(request, f"Progress reset: {count} answer(s) deleted.")
        return redirect("results")
    count = learner.answers.count() if learner else 0
    return render(request, "lessons/reset.html", {"count": count})
