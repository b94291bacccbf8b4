"""The learner JSON API: lessons (without answers until answered), answering, results."""

from __future__ import annotations

import math
from dataclasses import replace

from django.db import transaction
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404
from drf_spectacular.utils import (
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.validators import ProhibitSurrogateCharactersValidator
from rest_framework.views import APIView

from interview.ratelimit import AnswersThrottle
from lessons import interviews, review, services
from lessons import quiz as quiz_module
from lessons.content_cache import visible_lessons
from lessons.markup import drawn_prompt, plain_text
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
    ReviewCard,
    Step,
)
from lessons.number_entry import EntryError, read_number
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
    feedback = serializers.CharField(
        help_text="Empty while the follow-up this answer opened waits (follow_up_waiting): it comes after that answer."
    )
    follow_up = serializers.DictField(allow_null=True, required=False)
    follow_up_waiting = serializers.BooleanField(
        required=False,
        help_text="Deep dives: the follow-up this answer opened must be answered before this deep dive's feedback, "
        "another try or a reveal (409).",
    )
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


@extend_schema_field(
    {
        "oneOf": [{"type": "number", "minimum": 0}, {"type": "string", "maxLength": 40}],
        "example": "375 MiB",
    }
)
class AnswerValueField(serializers.Field):
    """A number in the item's unit, or text as a learner types it ("375 MiB", "$1.14"), converted to it."""

    default_error_messages = {
        "invalid": "Enter a number, or text such as “7,000 MB”.",
        "finite": "Enter a finite number.",
    }

    def to_internal_value(self, data) -> float:
        if isinstance(data, bool) or not isinstance(data, (int, float, str)):
            self.fail("invalid")
        if isinstance(data, str):
            if len(data) > 40:
                raise serializers.ValidationError("That is too long for a number.")
            ProhibitSurrogateCharactersValidator()(data)  # JSON may escape one ("\ud800"); no reply could quote it
            try:
                return read_number(data, self.context.get("unit", ""))
            except EntryError as error:
                raise serializers.ValidationError(str(error)) from None
        try:  # a JSON integer may be too large for a float (10**400)
            number = float(data)
        except OverflowError:
            self.fail("finite")
        if not math.isfinite(number):
            self.fail("finite")
        try:  # a JSON number is the number itself, in the item's unit: only the parser's own rules apply
            return read_number(repr(number))
        except EntryError as error:
            raise serializers.ValidationError(str(error)) from None

    def to_representation(self, value):
        return value


class NumberAnswerSerializer(serializers.Serializer):
    value = AnswerValueField(
        help_text="The learner's number: a JSON number in the item's unit, or text with a unit "
        '("375 MiB", "$1.14", "1.2k"), converted to the item\'s unit.'
    )


def progress_data(score) -> dict:
    return {"answered": score.answered, "total": score.total, "points": score.points, "max_points": score.max_points}


def first_errors(serializer: serializers.Serializer) -> Response:
    return Response({"errors": serializer.errors}, status=status.HTTP_400_BAD_REQUEST)


def text(row, name: str) -> dict:
    """Return an authored text twice: Markdown with its numbers filled in, and its stored sanitised HTML."""
    return {name: md(getattr(row, name)), f"{name}_html": getattr(row, f"{name}_html")}


def conflict(field: str, message: str) -> Response:
    """Return a 409: the request is well formed, but the learner's state does not allow it yet (``field`` names why)."""
    return Response({"detail": message, "errors": {field: [message]}}, status=409)


def feedback(choice: Choice, waiting: bool) -> dict:
    """Return a choice's feedback (``text``), empty while the follow-up the learner's answer opened waits (``waiting``:
    LessonData.waiting_for_follow_up): the interviewer follows up first, and the feedback would give its answer away."""
    return {"feedback": "", "feedback_html": ""} if waiting else text(choice, "feedback")


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
        # While a follow-up waits the hints wait too (every hint is shown once answered), as on the page.
        "hints": hints_data(
            replace(view.hints, shown=0) if view.follow_up_waiting and view.hints else view.hints, dd.hints
        ),  # fmt: skip
        "all_shown": view.reveal_all,
        "answers": [],
        "follow_ups": [deep_dive_data(f) for f in view.follow_up_views],
    }
    if view.answered:
        # After an answer: the chosen approach's verdict and feedback (its feedback once the follow-up it opened is
        # answered, as the page shows it); every choice's once the reveal is earned (a best answer, a second try,
        # or a reveal asked for).
        shown = view.shown_choice
        data["choices"] = [
            {
                "id": c.pk,
                **text(c, "text"),
                "verdict": c.verdict,
                "points": c.points,
                **feedback(c, view.follow_up_waiting),
                "follow_up": c.follow_up_id,
            }
            if view.reveal_all or c == shown
            else {"id": c.pk, **text(c, "text")}
            for c in view.choices
        ]
        data["follow_up_waiting"] = view.follow_up_waiting
        data["answers"] = answers_data(view.state, "choice_id")
        data["tries"] = view.state.count
    return data


