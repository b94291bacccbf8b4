"""The learner JSON API: lessons (without answers until answered), answering, results."""

from __future__ import annotations

import math

from django.db import transaction
from django.http import HttpRequest
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view, inline_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from interview.ratelimit import AnswersThrottle
from lessons import review, services
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
        "topic": dd.topic_id,
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
            "topic": wt.topic_id or "", "steps": steps}  # fmt: skip


def challenge_data(view: ChallengeView) -> dict:
    ch = view.challenge
    data = {
        **item_header(ch, "challenge"),
        "topic": ch.topic_id,
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
