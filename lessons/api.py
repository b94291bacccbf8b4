"""The learner JSON API: lessons (without answers until answered), answering, results."""

from __future__ import annotations

import math

from django.db import transaction
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from django.utils.html import strip_tags
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from interview.ratelimit import AnswersThrottle
from lessons import interviews, review, services
from lessons.markup import markdown_text as md
from lessons.models import Challenge, Choice, DeepDive, Lesson, Step
from lessons.pages import ChallengeView, DeepDiveView, WalkthroughView, build_lesson_page, learner_filter
from lessons.results import compute_results
from lessons.templatetags.lesson_tags import drawn_prompt


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(required=False, help_text="The error in one sentence, when not about one field.")
    errors = serializers.DictField(child=serializers.ListField(child=serializers.CharField()))


class ProgressSerializer(serializers.Serializer):
    answered = serializers.IntegerField()
    total = serializers.IntegerField()
    points = serializers.IntegerField()
    max_points = serializers.IntegerField()


class LessonSummarySerializer(serializers.Serializer):
    slug = serializers.CharField()
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=Lesson.Kind.choices)
    summary = serializers.CharField()
    track = serializers.DictField(child=serializers.CharField())
    published = serializers.BooleanField()
    url = serializers.CharField()
    progress = ProgressSerializer()


class AnswerResultSerializer(serializers.Serializer):
    outcome = serializers.ChoiceField(choices=["correct", "partial", "incorrect"])
    verdict = serializers.CharField(required=False)
    points = serializers.IntegerField()
    max_points = serializers.IntegerField()
    is_first = serializers.BooleanField(help_text="Only the first answer per item scores; retries are recorded.")
    feedback = serializers.CharField()
    follow_up = serializers.DictField(allow_null=True, required=False)
    value = serializers.FloatField(required=False)
    expected = serializers.FloatField(required=False)
    unit = serializers.CharField(required=False)
    steps = serializers.ListField(child=serializers.DictField(), required=False)


class ChoiceAnswerSerializer(serializers.Serializer):
    choice = serializers.IntegerField(help_text="The id of one of the deep dive's choices.")


class NumberAnswerSerializer(serializers.Serializer):
    value = serializers.FloatField(help_text="The learner's number, in the item's unit.")

    def to_internal_value(self, data):
        if isinstance(data, dict) and isinstance(data.get("value"), bool):
            raise serializers.ValidationError({"value": ["Enter a number, not true or false."]})
        return super().to_internal_value(data)

    def validate_value(self, value: float) -> float:
        if not math.isfinite(value):
            raise serializers.ValidationError("Enter a finite number.")
        return value


def progress_data(score) -> dict:
    return {"answered": score.answered, "total": score.total, "points": score.points, "max_points": score.max_points}


def first_errors(serializer: serializers.Serializer) -> Response:
    return Response({"errors": serializer.errors}, status=status.HTTP_400_BAD_REQUEST)


def text(row, name: str) -> dict:
    """Return an authored text twice: Markdown with its numbers filled in, and its stored sanitised HTML."""
    return {name: md(getattr(row, name)), f"{name}_html": getattr(row, f"{name}_html")}


def answer_payload(answer) -> dict:
    return {
        "outcome": answer.outcome,
        "points": answer.points,
        "max_points": answer.max_points,
        "is_first": answer.is_first,
    }


def item_header(item, kind: str) -> dict:
    return {"id": item.pk, "type": kind, "key": item.key}


def answers_data(state, field: str) -> list[dict]:
    """Return the first and latest answers, each with its ``field`` ("choice_id" or "value")."""
    name = "choice" if field == "choice_id" else field
    return [{**answer_payload(a), name: getattr(a, field)} for a in state.answers]


def deep_dive_data(view: DeepDiveView) -> dict:
    dd = view.deep_dive
    data = {
        **item_header(dd, "deep_dive"),
        "topic": dd.topic,
        **text(dd, "prompt"),
        **text(dd, "context"),
        "points": dd.points,
        "is_follow_up": view.is_follow_up,
        "choices": [{"id": c.pk, **text(c, "text")} for c in view.choices],
        "answers": [],
        "follow_ups": [deep_dive_data(f) for f in view.follow_up_views],
    }
    if view.answered:
        # Only after an answer: every choice's verdict and feedback, to compare.
        data["choices"] = [
            {
                "id": c.pk,
                **text(c, "text"),
                "verdict": c.verdict,
                "points": c.points,
                **text(c, "feedback"),
                "follow_up": c.follow_up_id,
            }
            for c in view.choices
        ]
        data["answers"] = answers_data(view.state, "choice_id")
        data["tries"] = view.state.count
    return data


