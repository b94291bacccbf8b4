"""Mock interviews: drawing the items, answering against the server's clock, and the scorecard.

An interview is drawn once, at its start, and stored (``InterviewItem`` rows), so it can be
resumed and audited. Answers are graded when given and kept silent until the end; the
scorecard is computed from the stored items by :func:`scorecard`, the one place that knows
the rubric.
"""

from __future__ import annotations

import math
import random
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone
from django.utils.html import escape

from lessons import scoring, services
from lessons.content_cache import visible_lessons
from lessons.markup import fill_prompt, plain_text, render_inline, render_markdown, truncate_words
from lessons.models import (
    Challenge,
    ChecklistPoint,
    Choice,
    DeepDive,
    Interview,
    InterviewItem,
    Lesson,
    OpenQuestion,
    Step,
    Walkthrough,
)
from lessons.number_entry import EntryError, read_number

PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n")  # between Markdown paragraphs
BLOCK_TAG = re.compile(r"<(?:p|ul|ol|table|div|pre|blockquote|h\d)\b")

# (key, label, minutes, how many items): a 45-minute loop.
PHASES = (
    ("requirements", "Frame the problem", 5, 2),
    ("estimate", "Estimate", 8, 3),
    ("design", "High-level design", 10, 2),
    ("deep_dives", "Deep dives", 17, 6),
    ("wrap_up", "Wrap-up", 5, 1),
)
PHASE_ITEMS = {key: count for key, _label, _minutes, count in PHASES}  # at most; deep dives at least:
MIN_DEEP_DIVES = 4
DIMENSIONS = (
    ("requirements", "Requirements"),
    ("estimation", "Estimation"),
    ("design", "Design"),
    ("trade_offs", "Trade-offs"),
    ("communication", "Communication"),
    ("time_management", "Time management"),
)
PHASE_DIMENSION = {
    "requirements": "requirements",
    "estimate": "estimation",
    "design": "design",
    "deep_dives": "trade_offs",
    "wrap_up": "communication",
}
DIMENSION_MEASURES = {
    "requirements": "the opening questions, where the interviewer frames the problem",
    "estimation": "how close your numbers were, and whether their units were right",
    "design": "picking the component the design needs next",
    "trade_offs": "the approaches you chose in the deep dives",
    "communication": "the points of the open question's checklist your answer covered",
    "time_management": "the phases you completed (every question answered in time) within their budgets, "
    "without rushing them",
}
SCENARIO_KINDS = (Lesson.Kind.CASE_STUDY, Lesson.Kind.SIMULATION)
SURPRISE = "surprise"
STRONG, READY = 0.8, 0.6
RUSHED = 0.25  # a phase done in under this share of its budget, its answers below READY (PhaseTime.rushed)
BANDS = {
    "strong": "Strong: you would likely pass this part of the loop.",
    "ready": "Ready: solid, with a few gaps an interviewer would probe.",
    "not_yet": "Not yet: practise this before the real interview.",
}
MAX_DESIGN_OPTIONS = 4
# A design moment offers the next step and later ones of its build-up: at least three, or it is a coin toss (the last
# moment of a build-up, and the only one of a three-step build-up, offered two).
MIN_DESIGN_OPTIONS = 3


class InterviewError(Exception):
    """A request the interview cannot take; ``status`` is the HTTP status to answer with."""

    def __init__(self, message: str, field: str = "detail", status: int = 400) -> None:
        super().__init__(message)
        self.message, self.field, self.status = message, field, status


def budget_scale() -> float:
    """Return the factor applied to every phase budget (tests shrink it; 1 is the real loop)."""
    return float(settings.INTERVIEW_BUDGET_SCALE)


# --- Drawing an interview ---------------------------------------------------------------------


@dataclass
class Pool:
    """Published content an interview is drawn from, read in a fixed number of queries.

    Every list has a total order (the primary key breaks ties; a deep dive's follow-ups come in
    its choices' order), so one seed draws the same interview on every database."""

    deep_dives: list[DeepDive]
    follow_ups: dict[int, list[int]]  # deep dive id -> the follow-ups its choices lead to
    numbers: list[Step | Challenge]
    build_ups: dict[int, list[Step]]  # walkthrough id -> its steps in order
    open_questions: list[OpenQuestion]

    @classmethod
    def read(cls, lessons: list[Lesson]) -> Pool:
        ids = [lesson.pk for lesson in lessons]
        deep_dives = list(
            DeepDive.objects.filter(section__lesson__in=ids)
            .select_related("section")
            .order_by("section__lesson_id", "section__layer", "section__order", "order", "pk")
        )
        follow_ups: dict[int, list[int]] = defaultdict(list)
        links = Choice.objects.filter(deep_dive__section__lesson__in=ids, follow_up__isnull=False).order_by("order")
        for parent, child in links.values_list("deep_dive_id", "follow_up_id"):
            if child not in follow_ups[parent]:
                follow_ups[parent].append(child)
        steps = list(
            Step.objects.filter(walkthrough__section__lesson__in=ids)
            .filter(Q(walkthrough__kind=Walkthrough.Kind.BUILD_UP) | ~Q(calculator=""))
            .select_related("walkthrough__section")
            .order_by(
                "walkthrough__section__lesson_id", "walkthrough__section__order", "walkthrough__order", "order", "pk"
            )
        )
        challenges = list(
            Challenge.objects.filter(section__lesson__in=ids)
            .select_related("section")
            .order_by("section__lesson_id", "section__order", "order", "pk")
        )
        build_ups: dict[int, list[Step]] = defaultdict(list)
        for step in steps:
            if step.walkthrough.kind == Walkthrough.Kind.BUILD_UP:
                build_ups[step.walkthrough_id].append(step)
        # Only a build-up with a moment to ask (a step, then MIN_DESIGN_OPTIONS later ones) is design material.
        build_ups = {pk: rows for pk, rows in build_ups.items() if len(rows) > MIN_DESIGN_OPTIONS}
        numbers = [s for s in steps if s.calculator] + challenges
        open_questions = list(
            OpenQuestion.objects.filter(section__lesson__in=ids, checklist__isnull=False)
            .distinct()
            .select_related("section")
            .order_by("section__lesson_id", "section__order", "order", "pk")
        )
        return cls(deep_dives, follow_ups, numbers, build_ups, open_questions)


def lesson_of(item) -> int:
    if isinstance(item, Step):
        return item.walkthrough.section.lesson_id
    return item.section.lesson_id


