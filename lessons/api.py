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
from lessons import quiz as quiz_module
from lessons import review, services
from lessons.markup import markdown_text as md
from lessons.models import (
    Answer,
    Challenge,
    ChecklistPoint,
    Choice,
    DeepDive,
    ItemPractice,
    Lesson,
    OpenQuestion,
    Step,
)
from lessons.pages import (
    ChallengeView,
    DeepDiveView,
    Hints,
    ItemState,
    OpenQuestionView,
    WalkthroughView,
    build_lesson_page,
    learner_filter,
    load_lesson_data,
)
from lessons.results import compute_results
from lessons.scoring import HINT_RULE
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
    expected = serializers.FloatField(
        required=False, help_text="Numbers: only once right, after a second try, or after a reveal."
    )
    unit = serializers.CharField(required=False)
    steps = serializers.ListField(child=serializers.DictField(), required=False)
    hints_taken = serializers.IntegerField(help_text="Hints taken before this answer; each cost points.")
    text = serializers.CharField(required=False, help_text="Open questions: the written answer.")
    ticked = serializers.ListField(child=serializers.IntegerField(), required=False)


class WrittenAnswerSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=5000, help_text="The learner's answer, as they would say it.")


class ChecklistAnswerSerializer(serializers.Serializer):
    points = serializers.ListField(
        child=serializers.IntegerField(), allow_empty=True, help_text="Ids of the checklist points the answer covered."
    )


class HintsSerializer(serializers.Serializer):
    hints = serializers.ListField(child=serializers.CharField(), help_text="The hints shown so far (Markdown).")
    total = serializers.IntegerField()
    next_cost = serializers.IntegerField(help_text="Points the next hint takes off the first answer (0 once answered).")
    rule = serializers.CharField()


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
        "hints_taken": answer.hints_taken,
    }


def hints_data(hints: Hints | None, markdown: list[str]) -> dict:
    """Return the hints a learner has seen, how many there are and what the next costs (lessons.scoring)."""
    if hints is None:
        return {"hints": [], "total": 0, "next_cost": 0, "rule": HINT_RULE}
    return {"hints": [md(h) for h in markdown[: hints.shown]], "total": len(hints.html), "next_cost": hints.cost,
            "rule": HINT_RULE}  # fmt: skip


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
        "hints": hints_data(view.hints, dd.hints),
        "all_shown": view.reveal_all,
        "answers": [],
        "follow_ups": [deep_dive_data(f) for f in view.follow_up_views],
    }
    if view.answered:
        # After an answer: the chosen approach's verdict and feedback; every choice's once the
        # reveal is earned (a best answer, a second try, or a reveal asked for).
        shown = view.shown_choice
        data["choices"] = [
            {
                "id": c.pk,
                **text(c, "text"),
                "verdict": c.verdict,
                "points": c.points,
                **text(c, "feedback"),
                "follow_up": c.follow_up_id,
            }
            if view.reveal_all or c == shown
            else {"id": c.pk, **text(c, "text")}
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
            item["asks"] = {"unit": step.unit, "hints": hints_data(sv.hints, step.hints), "points": step.points,
                            "working_shown": sv.show_working}  # fmt: skip
            if sv.show_working:
                item["asks"].update(
                    expected=sv.state.latest.expected,
                    **text(step, "explanation"),
                    steps=[d.as_dict() for d in sv.derivation()],
                )
            if sv.answered:
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
        "hints": hints_data(view.hints, ch.hints),
        "points": ch.points,
        "working_shown": view.show_working,
        "answers": [],
    }
    if view.show_working:
        data.update(
            expected=view.state.latest.expected,
            **text(ch, "explanation"),
            steps=[d.as_dict() for d in view.derivation()],
        )
    if view.answered:
        data["answers"] = answers_data(view.state, "value")
    return data


def checklist_data(points: list[ChecklistPoint]) -> list[dict]:
    return [{"id": p.pk, **text(p, "text")} for p in points]


def open_question_data(view: OpenQuestionView) -> dict:
    """An open question: the checklist only once the learner has written an answer."""
    question = view.question
    data = {
        **item_header(question, "open_question"),
        "topic": question.topic_id,
        **text(question, "prompt"),
        "points": question.points,
        "draft": view.state.draft,
        "answers": [{**answer_payload(a), "text": a.text, "ticked": a.ticked} for a in view.state.answers],  # fmt: skip
    }
    if view.ticking or view.answered:
        data["checklist"] = checklist_data(view.checklist)
    return data


