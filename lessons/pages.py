"""Assemble what a lesson page shows, in a fixed number of queries however much content there is."""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import cached_property, partial
from operator import attrgetter

from django.db.models import OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest
from django.utils.safestring import mark_safe

from lessons import content_cache, diagram, scoring
from lessons.links import drawn_under, generation_of, url_maker
from lessons.markup import plain_text, truncate_words
from lessons.models import (
    Answer,
    Challenge,
    ChallengeDraw,
    ChecklistPoint,
    Choice,
    DeepDive,
    ItemPractice,
    Layer,
    Learner,
    Lesson,
    LessonProgress,
    OpenQuestion,
    Outcome,
    ReviewCard,
    Section,
    Step,
    Walkthrough,
)
from lessons.scoring import HINT_RULE, Score, counts_toward_score, hint_cost, hints_owed, reveal_earned
from lessons.services import (
    FOLLOW_UP_FIRST,
    SESSION_KEY,
    STEP_NOT_OPEN,
    challenge_draw,
    choice_order,
    ensure_session,
    expected_for,
    learner_identity,
)


def learner_filter(request: HttpRequest, prefix: str = "learner") -> dict | None:
    """Return the lookup that selects the request's learner rows, without fetching the learner."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        learner_of = (
            Learner.user.field.remote_field
        )  # the account's learner, read with it (interview.accounts.backends)
        if learner_of.is_cached(user):
            # By id: no join to the learner table in each query; an account that never answered has no rows.
            learner = learner_of.get_cached_value(user)
            return {f"{prefix}_id": learner.pk} if learner is not None else None
        return {f"{prefix}__user": user}
    learner_id = request.session.get(SESSION_KEY)
    if learner_id is None:
        return None
    return {f"{prefix}_id": learner_id, f"{prefix}__user": None}


@dataclass
class ItemState:
    """A learner's answers to one item: the first (it scores), the latest, and how many in all."""

    first: Answer | None = None
    latest: Answer | None = None
    count: int = 0
    card: ReviewCard | None = None  # the item's review card, reused when the next answer reschedules it
    practice: ItemPractice | None = None  # hints taken, reveals asked for, a follow-up reached, a draft

    @property
    def hints_taken(self) -> int:
        return self.practice.hints_taken if self.practice else 0

    @property
    def revealed(self) -> bool:
        return bool(self.practice and self.practice.revealed)

    @property
    def draft(self) -> str:
        return self.practice.draft if self.practice else ""

    @property
    def reached(self) -> bool:
        """A follow-up: whether an answer to its parent opened it (the reach rule, services.reach)."""
        return bool(self.practice and self.practice.reached)

    @property
    def hints_before_first(self) -> int:
        """Hints to pay for with the first answer: those taken so far, until it is given."""
        return hints_owed(self.first is not None, self.hints_taken)

    @property
    def answers(self) -> list[Answer]:
        """Return the first and the latest answer (one answer when they are the same)."""
        found = [a for a in (self.first, self.latest) if a is not None]
        return sorted({a.pk: a for a in found}.values(), key=lambda a: a.pk)

    @property
    def chose_best(self) -> bool:
        """Whether the first or the latest answer was right (a deep dive: its best approach was chosen)."""
        return any(answer.outcome == Outcome.CORRECT for answer in (self.first, self.latest) if answer)

    @property
    def retries(self) -> int:
        return max(self.count - 1, 0)

    @property
    def missed(self) -> bool:
        """Whether the first answer (it scores) was not fully right: results list the item among the misses
        (results.misses_among), and a right retry does not change that."""
        return scoring.is_miss(self.first and self.first.outcome)

    @property
    def right_on_retry(self) -> bool:
        """Whether a missed item's latest try is right (a retry here, or a recall on the review page since): its
        first answer still scores, and the outline and the results say the item was got right since
        (Miss.right_on_retry)."""
        recalled = self.card.recall_outcome if self.card else ""
        return scoring.right_on_retry(
            self.first and self.first.outcome, recalled or (self.latest and self.latest.outcome)
        )


@dataclass(frozen=True)
class Hints:
    """An item's hints as the learner may see them: before the first answer each one costs (lessons.scoring)."""

    html: list[str]
    shown: int  # how many are on screen
    cost: int  # points the next one would cost (0 once the item is answered)
    url: str

    @classmethod
    def of(cls, html: list[str], state: ItemState, max_points: int, url: str) -> Hints:
        if state.first:  # answered: every hint is free and shown
            return cls(html, len(html), 0, url)
        taken = min(state.hints_taken, len(html))
        return cls(html, taken, hint_cost(max_points, taken + 1) - hint_cost(max_points, taken), url)

    @property
    def visible(self) -> list[str]:
        return self.html[: self.shown]

    @property
    def more(self) -> bool:
        return self.shown < len(self.html)

    rule = HINT_RULE


class StateView:
    """What an item view reads off its learner's ``state`` (an ItemState)."""

    @property
    def answered(self) -> bool:
        return bool(self.state.answers)

    @property
    def show_working(self) -> bool:
        return show_working(self.state)