def topic_of(item) -> str:
    return item.walkthrough.topic_id if isinstance(item, Step) else item.topic_id


def content_position(item: Step | Challenge) -> tuple[int, int, int, int]:
    """Return where a number sits in its lesson, so drawn numbers are asked in the lessons' order.

    An interview asks one step of an example at most (a later step's setup quotes the earlier step's answer:
    ``draw``); one drawn before that rule asked the quoted step first, in this order.
    """
    if isinstance(item, Step):
        section = item.walkthrough.section
        return (section.lesson_id, section.order, item.walkthrough.order, item.order)
    return (item.section.lesson_id, item.section.order, item.order, 0)


def weighted_sample(rows: list, count: int, rng: random.Random, weight) -> list:
    """Return up to ``count`` rows drawn without replacement, each in proportion to ``weight(row)``."""
    keyed = sorted(rows, key=lambda row: rng.random() ** (1 / weight(row)), reverse=True)
    return keyed[:count]


def prefer_scenario(rows: list, count: int, rng: random.Random, weight, scenario_id: int) -> list:
    """Draw from the scenario's own rows first, then from the other lessons', weighted toward weak topics."""
    own = [row for row in rows if row[0] == scenario_id]
    others = [row for row in rows if row[0] != scenario_id]
    chosen = weighted_sample(own, count, rng, weight)
    return chosen + weighted_sample(others, count - len(chosen), rng, weight)


def one_each(rows: list, count: int, key) -> list:
    """Return the first ``count`` of ``rows`` (in the order drawn) with no two sharing ``key(row)`` (None: no key)."""
    chosen, seen = [], set()
    for row in rows:
        group = key(row)
        if len(chosen) < count and (group is None or group not in seen):
            chosen.append(row)
            seen.add(group)
    return chosen


def weakness(mastery: dict[str, float], topic: str) -> float:
    """Return how much a topic weighs in a draw: 0.5 when mastered, 1.5 when never answered or all missed."""
    return 1.5 - mastery.get(topic, 0.0)


REQUIREMENT_WORDS = re.compile(r"\b(requirements?|slos?|slas?|scope|scoping|brief|clarify)\b", re.IGNORECASE)
ABOUT_REQUIREMENTS, FIRST_LAYER, OPENING = 0, 1, 2


def framing_rank(dd: DeepDive) -> int:
    """Return how well a deep dive frames the problem, for the requirements phase (lower is better).

    0: its section's key or title, or its own key, names requirements, SLOs, scope or the brief;
    1: its section is in layer 1 (the basics the rest builds on); 2: any other (a lesson with
    neither gives its opening deep dive). Content has no phase field: this is read from its names.
    """
    names = f"{dd.section.key} {dd.section.title} {dd.key}".replace("-", " ").replace("_", " ")
    if REQUIREMENT_WORDS.search(names):
        return ABOUT_REQUIREMENTS
    return FIRST_LAYER if dd.section.layer == 1 else OPENING


def draw(pool: Pool, scenario: Lesson, mastery: dict[str, float], rng: random.Random) -> list[dict]:
    """Return the interview's items as InterviewItem fields, phase by phase (see PHASES)."""

    def weight(row) -> float:
        return weakness(mastery, row[1])

    items: list[dict] = []
    follow_up_ids = {child for children in pool.follow_ups.values() for child in children}
    by_id = {dd.pk: dd for dd in pool.deep_dives}
    top_level = [dd for dd in pool.deep_dives if dd.pk not in follow_up_ids]

    # Requirements: each lesson's question that best frames the problem (see framing_rank); questions
    # about requirements or the basics before each lesson's opening one, the scenario's first: its own
    # best question opens the interview whatever its rank (its opening one when it has nothing better).
    openings: dict[int, tuple[int, DeepDive]] = {}
    for dd in top_level:  # in lesson order, so the first of each rank wins
        rank, lesson = framing_rank(dd), dd.section.lesson_id
        if lesson not in openings or rank < openings[lesson][0]:
            openings[lesson] = (rank, dd)
    framing, fallback = [], []
    for lesson, (rank, dd) in openings.items():
        (framing if rank < OPENING or lesson == scenario.pk else fallback).append((lesson, dd.topic_id, dd))
    count = PHASE_ITEMS["requirements"]
    chosen = prefer_scenario(framing, count, rng, weight, scenario.pk)
    chosen += prefer_scenario(fallback, count - len(chosen), rng, weight, scenario.pk)
    used = set()
    for _lesson, _topic, dd in chosen:
        items.append({"phase": "requirements", "kind": "deep_dive", "deep_dive": dd})
        used.add(dd.pk)

    # Deep dives: first the follow-ups of the questions asked in requirements (the interviewer comes back
    # to them, as their feedback may promise), then the scenario's moments, each with its follow-ups.
    # At most MIN_DEEP_DIVES - 1 of them, each once, so at least one moment of the scenario's own follows.
    picked: list[DeepDive] = []
    for _lesson, _topic, dd in chosen:
        for child in pool.follow_ups.get(dd.pk, []):
            if child in by_id and child not in used and len(picked) < MIN_DEEP_DIVES - 1:
                picked.append(by_id[child])
                used.add(child)
    groups = [(dd.section.lesson_id, dd.topic_id, dd) for dd in top_level if dd.pk not in used]
    for _lesson, _topic, dd in prefer_scenario(groups, len(groups), rng, weight, scenario.pk):
        group = [dd] + [by_id[c] for c in pool.follow_ups.get(dd.pk, []) if c in by_id and c not in used]
        if len(picked) >= MIN_DEEP_DIVES:
            break
        if len(picked) + len(group) <= PHASE_ITEMS["deep_dives"]:
            picked += group
            used.update(d.pk for d in group)

    # Estimate: the scenario's numbers first, and at least one challenge with freshly drawn inputs.
    # At most one step of an example: a later step's setup states the earlier step's answer ("Each replica holds
    # 123 requests (step 1)"), which would tell the learner whether that answer was right before the scorecard.
    number_rows = [(lesson_of(n), topic_of(n), n) for n in pool.numbers]
    drawn = prefer_scenario(number_rows, len(number_rows), rng, weight, scenario.pk)
    numbers = one_each(drawn, PHASE_ITEMS["estimate"], lambda row: getattr(row[2], "walkthrough_id", None))
    fresh = [row for row in number_rows if isinstance(row[2], Challenge) and row[2].ranges]
    if fresh and not any(row in fresh for row in numbers):
        numbers = numbers[: PHASE_ITEMS["estimate"] - 1] + weighted_sample(fresh, 1, rng, weight)
    for _lesson, _topic, item in sorted(numbers, key=lambda row: content_position(row[2])):
        if isinstance(item, Challenge):
            inputs = services.draw_inputs(item, rng.randrange(2**31)) if item.ranges else {}
            items.append({"phase": "estimate", "kind": "number", "challenge": item, "drawn_inputs": inputs})
        else:
            items.append({"phase": "estimate", "kind": "number", "step": item})

    # Design: the design has reached one step of a build-up; which of the later steps comes next?
    moments = []
    for steps in pool.build_ups.values():
        for index in range(len(steps) - MIN_DESIGN_OPTIONS):  # enough later steps to choose among
            lesson = steps[index].walkthrough.section.lesson_id
            moments.append((lesson, steps[index].walkthrough.topic_id, (steps, index)))
    # One moment per build-up: a later moment's design lists the parts so far, the earlier moment's answer among them.
    drawn = prefer_scenario(moments, len(moments), rng, weight, scenario.pk)
    chosen = one_each(drawn, PHASE_ITEMS["design"], lambda row: row[2][0][0].walkthrough_id)
    for _lesson, _topic, (steps, index) in sorted(chosen, key=lambda row: (row[2][0][0].pk, row[2][1])):
        later = steps[index + 1 :]
        offered = [later[0], *rng.sample(later[1:], min(len(later) - 1, MAX_DESIGN_OPTIONS - 1))]
        rng.shuffle(offered)
        items.append({"phase": "design", "kind": "design", "step": steps[index], "options": [s.pk for s in offered]})

    for dd in picked:
        items.append({"phase": "deep_dives", "kind": "deep_dive", "deep_dive": dd})

    # Wrap-up: one open question (no phase when the lab has none).
    open_rows = [(q.section.lesson_id, q.topic_id, q) for q in pool.open_questions]
    for _lesson, _topic, question in prefer_scenario(open_rows, PHASE_ITEMS["wrap_up"], rng, weight, scenario.pk):
        items.append({"phase": "wrap_up", "kind": "open", "open_question": question})
    return items