def walkthrough_data(view: WalkthroughView) -> dict:
    wt = view.walkthrough
    steps = []
    for sv in view.steps:
        step = sv.step
        item = {
            "id": step.pk,
            "number": sv.number,
            "title": step.title,
            **text(step, "body"),
            "components": step.components,
            "connections": step.connections,
        }
        if step.calculator:
            item["asks"] = {"unit": step.unit, "hints": [md(h) for h in step.hints], "points": step.points}
            if sv.answered:
                item["asks"].update(
                    expected=sv.state.latest.expected,
                    **text(step, "explanation"),
                    steps=[d.as_dict() for d in sv.derivation()],
                )
                item["answers"] = answers_data(sv.state, "value")
        steps.append(item)
    return {**item_header(wt, "walkthrough"), "kind": wt.kind, "title": wt.title, "intro": md(wt.intro),
            "topic": wt.topic, "steps": steps}  # fmt: skip


def challenge_data(view: ChallengeView) -> dict:
    ch = view.challenge
    data = {
        **item_header(ch, "challenge"),
        "topic": ch.topic,
        "title": ch.title,
        "prompt_html": str(drawn_prompt(ch, view.inputs)),
        "calculator": ch.calculator,
        "inputs": {**ch.inputs, **view.inputs},
        "seed": view.draw["seed"],
        "unit": ch.unit,
        "hints": [md(h) for h in ch.hints],
        "points": ch.points,
        "answers": [],
    }
    if view.answered:
        data.update(
            expected=view.state.latest.expected,
            **text(ch, "explanation"),
            steps=[d.as_dict() for d in view.derivation()],
            answers=answers_data(view.state, "value"),
        )
    return data


ITEM_DATA = {"deep_dive": deep_dive_data, "walkthrough": walkthrough_data, "challenge": challenge_data}


class LessonListView(APIView):
    @extend_schema(
        summary="List the lessons", responses=LessonSummarySerializer(many=True), operation_id="lessons_list"
    )
    def get(self, request: Request) -> Response:
        lessons = list(Lesson.objects.visible_to(request.user))
        results = compute_results(request, lessons, with_misses=False)
        data = []
        for lesson in lessons:
            data.append(
                {
                    "slug": lesson.slug,
                    "title": lesson.title,
                    "kind": lesson.kind,
                    "summary": md(lesson.summary),
                    "track": {"slug": lesson.track.slug, "title": lesson.track.title},
                    "published": lesson.published,
                    "url": request.build_absolute_uri(lesson.get_absolute_url()),
                    "progress": progress_data(results.score_for(lesson)),
                }
            )
        return Response(data)


class LessonDetailView(APIView):
    @extend_schema(
        summary="Read one lesson, by layer",
        description="Verdicts, feedback and expected answers of an item appear only after the learner answered it.",
        responses={200: OpenApiResponse(description="The lesson with its sections and items."), 404: ErrorSerializer},
        operation_id="lessons_retrieve",
    )
    def get(self, request: Request, slug: str) -> Response:
        lesson = get_object_or_404(Lesson.objects.visible_to(request.user), slug=slug)
        page = build_lesson_page(request, lesson)
        sections = []
        for layer in page.layers:
            for sv in layer.sections:
                sections.append(
                    {
                        "key": sv.section.key,
                        "layer": layer.number,
                        "layer_label": layer.label,
                        "title": sv.section.title,
                        "minutes": sv.section.minutes,
                        **text(sv.section, "body"),
                        "items": [ITEM_DATA[item.kind](item) for item in sv.items],
                    }
                )
        return Response(
            {
                "slug": lesson.slug,
                "title": lesson.title,
                "kind": lesson.kind,
                "summary": md(lesson.summary),
                "track": {"slug": lesson.track.slug, "title": lesson.track.title},
                "layers": [{"number": la.number, "label": la.label, "minutes": la.minutes} for la in page.layers],
                "progress": progress_data(page.score),
                "sections": sections,
            }
        )