@dataclass(eq=False)
class DeepDiveView(StateView):
    deep_dive: DeepDive
    authored_choices: list[Choice]  # in the authored order; ``choices`` is the order this learner sees
    state: ItemState
    is_follow_up: bool
    reached: bool
    parent: DeepDive | None = None
    follow_up_views: list[DeepDiveView] = field(default_factory=list)
    kind: str = "deep_dive"
    hints: Hints | None = None
    identity: str | None = None  # whose order the choices are shuffled in (services.choice_order)
    follow_up_waiting: bool = False  # a follow-up its answer opened is unanswered (LessonData.waiting_for_follow_up)
    # The page's URL makers (deep_dive_url, reveal_url): a link is made when the template reads it,
    # so a page of one part of a long layer makes the links of the deep dives it shows only.
    makers: tuple[Callable[..., str], Callable[..., str]] | None = None

    @property
    def answer_url(self) -> str:
        return self.makers[0](self.deep_dive.pk)

    @property
    def reveal_url(self) -> str:
        return self.makers[1]("deep_dive", self.deep_dive.pk)

    @cached_property
    def choices(self) -> list[Choice]:
        """The choices in this learner's order, worked out when first read: a page of one part of a long
        layer shuffles the choices it shows, not those of every deep dive in the lesson."""
        return choice_order(self.identity, self.deep_dive, self.authored_choices)

    @property
    def shown_choice(self) -> Choice | None:
        latest = self.state.latest
        return next((c for c in self.choices if latest and c.pk == latest.choice_id), None)

    @property
    def reveal_all(self) -> bool:
        """Whether every approach's verdict and feedback is shown: after a best answer, a second try, or on request,
        once the follow-up an answer opened is answered too."""
        return show_working(self.state) and not self.follow_up_waiting


@dataclass
class StepView(StateView):
    step: Step
    number: int
    state: ItemState
    answer_url: str = ""
    hints: Hints | None = None
    reveal_url: str = ""

    def derivation(self) -> list:
        return expected_for(self.step).steps if self.show_working else []


def step_gate(asked: list[tuple[bool, bool]]) -> int:
    """Return the first step (a position) that asks for a number and is not answered yet, the last when none.

    ``asked``: each step's (asks for a number, answered). The steps up to it are open: a later step's body starts
    from the earlier answers (so one slip does not carry through), and would give them away.
    """
    return next((number for number, (asks, answered) in enumerate(asked, 1) if asks and not answered), len(asked))


def step_open(asked: list[tuple[bool, bool]], number: int) -> bool:
    """Return whether step ``number`` may be shown: up to the gate (``step_gate``), or answered already (the learner
    has read it: an answer from before the page and the API refused a step not open). Pages and the page's and the
    API's answer and hint endpoints ask this (LessonData.step_is_open, api.step_opens)."""
    return number <= step_gate(asked) or asked[number - 1][1]


def show_working(state: ItemState) -> bool:
    """Whether the reveal is earned: the other approaches, or a number's answer and worked arithmetic."""
    return reveal_earned(state.latest.outcome if state.latest else None, state.count, state.revealed)


@dataclass
class WalkthroughView:
    walkthrough: Walkthrough
    steps: list[StepView]
    step_url: Callable[[int], str]  # the URL of the step of a given order
    current: int = 1
    kind: str = "walkthrough"
    notice: str = ""  # said at the top of the walkthrough: the step asked for is not open (open_at) or not there

    @property
    def prev_url(self) -> str | None:
        return self.step_url(self.prev_order) if self.prev_order is not None else None

    @property
    def next_url(self) -> str | None:
        """Step on, once this step is answered if it asks for a number (see ``is_open``)."""
        if self.next_order is None or not self.is_open(self.current + 1):
            return None
        return self.step_url(self.next_order)

    @cached_property
    def asked(self) -> list[tuple[bool, bool]]:
        """Each step's (asks for a number, answered), in order: what ``step_gate`` and ``step_open`` read."""
        return [(bool(sv.step.calculator), sv.answered) for sv in self.steps]

    @property
    def reachable(self) -> int:
        """The first step that asks for a number and is not answered yet (the last when none), see ``step_gate``."""
        return step_gate(self.asked)

    def is_open(self, number: int) -> bool:
        """Return whether step ``number`` (a position) may be shown (``step_open``)."""
        return step_open(self.asked, number)

    def open_at(self, number: int) -> bool:
        """Show step ``number`` (a position) if it is open (``is_open``), else the step to answer first, saying why;
        return whether it was open. A step's own page asks this; an action on a step shows that step."""
        if self.is_open(number):
            self.current = number
            return True
        self.current = self.reachable
        self.notice = self.not_open_notice(number)
        return False

    def not_open_notice(self, number: int) -> str:
        """Return what the walkthrough says when step ``number`` (a position) was asked for before it opened."""
        return f"Step {number} opens once the steps before it are answered: here is step {self.current}, the first to answer."

    @property
    def shown_url(self) -> str:
        """Return the address of the step shown, at the walkthrough (what the address bar names)."""
        return f"{self.step_url(self.current_order)}#{self.walkthrough.anchor}"

    @property
    def first_url(self) -> str:
        return self.step_url(self.first_order)

    @property
    def step(self) -> StepView:
        return self.steps[self.current - 1]

    # URLs name a step by its order (stable); "Step 2 of 5" counts positions.
    @property
    def current_order(self) -> int:
        return self.step.step.order

    @property
    def prev_order(self) -> int | None:
        return self.steps[self.current - 2].step.order if self.current > 1 else None

    @property
    def next_order(self) -> int | None:
        return self.steps[self.current].step.order if self.current < self.total else None

    @property
    def first_order(self) -> int:
        return self.steps[0].step.order

    @property
    def total(self) -> int:
        return len(self.steps)

    @property
    def diagram(self) -> dict:
        """Components and connections up to the current step, this step's marked new."""
        components, connections = [], []
        for view in self.steps[: self.current]:
            new = view.number == self.current
            components += [dict(c, new=new) for c in view.step.components if isinstance(c, dict)]
            connections += [dict(c, new=new) for c in view.step.connections if isinstance(c, dict)]
        return {"components": components, "connections": connections}

    @property
    def all_parts(self) -> tuple[list, list]:
        """Every step's components and connections, as the stored layout places them."""
        components = [c for view in self.steps for c in view.step.components]
        return components, [c for view in self.steps for c in view.step.connections]

    def figure(self) -> dict:
        """Return the diagram at the current step as lessons/_diagram.html shows it: its SVG, its text, ids."""
        components, connections = diagram.normalize(self.diagram["components"], self.diagram["connections"])
        uid = f"diagram-{self.walkthrough.key}-{self.current}"
        title = f"{self.walkthrough.title}, step {self.current} of {self.total}: {self.step.step.title}"
        layout = self.walkthrough.diagram
        if not diagram.covers(layout, components, connections):  # a row changed without save(): lay it out now
            layout = diagram.lay_out(*diagram.normalize(*self.all_parts))
        svg = diagram.render_svg(layout, components, connections, title, uid)
        text = diagram.describe(components, connections)
        return {"svg": mark_safe(svg), "text": text, "uid": uid, "title": title}  # noqa: S308 - rendered escaped