def scenarios(user) -> list[Lesson]:
    """Return the lessons a learner may choose as a scenario: published case studies and simulations."""
    return [lesson for lesson in visible_lessons(user) if lesson.published and lesson.kind in SCENARIO_KINDS]


def topic_mastery(request: HttpRequest, lessons: list[Lesson]) -> dict[str, float]:
    """Return the learner's mastery per topic they have answered (lessons.scoring's TopicScore)."""
    from lessons.results import compute_results

    return {t.topic: t.mastery for t in compute_results(request, lessons, with_misses=False).topics if t.answered}


def choose_scenario(choices: list[Lesson], pool: Pool, mastery: dict[str, float], rng: random.Random) -> Lesson:
    """Draw "surprise me": each lesson weighs the mean weakness of its deep dives' topics."""
    topics: dict[int, list[str]] = defaultdict(list)
    for dd in pool.deep_dives:
        topics[dd.section.lesson_id].append(dd.topic_id)

    def weight(lesson: Lesson) -> float:
        found = topics.get(lesson.pk) or [""]
        return sum(weakness(mastery, t) for t in found) / len(found)

    return weighted_sample(choices, 1, rng, weight)[0]


def fresh_seed() -> int:
    """Return a new seed for an interview's draw (tests replace it to make draws repeatable)."""
    return random.SystemRandom().randrange(2**31)


def start(request: HttpRequest, scenario: str, now: datetime | None = None, seed: int | None = None) -> Interview:
    """Draw and store a new interview for the request's learner; raise InterviewError for a bad scenario.

    ``seed`` (tests) fixes the draw; otherwise it is fresh for every interview.
    """
    if not isinstance(scenario, str) or not scenario:
        raise InterviewError('Choose a scenario: a case study or simulation\'s slug, or "surprise".', "scenario")
    published = list(Lesson.objects.filter(published=True).select_related("track"))
    choices = [lesson for lesson in published if lesson.kind in SCENARIO_KINDS]
    if seed is None:
        seed = fresh_seed()
    rng = random.Random(seed)
    mastery = topic_mastery(request, published)
    pool = Pool.read(published)
    if scenario == SURPRISE:
        if not choices:
            raise InterviewError("There is no published case study or simulation to draw from yet.", "scenario")
        lesson = choose_scenario(choices, pool, mastery, rng)
    else:
        lesson = next((row for row in choices if row.slug == scenario), None)
        if lesson is None:
            raise InterviewError(
                'No published case study or simulation has that slug; choose one from the list, or "surprise".',
                "scenario",
            )
    drawn = draw(pool, lesson, mastery, rng)
    now = now or timezone.now()
    counts = defaultdict(int)
    for item in drawn:
        counts[item["phase"]] += 1
    phases = [
        {"key": key, "label": label, "seconds": round(minutes * 60 * budget_scale(), 3), "items": counts[key]}
        for key, label, minutes, _count in PHASES
        if counts[key]
    ]
    total = sum(phase["seconds"] for phase in phases)
    learner = services.current_learner(request, create=True)
    with transaction.atomic():
        interview = Interview.objects.create(
            learner=learner,
            lesson=lesson,
            surprise=scenario == SURPRISE,
            seed=seed,
            phases=phases,
            started_at=now,
            deadline=now + timedelta(seconds=total),
        )
        InterviewItem.objects.bulk_create(
            InterviewItem(interview=interview, position=n, **fields) for n, fields in enumerate(drawn, start=1)
        )
    return interview


# --- Reading an interview ------------------------------------------------------------------