class AnswerView(APIView):
    throttle_classes = [AnswersThrottle]  # one budget with answers through the pages


class DeepDiveAnswerView(AnswerView):
    @extend_schema(
        summary="Answer a deep dive",
        request=ChoiceAnswerSerializer,
        responses={200: AnswerResultSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        deep_dive = get_object_or_404(
            DeepDive.objects.filter(section__lesson__in=Lesson.objects.visible_to(request.user)), pk=pk
        )
        serializer = ChoiceAnswerSerializer(data=request.data)
        if not serializer.is_valid():
            return first_errors(serializer)
        choice = (
            Choice.objects.filter(deep_dive=deep_dive, pk=serializer.validated_data["choice"])
            .select_related("follow_up")
            .first()
        )
        if choice is None:
            return Response({"errors": {"choice": ["That is not one of this deep dive's choices."]}}, status=400)
        if not services.follow_up_reached(services.current_learner(django_request(request)), deep_dive):
            message = services.FOLLOW_UP_NOT_REACHED
            return Response({"detail": message, "errors": {"deep_dive": [message]}}, status=409)
        learner = services.current_learner(django_request(request), create=True)
        answer = services.answer_deep_dive(learner, deep_dive, choice)
        follow_up = choice.follow_up
        return Response(
            {
                **answer_payload(answer),
                "verdict": choice.verdict,
                **text(choice, "feedback"),
                "follow_up": {"id": follow_up.pk, "key": follow_up.key, "prompt": md(follow_up.prompt)}
                if follow_up
                else None,
            }
        )


def django_request(request: Request) -> HttpRequest:
    return request._request


def number_result(answer, item) -> dict:
    expected = services.expected_for(item, answer.drawn_inputs)
    return {
        **answer_payload(answer),
        "feedback": answer.message,
        "value": answer.value,
        "expected": answer.expected,
        "unit": item.unit,
        "steps": [d.as_dict() for d in expected.steps],
    }


class NumberAnswerView(AnswerView):
    """Answer a graded number: an envelope step or a challenge."""

    def items(self, request: Request):
        raise NotImplementedError

    def post(self, request: Request, pk: int) -> Response:
        item = get_object_or_404(self.items(request), pk=pk)
        serializer = NumberAnswerSerializer(data=request.data)
        if not serializer.is_valid():
            return first_errors(serializer)
        learner = services.current_learner(django_request(request), create=True)
        with transaction.atomic():
            draw = None
            if isinstance(item, Challenge):
                services.ensure_session(django_request(request))
                draw = services.store_draw(learner, item, services.learner_identity(django_request(request)))
            answer = services.answer_number(learner, item, serializer.validated_data["value"], draw)
        return Response(number_result(answer, item))


@extend_schema_view(
    post=extend_schema(
        summary="Answer an envelope step with a number",
        request=NumberAnswerSerializer,
        responses={200: AnswerResultSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
)
class StepAnswerView(NumberAnswerView):
    def items(self, request: Request):
        visible = Lesson.objects.visible_to(request.user)
        return Step.objects.filter(walkthrough__section__lesson__in=visible).exclude(calculator="")


@extend_schema_view(
    post=extend_schema(
        summary="Answer a challenge with a number",
        description="Graded against the learner's own inputs, as the lesson shows them (`inputs`); they are "
        "stored at the first answer, so later answers are graded against the same numbers.",
        request=NumberAnswerSerializer,
        responses={200: AnswerResultSerializer, 400: ErrorSerializer, 404: ErrorSerializer},
    )
)
class ChallengeAnswerView(NumberAnswerView):
    def items(self, request: Request):
        return Challenge.objects.filter(section__lesson__in=Lesson.objects.visible_to(request.user))


class ResultsView(APIView):
    @extend_schema(
        summary="The learner's results",
        responses=inline_serializer(
            "Results",
            {
                "total": ProgressSerializer(),
                "lessons": serializers.ListField(child=serializers.DictField()),
                "topics": serializers.ListField(child=serializers.DictField()),
                "misses": serializers.ListField(child=serializers.DictField()),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        lessons = list(Lesson.objects.visible_to(request.user))
        results = compute_results(request, lessons)

        return Response(
            {
                "total": progress_data(results.total),
                "lessons": [
                    {"slug": lesson.slug, "title": lesson.title, **progress_data(score)}
                    for lesson, score in results.lessons
                ],  # fmt: skip
                "topics": [
                    {"topic": t.topic, "label": t.label, "mastery": round(t.mastery, 4), **progress_data(t)}
                    for t in results.topics
                ],
                "misses": [
                    {
                        "type": miss.kind,
                        "id": miss.item_id,
                        "title": miss.title,
                        "outcome": miss.outcome,
                        "points": miss.points,
                        "max_points": miss.max_points,
                        "retry_url": request.build_absolute_uri(miss.url),
                    }
                    for miss in results.misses
                ],
            }
        )


class ReviewView(APIView):
    @extend_schema(
        summary="Items due for spaced review",
        responses=inline_serializer(
            "ReviewItem",
            {
                "title": serializers.CharField(),
                "lesson": serializers.CharField(),
                "url": serializers.CharField(),
                "due": serializers.DateTimeField(),
                "last_outcome": serializers.CharField(),
                "reviews": serializers.IntegerField(),
            },
            many=True,
        ),
    )
    def get(self, request: Request) -> Response:
        lookup = learner_filter(django_request(request))
        items = review.due_items(lookup, list(Lesson.objects.visible_to(request.user))) if lookup is not None else []
        return Response(
            [
                {
                    "title": item.title,
                    "lesson": item.lesson_title,
                    "url": request.build_absolute_uri(item.url),
                    "due": item.due,
                    "last_outcome": item.last_outcome,
                    "reviews": item.reviews,
                }
                for item in items
            ]
        )


# --- Mock interviews ------------------------------------------------------------------------


class InterviewStartSerializer(serializers.Serializer):
    scenario = serializers.CharField(
        max_length=100, help_text='The slug of a published case study or simulation, or "surprise".'
    )


class InterviewAnswerSerializer(serializers.Serializer):
    choice = serializers.IntegerField(required=False, help_text="For a deep dive or a design question.")
    value = serializers.CharField(
        required=False, max_length=60, help_text='For a number: "393.2", or with its unit, "393.2 MB".'
    )
    text = serializers.CharField(
        required=False, max_length=5000, help_text="An open question's written answer (its first step)."
    )
    ticked = serializers.ListField(
        child=serializers.IntegerField(),
        required=False,
        max_length=50,
        help_text="Then the ids of the checklist points the written answer covered (its second step).",
    )
    item = serializers.IntegerField(
        required=False, help_text="Optional: the id of the item answered; a 409 if it is no longer the current one."
    )


INTERVIEW_ITEM = inline_serializer(
    "InterviewItem",
    {
        "id": serializers.IntegerField(),
        "position": serializers.IntegerField(),
        "phase": serializers.CharField(),
        "kind": serializers.ChoiceField(choices=["deep_dive", "number", "design", "open"]),
        "prompt": serializers.CharField(),
        "prompt_html": serializers.CharField(),
        "choices": serializers.ListField(child=serializers.DictField(), required=False),
        "unit": serializers.CharField(required=False),
        "stage": serializers.ChoiceField(choices=["write", "tick"], required=False),
        "text": serializers.CharField(required=False),
        "checklist": serializers.ListField(child=serializers.DictField(), required=False),
    },
    allow_null=True,
)
INTERVIEW_STATE = inline_serializer(
    "InterviewState",
    {
        "id": serializers.IntegerField(),
        "scenario": serializers.DictField(allow_null=True),
        "surprise": serializers.BooleanField(),
        "started_at": serializers.DateTimeField(),
        "deadline": serializers.DateTimeField(),
        "remaining_seconds": serializers.FloatField(),
        "finished": serializers.BooleanField(),
        "phases": serializers.ListField(child=serializers.DictField()),
        "answered": serializers.IntegerField(),
        "total": serializers.IntegerField(),
        "current": INTERVIEW_ITEM,
        "url": serializers.CharField(),
    },
)
SCORECARD = inline_serializer(
    "InterviewScorecard",
    {
        "id": serializers.IntegerField(),
        "dimensions": serializers.DictField(child=serializers.FloatField(allow_null=True)),
        "explanations": serializers.DictField(child=serializers.CharField()),
        "overall": serializers.FloatField(allow_null=True),
        "band": serializers.ChoiceField(choices=["strong", "ready", "not_yet"]),
        "band_explanation": serializers.CharField(),
        "time": serializers.ListField(child=serializers.DictField()),
        "items": serializers.ListField(child=serializers.DictField()),
        "practise": serializers.ListField(child=serializers.DictField()),
    },
)


def interview_item_data(view) -> dict | None:
    """Return an item as the learner sees it while answering: never a verdict, a score or feedback."""
    if view is None:
        return None
    item = view.item
    data = {
        "id": item.pk,
        "position": item.position,
        "phase": item.phase,
        "kind": item.kind,
        "prompt": strip_tags(f"{view.heading_html} {view.body_html}").strip(),
        "prompt_html": f"{view.heading_html}{view.body_html}",
    }
    if view.unit:
        data["unit"] = view.unit
    elif item.kind == "open":
        data["stage"] = view.stage
        if view.stage == "tick":
            data["text"] = view.written
            data["checklist"] = [{"id": pk, "text": strip_tags(text), "text_html": text} for pk, text in view.checklist]
    else:
        data["choices"] = [{"id": pk, "text": strip_tags(text), "text_html": text} for pk, text in view.choices]
    return data


def interview_state(request: Request, interview, views) -> dict:
    lesson = interview.lesson
    return {
        "id": interview.pk,
        "scenario": {"slug": lesson.slug, "title": lesson.title, "kind": lesson.kind} if lesson else None,
        "surprise": interview.surprise,
        "started_at": interview.started_at,
        "deadline": interview.deadline,
        "remaining_seconds": round(interviews.remaining_seconds(interview), 3),
        "finished": interview.finished_at is not None,
        "phases": interview.phases,
        "answered": sum(1 for v in views if v.item.answered_at is not None),
        "total": len(views),
        "current": None if interview.finished_at else interview_item_data(interviews.current(views)),
        "url": request.build_absolute_uri(interview.get_absolute_url()),
    }


def scorecard_data(request: Request, interview) -> dict:
    views = interviews.load(interview, reveal=True)
    card = interviews.scorecard(interview, [v.item for v in views])
    practise = interviews.practise_links(interview, card, views)
    items = []
    for view in views:
        item = view.item
        items.append(
            {
                **interview_item_data(view),
                "answer": item.answer,
                "answered_at": item.answered_at,
                "late": item.late,
                "outcome": view.outcome,
                "verdict": view.verdict or None,
                "score": item.score,
                "feedback": item.feedback,
                "feedback_html": view.chosen_feedback_html,
                "expected": view.expected,
                "steps": [d.as_dict() for d in view.derivation],
                "worked_html": view.worked_html,
                "lesson_url": request.build_absolute_uri(view.lesson_url),
            }
        )
    return {
        "id": interview.pk,
        "dimensions": card.as_dict(),
        "explanations": {d.key: d.explanation for d in card.dimensions},
        "overall": None if card.overall is None else round(card.overall, 4),
        "band": card.band,
        "band_explanation": card.band_text,
        "time": [
            {
                "phase": t.key,
                "budget_seconds": t.budget,
                "spent_seconds": round(t.spent, 3),
                "answered": t.answered,
                "total": t.total,
            }
            for t in card.phases
        ],  # fmt: skip
        "items": items,
        "practise": [{"title": t, "url": request.build_absolute_uri(u)} for t, u in practise.links] if practise else [],
    }


def interview_error(error: interviews.InterviewError) -> Response:
    body = {"errors": {error.field: [error.message]}}
    if error.field == "detail":
        body = {"detail": error.message, "errors": {"__all__": [error.message]}}
    return Response(body, status=error.status)


def own_interview(request: Request, pk: int):
    return get_object_or_404(interviews.for_learner(django_request(request)).select_related("lesson"), pk=pk)


class InterviewListView(APIView):
    def get_throttles(self):
        if self.request.method == "POST":
            return [AnswersThrottle()]
        return super().get_throttles()

    @extend_schema(
        summary="List your mock interviews",
        responses=inline_serializer(
            "InterviewAttempt",
            {
                "id": serializers.IntegerField(),
                "scenario": serializers.DictField(allow_null=True),
                "started_at": serializers.DateTimeField(),
                "deadline": serializers.DateTimeField(),
                "finished_at": serializers.DateTimeField(allow_null=True),
                "dimensions": serializers.DictField(allow_null=True),
                "band": serializers.CharField(allow_null=True),
                "url": serializers.CharField(),
            },
            many=True,
        ),
        operation_id="interviews_list",
    )
    def get(self, request: Request) -> Response:
        mine = interviews.for_learner(django_request(request)).select_related("lesson")
        cards = {interview.pk: card for interview, card in interviews.history(mine)}
        data = []
        for interview in mine.order_by("started_at", "pk"):
            card = cards.get(interview.pk)
            lesson = interview.lesson
            data.append(
                {
                    "id": interview.pk,
                    "scenario": {"slug": lesson.slug, "title": lesson.title} if lesson else None,
                    "started_at": interview.started_at,
                    "deadline": interview.deadline,
                    "finished_at": interview.finished_at,
                    "dimensions": card.as_dict() if card else None,
                    "band": card.band if card else None,
                    "url": request.build_absolute_uri(interview.get_absolute_url()),
                }
            )
        return Response(data)

    @extend_schema(
        summary="Start a mock interview",
        description="Draws the items (stored, so the interview can be resumed) and starts the server's clock.",
        request=InterviewStartSerializer,
        responses={201: INTERVIEW_STATE, 400: ErrorSerializer},
        operation_id="interviews_create",
    )
    def post(self, request: Request) -> Response:
        serializer = InterviewStartSerializer(data=request.data)
        if not serializer.is_valid():
            return first_errors(serializer)
        try:
            interview = interviews.start(django_request(request), serializer.validated_data["scenario"])
        except interviews.InterviewError as error:
            return interview_error(error)
        return Response(interview_state(request, interview, interviews.load(interview)), status=201)


class InterviewDetailView(APIView):
    @extend_schema(
        summary="Read one of your mock interviews: where it stands, or its scorecard once finished",
        responses={200: INTERVIEW_STATE, 404: ErrorSerializer},
        operation_id="interviews_retrieve",
    )
    def get(self, request: Request, pk: int) -> Response:
        interview = own_interview(request, pk)
        data = interview_state(request, interview, interviews.load(interview))
        if interview.finished_at is not None:
            data["scorecard"] = scorecard_data(request, interview)
        return Response(data)


class InterviewAnswerView(AnswerView):
    @extend_schema(
        summary="Answer the current question of a mock interview",
        description="Records the answer (late after the deadline) and returns the next question. No verdict, "
        "points or feedback until the interview is finished.",
        request=InterviewAnswerSerializer,
        responses={
            200: inline_serializer(
                "InterviewAnswered",
                {
                    "current": INTERVIEW_ITEM,
                    "answered": serializers.IntegerField(),
                    "total": serializers.IntegerField(),
                    "late": serializers.BooleanField(),
                    "deadline": serializers.DateTimeField(),
                    "remaining_seconds": serializers.FloatField(),
                },
            ),
            400: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
        },
    )
    def post(self, request: Request, pk: int) -> Response:
        interview = own_interview(request, pk)
        serializer = InterviewAnswerSerializer(data=request.data)
        if not serializer.is_valid():
            return first_errors(serializer)
        payload = {k: v for k, v in serializer.validated_data.items() if k != "item"}
        try:
            item = interviews.answer(interview, payload, serializer.validated_data.get("item"))
        except interviews.InterviewError as error:
            return interview_error(error)
        views = interviews.load(interview)
        return Response(
            {
                "current": interview_item_data(interviews.current(views)),
                "answered": sum(1 for v in views if v.item.answered_at is not None),
                "total": len(views),
                "late": item.late,
                "deadline": interview.deadline,
                "remaining_seconds": round(interviews.remaining_seconds(interview), 3),
            }
        )


class InterviewFinishView(APIView):
    @extend_schema(
        summary="Finish a mock interview and read its scorecard",
        description="Unanswered questions score 0. Finishing again returns the same scorecard.",
        request=None,
        responses={200: SCORECARD, 404: ErrorSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        interview = own_interview(request, pk)
        interviews.finish(interview)
        return Response(scorecard_data(request, interview))