@dataclass
class ChallengeView(StateView):
    challenge: Challenge
    state: ItemState
    draw: dict
    answer_url: str
    calculator_url: str
    kind: str = "challenge"
    hints: Hints | None = None
    reveal_url: str = ""

    @property
    def inputs(self) -> dict:
        return self.draw["inputs"]

    def derivation(self) -> list:
        """Return the worked arithmetic for the numbers the latest answer was graded on."""
        if not self.show_working:
            return []
        inputs = self.state.latest.drawn_inputs or self.inputs
        if not self.challenge.drawn_fit(inputs):  # answered before an author changed the question: no working
            return []
        return expected_for(self.challenge, inputs).steps


@dataclass
class OpenQuestionView(StateView):
    """An open question: write an answer (kept as a draft), then tick the checklist points it covered."""

    question: OpenQuestion
    checklist: list[ChecklistPoint]
    state: ItemState
    write_url: str
    answer_url: str
    kind: str = "open_question"

    @property
    def ticking(self) -> bool:
        """Whether the learner has written an answer and now ticks the checklist."""
        return bool(self.state.draft)

    @cached_property
    def ticked(self) -> set[int]:
        latest = self.state.latest
        return set(latest.ticked) if latest and not self.ticking else set()


@dataclass(eq=False)
class SectionView:
    section: Section
    items: list = field(default_factory=list)
    url: str = ""  # the page that shows it: its layer's, or the part of its layer that holds it
    part: int = 1  # which part of its layer holds it (a layer of many items is shown in parts)

    @property
    def entries(self) -> list[OutlineEntry]:
        """The section's items as the lesson outline lists them."""
        return [outline_entry(view, self.url) for view in self.items]


def mark_of(answered: int, graded: int, missed: bool = False, right_on_retry: bool = False) -> str:
    """Return "done", "missed" (all answered, a first answer not fully right), "retried" (missed, and every
    missed part's latest answer right), "partial", "todo", or "read" when there is nothing to answer."""
    if not graded:
        return "read"
    if answered == graded:
        return ("retried" if right_on_retry else "missed") if missed else "done"
    return "partial" if answered else "todo"


@dataclass(frozen=True)
class OutlineEntry:
    """An item in the lesson outline: where it is, what it is called there, how far the learner got, and
    the follow-ups an answer to it opened (listed under it: one not opened yet is left out, or the
    outline would tell which choice leads on)."""

    anchor: str
    label: str
    url: str
    mark: str
    answered: int
    graded: int
    missed: int = 0  # first answers not fully right (of a walkthrough's graded steps, or the item's one)
    follow_ups: tuple[OutlineEntry, ...] = ()
    partly: bool = False  # every first answer not fully right was partly right: "partly right", not "missed"


def progress_of(view) -> tuple[int, int]:
    """Return (answered, graded) of a top-level item: a walkthrough counts its graded steps (none: read only)."""
    if isinstance(view, WalkthroughView):
        graded = [s for s in view.steps if s.step.calculator]
        return sum(s.answered for s in graded), len(graded)
    return int(view.answered), 1


def graded_states(view) -> list[ItemState]:
    """Return the learner's states of a top-level item's graded parts: a walkthrough's graded steps, or its own."""
    if isinstance(view, WalkthroughView):
        return [s.state for s in view.steps if s.step.calculator]
    return [view.state]


def missed_states(view) -> list[ItemState]:
    """Return the states of a top-level item's graded parts whose first answer was not fully right (results list
    each as a miss). A walkthrough counts its steps missed; the outline says so once every step is answered
    (mark_of): until then "n of m answered" tells what is left. Read off the states loaded with the page: no query.
    """
    return [state for state in graded_states(view) if state.missed]


# The interviewer's first words in a deep dive's or an open question's outline label: enough to tell apart
# a lesson's items of one topic, short enough for two or three lines of the outline's column.
OUTLINE_PROMPT_WORDS = 5


def outline_entry(view, page_url: str) -> OutlineEntry:
    """Return an item's outline entry, the follow-ups it opened under it; ``page_url`` is the page showing it.

    The entry is sent again, out of band, with each answer to the item (views.fragment).
    """
    answered, graded = progress_of(view)
    follow_ups = ()
    if isinstance(view, WalkthroughView):
        label = view.walkthrough.title
    elif isinstance(view, ChallengeView):
        label = view.challenge.title
    elif isinstance(view, DeepDiveView):
        kind = "Follow-up" if view.is_follow_up else "Deep dive"
        label = f"{kind} · {view.deep_dive.topic.name}: {view.deep_dive.prompt_start}"
        follow_ups = tuple(outline_entry(follow, page_url) for follow in view.follow_up_views)  # reached ones only
    else:
        label = f"Open question · {view.question.topic.name}: {view.question.prompt_start}"
    anchor = item_of(view).anchor
    missed = missed_states(view)
    # "Right on a retry" once every missed part's latest answer is right (a walkthrough: each missed step; one still
    # wrong keeps "k of m missed"); "partly right" when every missed part was (as the results say each).
    retried = all(state.right_on_retry for state in missed)
    mark = mark_of(answered, graded, bool(missed), retried)
    partly = bool(missed) and all(state.first.outcome == Outcome.PARTIAL for state in missed)
    return OutlineEntry(anchor, label, f"{page_url}#{anchor}", mark, answered, graded, len(missed), follow_ups, partly)