@dataclass
class ItemView:
    """One drawn item with what it shows: the prompt, the choices or the unit (never a verdict)."""

    item: InterviewItem
    heading_html: str  # the question itself, inline HTML
    body_html: str  # what the interviewer adds (context, figures), block HTML
    premise_html: str = ""  # a follow-up's: the approach it builds on, shown before the question (premise_html())
    # (handle, text HTML) in the order shown; a handle is the choice's position (1, 2, ...), so the ids sent
    # to the learner say nothing of the content (a step's or approach's primary key would give the answer away).
    choices: list[tuple[int, str]] = field(default_factory=list)
    choice_ids: list[int] = field(default_factory=list)  # the content's primary key behind each handle
    unit: str = ""
    # Revealed only by the scorecard:
    worked_html: str = ""
    derivation: list = field(default_factory=list)
    expected: float | None = None
    lesson_url: str = ""
    checklist: list[tuple[int, str]] = field(default_factory=list)  # an open question's points, once written
    verdict: str = ""  # a deep dive's chosen approach: best, acceptable or weak
    chosen_feedback_html: str = ""  # why that approach holds up or breaks

    @property
    def outcome(self) -> str:
        """Return "unanswered", "late", or the grade: "correct", "partial" or "incorrect"."""
        item = self.item
        if item.answered_at is None:
            return "unanswered"
        if item.late:
            return "late"
        return "correct" if item.score >= 1 else "partial" if item.score > 0 else "incorrect"

    @property
    def stage(self) -> str:
        """Return an open question's stage: "write" the answer, then "tick" the points it covered."""
        return "tick" if self.item.answer and "text" in self.item.answer else "write"

    @property
    def written(self) -> str:
        """Return an open question's written answer (plain text, escaped by the page)."""
        return (self.item.answer or {}).get("text", "")

    @property
    def chosen_html(self) -> str:
        """Return the chosen approach's text (sanitised HTML) of a deep dive or design question."""
        handle = self.handle_of((self.item.answer or {}).get("choice"))
        return self.choices[handle - 1][1] if handle else ""

    def handle_of(self, pk) -> int | None:
        """Return the handle the learner saw for the choice with primary key ``pk`` (None if not offered)."""
        return self.choice_ids.index(pk) + 1 if pk in self.choice_ids else None

    def shown_answer(self) -> dict | None:
        """Return the stored answer as the learner gave it: a choice by its handle."""
        answer = self.item.answer
        if answer and "choice" in answer:
            return {**answer, "choice": self.handle_of(answer["choice"])}
        return answer


def offer(view: ItemView, offered: list[tuple[int, str]]) -> None:
    """Set ``view``'s choices from (primary key, text HTML) pairs in the order shown, under handles 1, 2, ..."""
    view.choice_ids = [pk for pk, _text in offered]
    view.choices = [(handle, text) for handle, (_pk, text) in enumerate(offered, start=1)]


def load(interview: Interview, reveal: bool = False) -> list[ItemView]:
    """Return every item of ``interview`` with its content, in four queries however many items.

    ``reveal`` adds the worked answers (the scorecard); without it nothing a learner could use to
    tell a right answer from a wrong one is read.
    """
    items = list(
        interview.items.select_related(
            "deep_dive__section__lesson",
            "step__walkthrough__section__lesson",
            "challenge__section__lesson",
            "open_question__section__lesson",
        )
    )
    choices: dict[int, list[Choice]] = defaultdict(list)
    for choice in Choice.objects.filter(deep_dive__in=[i.deep_dive_id for i in items if i.deep_dive_id]):
        choices[choice.deep_dive_id].append(choice)
    checklists: dict[int, list[ChecklistPoint]] = defaultdict(list)
    for point in ChecklistPoint.objects.filter(question__in=[i.open_question_id for i in items if i.open_question_id]):
        checklists[point.question_id].append(point)
    walkthroughs = {i.step.walkthrough_id for i in items if i.step_id}  # a design's build-up, a number's envelope
    build_steps: dict[int, list[Step]] = defaultdict(list)
    for step in Step.objects.filter(walkthrough__in=walkthroughs).order_by("order"):
        build_steps[step.walkthrough_id].append(step)
    views = []
    # A follow-up shows in its lesson only once reached, inside its parent: its lesson link goes to the
    # parent (asked in the same interview, so its choices are loaded above; else to the follow-up itself).
    asked = {item.deep_dive_id: item.deep_dive for item in items if item.deep_dive_id}
    parents = {c.follow_up_id: asked[c.deep_dive_id] for rows in choices.values() for c in rows if c.follow_up_id}
    position = {item.deep_dive_id: item.position for item in items if item.deep_dive_id}
    asked_steps = {
        item.step_id: item.position for item in items if item.kind == InterviewItem.Kind.NUMBER and item.step_id
    }
    picked = {(item.answer or {}).get("choice") for item in items if item.deep_dive_id} - {None}
    leads_to: dict[int, list[Choice]] = defaultdict(list)  # follow-up -> the asked approaches leading to it
    for rows in choices.values():
        for choice in rows:
            if choice.follow_up_id:
                leads_to[choice.follow_up_id].append(choice)
    for item in items:
        if item.kind == InterviewItem.Kind.DEEP_DIVE:
            # Of the parents asked before it (an author may give it several), in the order they were asked.
            leading = sorted(
                (c for c in leads_to[item.deep_dive_id] if position[c.deep_dive_id] < item.position),
                key=lambda c: (position[c.deep_dive_id], c.order),
            )
            view = deep_dive_view(item, choices[item.deep_dive_id], reveal, parents.get(item.deep_dive_id))
            view.premise_html = premise_html(leading, picked)
            views.append(view)
        elif item.kind == InterviewItem.Kind.DESIGN:
            views.append(design_view(item, build_steps[item.step.walkthrough_id], reveal))
        elif item.kind == InterviewItem.Kind.OPEN:
            views.append(open_view(item, checklists[item.open_question_id], reveal))
        else:
            steps = build_steps[item.step.walkthrough_id] if item.step_id else []
            views.append(number_view(item, steps, reveal, asked_steps))
    return views


def premise_html(leading: list[Choice], picked: set[int]) -> str:
    """Return what a follow-up builds on: the parent's approach leading to it, the learner's own or supposed.

    In a lesson a follow-up shows only once a choice leading to it is picked, and its prompt may say so
    ("Fine, the weights fit on two GPUs..."). An interview draws it whatever the answer to its parent,
    and asks it after: when the learner picked another approach, the interviewer supposes this one.
    Follow-ups come from best and weak approaches alike, so the supposition is no verdict.
    """
    if not leading:
        return ""
    own = next((c for c in leading if c.pk in picked), None)
    label = "Following up your answer:" if own else "Suppose you had answered:"
    return f"<p>{label}</p> <blockquote><p>{(own or leading[0]).text_html}</p></blockquote>"


def deep_dive_view(
    item: InterviewItem, offered: list[Choice], reveal: bool, parent: DeepDive | None = None
) -> ItemView:
    dd = item.deep_dive
    order = services.choice_order(f"interview:{item.interview_id}", dd, offered)  # shuffled per interview
    view = ItemView(item, dd.prompt_html, dd.context_html)
    offer(view, [(c.pk, c.text_html) for c in order])
    view.lesson_url = (parent or dd).get_absolute_url()
    if reveal and offered:
        best = next((c for c in offered if c.verdict == "best"), offered[0])
        view.worked_html = f"{best.text_html}{best.feedback_html}"
        picked = next((c for c in offered if c.pk == (item.answer or {}).get("choice")), None)
        if picked is not None:
            view.verdict, view.chosen_feedback_html = picked.verdict, picked.feedback_html
    return view