ITEM_DATA = {
    "deep_dive": deep_dive_data,
    "walkthrough": walkthrough_data,
    "challenge": challenge_data,
    "open_question": open_question_data,
}


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
        hints = services.hints_to_pay(learner, {"deep_dive_id": deep_dive.pk})
        answer = services.answer_deep_dive(learner, deep_dive, choice, hints=hints)
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


def number_result(answer, item, working: bool) -> dict:
    """The graded number; its expected value and worked arithmetic only when ``working`` is earned."""
    result = {**answer_payload(answer), "feedback": answer.message, "value": answer.value, "unit": item.unit}
    if working:
        expected = services.expected_for(item, answer.drawn_inputs)
        result.update(expected=answer.expected, steps=[d.as_dict() for d in expected.steps])
    return result


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
        field = "challenge_id" if isinstance(item, Challenge) else "step_id"
        with transaction.atomic():
            draw = None
            if isinstance(item, Challenge):
                services.ensure_session(django_request(request))
                draw = services.store_draw(learner, item, services.learner_identity(django_request(request)))
            hints = services.hints_to_pay(learner, {field: item.pk})
            answer = services.answer_number(learner, item, serializer.validated_data["value"], draw, hints=hints)
        return Response(number_result(answer, item, services.reveal_earned(learner, answer)))


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


def visible_items(request: Request, kind: str):
    """Return the deep dives, numeric steps or challenges of the lessons the request may see."""
    visible = Lesson.objects.visible_to(request.user)
    if kind == "deep_dive":
        return DeepDive.objects.filter(section__lesson__in=visible)
    if kind == "step":
        return Step.objects.filter(walkthrough__section__lesson__in=visible).exclude(calculator="")
    return Challenge.objects.filter(section__lesson__in=visible)


def item_state(learner, kind: str, pk: int):
    """Return the learner's state of one item (first and latest answer, tries, practice), from a lesson read."""
    if learner is None:
        return ItemState()
    fields = {f"{kind}_id": pk}
    answers = list(Answer.objects.filter(learner=learner, **fields).order_by("pk"))
    first = next((a for a in answers if a.is_first), None)
    practice = ItemPractice.objects.filter(learner=learner, **fields).first()
    return ItemState(first=first, latest=answers[-1] if answers else None, count=len(answers), practice=practice)


class PracticeView(AnswerView):
    """A hint or a reveal on a deep dive, a numeric step or a challenge."""

    kind = ""  # "deep_dive", "step" or "challenge"


class HintView(PracticeView):
    def post(self, request: Request, pk: int) -> Response:
        item = get_object_or_404(visible_items(request, self.kind), pk=pk)
        if not item.hints:
            message = "This question has no hints."
            return Response({"detail": message, "errors": {"hints": [message]}}, status=409)
        learner = services.current_learner(django_request(request), create=True)
        services.take_hint(learner, {f"{self.kind}_id": pk}, len(item.hints))
        hints = Hints.of(item.hints_html, item_state(learner, self.kind, pk), item.points, "")
        return Response(hints_data(hints, item.hints))


class RevealView(PracticeView):
    def post(self, request: Request, pk: int) -> Response:
        item = get_object_or_404(visible_items(request, self.kind), pk=pk)
        learner = services.current_learner(django_request(request))
        state = item_state(learner, self.kind, pk)
        if state.first is None:
            message = services.ANSWER_BEFORE_REVEAL
            return Response({"detail": message, "errors": {"answer": [message]}}, status=409)
        services.reveal(learner, {f"{self.kind}_id": pk})
        if self.kind == "deep_dive":
            choices = item.choices.all()
            return Response({"choices": [{"id": c.pk, **text(c, "text"), "verdict": c.verdict, "points": c.points,
                                          **text(c, "feedback"), "follow_up": c.follow_up_id} for c in choices]})  # fmt: skip
        latest = state.latest
        expected = services.expected_for(item, latest.drawn_inputs)
        return Response(
            {
                "expected": latest.expected,
                "unit": item.unit,
                "steps": [d.as_dict() for d in expected.steps],
                **text(item, "explanation"),
            }  # fmt: skip
        )