def prompt_start(prompt_html: str) -> str:
    """Return the first words of a rendered prompt as plain text, without the quotation marks around it.

    Worked out with the lesson's content (read_lesson_content: ``prompt_start`` on each deep dive and open
    question), once per content generation rather than on every page.
    """
    return truncate_words(plain_text(prompt_html).strip().strip('“”"'), OUTLINE_PROMPT_WORDS)


PART_ITEMS = 20  # a layer holding more items than this is shown in parts of about this many (LayerView.split)


@dataclass(frozen=True)
class PartLink:
    """One part of a long layer (a "page" to the learner), as the layer's list of pages links to it."""

    number: int
    url: str
    label: str  # the titles of its first and last sections, quoted
    answered: int  # items the learner has answered, right or missed (every graded step of a walkthrough)
    items: int  # items that ask something (not a walkthrough read only)


@dataclass(eq=False)
class LayerView:
    number: int
    label: str
    minutes: int
    sections: list[SectionView]
    url: str  # its own page: a lesson shows one layer at a time (``?layer=N``)
    next: LayerView | None = None  # the layer after this one, for "Continue to layer N"
    parts: list[PartLink] = field(default_factory=list)  # more than one when the layer is shown in parts
    part: int = 1  # the part this page shows

    @property
    def shown(self) -> list[SectionView]:
        """The sections this page shows: the whole layer, or the part of it asked for."""
        return [view for view in self.sections if view.part == self.part]

    @property
    def next_part(self) -> PartLink | None:
        return self.parts[self.part] if self.part < len(self.parts) else None

    def split(self, lesson_url: str) -> None:
        """Give each section its page, and split a long layer into parts of whole sections.

        A section's page is its layer's, naming the section (``&section=key``, Section.page_query), so a
        link to it lands on the part holding it. A layer of more than PART_ITEMS items is shown in parts:
        a part is closed once it holds PART_ITEMS items or more and the next section has items of its own
        (a section of reading only stays with the part before it); the last part may hold fewer.
        """
        for view in self.sections:
            view.url = f"{lesson_url}{view.section.page_query}"
        if sum(len(view.items) for view in self.sections) <= PART_ITEMS:
            return
        groups: list[list[SectionView]] = [[]]
        held = 0  # items in the part being filled
        for view in self.sections:
            if view.items and held >= PART_ITEMS:
                groups.append([])
                held = 0
            groups[-1].append(view)
            held += len(view.items)
        if len(groups) == 1:
            return
        for number, group in enumerate(groups, start=1):
            for view in group:
                view.part = number
            titles = [f"“{group[0].section.title}”", f"“{group[-1].section.title}”"]
            progress = [progress_of(view) for section in group for view in section.items]
            asking = [(answered, graded) for answered, graded in progress if graded]  # not a walkthrough read only
            finished = sum(answered == graded for answered, graded in asking)
            self.parts.append(PartLink(number, group[0].url, " to ".join(dict.fromkeys(titles)), finished, len(asking)))

    def part_holding(self, section_key: str) -> int | None:
        """Return the part that shows the section keyed ``section_key``, None when the layer has no such section."""
        return next((view.part for view in self.sections if view.section.key == section_key), None)


@dataclass(frozen=True)
class EarlierNote:
    """A layer's note on the questions the layers before it still hold (LessonPage.earlier_note)."""

    lead: str
    link: str  # the link's text, leading to the first of them
    url: str


@dataclass
class LessonPage:
    lesson: Lesson
    layers: list[LayerView]
    deep_dives: dict[int, DeepDiveView]
    walkthroughs: dict[int, WalkthroughView]
    challenges: dict[int, ChallengeView]
    open_questions: dict[int, OpenQuestionView]
    resume_url: str | None
    score: Score
    current: LayerView | None = None  # the layer this page shows

    @property
    def percent(self) -> int:
        return self.score.progress

    @property
    def has_follow_ups(self) -> bool:
        """Whether the total may grow: a follow-up counts once an answer opens it (scoring.counts_toward_score)."""
        return any(view.is_follow_up for view in self.deep_dives.values())

    @cached_property
    def earlier_note(self) -> EarlierNote | None:
        """What the page says while the layers before it hold questions not yet answered (``unanswered``), linking
        the first. A layer builds on the ones before it, and its text may give their answers away: the case study's
        layer 3 sizes "one 70B replica on four GPUs", the answer to layer 2's last question."""
        if self.current is None:
            return None
        waiting = list(unanswered([layer for layer in self.layers if layer.number < self.current.number]))
        if not waiting:
            return None
        numbers = sorted({number for number, _url in waiting})
        holds = f"Layers {listed(numbers)} still have" if len(numbers) > 1 else f"Layer {numbers[0]} still has"
        first_layer, first_url = waiting[0]
        if len(waiting) == 1:
            lead = f"{holds} a question you have not answered. This layer builds on it and may give its answer away."
            return EarlierNote(lead, f"Answer it first, in layer {first_layer}", first_url)
        lead = (
            f"{holds} {len(waiting)} questions you have not answered. This layer builds on them and may give their"
            " answers away."
        )
        return EarlierNote(lead, f"Go to the first of them, in layer {first_layer}", first_url)

    def layer_of(self, section_id: int) -> LayerView | None:
        """Return the layer holding a section."""
        return next((view for view in self.layers if any(s.section.pk == section_id for s in view.sections)), None)