def design_view(item: InterviewItem, steps: list[Step], reveal: bool) -> ItemView:
    """The design built up to ``item.step``: which of the offered later steps comes next?"""
    parts = [
        c.get("label", "") for s in steps if s.order <= item.step.order for c in s.components if isinstance(c, dict)
    ]
    by_pk = {s.pk: s for s in steps}
    walkthrough = item.step.walkthrough
    # Named by the step it starts from, not the build-up's title, which may say where it ends ("… to a self-healing
    # fleet" told which option comes last: newcomer's finding).
    heading = f"After “{escape(item.step.title)}”: which need does the design take on next?"
    # Framed for a scenario that may be another lesson's: the lesson and how far the design has come.
    # Not the build-up's intro, written for the lesson page ("the interview moments below"), nor the
    # steps' bodies, which may quote an estimate's answer.
    position = next((n for n, s in enumerate(steps, start=1) if s.pk == item.step.pk), len(steps))
    body = (
        f"<p>From the lesson <cite>{escape(walkthrough.section.lesson.title)}</cite>: a design built one need at a "
        f"time, here after its step {position} of {len(steps)}.</p>"
        f"<p>The design so far has:</p><ul>{''.join(f'<li>{escape(part)}</li>' for part in parts)}</ul>"
    )  # a list: a part's own label may hold commas and colons ("Front end: auth, quota, SSE")
    view = ItemView(item, heading, body)
    offer(view, [(pk, escape(by_pk[pk].title)) for pk in item.options if pk in by_pk])  # stored shuffled
    view.lesson_url = item.step.get_absolute_url()
    following = next_step(steps, item.step)
    if reveal and following is not None:
        view.worked_html = f"<p><strong>{escape(following.title)}</strong></p>{following.body_html}"
    return view


def open_view(item: InterviewItem, checklist: list[ChecklistPoint], reveal: bool) -> ItemView:
    question = item.open_question
    view = ItemView(item, question.prompt_html, "")
    view.lesson_url = question.get_absolute_url()
    points = [(p.pk, p.text_html) for p in checklist]
    if reveal or view.stage == "tick":  # shown once the answer is written, never before
        view.checklist = points
    if reveal:
        ticked = set((item.answer or {}).get("ticked", []))
        marks = "".join(f"<li>{text}{' (you ticked it)' if pk in ticked else ''}</li>" for pk, text in points)
        view.worked_html = f"<ul>{marks}</ul>"
    return view


def asked_inputs(item: InterviewItem) -> dict:
    """Return the numbers a number item is asked, shown and graded with: those the interview drew.

    An author who changed the challenge since (another calculator, other ranges) made those numbers of a
    question no longer asked: it is then asked with numbers of the question as it is now, drawn from the
    item's own id (the same on every view and answer, nothing stored), and its scorecard says so.
    """
    if item.challenge_id and not item.challenge.drawn_fit(item.drawn_inputs):
        return services.draw_inputs(item.challenge, item.pk)
    return item.drawn_inputs


def number_view(item: InterviewItem, steps: list[Step], reveal: bool, asked_steps: dict[int, int]) -> ItemView:
    """A number to estimate: a challenge's drawn prompt, or an envelope step with its setup (``steps``: its
    walkthrough's; ``asked_steps``: the question number of each envelope step this interview asks)."""
    number = item.step or item.challenge
    inputs = asked_inputs(item)
    redrawn = inputs is not item.drawn_inputs
    if item.challenge_id:
        heading, body = challenge_question(item.challenge, inputs)
        view = ItemView(item, heading, body, unit=number.unit)
        view.lesson_url = item.challenge.get_absolute_url()
    else:
        earlier = [(s.title, asked_steps.get(s.pk)) for s in steps if s.order < item.step.order]
        view = ItemView(item, step_question(item.step), services.step_setup_html(item.step, earlier), unit=number.unit)
        view.lesson_url = item.step.get_absolute_url()
    if reveal:
        expected = services.expected_for(number, inputs)
        view.expected, view.derivation = expected.value, expected.steps
        # A drawn challenge's explanation speaks of its default numbers; the derivation has this draw's.
        view.worked_html = "" if item.challenge_id and item.challenge.ranges else number.explanation_html
        if redrawn and item.answered_at is not None:
            view.worked_html = (
                "<p>This question was changed after this interview asked it: the numbers and the answer here are"
                " the question's as it is now, not the ones you answered.</p>" + view.worked_html
            )
    return view


def step_question(step: Step) -> str:
    """Return the interviewer's line for an envelope step (escaped): its title when that is a question.

    On the lesson page a title may name what the step works out ("Bytes per token"), under the
    walkthrough's intro; the interview shows that intro below the line, so the line asks for the number.
    """
    title = step.title.strip()
    if title.endswith("?"):
        return escape(title)
    return escape(f"{title}: what is your estimate, in {step.unit}?")


def challenge_question(challenge: Challenge, drawn: dict) -> tuple[str, str]:
    """Return (the interviewer's line, what it adds) of a challenge: its prompt with the drawn numbers.

    The title names a challenge for authors and lesson outlines; the interviewer asks the prompt. A prompt
    in paragraphs ends with its question: the last paragraph is the line, the ones before set it up.
    """
    inputs = challenge.inputs if isinstance(challenge.inputs, dict) else {}
    *setup, question = PARAGRAPH_BREAK.split(fill_prompt(challenge.prompt, {**inputs, **drawn}).strip())
    line = str(render_inline(question))
    if BLOCK_TAG.search(line):  # the last block is no paragraph (a list, a table): keep the prompt whole
        return escape(challenge.title), str(render_markdown("\n\n".join([*setup, question])))
    return line, str(render_markdown("\n\n".join(setup)))


def next_step(steps: list[Step], reached: Step) -> Step | None:
    return next((s for s in steps if s.order > reached.order), None)


def phase_of(interview: Interview, view: ItemView | None) -> dict | None:
    """Return the phase (key, label, seconds, items) ``view``'s item is asked in, None for no item."""
    return next((phase for phase in interview.phases if view and phase["key"] == view.item.phase), None)