def walkthrough_data(view: WalkthroughView) -> dict:
    wt = view.walkthrough
    steps = []
    for sv in view.steps:
        step = sv.step
        if not view.is_open(sv.number):  # not open yet: its body starts from answers still to give (as on the page)
            steps.append({"id": step.pk, "number": sv.number, "title": step.title, "locked": True})
            continue
        item = {
            "id": step.pk,
            "number": sv.number,
            "title": step.title,
            "locked": False,
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
        lessons = visible_lessons(request.user)
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
        lesson = next((lesson for lesson in visible_lessons(request.user) if lesson.slug == slug), None)
        if lesson is None:
            raise Http404("No such lesson.")
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
        deep_dive = get_object_or_404(visible_items(request, "deep_dive"), pk=pk)
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
        learner = services.current_learner(django_request(request))
        if not services.follow_up_reached(learner, deep_dive):
            return conflict("deep_dive", services.FOLLOW_UP_NOT_REACHED)
        if learner is not None and follow_up_waits(request, deep_dive):  # another try waits, as on the page
            return conflict("follow_up", services.FOLLOW_UP_FIRST)
        learner = learner or services.current_learner(django_request(request), create=True)
        hints = services.hints_to_pay(learner, {"deep_dive_id": deep_dive.pk})
        with transaction.atomic():  # the answer and the follow-up it opens, or neither
            answer = services.answer_deep_dive(learner, deep_dive, choice, hints=hints)
        follow_up = choice.follow_up
        # An approach that is not the best and opens a follow-up: its feedback waits for the follow-up, as on the page.
        waiting = follow_up is not None and follow_up_waits(request, deep_dive)
        return Response(
            {
                **answer_payload(answer),
                "verdict": choice.verdict,
                **feedback(choice, waiting),
                "follow_up_waiting": waiting,
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

    kind = ""  # "step" or "challenge": visible_items reads the ones the request may answer

    def post(self, request: Request, pk: int) -> Response:
        item = get_object_or_404(visible_items(request, self.kind), pk=pk)
        state = None  # a step's: the learner's state read to know it is open, reused to store the answer
        if self.kind == "step":
            data = step_data(request, item)
            if not data.step_is_open(item.pk):  # whatever the value, as the page's answer endpoint
                return conflict("step", services.STEP_NOT_OPEN)
            state = data.state("step", pk)
        serializer = NumberAnswerSerializer(data=request.data, context={"unit": item.unit})
        if not serializer.is_valid():
            return first_errors(serializer)
        learner = services.current_learner(django_request(request), create=True)
        field = "challenge_id" if isinstance(item, Challenge) else "step_id"
        with transaction.atomic():
            draw = None
            if isinstance(item, Challenge):
                services.ensure_session(django_request(request))
                draw = services.store_draw(learner, item, services.learner_identity(django_request(request)))
            if state is None:
                known = {"hints": services.hints_to_pay(learner, {field: item.pk})}
            else:  # as the page's answer_step: no second read of the answers, the hints taken or the review card
                known = {"answered_before": state.count > 0, "card": state.card, "hints": state.hints_before_first}
            answer = services.answer_number(learner, item, serializer.validated_data["value"], draw, **known)
        return Response(number_result(answer, item, services.reveal_earned(learner, answer)))


@extend_schema_view(
    post=extend_schema(
        summary="Answer an envelope step with a number",
        description="A step opens once the steps before it that ask for a number are answered, right or wrong; "
        "before that its answer is a 409 (its text and working start from their answers).",
        request=NumberAnswerSerializer,
        responses={200: AnswerResultSerializer, 400: ErrorSerializer, 404: ErrorSerializer, 409: ErrorSerializer},
    )
)
class StepAnswerView(NumberAnswerView):
    kind = "step"


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
    kind = "challenge"


def visible_items(request: Request, kind: str):
    """Return the deep dives, numeric steps or challenges of the lessons the request may see."""
    visible = Lesson.objects.visible_to(request.user)
    if kind == "deep_dive":
        return DeepDive.objects.filter(section__lesson__in=visible).select_related(
            "section"
        )  # its lesson: follow_up_waits
    if kind == "step":
        return (
            Step.objects.filter(walkthrough__section__lesson__in=visible)
            .exclude(calculator="")
            .select_related("walkthrough__section")
        )  # its lesson: step_data
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
            return conflict("hints", "This question has no hints.")
        if self.kind == "deep_dive" and follow_up_waits(request, item):  # as the page's hint endpoint
            return conflict("follow_up", services.FOLLOW_UP_FIRST)
        if self.kind == "step" and not step_opens(request, item):
            return conflict("step", services.STEP_NOT_OPEN)
        learner = services.current_learner(django_request(request), create=True)
        services.take_hint(learner, {f"{self.kind}_id": pk}, len(item.hints))
        hints = Hints.of(item.hints_html, item_state(learner, self.kind, pk), item.points, "")
        return Response(hints_data(hints, item.hints))


def item_lesson_data(request: Request, lesson_id: int, **only):
    """Return the lesson data its page reads for one item (load_lesson_data's ``only``, ``deep_dive``, ``step``)."""
    lesson = next(lesson for lesson in visible_lessons(request.user) if lesson.pk == lesson_id)
    return load_lesson_data(django_request(request), lesson, **only)


def follow_up_waits(request: Request, deep_dive: DeepDive) -> bool:
    """Return whether ``deep_dive`` waits for a follow-up the learner's answer opened (its feedback, another try and
    a reveal), as its page says: LessonData.waiting_for_follow_up, on the lesson's content and the learner's state."""
    data = item_lesson_data(request, deep_dive.section.lesson_id, only="deep_dive", deep_dive=deep_dive.pk)
    return deep_dive.pk in data.waiting_for_follow_up()


def step_opens(request: Request, step: Step) -> bool:
    """Return whether ``step`` is open to the learner, as its walkthrough's page says (LessonData.step_is_open)."""
    return step_data(request, step).step_is_open(step.pk)


def step_data(request: Request, step: Step):
    """Return the lesson data of ``step``'s walkthrough: its steps and the learner's state of them."""
    return item_lesson_data(request, step.walkthrough.section.lesson_id, only="walkthrough", step=step.pk)


class RevealView(PracticeView):
    def post(self, request: Request, pk: int) -> Response:
        item = get_object_or_404(visible_items(request, self.kind), pk=pk)
        learner = services.current_learner(django_request(request))
        state = item_state(learner, self.kind, pk)
        if state.first is None:
            return conflict("answer", services.ANSWER_BEFORE_REVEAL)
        if self.kind == "deep_dive" and follow_up_waits(request, item):
            return conflict("follow_up", services.FOLLOW_UP_FIRST)
        services.reveal(learner, {f"{self.kind}_id": pk})
        if self.kind == "deep_dive":
            choices = item.choices.all()
            return Response({"choices": [{"id": c.pk, **text(c, "text"), "verdict": c.verdict, "points": c.points,
                                          **text(c, "feedback"), "follow_up": c.follow_up_id} for c in choices]})  # fmt: skip
        latest = state.latest
        # An answer to a challenge an author changed since (other drawn parameters) has no working to show.
        changed = self.kind == "challenge" and not item.drawn_fit(latest.drawn_inputs)
        steps = [] if changed else services.expected_for(item, latest.drawn_inputs).steps
        return Response(
            {
                "expected": latest.expected,
                "unit": item.unit,
                "steps": [d.as_dict() for d in steps],
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
            return conflict("text", services.WRITE_BEFORE_CHECKLIST)
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
        lessons = visible_lessons(request.user)
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
                        "lesson": miss.lesson.slug,
                        "outcome": miss.outcome,
                        "points": miss.points,
                        "max_points": miss.max_points,
                        "right_on_retry": miss.right_on_retry,
                        "retry_url": request.build_absolute_uri(miss.url),
                    }
                    for miss in results.misses
                ],
            }
        )


class ReviewView(APIView):
    @extend_schema(
        summary="Items due for spaced review",
        description=f"The {review.DUE_LIST_LIMIT} most overdue items at most (equals: the first answered first); "
        "`GET /api/v1/review/next/` gives the count of all items due (`due`). Each item's `type` and `id` are "
        "what `POST /api/v1/review/answer/` takes to answer it; `lesson` is the lesson's slug, as in results.",
        responses=inline_serializer(
            "ReviewItem",
            {
                "type": serializers.ChoiceField(choices=ReviewCard.ITEM_KINDS),
                "id": serializers.IntegerField(),
                "title": serializers.CharField(),
                "lesson": serializers.CharField(help_text="The lesson's slug."),
                "lesson_title": serializers.CharField(),
                "url": serializers.CharField(),
                "due": serializers.DateTimeField(),
                "last_outcome": serializers.CharField(
                    help_text="The outcome of the last answer that scheduled the item: its first, or one given "
                    "once it was due (a retry before then is practice and schedules nothing)."
                ),
                "reviews": serializers.IntegerField(help_text="Answers given to the item, retries included."),
            },
            many=True,
        ),
    )
    def get(self, request: Request) -> Response:
        lookup = learner_filter(django_request(request))
        items = review.due_items(lookup, visible_lessons(request.user)) if lookup is not None else []
        return Response(
            [
                {
                    "type": item.kind,
                    "id": item.item_id,
                    "title": item.title,
                    "lesson": item.lesson_slug,
                    "lesson_title": item.lesson_title,
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
    choice = serializers.IntegerField(
        required=False, help_text="For a deep dive or a design question: the id of one of the item's choices."
    )
    value = serializers.CharField(
        required=False, max_length=60, help_text='For a number: "7000", or with its unit, "7,000 MB".'
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
        help_text="The id of the item answered (the current one); a 409 if it is no longer the current one, "
        "so a retried request never answers the next question."
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
        "prompt": plain_text(f"{view.premise_html} {view.heading_html} {view.body_html}").strip(),
        "prompt_html": f"{view.premise_html}{view.heading_html}{view.body_html}",
    }
    if view.unit:
        data["unit"] = view.unit
    elif item.kind == "open":
        data["stage"] = view.stage
        if view.stage == "tick":
            data["text"] = view.written
            data["checklist"] = [{"id": pk, "text": plain_text(text), "text_html": text} for pk, text in view.checklist]
    else:
        data["choices"] = [{"id": pk, "text": plain_text(text), "text_html": text} for pk, text in view.choices]
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
                "answer": view.shown_answer(),
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
                "score": round(t.score, 4),
                "rushed": t.rushed,
                "verdict": t.verdict,
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
            refused = interview_error(error)
            if error.message == interviews.ALREADY_ANSWERED:  # "here is the next one": the question now current
                refused.data["current"] = interview_item_data(interviews.current(interviews.load(interview)))
            return refused
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


def quiz_data(quiz: quiz_module.Quiz, hints: int) -> dict:
    """A due item as a review session asks it: no verdict, no earlier answer, numbers drawn anew."""
    data = {"type": quiz.kind, "id": quiz.item_id, "lesson": quiz.lesson.slug, "lesson_title": quiz.lesson.title,
            "prompt_html": quiz.prompt_html,
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
        lessons = visible_lessons(request.user)
        card = quiz_module.next_card(lookup, lessons) if lookup is not None else None
        if card is None:
            return Response({"due": 0, "item": None})
        quiz = quiz_module.present(card, services.learner_identity(django_request(request)))
        hints = quiz_module.hints_shown(quiz, request.query_params.get("hints"))
        due = compute_results(django_request(request), lessons, with_misses=False).due  # counted as results counts it
        return Response({"due": due, "item": quiz_data(quiz, hints)})


class ReviewAnswerSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=ReviewCard.ITEM_KINDS)  # as the review list gives it
    # Ids are bounded as the database's integers are (a larger one found by the fuzzer was a 500).
    id = serializers.IntegerField(min_value=1, max_value=2**63 - 1)
    choice = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    value = serializers.CharField(required=False, max_length=40)
    text = serializers.CharField(required=False, max_length=5000)
    points = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1), required=False, max_length=100
    )
    hints = serializers.IntegerField(
        required=False, min_value=0, max_value=1000, default=0, help_text="Hints you were shown."
    )


class ReviewAnswerView(AnswerView):
    @extend_schema(
        summary="Answer a review item",
        description="Grades the answer and reschedules the item (FSRS); lesson scores never change.",
        request=ReviewAnswerSerializer,
        responses={
            200: OpenApiResponse(description="outcome, recalled, next_due, feedback_html, answer_html"),
            400: ErrorSerializer,
            404: ErrorSerializer,
            409: ErrorSerializer,
        },  # fmt: skip
    )
    def post(self, request: Request) -> Response:
        serializer = ReviewAnswerSerializer(data=request.data)
        if not serializer.is_valid():
            return first_errors(serializer)
        data = serializer.validated_data
        lookup = learner_filter(django_request(request))
        lessons = visible_lessons(request.user)
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
        except quiz_module.AlreadyReviewed as error:
            return Response({"detail": str(error), "errors": {"id": [str(error)]}}, status=409)
        except quiz_module.QuizError as error:
            field = {"deep_dive": "choice", "open_question": "points"}.get(quiz.kind, "value")
            return Response({"errors": {field: [str(error)]}}, status=400)
        return Response({"graded": True, "outcome": graded.outcome, "recalled": graded.recalled,
                         "next_due": graded.card.due, "feedback_html": graded.feedback_html,
                         "answer_html": graded.answer_html})  # fmt: skip