@dataclass
class LessonData:
    """The rows a lesson page is built from, and the learner's state per item."""

    lesson: Lesson
    sections: list[Section]
    choices: list[Choice]
    steps: list[Step]
    challenges: list[Challenge]
    checklist: list[ChecklistPoint]
    states: dict[tuple[str, int], ItemState]
    draws: dict[int, ChallengeDraw]
    resume_url: str | None
    follow_up_ids: set[int] = field(default_factory=set)  # the lesson's deep dives a choice leads to
    leading: dict[int, DeepDive] = field(default_factory=dict)  # a follow-up's id: a deep dive leading to it

    def state(self, kind: str, pk: int) -> ItemState:
        return self.states.get((kind, pk)) or ItemState()

    def waiting_for_follow_up(self) -> set[int]:
        """Return the deep dives that wait for a follow-up: an answer opened it, it is unanswered, and the learner has
        not chosen the best approach here. Until then the chosen approach's feedback, another try and every approach
        wait (each would often give the follow-up's answer away). Read off the states: no query. The page, its answer
        and reveal endpoints and the API's (api.follow_up_waits) ask this."""
        waiting = set()
        for choice in self.choices:
            parent = choice.deep_dive_id
            if choice.follow_up_id and parent not in waiting:
                follow_up = self.state("deep_dive", choice.follow_up_id)
                if follow_up.reached and not follow_up.first and not self.state("deep_dive", parent).chose_best:
                    waiting.add(parent)
        return waiting

    def step_is_open(self, pk: int) -> bool:
        """Return whether the step ``pk`` may be shown to this learner, as its walkthrough's page says (``step_open``)."""
        step = next(s for s in self.steps if s.pk == pk)
        siblings = sorted((s for s in self.steps if s.walkthrough_id == step.walkthrough_id), key=lambda s: s.order)
        asked = [(bool(s.calculator), bool(self.state("step", s.pk).answers)) for s in siblings]
        return step_open(asked, siblings.index(step) + 1)

    def why_it_waits(self, kind: str, pk: int) -> str:
        """Return why the item takes no answer, hint or reveal yet ("" when it does): a deep dive waits for the
        follow-up its answer opened (``waiting_for_follow_up``), a step for the steps before it (``step_is_open``)."""
        if kind == "deep_dive" and pk in self.waiting_for_follow_up():
            return FOLLOW_UP_FIRST
        if kind == "step" and not self.step_is_open(pk):
            return STEP_NOT_OPEN
        return ""

    def shown_under(self, deep_dive: DeepDive) -> DeepDive:
        """Return the top-level deep dive ``deep_dive`` is drawn under (lessons.links.drawn_under): its page is
        that deep dive's, whatever section an author put the follow-up in."""
        parents = {parent.pk: parent for parent in self.leading.values()}
        top = drawn_under(deep_dive.pk, {pk: parent.pk for pk, parent in self.leading.items()})
        return parents.get(top, deep_dive)

    def record(self, answer: Answer) -> None:
        """Add an answer just stored, so the page shows it without reading it back (one query only when
        another tab stored the first answer after this page was read)."""
        state = self.states.setdefault(answer.item_key, ItemState())
        state.count += 1
        state.latest = answer
        if answer.is_first:
            state.first = answer
        elif state.first is None:  # another tab's answer came first, stored after this page was read
            kind, pk = answer.item_key
            state.first = Answer.objects.filter(
                Answer.items_q({kind: [pk]}), learner=answer.learner_id, is_first=True
            ).get()
        if answer.choice_id and answer.choice.follow_up_id:  # its follow-up is reached now (services.reach)
            follow_up = self.states.setdefault(("deep_dive", answer.choice.follow_up_id), ItemState())
            follow_up.practice = follow_up.practice or ItemPractice(learner_id=answer.learner_id)
            follow_up.practice.reached = True
        if answer.open_question_id and state.practice:
            state.practice.draft = ""  # the written answer was used up by its checklist


@dataclass
class LessonContent:
    """What a lesson's pages show alike to every learner: its sections and items in page order.

    Each choice, step and checklist point carries its parent, each item its section (and topic):
    read once per content generation and kept in the content cache (lessons/content_cache.py).
    """

    sections: list[Section]
    choices: list[Choice]
    steps: list[Step]
    challenges: list[Challenge]
    checklist: list[ChecklistPoint]


def lesson_content(lesson: Lesson) -> LessonContent:
    """Return ``lesson``'s content (no query when the lesson came from the cache, none more on a hit)."""
    token = generation_of([lesson])  # the generation the lesson was read in (visible_lessons)
    content = content_cache.cached(f"lesson-{lesson.pk}", partial(read_lesson_content, lesson.pk), token)
    for section in content.sections:  # the lesson as this request read it (a draft or not, its title now)
        section.lesson = lesson
    return content


def read_lesson_content(lesson_id: int) -> LessonContent:
    """Read a lesson's content from the database in eight queries, however long the lesson."""
    sections = sorted(Section.objects.filter(lesson_id=lesson_id).order_by(), key=attrgetter("order"))
    by_pk = {section.pk: section for section in sections}

    def placed(items: QuerySet) -> QuerySet:
        return items.filter(section__lesson_id=lesson_id).order_by()

    def in_section(rows: list) -> list:
        for row in rows:
            row.section = by_pk[row.section_id]
        return rows

    # Items are put in page order here rather than by the database: ORDER BY on the joined
    # section and item made each query cost a fifth more to build and run.
    deep_dives = in_section(list(placed(DeepDive.objects.select_related("topic"))))
    choices = parented(Choice.objects.all(), "deep_dive", deep_dives)
    choices.sort(key=lambda c: (c.deep_dive.section.order, c.deep_dive.order, c.deep_dive_id, c.order))
    steps = parented(Step.objects.all(), "walkthrough", in_section(list(placed(Walkthrough.objects.all()))))
    steps.sort(key=lambda s: (s.walkthrough.section.order, s.walkthrough.order, s.walkthrough_id, s.order))
    challenges = in_section(list(placed(Challenge.objects.select_related("topic"))))
    challenges.sort(key=lambda c: (c.section.order, c.order))
    questions = in_section(list(placed(OpenQuestion.objects.select_related("topic"))))
    for item in (*deep_dives, *questions):  # the outline's label (outline_entry), kept with the cached rows
        item.prompt_start = prompt_start(item.prompt_html)
    checklist = parented(ChecklistPoint.objects.all(), "question", questions)
    checklist.sort(key=lambda p: (p.question.section.order, p.question.order, p.question_id, p.order))
    return LessonContent(sections, choices, steps, challenges, checklist)