def current(views: list[ItemView]) -> ItemView | None:
    """Return the first item not answered yet (None when all are)."""
    return next((v for v in views if v.item.answered_at is None), None)


def for_learner(request: HttpRequest):
    """Return the request's learner's interviews (none for a visitor who has not started)."""
    from lessons.pages import learner_filter

    lookup = learner_filter(request)
    return Interview.objects.filter(**lookup) if lookup is not None else Interview.objects.none()


# --- Answering ------------------------------------------------------------------------------


def grade(view: ItemView, payload: dict) -> tuple[dict, float, str]:
    """Return (stored answer, score 0 to 1, feedback) for ``payload``; raise InterviewError if it does not fit."""
    item = view.item
    if item.kind in (InterviewItem.Kind.DEEP_DIVE, InterviewItem.Kind.DESIGN):
        choice = payload.get("choice")
        if "choice" not in payload:
            raise InterviewError('This question asks you to pick one of its choices (send "choice").', "choice")
        if isinstance(choice, bool) or not isinstance(choice, int) or not 1 <= choice <= len(view.choice_ids):
            raise InterviewError("That is not one of this question's choices.", "choice")
        choice = view.choice_ids[choice - 1]  # the handle shown to the learner, back to the content's key
        if item.kind == InterviewItem.Kind.DEEP_DIVE:
            picked = Choice.objects.get(pk=choice)
            return {"choice": choice}, picked.points / item.deep_dive.points, picked.get_verdict_display()
        steps = list(Step.objects.filter(walkthrough=item.step.walkthrough_id).order_by("order"))
        following = next_step(steps, item.step)
        right = following is not None and following.pk == choice
        feedback = "Right: that is the next thing this design needs." if right else "Not yet: another need comes first."
        return {"choice": choice}, 1.0 if right else 0.0, feedback
    if item.kind == InterviewItem.Kind.OPEN:
        return grade_open(view, payload)
    if "value" not in payload:
        raise InterviewError('This question asks for a number (send "value", e.g. "7,000 MB").', "value")
    raw = payload["value"]
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        raw = repr(raw)
    if not isinstance(raw, str) or len(raw) > 60:
        raise InterviewError("Enter a number, optionally followed by its unit, e.g. 7,000 MB.", "value")
    number = item.step or item.challenge
    try:
        value = read_number(raw, number.unit)  # the one parser: "393 MB" becomes MB, a time for a size is refused
    except EntryError as error:
        raise InterviewError(str(error), "value") from None
    _expected, outcome = services.grade_number(number, value, asked_inputs(item))
    return {"value": raw.strip(), "number": value}, outcome.fraction, outcome.message


MAX_TEXT = 5000


def grade_open(view: ItemView, payload: dict) -> tuple[dict, float | None, str]:
    """Grade an open question in two steps: the written answer (kept, not graded), then the ticks."""
    if view.stage == "write":
        text = payload.get("text")
        if not isinstance(text, str) or not text.strip():
            raise InterviewError('Write your answer first (send "text"); then tick what it covered.', "text")
        if len(text) > MAX_TEXT:
            raise InterviewError(f"Keep the answer within {MAX_TEXT:,} characters.", "text")
        return {"text": text.strip()}, None, ""
    ticked = payload.get("ticked")
    points = {pk for pk, _text in view.checklist}
    if not isinstance(ticked, list) or not all(isinstance(t, int) and not isinstance(t, bool) for t in ticked):
        raise InterviewError('Tick the checklist points your answer covered (send "ticked": a list of ids).', "ticked")
    if not set(ticked) <= points:
        raise InterviewError("Those are not all points of this question's checklist.", "ticked")
    graded = scoring.checklist_grade(len(set(ticked)), len(points))
    return {"text": view.written, "ticked": sorted(set(ticked))}, graded.share, graded.message


FINISHED = "This interview is finished: its scorecard is ready, no more answers."
# An answer to a question answered since (a second tab, a form sent again): the page and the API say it.
ALREADY_ANSWERED = "That question was already answered, so this second answer was not recorded; here is the next one."
ALL_ANSWERED = "Every question is answered: finish the interview to see your scorecard."
# The same, when it was the last question: there is no next one.
ALREADY_ANSWERED_LAST = f"That question was already answered, so this second answer was not recorded. {ALL_ANSWERED}"


def refuse_if_finished(interview: Interview) -> None:
    """Raise a 409 if ``interview`` is finished, in the database (``interview`` may have been read earlier)."""
    if Interview.objects.filter(pk=interview.pk, finished_at__isnull=False).exists():
        raise InterviewError(FINISHED, status=409)


def open_item(interview: Interview, item_id=None, views: list[ItemView] | None = None) -> ItemView:
    """Return the question an answer sent for ``item_id`` goes to: the current one; raise 409 when the interview is
    finished, every question is answered, or ``item_id`` names another question (answered in a second tab, or a
    form sent again). Checked before the answer's fields, which are the current question's (a page's checklist)."""
    if interview.finished_at is not None:
        raise InterviewError(FINISHED, status=409)
    view = current(views if views is not None else load(interview))
    if view is None:  # a form for the last question, sent again, is told its answer was not recorded
        raise InterviewError(ALL_ANSWERED if item_id in (None, "") else ALREADY_ANSWERED_LAST, status=409)
    if item_id not in (None, "") and str(item_id) != str(view.item.pk):
        raise InterviewError(ALREADY_ANSWERED, "item", status=409)
    return view


def answer(
    interview: Interview, payload: dict, item_id=None, now: datetime | None = None, views: list[ItemView] | None = None
) -> InterviewItem:
    """Record the answer to the interview's current item; late when past the deadline. Nothing is revealed.

    ``payload`` holds validated values (ints for "choice" and "ticked"); ``views`` is ``load(interview)`` if
    the caller has it already."""
    view = open_item(interview, item_id, views)
    if not isinstance(payload, dict):
        raise InterviewError('Send a JSON object with "choice", "value" or "text".')
    stored, score, feedback = grade(view, payload)
    now = now or timezone.now()
    late = now > interview.deadline
    # Written only while the item is open and the interview not finished (another request may have closed it).
    rows = InterviewItem.objects.filter(pk=view.item.pk, answered_at=None, interview__finished_at__isnull=True)
    if score is None:  # an open question's written answer: the item stays current until it is ticked
        updated = rows.filter(answer__isnull=True).update(answer=stored)
        view.item.answer = stored
        if not updated:
            refuse_if_finished(interview)
            raise InterviewError("That answer was already written; tick what it covered.", "item", status=409)
        return view.item
    updated = rows.update(answer=stored, answered_at=now, late=late, score=score, feedback=feedback)
    if not updated:  # another tab answered it first, or finished the interview
        refuse_if_finished(interview)
        raise InterviewError(ALREADY_ANSWERED, "item", status=409)
    view.item.answer, view.item.answered_at, view.item.late = stored, now, late
    view.item.score, view.item.feedback = score, feedback
    return view.item