def practice_schema(kind: str, what: str):
    return [
        extend_schema_view(
            post=extend_schema(
                summary=f"Take the next hint of {what}",
                description=HINT_RULE + " Hints taken after the first answer are free.",
                request=None,
                responses={200: HintsSerializer, 404: ErrorSerializer, 409: ErrorSerializer},
                operation_id=f"{kind}_hint",
            )
        )(type(f"{kind.title().replace('_', '')}HintView", (HintView,), {"kind": kind})),
        extend_schema_view(
            post=extend_schema(
                summary=f"Reveal {what}'s " + ("every approach" if kind == "deep_dive" else "worked arithmetic"),
                description="Only after an answer; the reveal is recorded and never changes a score.",
                request=None,
                responses={
                    200: OpenApiResponse(description="The revealed verdicts or arithmetic."),
                    404: ErrorSerializer,
                    409: ErrorSerializer,
                },  # fmt: skip
                operation_id=f"{kind}_reveal",
            )
        )(type(f"{kind.title().replace('_', '')}RevealView", (RevealView,), {"kind": kind})),
    ]


DeepDiveHintView, DeepDiveRevealView = practice_schema("deep_dive", "a deep dive")
StepHintView, StepRevealView = practice_schema("step", "an envelope step")
ChallengeHintView, ChallengeRevealView = practice_schema("challenge", "a challenge")


def visible_question(request: Request, pk: int):
    """Return (question, checklist, lesson data) of an open question the request may see, else 404."""
    question = get_object_or_404(
        OpenQuestion.objects.filter(section__lesson__in=Lesson.objects.visible_to(request.user)).select_related(
            "section__lesson"
        ),
        pk=pk,
    )
    data = load_lesson_data(django_request(request), question.section.lesson, only="open_question")
    return question, [p for p in data.checklist if p.question_id == pk], data


class OpenQuestionWriteView(AnswerView):
    @extend_schema(
        summary="Write an answer to an open question",
        description="The answer is kept; the response gives the checklist of points a strong answer makes.",
        request=WrittenAnswerSerializer,
        responses={
            200: OpenApiResponse(description="The saved draft and the checklist."),
            400: ErrorSerializer,
            404: ErrorSerializer,
        },  # fmt: skip
    )
    def post(self, request: Request, pk: int) -> Response:
        question, checklist, _data = visible_question(request, pk)
        serializer = WrittenAnswerSerializer(data=request.data)
        if not serializer.is_valid():
            return first_errors(serializer)
        learner = services.current_learner(django_request(request), create=True)
        services.save_draft(learner, question, serializer.validated_data["text"])
        return Response({"draft": serializer.validated_data["text"], "checklist": checklist_data(checklist)})


class OpenQuestionAnswerView(AnswerView):
    @extend_schema(
        summary="Tick the checklist points your written answer covered",
        description="The ticked share of the checklist is the score; only the first answer scores.",
        request=ChecklistAnswerSerializer,
        responses={200: AnswerResultSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer},
    )
    def post(self, request: Request, pk: int) -> Response:
        question, checklist, data = visible_question(request, pk)
        serializer = ChecklistAnswerSerializer(data=request.data)
        if not serializer.is_valid():
            return first_errors(serializer)
        by_id = {p.pk: p for p in checklist}
        chosen = serializer.validated_data["points"]
        if any(pk_ not in by_id for pk_ in chosen):
            return Response({"errors": {"points": ["Tick only this question's checklist points."]}}, status=400)
        state = data.state("open_question", pk)
        if not state.draft:
            message = services.WRITE_BEFORE_CHECKLIST
            return Response({"detail": message, "errors": {"text": [message]}}, status=409)
        learner = services.current_learner(django_request(request), create=True)
        ticked = [p for p in checklist if p.pk in set(chosen)]
        with transaction.atomic():
            answer = services.answer_open_question(
                learner, question, checklist, ticked, state.draft, answered_before=state.count > 0, card=state.card
            )
        return Response({**answer_payload(answer), "feedback": answer.message, "text": answer.text,
                         "ticked": answer.ticked, "checklist": checklist_data(checklist)})  # fmt: skip


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