def load_lesson_data(
    request: HttpRequest,
    lesson: Lesson,
    only: str | None = None,
    deep_dive: int | None = None,
    step: int | None = None,
) -> LessonData:
    """Return a lesson's content and the learner's answers to it, in a constant number of queries.

    ``only`` ("deep_dive", "walkthrough", "challenge" or "open_question") keeps just that kind of item, and
    ``deep_dive`` just the deep dives drawn with that one (the deep dive it is drawn under and every follow-up
    below it), ``step`` just the walkthrough holding that step: what the fragment an answer swaps in shows,
    and the outline entry sent with it.
    """
    content = lesson_content(lesson)
    wanted = {only} if only else {"deep_dive", "walkthrough", "challenge", "open_question"}
    sections = [] if only else content.sections
    lookup = learner_filter(request)
    choices = steps = challenges = checklist = []
    leading = {c.follow_up_id: c.deep_dive for c in content.choices if c.follow_up_id}
    links = [(c.deep_dive_id, c.follow_up_id) for c in content.choices if c.follow_up_id]
    follow_up_ids = set(leading)
    if "deep_dive" in wanted:
        choices = content.choices
        if deep_dive is not None:  # the tree it is drawn in: from its top parent down (a follow-up's outline entry)
            top = drawn_under(deep_dive, {pk: parent.pk for pk, parent in leading.items()})
            tree = follow_up_tree(links, top)
            choices = [c for c in choices if c.deep_dive_id in tree]
    if "walkthrough" in wanted:
        steps = content.steps
        if step is not None:
            holding = next((s.walkthrough_id for s in steps if s.pk == step), None)
            steps = [s for s in steps if s.walkthrough_id == holding]
    if "challenge" in wanted:
        challenges = content.challenges
    if "open_question" in wanted:
        checklist = content.checklist
    states: dict[tuple[str, int], ItemState] = {}
    draws: dict[int, ChallengeDraw] = {}
    resume_url = None
    if lookup is not None:
        items = {
            "deep_dive": sorted({c.deep_dive_id for c in choices}),
            "step": [s.pk for s in steps if s.calculator],
            "challenge": [c.pk for c in challenges],
            "open_question": sorted({p.question_id for p in checklist}),
        }
        states = load_answers(lookup, items)
        if any(ch.ranges for ch in challenges):
            by_pk = {ch.pk: ch for ch in challenges}
            for draw in ChallengeDraw.objects.filter(**lookup, challenge_id__in=by_pk):
                draw.challenge = by_pk[draw.challenge_id]
                # A draw the challenge has outgrown is left out: the learner is shown a fresh one (store_draw keeps it).
                if draw.challenge.drawn_fit(draw.inputs):
                    draws[draw.challenge_id] = draw
        if not only:
            position = LessonProgress.objects.filter(**lookup, lesson=lesson).only("url", "anchor").first()
            # A walkthrough's place is its step's own URL; any other item is found on its layer's page (and an
            # item an author removed since is not: build_lesson_page then starts at the first unanswered one).
            resume_url = (
                (position.url if still_placed(content, position.url) else f"#{position.anchor}") if position else None
            )
    return LessonData(
        lesson, sections, choices, steps, challenges, checklist, states, draws, resume_url, follow_up_ids, leading
    )


WALKTHROUGH_IN_URL = re.compile(r"/walkthroughs/([^/]+)/")


def still_placed(content: LessonContent, url: str) -> bool:
    """Return whether a kept place is a walkthrough step's URL whose walkthrough the lesson still has.

    An author may rename or remove a walkthrough after a learner's answer kept its URL as their place:
    Resume and the home page's Continue then start elsewhere, never on a 404.
    """
    match = WALKTHROUGH_IN_URL.search(url)
    return match is not None and any(step.walkthrough.key == match.group(1) for step in content.steps)


def parented(rows: QuerySet, parent: str, parents: list) -> list:
    """Return ``rows`` belonging to ``parents``, each with its parent attached.

    Each parent is read once: joined to every row, a deep dive (or walkthrough, with its diagram) was read
    and decoded again for each of its choices (or steps).
    """
    by_pk = {row.pk: row for row in parents}
    found = list(rows.filter(**{f"{parent}__in": list(by_pk)}).order_by())
    for row in found:
        setattr(row, parent, by_pk[getattr(row, f"{parent}_id")])
    return found


def follow_up_tree(links: Iterable[tuple[int, int]], pk: int) -> set[int]:
    """Return ``pk`` and every deep dive its choices lead to, however deep (what its fragment may show).

    ``links`` are (deep dive, follow-up) pairs.
    """
    below: dict[int, set[int]] = defaultdict(set)
    for parent, follow_up in links:
        below[parent].add(follow_up)
    tree, todo = {pk}, [pk]
    while todo:
        for follow_up in below[todo.pop()] - tree:
            tree.add(follow_up)
            todo.append(follow_up)
    return tree