def finish(interview: Interview, now: datetime | None = None) -> None:
    """Close the interview (once): unanswered items stay unanswered and score nothing."""
    if interview.finished_at is None:
        interview.finished_at = now or timezone.now()
        Interview.objects.filter(pk=interview.pk, finished_at=None).update(finished_at=interview.finished_at)


# --- The scorecard --------------------------------------------------------------------------


@dataclass
class Dimension:
    key: str
    label: str
    score: float | None  # None: nothing in this interview measured it
    unanswered: int = 0  # of its questions, left unanswered (each scored 0)
    total: int = 0  # its questions

    @property
    def band(self) -> str | None:
        return band_of(self.score)

    @property
    def band_label(self) -> str:
        return BANDS[self.band].split(":")[0] if self.band else "Not assessed"

    @property
    def percent(self) -> int | None:
        return None if self.score is None else round(100 * self.score)

    @property
    def explanation(self) -> str:
        measures = DIMENSION_MEASURES[self.key]
        if self.score is None:
            return f"Not assessed: this interview had nothing that measures {measures}."
        band = BANDS[self.band].split(": ", 1)[1].capitalize()
        if self.total and self.unanswered == self.total:  # nothing chosen or written: say so, not "on what you chose"
            questions = "question" if self.total == 1 else f"{self.total} questions"
            return f"{self.percent}%: its {questions} went unanswered, and an unanswered question scores 0. {band}"
        if self.unanswered:
            return (
                f"{self.percent}% on {measures}, {self.unanswered} of its {self.total} questions unanswered (0). {band}"
            )
        return f"{self.percent}% on {measures}. {band}"


@dataclass
class PhaseTime:
    key: str
    label: str
    budget: float
    spent: float
    answered: int
    total: int
    quality: float = 1.0  # the phase's own dimension score (the mean of its items)
    reached: bool = True  # False after the phase under way at Finish: none of its questions was shown

    @property
    def completed(self) -> bool:
        """Return whether every question of the phase was answered before the deadline."""
        return self.total > 0 and self.answered == self.total

    @property
    def rushed(self) -> bool:
        """Return whether the phase took under a quarter of its budget and its answers fell short of Ready.

        Clicking through at random finished every phase in time and scored Time management "Strong": time
        is managed well when it is spent on the answers, and a rushed phase counts no more than they earned.
        """
        return self.completed and self.spent < RUSHED * self.budget and self.quality < READY

    @property
    def score(self) -> float:
        """Return 0 for a phase not completed; a rushed one its answers' score; else 1 within budget and
        budget over time taken beyond it."""
        if not self.completed:
            return 0.0
        if self.rushed:
            return self.quality
        return min(1.0, self.budget / self.spent) if self.spent > 0 else 1.0

    @property
    def verdict(self) -> str:
        if not self.completed:
            return "Not completed: counts 0" if self.reached else "Not reached: counts 0"
        if self.rushed:
            return f"Rushed, and the answers show it: counts {round(100 * self.score)}%"
        return "Within budget" if self.score >= 1 else f"Over budget: counts {round(100 * self.score)}%"


@dataclass
class Scorecard:
    dimensions: list[Dimension]
    phases: list[PhaseTime]

    @property
    def overall(self) -> float | None:
        scored = [d.score for d in self.dimensions if d.score is not None]
        return sum(scored) / len(scored) if scored else None

    @property
    def band(self) -> str:
        return band_of(self.overall) or "not_yet"

    @property
    def band_text(self) -> str:
        return BANDS[self.band]

    @property
    def band_label(self) -> str:
        return BANDS[self.band].split(":")[0]

    @property
    def weakest(self) -> Dimension | None:
        scored = [d for d in self.dimensions if d.score is not None]
        return min(scored, key=lambda d: d.score) if scored else None

    def as_dict(self) -> dict[str, float | None]:
        return {d.key: None if d.score is None else round(d.score, 4) for d in self.dimensions}


def band_of(score: float | None) -> str | None:
    if score is None:
        return None
    return "strong" if score >= STRONG else "ready" if score >= READY else "not_yet"


def counted(item: InterviewItem) -> float:
    """Return what an item adds to its dimension: its score if answered on time, else nothing."""
    return item.score if item.answered_at is not None and not item.late and item.score is not None else 0.0


def scorecard(interview: Interview, items: list[InterviewItem]) -> Scorecard:
    """Compute the rubric from the stored items: the one place the scoring rules live.

    - Requirements, estimation, design, trade-offs and communication: the mean score of the
      phase's items (a deep dive: the best approach 1, an acceptable one 0.5, a weak one 0; a
      number: full credit within tolerance, half inside the partial band, a unit of the wrong kind
      refused before grading; the next component: right or not; the open question: the share of
      its checklist ticked). Unanswered and late items score 0.
    - Time management: the mean over the phases; a phase counts only when every question in it
      was answered before the deadline (an unanswered one leaves it not completed: 0), and then 1
      within its budget, budget over time taken beyond it; a phase's time runs from the previous
      phase's last answer to its own, or to Finish while it has a question left (the phases after it were
      not reached: no time). A rushed phase (under a quarter of its budget, its answers below Ready)
      counts what its answers scored.
    """
    by_phase: dict[str, list[InterviewItem]] = defaultdict(list)
    for item in sorted(items, key=lambda i: i.position):
        by_phase[item.phase].append(item)
    scores, counts = {}, {}
    for phase, dimension in PHASE_DIMENSION.items():
        rows = by_phase.get(phase)
        scores[dimension] = sum(counted(i) for i in rows) / len(rows) if rows else None
        counts[dimension] = (sum(1 for i in rows or [] if i.answered_at is None), len(rows or []))
    times = []
    mark = interview.started_at
    under_way = None  # the first phase with a question left at Finish: the phases after it were not reached
    for phase in interview.phases:
        rows = by_phase.get(phase["key"], [])
        answered = [i.answered_at for i in rows if i.answered_at is not None]
        if len(answered) == len(rows):  # completed (or empty): it ended at its last answer
            end = max(answered, default=mark)
        else:  # under way at Finish, or at the deadline when Finish came later
            stop = min(interview.finished_at or interview.deadline, interview.deadline)
            end = max([stop, *answered])
        reached = under_way is None
        if reached and len(answered) < len(rows):
            under_way = phase["key"]
        spent = max((end - mark).total_seconds(), 0) if reached else 0.0
        on_time = sum(1 for i in rows if i.answered_at is not None and not i.late)
        quality = scores.get(PHASE_DIMENSION.get(phase["key"], ""))
        times.append(PhaseTime(phase["key"], phase["label"], phase["seconds"], spent, on_time, len(rows),
                               1.0 if quality is None else quality, reached))  # fmt: skip
        mark = max(mark, end)
    scores["time_management"] = sum(t.score for t in times) / len(times) if times else None
    return Scorecard([Dimension(key, label, scores[key], *counts.get(key, (0, 0))) for key, label in DIMENSIONS], times)


