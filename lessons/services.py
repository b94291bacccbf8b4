"""Actions that write across several models: answering, drawing numbers, merging progress, resetting."""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, F, OuterRef, Q, Value
from django.http import HttpRequest
from django.utils.crypto import salted_hmac
from django.utils.html import escape

from calculators.registry import CalculatorInputError, get_calculator
from lessons import grading, review, scoring
from lessons.models import (
    Answer,
    Challenge,
    ChallengeDraw,
    ChecklistPoint,
    Choice,
    DeepDive,
    GradedNumber,
    ItemPractice,
    Learner,
    LessonProgress,
    OpenQuestion,
    Outcome,
    Step,
)
from lessons.scoring import choice_points

SESSION_KEY = "learner_id"
FOLLOW_UP_NOT_REACHED = (
    "Answer the question it follows first: this follow-up opens from one of that question's approaches."
)
ANSWER_BEFORE_REVEAL = "Answer first: your own answer comes before the reveal."
FOLLOW_UP_FIRST = (
    "Answer the follow-up your answer opened first: another try, or every approach shown, would give its answer away."
)
WRITE_BEFORE_CHECKLIST = "Write your answer first: the checklist comes after."
STEP_NOT_OPEN = "Answer the steps before this one first: its text and hints start from their answers."
VERDICT_OUTCOME = {"best": Outcome.CORRECT, "acceptable": Outcome.PARTIAL, "weak": Outcome.INCORRECT}