def build_lesson_page(
    request: HttpRequest,
    lesson: Lesson,
    positions: dict[str, int] | None = None,
    only: str | None = None,
    data: LessonData | None = None,
    layer: int | None = None,
    section: str | None = None,
) -> LessonPage:
    """Return the lesson with every item and the learner's state (see load_lesson_data).

    Every layer is built (the outline and the score count them all); ``layer`` names the one the
    page shows, the first by default. An unknown layer leaves ``current`` None (the view says 404).
    A layer of many items is shown in parts (LayerView.split): ``section`` (a key) picks the part
    holding that section, the first by default.
    """
    data = data or load_lesson_data(request, lesson, only)
    sections, choices, steps, challenges = data.sections, data.choices, data.steps, data.challenges
    draws, resume_url = data.draws, data.resume_url
    identity = learner_identity(request)
    drawn = any(ch.ranges for ch in challenges)
    shuffled = any(not choice.deep_dive.keep_choice_order for choice in choices)
    if identity is None and (drawn or shuffled):
        # Numbers drawn and choices shuffled for a visitor must stay theirs from the first view:
        # give them a session first, so an answer never reorders the choices under their cursor.
        ensure_session(request)
        identity = learner_identity(request)
    by_item: dict[tuple[str, int], ItemState] = defaultdict(ItemState)
    by_item.update(data.states)

    # Each kind of link is reversed once per page, not once per item.
    deep_dive_url = url_maker("answer-deep-dive", lesson.slug)
    step_answer_url = url_maker("answer-step", lesson.slug)
    challenge_url = url_maker("answer-challenge", lesson.slug)
    calculator_url = url_maker("calculators:detail")
    hint_url = url_maker("take-hint", lesson.slug, variables=2)  # (kind, pk)
    reveal_url = url_maker("reveal", lesson.slug, variables=2)
    step_url = url_maker("walkthrough-step", lesson.slug, variables=2)  # (walkthrough key, step order)
    deep_dives: dict[int, DeepDiveView] = {}
    targets: dict[int, DeepDive] = {}
    waiting = data.waiting_for_follow_up()
    for choice in choices:
        dd = choice.deep_dive
        if dd.pk not in deep_dives:
            state = by_item["deep_dive", dd.pk]
            view = DeepDiveView(dd, [], state, False, True, identity=identity, makers=(deep_dive_url, reveal_url),
                                follow_up_waiting=dd.pk in waiting)  # fmt: skip
            if dd.hints_html:
                view.hints = Hints.of(dd.hints_html, state, dd.points, hint_url("deep_dive", dd.pk))
            deep_dives[dd.pk] = view
        deep_dives[dd.pk].authored_choices.append(choice)
        if choice.follow_up_id:
            targets[choice.follow_up_id] = dd
    for choice in choices:
        if choice.follow_up_id in deep_dives:
            choice.follow_up = deep_dives[choice.follow_up_id].deep_dive
    # A follow-up is one whether or not its parent was read: an answer's fragment reads the answered deep dive
    # and the follow-ups below it only (load_lesson_data), and shows a follow-up answered as one still.
    for pk in data.follow_up_ids & deep_dives.keys():
        view = deep_dives[pk]
        view.is_follow_up = True
        view.reached = view.answered or view.state.reached
    for pk, parent in targets.items():
        if pk in deep_dives:
            view = deep_dives[pk]
            view.parent = parent
            if view.reached:
                deep_dives[parent.pk].follow_up_views.append(view)

    walkthroughs: dict[int, WalkthroughView] = {}
    for step in steps:
        wt = step.walkthrough
        if wt.pk not in walkthroughs:
            walkthroughs[wt.pk] = WalkthroughView(wt, [], partial(step_url, wt.key))
        view = walkthroughs[wt.pk]
        state = by_item["step", step.pk]
        step_view = StepView(
            step, len(view.steps) + 1, state, step_answer_url(step.pk), reveal_url=reveal_url("step", step.pk)
        )
        if step.hints_html and step.calculator:
            step_view.hints = Hints.of(step.hints_html, state, step.points, hint_url("step", step.pk))
        view.steps.append(step_view)
    for view in walkthroughs.values():
        wanted = (positions or {}).get(view.walkthrough.key)
        view.current = next((sv.number for sv in view.steps if sv.step.order == wanted), 1)

    challenge_views = {
        ch.pk: ChallengeView(
            ch,
            by_item["challenge", ch.pk],
            challenge_draw(identity, ch, draws),
            challenge_url(ch.pk),
            calculator_url(ch.calculator),
            hints=Hints.of(ch.hints_html, by_item["challenge", ch.pk], ch.points, hint_url("challenge", ch.pk))
            if ch.hints_html
            else None,
            reveal_url=reveal_url("challenge", ch.pk),
        )
        for ch in challenges
    }

    write_url = url_maker("write-open-question", lesson.slug)
    open_answer_url = url_maker("answer-open-question", lesson.slug)
    open_questions: dict[int, OpenQuestionView] = {}
    for point in data.checklist:
        question = point.question
        if question.pk not in open_questions:
            open_questions[question.pk] = OpenQuestionView(
                question,
                [],
                by_item["open_question", question.pk],
                write_url(question.pk),
                open_answer_url(question.pk),
            )
        open_questions[question.pk].checklist.append(point)

    section_views = {s.pk: SectionView(s) for s in sections}
    placed = [
        *((v.deep_dive.section_id, v.deep_dive.order, v) for v in deep_dives.values() if not v.is_follow_up),
        *((v.walkthrough.section_id, v.walkthrough.order, v) for v in walkthroughs.values()),
        *((v.challenge.section_id, v.challenge.order, v) for v in challenge_views.values()),
        *((v.question.section_id, v.question.order, v) for v in open_questions.values()),
    ]
    for section_id, _order, view in sorted(placed, key=lambda t: (t[0], t[1])):
        if section_id in section_views:
            section_views[section_id].items.append(view)

    layers = []
    layer_url = f"{lesson.get_absolute_url()}?layer="
    for each in Layer:
        in_layer = [section_views[s.pk] for s in sections if s.layer == each]
        if in_layer:
            minutes = sum(s.section.minutes for s in in_layer)
            layers.append(LayerView(each.value, each.label, minutes, in_layer, f"{layer_url}{each.value}"))
            layers[-1].split(lesson.get_absolute_url())
    for before, after in zip(layers, layers[1:], strict=False):
        before.next = after
    wanted_layer = layer if layer is not None else layers[0].number if layers else None
    current = next((view for view in layers if view.number == wanted_layer), None)
    if current is not None and section is not None:
        current.part = current.part_holding(section) or 1
    if resume_url and resume_url.startswith("#"):  # an item's anchor: on the page of the layer holding it
        resume_url = layer_holding(layers, resume_url[1:])

    score = Score()
    for view in deep_dives.values():
        if counts_toward_score(view.is_follow_up, view.reached):
            score.add(view.deep_dive.points, *first_points(view.state))
    for view in walkthroughs.values():
        for step_view in view.steps:
            if step_view.step.calculator:
                score.add(step_view.step.points, *first_points(step_view.state))
    for view in challenge_views.values():
        score.add(view.challenge.points, *first_points(view.state))
    for view in open_questions.values():
        score.add(view.question.points, *first_points(view.state))
    return LessonPage(
        lesson=lesson,
        layers=layers,
        deep_dives=deep_dives,
        walkthroughs=walkthroughs,
        challenges=challenge_views,
        open_questions=open_questions,
        # Nothing answered and no place kept: start at the beginning of the reading, not at the first question.
        resume_url=resume_url
        or (
            first_unanswered(layers)
            if score.answered
            else f"{layers[0].url}#layer-{layers[0].number}"
            if layers
            else None
        ),
        score=score,
        current=current,
    )