def quiz_data(quiz: quiz_module.Quiz, hints: int) -> dict:
    """A due item as a review session asks it: no verdict, no earlier answer, numbers drawn anew."""
    data = {"type": quiz.kind, "id": quiz.item_id, "lesson": quiz.lesson.slug, "prompt_html": quiz.prompt_html,
            "body_html": quiz.body_html,
            "hints": quiz.hints_html[:hints], "hints_total": len(quiz.hints_html), "due": quiz.card.due}  # fmt: skip
    if quiz.kind == "deep_dive":
        data["choices"] = [{"id": c.pk, **text(c, "text")} for c in quiz.choices]
    elif quiz.kind == "open_question":
        data["answer_with"] = "text, then points (the checklist comes with the reply to text alone)"
    else:
        data.update(unit=quiz.unit, inputs=quiz.inputs)
    return data


class ReviewNextView(APIView):
    @extend_schema(
        summary="The next item of a review session, asked afresh",
        description="Choices come in a new order, a challenge's numbers are drawn anew, no earlier verdict is "
        "given. `?hints=N` shows the first N hints (a recall with a hint counts as hard).",
        responses={200: OpenApiResponse(description='{"due": <count>, "item": {...} or null}')},
    )
    def get(self, request: Request) -> Response:
        lookup = learner_filter(django_request(request))
        lessons = list(Lesson.objects.visible_to(request.user))
        card = quiz_module.next_card(lookup, lessons) if lookup is not None else None
        if card is None:
            return Response({"due": 0, "item": None})
        quiz = quiz_module.present(card, services.learner_identity(django_request(request)))
        hints = quiz_module.hints_shown(quiz, request.query_params.get("hints"))
        return Response({"due": review.due_count(lookup, lessons), "item": quiz_data(quiz, hints)})


class ReviewAnswerSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["deep_dive", "step", "challenge", "open_question"])
    id = serializers.IntegerField()
    choice = serializers.IntegerField(required=False)
    value = serializers.CharField(required=False, max_length=40)
    text = serializers.CharField(required=False, max_length=5000)
    points = serializers.ListField(child=serializers.IntegerField(), required=False)
    hints = serializers.IntegerField(required=False, min_value=0, default=0, help_text="Hints you were shown.")


class ReviewAnswerView(AnswerView):
    @extend_schema(
        summary="Answer a review item",
        description="Grades the answer and reschedules the item (FSRS); lesson scores never change.",
        request=ReviewAnswerSerializer,
        responses={
            200: OpenApiResponse(description="outcome, recalled, next_due, feedback_html, answer_html"),
            400: ErrorSerializer,
            404: ErrorSerializer,
        },  # fmt: skip
    )
    def post(self, request: Request) -> Response:
        serializer = ReviewAnswerSerializer(data=request.data)
        if not serializer.is_valid():
            return first_errors(serializer)
        data = serializer.validated_data
        lookup = learner_filter(django_request(request))
        lessons = list(Lesson.objects.visible_to(request.user))
        card = quiz_module.card_for(lookup, lessons, data["type"], data["id"]) if lookup is not None else None
        if card is None:
            message = "That item is not in your review queue."
            return Response({"detail": message, "errors": {"id": [message]}}, status=404)
        quiz = quiz_module.present(card, services.learner_identity(django_request(request)))
        if quiz.kind == "open_question":
            if not data.get("text", "").strip():
                return Response({"errors": {"text": [services.WRITE_BEFORE_CHECKLIST]}}, 400)
            if "points" not in data:
                return Response({"graded": False, "checklist": checklist_data(quiz.checklist)})
        try:
            graded = quiz_module.grade(quiz, data, quiz_module.hints_shown(quiz, data["hints"]))
        except quiz_module.QuizError as error:
            field = {"deep_dive": "choice", "open_question": "points"}.get(quiz.kind, "value")
            return Response({"errors": {field: [str(error)]}}, status=400)
        return Response({"graded": True, "outcome": graded.outcome, "recalled": graded.recalled,
                         "next_due": graded.card.due, "feedback_html": graded.feedback_html,
                         "answer_html": graded.answer_html})  # fmt: skip