def history(learner_interviews) -> list[tuple[Interview, Scorecard]]:
    """Return every finished interview, oldest first, with its scorecard (two queries in all)."""
    interviews = list(
        learner_interviews.filter(finished_at__isnull=False).select_related("lesson").order_by("started_at", "pk")
    )
    rows: dict[int, list[InterviewItem]] = defaultdict(list)
    fields = ("interview", "position", "phase", "kind", "answered_at", "late", "score")
    for item in InterviewItem.objects.filter(interview__in=[i.pk for i in interviews]).only(*fields):
        rows[item.interview_id].append(item)
    return [(interview, scorecard(interview, rows[interview.pk])) for interview in interviews]


def remaining_seconds(interview: Interview, now: datetime | None = None) -> float:
    return max((interview.deadline - (now or timezone.now())).total_seconds(), 0.0)


TIME_MARKS = ((0, "Time is up: answers from now on are recorded as late."), (1, "One minute left."),
              (5, "Five minutes left."))  # fmt: skip


def time_mark(seconds_left: float) -> int | None:
    """Return the last mark (minutes left: 5, 1 or 0) the clock has passed, None before five minutes."""
    return next((mark for mark, _text in TIME_MARKS if seconds_left <= mark * 60), None)


def announcement(seconds_left: float, announced: int | None) -> tuple[str, int | None]:
    """Return (what to announce, the mark reached) once the clock passes a mark not yet announced.

    ``announced`` is the mark the page last announced or loaded at, so each mark is said once.
    """
    mark = time_mark(seconds_left)
    if mark is None or (announced is not None and announced <= mark):
        return "", announced
    return dict(TIME_MARKS)[mark], mark


def fmt_seconds(seconds: float) -> str:
    seconds = max(math.ceil(seconds), 0)
    return f"{seconds // 60}:{seconds % 60:02d}"


# --- Pages: budgets, practise links, trend charts -----------------------------------------


def budget_rows() -> list[dict]:
    """Return each phase's label, budget and item count for a full interview (the start page shows them)."""
    return [
        {"label": label, "minutes": round(minutes * budget_scale(), 2), "items": count}
        for _key, label, minutes, count in PHASES
    ]


@dataclass
class Practise:
    dimension: Dimension
    links: list[tuple[str, str]]  # (title, url)


def practise_links(interview: Interview, card: Scorecard, views: list[ItemView] | None = None) -> Practise | None:
    """Return links from the weakest dimension: the items it missed, in their lessons, then review."""
    from django.urls import reverse

    weakest = card.weakest
    if weakest is None:
        return None
    phases = [phase for phase, dimension in PHASE_DIMENSION.items() if dimension == weakest.key]
    if views is None:
        views = load(interview)
    links: dict[str, str] = {}
    for view in views:
        if view.item.phase in phases and counted(view.item) < 1 and view.lesson_url not in links.values():
            links[truncate_words(plain_text(view.heading_html), 12)] = view.lesson_url
    rows = list(links.items())
    if weakest.key == "time_management":
        rows.append(("Start another interview and keep each phase within its budget", reverse("interviews")))
    rows.append(("Your spaced-review queue", reverse("review")))
    return Practise(weakest, rows)


def trend_charts(attempts: list[tuple[Interview, Scorecard]]) -> list[dict]:
    """Return one small line chart per dimension over the attempts (SVG with a title and a description)."""
    from django.utils.safestring import mark_safe

    from calculators.charts import Plot, line_svg

    if not attempts:
        return []
    count = len(attempts)
    step = max(1, math.ceil(count / 8))
    x_ticks = [float(n) for n in range(1, count + 1, step)]
    if x_ticks[-1] != count:
        x_ticks.append(float(count))
    # One attempt: its one tick in the middle, not an axis running on to an attempt 2 that never was.
    x_span = (0.5, 1.5) if count == 1 else None
    charts = []
    for key, label in DIMENSIONS:
        points = [(n, card.as_dict()[key]) for n, (_i, card) in enumerate(attempts, start=1)]
        scored = [(n, s) for n, s in points if s is not None]
        if count == 1 and scored:
            description = f"{label}: {round(100 * scored[0][1])}% in your one attempt so far."
        elif scored:
            latest, best = scored[-1][1], max(s for _n, s in scored)
            description = (
                f"{label} over {len(scored)} attempt{'s' if len(scored) != 1 else ''}: "
                f"latest {round(100 * latest)}%, best {round(100 * best)}%."
            )
        else:
            description = f"{label} was not assessed in any attempt yet."
        svg = line_svg(f"trend-{key}", f"{label} by attempt", description, height=200.0)
        plot = Plot(svg, x_ticks, [0.0, 0.6, 0.8, 1.0], lambda t: f"{t:.0f}", lambda t: f"{t:.0%}",
                    "Attempt", "score", x_span)  # fmt: skip
        if len(scored) > 1:
            svg.polyline([(plot.x(n), plot.y(s)) for n, s in scored], "chart-line")
        for n, s in scored:
            svg.circle(plot.x(n), plot.y(s), 4, "chart-point", f"Attempt {n}: {round(100 * s)}%")
        if count == 1 and scored:  # a lone point says its value, beside it (above it near 0%, clear of the axis)
            score = scored[0][1]
            svg.text(plot.x(1) + 9, plot.y(score) + (4 if score >= 0.1 else -8), f"{round(100 * score)}%",
                     "chart-point-label")  # fmt: skip
        charts.append({"key": key, "label": label, "svg": mark_safe(svg.render()), "description": description})  # noqa: S308
    return charts