def current_learner(request: HttpRequest, *, create: bool = False) -> Learner | None:
    """Return the request's learner: the account's, else the session's; create one when asked."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        learner = getattr(request, "_learner", None)
        if learner is None:
            try:
                learner = user.learner  # read with the user by interview.accounts.backends (no query)
            except Learner.DoesNotExist:
                if not create:
                    return None
                learner, _ = Learner.objects.get_or_create(user=user)
            request._learner = learner
        return learner
    learner_id = request.session.get(SESSION_KEY)
    if learner_id is not None:
        learner = getattr(request, "_learner", None) or Learner.objects.filter(pk=learner_id, user=None).first()
        if learner is not None:
            request._learner = learner
            return learner
    if not create:
        return None
    if request.session.session_key is None:  # a visitor with no session yet gets one first
        request.session.save()
    # Keyed on the session, so concurrent answers of one session (several tabs) share a learner.
    learner, _ = Learner.objects.get_or_create(session_key=request.session.session_key, user=None)
    request.session[SESSION_KEY] = learner.pk
    request._learner = learner
    return learner


def record(learner: Learner, *, answered_before: bool = False, card=review.UNREAD, hints: int = 0, **fields) -> Answer:
    """Store an answer; the first one per item scores, a concurrent duplicate becomes a retry.

    ``answered_before`` (known from the state already read) skips the doomed first-answer insert.
    ``hints`` taken before the first answer are recorded on it and paid for (lessons.scoring).
    Inside the caller's transaction no savepoint is taken: a failure rolls back the whole answer.
    """
    if hints and not answered_before:
        fields["hints_taken"] = hints
        fields["points"] = scoring.after_hints(fields["points"], fields["max_points"], hints)
    with transaction.atomic(savepoint=False):
        answer = store(learner, answered_before, fields)
        review.schedule(answer, card=card)
    return answer


def store(learner: Learner, answered_before: bool, fields: dict) -> Answer:
    if answered_before:
        return Answer.objects.create(learner=learner, is_first=False, **fields)
    # The unique constraint decides: the insert that wins is the first answer, any other is a retry.
    try:
        with transaction.atomic():
            return Answer.objects.create(learner=learner, is_first=True, **fields)
    except IntegrityError:
        return Answer.objects.create(learner=learner, is_first=False, **fields)


def answer_deep_dive(
    learner: Learner,
    deep_dive: DeepDive,
    choice: Choice,
    answered_before: bool = False,
    card=review.UNREAD,
    hints: int = 0,
    follow_up_open: bool = False,
) -> Answer:
    """Store an answer to a deep dive; a choice leading to a follow-up opens it (``follow_up_open``: it is
    known to be open already, from the learner's state: no write for it)."""
    if choice.follow_up_id and not follow_up_open:
        reach(learner, choice.follow_up_id)
    return record(
        learner,
        answered_before=answered_before,
        card=card,
        hints=hints,
        deep_dive=deep_dive,
        choice=choice,
        outcome=VERDICT_OUTCOME[choice.verdict],
        points=choice_points(choice.verdict, deep_dive.points),
        max_points=deep_dive.points,
        message=choice.get_verdict_display(),
    )


def reach(learner: Learner, deep_dive_id: int) -> None:
    """Record that ``learner`` reached the follow-up ``deep_dive_id``: an answer picked a choice leading to it.

    The reach rule: a reached follow-up may be answered and counts toward the score from then on
    (``scoring.counts_toward_score``); it stays reached, whatever the learner picks later. Pages read it
    from the practice rows they load anyway (``ItemPractice.reached``).
    """
    row = practice_row(learner, {"deep_dive_id": deep_dive_id})
    if not row.reached:
        ItemPractice.objects.filter(pk=row.pk).update(reached=True)


def reach_through(choice_ids: Iterable[int]) -> None:
    """Mark reached, for every learner whose answer picked one of ``choice_ids``, the follow-up it leads to now.

    Called when an author points a choice at a follow-up (the admin, ``load_content``): learners who
    picked that choice reach the new follow-up, as they would have by answering after the change.
    """
    choice_ids = list(choice_ids)
    picked = Answer.objects.filter(choice__in=choice_ids, choice__follow_up__isnull=False).order_by()
    pairs = set(picked.values_list("learner_id", "choice__follow_up_id").distinct())
    if not pairs:
        return
    leads_here = picked.filter(learner=OuterRef("learner"), choice__follow_up=OuterRef("deep_dive"))
    ItemPractice.objects.filter(Exists(leads_here), reached=False).update(reached=True)
    have = set(
        ItemPractice.objects.filter(learner__in={learner for learner, _ in pairs}, deep_dive__in={d for _, d in pairs})
        .order_by()
        .values_list("learner_id", "deep_dive_id")
    )
    missing = [ItemPractice(learner_id=learner, deep_dive_id=dd, reached=True) for learner, dd in pairs - have]
    ItemPractice.objects.bulk_create(missing, batch_size=500, ignore_conflicts=True)


def reach_through_saved_choice(sender, instance: Choice, raw: bool = False, **kwargs) -> None:
    """A choice saved pointing at a follow-up (the admin): ``reach_through`` it (LessonsConfig.ready connects it)."""
    if instance.follow_up_id and not raw:
        reach_through([instance.pk])


def follow_up_reached(learner: Learner | None, deep_dive: DeepDive) -> bool:
    """Return whether ``learner`` may answer ``deep_dive``: it is no follow-up, or they reached or answered it.

    One query; a page reads the same from the learner's state (ItemState.reached, its answers).
    """
    if learner is None:
        opened = Value(False)
    else:
        opened = Exists(ItemPractice.objects.filter(learner=learner, deep_dive=deep_dive, reached=True)) | Exists(
            Answer.objects.filter(learner=learner, deep_dive=deep_dive)
        )
    leading = Choice.objects.filter(follow_up=deep_dive).annotate(opened=opened).values_list("opened", flat=True)
    return not (found := list(leading[:1])) or found[0]


@dataclass(frozen=True)
class Expected:
    value: float
    inputs: dict
    steps: list
    slips: tuple[grading.Slip, ...]


def expected_for(item: GradedNumber, inputs: dict | None = None) -> Expected:
    """Compute the expected answer (and the derivation) with the calculator the item names."""
    calculator = get_calculator(item.calculator)
    used = dict(item.inputs, **(inputs or {}))
    result = calculator.evaluate(used)
    value = float(result.outputs[item.output]) * item.scale
    slips = []
    for slip in item.slips:
        feedback = slip.get("feedback", "") if isinstance(slip, dict) else ""
        if not feedback:
            continue  # validation refuses such slips; older rows are skipped rather than failing
        if isinstance(slip.get("factor"), (int, float)):
            slips.append(grading.Slip(value * slip["factor"], feedback))
        elif isinstance(slip.get("inputs"), dict):
            try:
                other = calculator.evaluate({**used, **slip["inputs"]}).outputs[item.output]
            except CalculatorInputError:
                continue
            slips.append(grading.Slip(float(other) * item.scale, feedback))
    return Expected(
        value, result.inputs, steps_to_answer(result.steps, result.outputs[item.output], value), tuple(slips)
    )


def step_setup_html(step: Step, earlier: list[tuple[str, int | None]]) -> str:
    """Return what a walkthrough step asked on its own needs: the walkthrough's intro (the example's
    numbers), the earlier steps' titles (never their answers), then the step's own body (HTML).

    The review page and mock interviews ask a step away from its walkthrough, where the intro and
    the steps before it are not on screen. The titles are numbered and the step says its number, so
    a body that names an earlier step ("the requests in flight at peak (step 2)") finds it in the list.
    ``earlier``: each earlier step's title, with the number of the interview question asking it too
    (None when it is not asked), so an interview never says a step it asked was not asked.
    """
    parts = [step.walkthrough.intro_html]
    if earlier:
        titles = "".join(
            f"<li>{escape(title)}{f' (question {asked} of this interview)' if asked else ''}</li>"
            for title, asked in earlier
        )
        parts.append(
            f"<p>This is step {len(earlier) + 1} of an example. Its earlier steps ask these questions; where this"
            f" step needs one of their answers and does not give it, work it out yourself.</p><ol>{titles}</ol>"
        )
    parts.append(step.body_html)
    return "".join(part for part in parts if part)


def steps_to_answer(steps: list, raw: float, expected: float) -> list:
    """Return the derivation up to the first step that reaches the asked number (the rest answers other questions).

    The step showing the number as asked (scaled, e.g. bytes in KiB) wins; failing that, the first
    step showing the calculator's output. Later steps with an equal value (the same figure per GPU)
    belong to other outputs.
    """

    def first(target: float) -> int | None:
        for index, step in enumerate(steps):
            number = isinstance(step.value, (int, float)) and not isinstance(step.value, bool)
            if number and math.isclose(step.value, target, rel_tol=1e-9):
                return index
        return None

    last = first(expected)
    if last is None:
        last = first(raw)
    return steps if last is None else steps[: last + 1]


def grade_number(item: GradedNumber, given: float, inputs: dict | None = None) -> tuple[Expected, grading.Grade]:
    expected = expected_for(item, inputs)
    grade = grading.grade(
        expected.value,
        given,
        tolerance=item.tolerance,
        kind=item.tolerance_kind,
        partial_band=item.partial_band,
        slips=expected.slips,
    )
    return expected, grade


def answer_number(
    learner: Learner,
    item: Step | Challenge,
    given: float,
    drawn: dict | None = None,
    answered_before: bool = False,
    card=review.UNREAD,
    hints: int = 0,
) -> Answer:
    seed = drawn.get("seed") if drawn else None
    inputs = drawn.get("inputs") if drawn else None
    expected, grade = grade_number(item, given, inputs)
    field = "step" if isinstance(item, Step) else "challenge"
    return record(
        learner,
        answered_before=answered_before,
        card=card,
        hints=hints,
        **{field: item},
        value=given,
        expected=expected.value,
        drawn_inputs=inputs or {},
        seed=seed,
        outcome=grade.outcome,
        points=math.floor(item.points * grade.fraction + 0.5),  # half of 1 point rounds to 1
        max_points=item.points,
        message=grade.message,
    )


def answer_open_question(
    learner: Learner,
    question: OpenQuestion,
    checklist: list[ChecklistPoint],
    ticked: list[ChecklistPoint],
    text: str,
    answered_before: bool = False,
    card=review.UNREAD,
) -> Answer:
    """Score a written answer by the checklist points the learner ticked; the written draft is used up."""
    graded = scoring.checklist_grade(len(ticked), len(checklist))
    answer = record(
        learner,
        answered_before=answered_before,
        card=card,
        open_question=question,
        text=text,
        ticked=sorted(point.pk for point in ticked),
        outcome=graded.outcome,
        points=graded.points(question.points),
        max_points=question.points,
        message=graded.message,
    )
    ItemPractice.objects.filter(learner=learner, open_question=question).update(draft="")
    return answer


def hints_to_pay(learner: Learner | None, item_fields: dict) -> int:
    """Return the hints the learner took on an item they have not answered yet (what its first answer pays)."""
    if learner is None:
        return 0
    answered = Answer.objects.filter(learner=learner, is_first=True, **item_fields).exists()
    row = None if answered else ItemPractice.objects.filter(learner=learner, **item_fields).only("hints_taken").first()
    return scoring.hints_owed(answered, row.hints_taken if row else 0)


def reveal_earned(learner: Learner, answer: Answer) -> bool:
    """Return whether ``answer`` (just stored) earns the reveal: right, a second try, or asked for."""
    fields = answer.item_fields
    tries = Answer.objects.filter(learner=learner, **fields).count()
    asked = ItemPractice.objects.filter(learner=learner, revealed=True, **fields).exists()
    return scoring.reveal_earned(answer.outcome, tries, asked)


def practice_row(learner: Learner, item_fields: dict) -> ItemPractice:
    """Return the learner's practice row for the item (``item_fields`` e.g. {"step_id": 3}), made if missing."""
    row = ItemPractice.objects.filter(learner=learner, **item_fields).first()
    if row is None:
        try:
            with transaction.atomic():
                row = ItemPractice.objects.create(learner=learner, **item_fields)
        except IntegrityError:  # a concurrent request made it
            row = ItemPractice.objects.get(learner=learner, **item_fields)
    return row


def take_hint(learner: Learner, item_fields: dict, available: int) -> None:
    """Show the learner one more of the item's ``available`` hints (never more than there are)."""
    row = practice_row(learner, item_fields)
    ItemPractice.objects.filter(pk=row.pk, hints_taken__lt=min(available, scoring.MAX_HINTS)).update(
        hints_taken=F("hints_taken") + 1
    )


def reveal(learner: Learner, item_fields: dict) -> None:
    """Record that the learner asked to see every approach (or the worked arithmetic) of the item."""
    row = practice_row(learner, item_fields)
    if not row.revealed:
        ItemPractice.objects.filter(pk=row.pk).update(revealed=True)


def save_draft(learner: Learner, question: OpenQuestion, text: str) -> None:
    """Keep an open question's written answer until the learner ticks its checklist."""
    row = practice_row(learner, {"open_question_id": question.pk})
    ItemPractice.objects.filter(pk=row.pk).update(draft=text)


def draw_inputs(challenge: Challenge, seed: int) -> dict:
    """Return the inputs ``seed`` draws from the challenge's ranges (the same seed, the same numbers)."""
    rng = random.Random(seed)
    drawn = {}
    for name, (low, high, step) in sorted(challenge.ranges.items()):
        count = int(math.floor((high - low) / step + 1e-9)) + 1
        value = low + step * rng.randrange(count)
        drawn[name] = round(value, 10) if isinstance(value, float) else value
    return drawn


def ensure_session(request: HttpRequest) -> None:
    """Give the visitor a session now, so numbers drawn for them stay the same on every visit."""
    if getattr(request, "user", None) is not None and request.user.is_authenticated:
        return
    if request.session.session_key is None or not request.session.exists(request.session.session_key):
        request.session["numbers_drawn"] = True
        request.session.save()


def learner_identity(request: HttpRequest) -> str | None:
    """Return what a learner's numbers are derived from: their account, else their session."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    key = request.session.session_key
    return f"session:{key}" if key else None


def seed_for(identity: str | None, item: Challenge | DeepDive, purpose: str = "challenge-seed") -> int:
    """Return the learner's seed for an item: the same on every visit, different per learner.

    Derived with the site's secret, so it cannot be chosen by the learner; ``purpose`` keeps the
    seeds of different uses (a challenge's numbers, a deep dive's order) apart.
    """
    if identity is None:
        raise ValueError("numbers are drawn for a learner: call ensure_session() first")
    digest = salted_hmac(purpose, f"{identity}:{item.pk}").hexdigest()
    return int(digest[:8], 16) % 2**31


def choice_order(identity: str | None, deep_dive: DeepDive, choices: list[Choice]) -> list[Choice]:
    """Return ``choices`` in the order this learner sees them: shuffled by their own seed.

    The authored order stays when the deep dive pins it, and for a visitor with no session yet
    (so a page view never creates one: their order is drawn once an answer gives them a session).
    """
    if deep_dive.keep_choice_order or identity is None:
        return list(choices)
    shuffled = sorted(choices, key=lambda c: c.order)  # the same input order on every read
    random.Random(seed_for(identity, deep_dive, "choice-order")).shuffle(shuffled)
    return shuffled


def challenge_draw(identity: str | None, challenge: Challenge, draws: dict | None = None) -> dict:
    """Return {"seed", "inputs"}: the stored draw if the learner answered, else the numbers derived for them."""
    if not challenge.ranges:
        return {"seed": None, "inputs": {}}
    stored = (draws or {}).get(challenge.pk)
    if stored is not None:
        return {"seed": stored.seed, "inputs": stored.inputs}
    seed = seed_for(identity, challenge)
    return {"seed": seed, "inputs": draw_inputs(challenge, seed)}


def store_draw(learner: Learner, challenge: Challenge, identity: str | None) -> dict:
    """Keep the numbers the learner was shown, at their first answer; retries are graded on the same."""
    if not challenge.ranges:
        return {"seed": None, "inputs": {}}
    draw = ChallengeDraw.objects.filter(learner=learner, challenge=challenge).first()
    if draw is not None and not challenge.drawn_fit(draw.inputs):  # drawn for the challenge as it was: draw anew
        draw.seed = seed_for(identity, challenge)
        draw.inputs = draw_inputs(challenge, draw.seed)
        draw.save(update_fields=["seed", "inputs"])
    if draw is None:
        seed = seed_for(identity, challenge)
        try:
            with transaction.atomic():
                draw = ChallengeDraw.objects.create(
                    learner=learner, challenge=challenge, seed=seed, inputs=draw_inputs(challenge, seed)
                )
        except IntegrityError:
            draw = ChallengeDraw.objects.get(learner=learner, challenge=challenge)
    return {"seed": draw.seed, "inputs": draw.inputs}


def remember_position(learner: Learner, lesson_id: int, anchor: str, url: str) -> None:
    """Record where the learner is (one UPDATE in the usual case)."""
    from django.utils import timezone

    updated = LessonProgress.objects.filter(learner=learner, lesson_id=lesson_id).update(
        anchor=anchor, url=url, updated_at=timezone.now()
    )
    if not updated:
        try:
            with transaction.atomic():
                LessonProgress.objects.create(learner=learner, lesson_id=lesson_id, anchor=anchor, url=url)
        except IntegrityError:
            LessonProgress.objects.filter(learner=learner, lesson_id=lesson_id).update(anchor=anchor, url=url)


@transaction.atomic
def merge_learners(source: Learner, target: Learner) -> None:
    """Move ``source``'s progress (answers, cards, draws, positions, interviews) into ``target``.

    Where both answered an item, target's first answer stays; where both practised one, the row
    keeps the most hints taken, a reveal asked by either, a follow-up reached by either, and the
    account's draft, else the visitor's.
    """
    if source.pk == target.pk:
        return
    for field in Answer.ITEM_KINDS:
        taken = Answer.objects.filter(learner=target, is_first=True, **{f"{field}__isnull": False}).values(field)
        Answer.objects.filter(learner=source, is_first=True, **{f"{field}__in": taken}).update(is_first=False)
    Answer.objects.filter(learner=source).update(learner=target)
    source.interviews.update(learner=target)  # every mock interview is kept, finished or not
    review.merge_cards(source.pk, target.pk)
    for field in ItemPractice.ITEM_KINDS:  # where both worked on an item, the account's row keeps both's work
        kept = {row.item_key: row for row in ItemPractice.objects.filter(learner=target, **{f"{field}__isnull": False})}
        for row in ItemPractice.objects.filter(learner=source, **{f"{field}_id__in": [pk for _, pk in kept]}):
            into = kept[row.item_key]
            into.hints_taken = max(into.hints_taken, row.hints_taken)  # hints seen stay paid for
            into.revealed = into.revealed or row.revealed
            into.reached = into.reached or row.reached  # a follow-up either opened stays open
            into.draft = into.draft or row.draft  # the account's draft, else the visitor's
            into.save(update_fields=["hints_taken", "revealed", "reached", "draft", "updated_at"])
            row.delete()
    ItemPractice.objects.filter(learner=source).update(learner=target)
    taken_draws = ChallengeDraw.objects.filter(learner=target).values("challenge")
    ChallengeDraw.objects.filter(learner=source, challenge__in=taken_draws).delete()
    ChallengeDraw.objects.filter(learner=source).update(learner=target)
    for position in LessonProgress.objects.filter(learner=source):
        existing = LessonProgress.objects.filter(learner=target, lesson_id=position.lesson_id).first()
        if existing is None:
            LessonProgress.objects.filter(pk=position.pk).update(learner=target)
        elif existing.updated_at < position.updated_at:
            LessonProgress.objects.filter(pk=existing.pk).update(anchor=position.anchor, url=position.url)
    source.delete()


def adopt_session_progress(request: HttpRequest, learner_id: int | None) -> None:
    """After log-in or sign-up, merge the anonymous session's progress into the account."""
    if learner_id is None:
        return
    source = Learner.objects.filter(pk=learner_id, user=None).first()
    target, _ = Learner.objects.get_or_create(user=request.user)
    if source is not None:
        merge_learners(source, target)
    request.session.pop(SESSION_KEY, None)


def answer_counts(learner: Learner | None) -> tuple[int, int]:
    """Return (answers, questions): ``learner``'s answers, retries included, and the questions they answer
    (one first answer each), in one query."""
    if learner is None:
        return 0, 0
    counts = learner.answers.aggregate(answers=Count("pk"), questions=Count("pk", filter=Q(is_first=True)))
    return counts["answers"], counts["questions"]


def reset_progress(learner: Learner | None) -> tuple[int, int]:
    """Delete every answer, practice row (hints, reveals, drafts, follow-ups reached), draw, position and review
    card of ``learner``; return (answers, questions) removed (answer_counts). Mock interviews are kept."""
    if learner is None:  # a visitor who never answered: nothing to delete
        return 0, 0
    with transaction.atomic():
        counts = answer_counts(learner)
        learner.answers.all().delete()
        learner.practice.all().delete()
        learner.draws.all().delete()
        learner.positions.all().delete()
        learner.review_cards.all().delete()
    return counts