def first_points(state: ItemState) -> tuple[int | None, int | None]:
    """Return the first answer's points and what the item was worth then (Score.add), or (None, None)."""
    return (state.first.points, state.first.max_points) if state.first else (None, None)


def load_answers(lookup: dict, items: dict[str, list[int]]) -> dict[tuple[str, int], ItemState]:
    """Return each item's state in two queries, however many retries were recorded.

    ``items`` maps item kinds (AboutItem.ITEM_KINDS) to the ids wanted. Every answer updates
    its item's review card in the same transaction: the card names the first answer (it
    scores), the latest and the count of tries. Hints, reveals and drafts come from ItemPractice.

    The practice rows are read first. An answer stored by another request between the two reads (a double
    click) then shows in the cards with whatever it wrote to the practice rows left unseen, never the other way
    round: a follow-up reached with the answer that reached it unseen made its parent look held (409).
    """
    practice = list(ItemPractice.objects.filter(ItemPractice.items_q(items), **lookup).order_by())
    cards = (
        ReviewCard.objects.filter(ReviewCard.items_q(items), **lookup, first_answer__isnull=False)
        .select_related("first_answer", "latest_answer")
        .order_by()
    )
    states = {
        card.item_key: ItemState(
            first=card.first_answer,
            latest=card.latest_answer or card.first_answer,
            count=max(card.reviews, 1),
            card=card,
        )
        for card in cards
    }
    for row in practice:
        states.setdefault(row.item_key, ItemState()).practice = row
    return states


@dataclass(frozen=True)
class Place:
    """Where a learner left off: a lesson and the URL of their place in it."""

    lesson: Lesson
    url: str


def latest_place(lookup: dict, lessons: list[Lesson]) -> Place | None:
    """Return where the learner left off in the lesson of their latest answer among ``lessons`` (one query).

    The place is the one the lesson's Resume button goes to (LessonProgress, kept by every answer
    on the lesson pages); an answer through the API keeps none, and the lesson's page stands in.
    """
    by_pk = {lesson.pk: lesson for lesson in lessons}
    in_lesson = Coalesce(*Answer.LESSON_PATHS.values())
    position = LessonProgress.objects.filter(**lookup, lesson=OuterRef("in_lesson")).values("url")[:1]
    row = (
        Answer.objects.filter(**lookup)
        .annotate(in_lesson=in_lesson)
        .filter(in_lesson__in=list(by_pk))
        .order_by("-created_at", "-pk")
        .values_list("in_lesson", Subquery(position))
        .first()
    )
    if row is None:
        return None
    lesson = by_pk[row[0]]
    url = row[1]
    if url and "/walkthroughs/" in url and not still_placed(lesson_content(lesson), url):
        url = None  # the lesson's page, whose Resume starts at the first unanswered item
    return Place(lesson, url or lesson.get_absolute_url())


def listed(items: Iterable) -> str:
    """Return ``items`` as a sentence lists them: "1", "1 and 2", "1, 2 and 3"."""
    words = [str(item) for item in items]
    return f"{', '.join(words[:-1])} and {words[-1]}" if len(words) > 1 else "".join(words)


def first_unanswered(layers: list[LayerView]) -> str | None:
    """Return the URL of the first item not yet answered (on its section's page), or None when all are."""
    return next((url for _layer, url in unanswered(layers)), None)


def drawn_items(section: SectionView) -> Iterator:
    """Yield the views a section's page draws, in page order: each item, a deep dive followed by the follow-ups its
    answers opened (drawn below it, reached ones only), theirs below them."""
    todo = list(reversed(section.items))
    while todo:
        view = todo.pop()
        yield view
        todo += reversed(getattr(view, "follow_up_views", []))


def unanswered(layers: list[LayerView]) -> Iterator[tuple[int, str]]:
    """Yield (its layer, its URL on its section's page) for each question of ``layers`` not yet answered, in page
    order (``drawn_items``): a deep dive and its follow-ups; a walkthrough's step asking for a number (each); a
    challenge; an open question."""
    for layer in layers:
        for section in layer.sections:
            for view in drawn_items(section):
                if isinstance(view, WalkthroughView):  # each step on its own page: the first of them is open
                    for step in view.steps:
                        if step.step.calculator and not step.answered:
                            yield layer.number, f"{view.step_url(step.step.order)}#{view.walkthrough.anchor}"
                elif not view.answered:
                    yield layer.number, f"{section.url}#{item_of(view).anchor}"


def item_of(view) -> DeepDive | Walkthrough | Challenge | OpenQuestion:
    """Return the content row an item's view shows (any kind)."""
    return getattr(view, "question" if view.kind == "open_question" else view.kind)


def layer_holding(layers: list[LayerView], anchor: str) -> str | None:
    """Return the URL of ``anchor`` (an item, a follow-up or a section) on its section's page; None when gone."""
    for layer in layers:
        for section in layer.sections:
            if section.section.anchor == anchor or any(item_of(view).anchor == anchor for view in drawn_items(section)):
                return f"{section.url}#{anchor}"
    return None
