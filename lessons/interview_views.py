"""HTML pages of mock interviews: /interviews/ (start, history), one interview, answering, the timer."""

from __future__ import annotations

import math
from functools import wraps

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from interview.ratelimit import limit_per_visitor
from lessons import interviews
from lessons.forms import InterviewAnswerForm
from lessons.interviews import InterviewError
from lessons.models import Interview


@require_safe
def interview_list(request: HttpRequest) -> HttpResponse:
    """Start an interview; see the ones in progress and every finished one, with trends per dimension."""
    return render_list(request)


def render_list(request: HttpRequest, error: str = "", status: int = 200) -> HttpResponse:
    mine = interviews.for_learner(request)
    attempts = interviews.history(mine)
    latest = attempts[-1] if attempts else None
    practise = interviews.practise_links(latest[0], latest[1]) if latest else []
    context = {
        "scenarios": interviews.scenarios(request.user),
        "in_progress": list(mine.filter(finished_at=None).select_related("lesson")),
        "attempts": attempts,
        "charts": interviews.trend_charts(attempts),
        "latest": latest[1] if latest else None,
        "practise": practise,
        "error": error,
        "budgets": interviews.budget_rows(),
    }
    return render(request, "lessons/interviews.html", context, status=status)


@require_POST
@limit_per_visitor("answers")
def interview_start(request: HttpRequest) -> HttpResponse:
    try:
        interview = interviews.start(request, request.POST.get("scenario", ""))
    except InterviewError as error:
        return render_list(request, error=error.message, status=error.status)
    return see_other(interview.get_absolute_url())


def get_interview(request: HttpRequest, pk: int) -> Interview:
    """Return the request's learner's interview, else raise Http404 (another's is never shown)."""
    return get_object_or_404(interviews.for_learner(request).select_related("lesson"), pk=pk)


def learners_interview(view):
    """Call ``view(request, interview)`` with the request's learner's interview; without it, answer
    404 with a page that says whose interviews can be opened and links to log in (another's is never shown)."""

    @wraps(view)
    def wrapper(request: HttpRequest, pk: int) -> HttpResponse:
        interview = interviews.for_learner(request).select_related("lesson").filter(pk=pk).first()
        if interview is None:
            context = {"next": reverse("interview", args=[pk])}
            return render(request, "lessons/interview_missing.html", context, status=404)
        return view(request, interview)

    return wrapper


@require_safe
@learners_interview
def interview_detail(request: HttpRequest, interview: Interview) -> HttpResponse:
    """An interview in progress (the current question, the clock), or its scorecard once finished."""
    return render_interview(request, interview)


def render_interview(request: HttpRequest, interview: Interview, error: str = "", status: int = 200) -> HttpResponse:
    finished = interview.finished_at is not None
    views = interviews.load(interview, reveal=finished)
    # A refused answer comes back with what was sent, to correct rather than retype.
    sent = {name: request.POST.get(name, "") if error else "" for name in ("value", "text")}
    context = {"interview": interview, "views": views, "error": error, "sent": sent}
    if finished:
        card = interviews.scorecard(interview, [v.item for v in views])
        context.update(card=card, practise=interviews.practise_links(interview, card, views))
    else:
        seconds = interviews.remaining_seconds(interview)
        now_view = interviews.current(views)
        context.update(
            current=now_view,
            answered=sum(1 for v in views if v.item.answered_at is not None),
            timer=timer_context(interview, seconds, interviews.time_mark(seconds)),
            current_phase=interviews.phase_of(interview, now_view),
            total_seconds=sum(phase["seconds"] for phase in interview.phases),
        )
    return render(request, "lessons/interview.html", context, status=status)


def timer_context(interview: Interview, seconds: float, mark: int | None, announce: str = "") -> dict:
    return {
        "left": interviews.fmt_seconds(seconds),
        "seconds": max(math.ceil(seconds), 0),  # the page counts down from it each second (site.js)
        "over": seconds <= 0,
        "mark": "" if mark is None else mark,
        "announce": announce,
        "url": reverse("interview-timer", args=[interview.pk]),
        "poll": settings.INTERVIEW_TIMER_POLL_SECONDS,
    }


@require_POST
@limit_per_visitor("answers")
@learners_interview
def interview_answer(request: HttpRequest, interview: Interview) -> HttpResponse:
    views = interviews.load(interview)
    try:
        item = InterviewAnswerForm.base_fields["item"].clean(request.POST.get("item"))
    except ValidationError as error:  # not a question's id at all
        return render_interview(request, interview, error=error.messages[0], status=400)
    try:
        # A form for another question (a second tab, a form sent again) or a finished interview is told so first:
        # its ticks are another question's checklist points, which the current question's form would refuse.
        now_view = interviews.open_item(interview, item, views)
        form = InterviewAnswerForm(request.POST, checklist=[p for p, _text in now_view.checklist])
        if not form.is_valid():
            return render_interview(request, interview, error=form.first_error(), status=400)
        interviews.answer(interview, form.payload(), form.cleaned_data["item"], views=views)
    except InterviewError as error:
        if error.status == 409:  # already answered (a second tab, a form sent again), or finished
            messages.info(request, error.message)
            # Focus lands on the message (tabindex -1, role=status); the address's target wins over autofocus.
            return see_other(f"{interview.get_absolute_url()}#messages")
        return render_interview(request, interview, error=error.message, status=error.status)
    # Focus lands on the next question's heading, or on the line saying every question is answered.
    # (answer() marks the item answered in ``views``; an open question stays current until ticked.)
    target = "question-title" if interviews.current(views) is not None else "all-answered"
    return see_other(f"{interview.get_absolute_url()}#{target}")


def see_other(url: str) -> HttpResponse:
    """Redirect a form post to the page that shows its result (303: the browser then GETs it)."""
    return HttpResponseRedirect(url, status=303)


@require_http_methods(["GET", "HEAD", "POST"])
@learners_interview
def interview_finish(request: HttpRequest, interview: Interview) -> HttpResponse:
    """Finish and show the scorecard. With questions unanswered, first ask to confirm: a GET (or a post
    without ``confirm=1``) shows how many will score 0, with Finish now and Keep going."""
    unanswered = 0 if interview.finished_at else interview.items.filter(answered_at=None).count()
    confirmed = request.method == "POST" and (request.POST.get("confirm") == "1" or not unanswered)
    if not confirmed:
        if interview.finished_at:
            return see_other(scorecard_url(interview))
        return render(request, "lessons/interview_finish.html", {"interview": interview, "unanswered": unanswered})
    interviews.finish(interview)
    return see_other(scorecard_url(interview))


def scorecard_url(interview: Interview) -> str:
    """Return the finished interview's page at its scorecard's heading, "Overall: …" (tabindex -1), which the
    browser focuses on load: the heading is read first and its ring is one line, not the whole scorecard."""
    return f"{interview.get_absolute_url()}#band-title"


@require_safe
def interview_timer(request: HttpRequest, pk: int) -> HttpResponse:
    """The clock, for htmx to poll: time left, and an announcement when five or one minute is left."""
    interview = get_interview(request, pk)
    raw = request.GET.get("announced", "")
    announced = int(raw) if raw in ("0", "1", "5") else None
    seconds = interviews.remaining_seconds(interview)
    text, mark = interviews.announcement(seconds, announced)
    context = {"interview": interview, "timer": timer_context(interview, seconds, mark, text)}
    return render(request, "lessons/_interview_timer.html", context)
