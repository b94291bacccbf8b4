"""The real URLs plus bench-only floors: what any page or answer costs before doing its own work.

``GET /bench-floor/get/`` and ``POST /bench-floor/post/`` go through the full middleware stack
(session, auth, CSRF, CSP, htmx) and touch the signed-in user, as every page and answer must,
then return a short fragment. `make bench` divides each target's CPU per request by its floor's,
measured in the same run. Served only by `make bench` (bench/floor_wsgi.py).

``POST /bench-floor/answer/<lesson>/<deep dive>/`` is about the least that storing an answer costs through the
ORM: ``floor_post``, then the statements every answer runs (its card read; the answer, its card and the
learner's place written), with no content read, no grading, no scheduling and no page. `make bench` shows
its ratio to ``floor_post``, beside the answer's budget; its own learners (bench/prepare.py) take its writes.
"""

from django.db import transaction
from django.db.models import F
from django.http import HttpRequest, HttpResponse
from django.urls import path
from django.views.decorators.http import require_GET, require_POST

import interview.urls
from lessons.models import Answer, LessonProgress, Outcome, ReviewCard


@require_GET
def floor_get(request: HttpRequest) -> HttpResponse:
    # Every page shows who is signed in: reading the user loads the session and the user row.
    return HttpResponse(f"<p>{'signed in' if request.user.is_authenticated else 'visitor'}</p>")


@require_POST
def floor_post(request: HttpRequest) -> HttpResponse:
    # The CSRF check has run; an answer then needs the signed-in learner.
    if not request.user.is_authenticated:
        return HttpResponse("Sign in first.", status=403)
    return HttpResponse("<p>ok</p>")


@require_POST
def floor_answer(request: HttpRequest, lesson: int, deep_dive: int) -> HttpResponse:
    # The learner comes with the user (one query, interview.accounts.backends); the item's review card is read (what
    # was answered before), then, in one transaction as a real answer's, the answer is inserted and the card and the
    # learner's place in the lesson updated. Left out: the content, the choice's check and grading, the practice row
    # (hints owed by a first answer), the rate limit's counter, scheduling and the page.
    if not request.user.is_authenticated:
        return HttpResponse("Sign in first.", status=403)
    learner = request.user.learner
    card = ReviewCard.objects.filter(learner=learner, deep_dive_id=deep_dive).first()
    with transaction.atomic():
        answer = Answer.objects.create(
            learner=learner,
            deep_dive_id=deep_dive,
            choice_id=int(request.POST["choice"]),
            outcome=Outcome.PARTIAL,
            points=5,
            max_points=10,
            is_first=False,
        )
        if card is not None:
            ReviewCard.objects.filter(pk=card.pk).update(latest_answer=answer, reviews=F("reviews") + 1)
        LessonProgress.objects.filter(learner=learner, lesson_id=lesson).update(anchor="floor", url="/floor/")
    return HttpResponse("<p>ok</p>")


urlpatterns = [
    path("bench-floor/get/", floor_get),
    path("bench-floor/post/", floor_post),
    path("bench-floor/answer/<int:lesson>/<int:deep_dive>/", floor_answer),
    *interview.urls.urlpatterns,
]
