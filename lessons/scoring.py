"""The one scorer: how graded items and first answers add up, for lesson pages, home and results."""

from __future__ import annotations

from dataclasses import dataclass

ACCEPTABLE_SHARE = 0.5  # of a deep dive's points that an acceptable choice earns (rounded down)


def choice_points(verdict: str, max_points: int) -> int:
    """Return what a choice earns: best all of the deep dive's points, acceptable a set share, weak none."""
    if verdict == "best":
        return max_points
    if verdict == "acceptable":
        return int(max_points * ACCEPTABLE_SHARE)
    return 0


# The practice rules (README "Practice rules"): the first answer to an item scores; retries,
# "try again" and review are recorded but never change a score.
MAX_HINTS = 3  # hints an author may give a deep dive or a numeric item
HINT_COST = 0.2  # share of an item's points each hint taken before the first answer takes off
HINT_RULE = "Each hint you take before your first answer takes 20% of this question's points off that answer."
OPEN_CORRECT_SHARE = 0.8  # an open question whose ticked share reaches this counts as recalled
OPEN_PARTIAL_SHARE = 0.4


def reveal_earned(latest_outcome: str | None, tries: int, asked: bool) -> bool:
    """Return whether the other approaches (or a number's worked arithmetic) may be shown.

    Only once answered: after a right answer, a second try, or when the learner asked for it.
    """
    if latest_outcome is None:
        return False
    return latest_outcome == "correct" or tries > 1 or asked


def hint_cost(max_points: int, hints: int) -> int:
    """Return the points ``hints`` taken before the first answer cost, for an item worth ``max_points``."""
    return round(max_points * HINT_COST * min(hints, MAX_HINTS))


def after_hints(points: int, max_points: int, hints: int) -> int:
    """Return an answer's points once the hints taken before it are paid for (never below zero)."""
    return max(points - hint_cost(max_points, hints), 0)


@dataclass(frozen=True)
class ChecklistGrade:
    """An open question graded by its checklist: the share of points ticked is the score."""

    ticked: int
    total: int

    @property
    def share(self) -> float:
        return self.ticked / self.total if self.total else 0.0

    @property
    def outcome(self) -> str:
        share = self.share
        return "correct" if share >= OPEN_CORRECT_SHARE else "partial" if share >= OPEN_PARTIAL_SHARE else "incorrect"

    @property
    def message(self) -> str:
        return f"You covered {self.ticked} of the {self.total} points a strong answer makes."

    def points(self, max_points: int) -> int:
        return round(max_points * self.share)


def checklist_grade(ticked: int, total: int) -> ChecklistGrade:
    """Grade an open question (in a lesson, a review or an interview): ``ticked`` of its ``total`` points."""
    return ChecklistGrade(ticked, total)


def hints_owed(answered: bool, hints_taken: int) -> int:
    """Return the hints an item's next answer pays for: those taken, until the first answer is given."""
    return 0 if answered else hints_taken


def is_miss(first_outcome: str | None) -> bool:
    """Return whether a first answer (it scores) was not fully right: the results list it among the missed first
    answers and the lesson's outline marks it; a right retry does not change that."""
    return first_outcome is not None and first_outcome != "correct"


def right_on_retry(first_outcome: str | None, latest_outcome: str | None) -> bool:
    """Return whether a miss was got right since: its latest try (``latest_outcome``: a retry or a review recall)
    is right (the first answer still scores)."""
    return is_miss(first_outcome) and latest_outcome == "correct"


def counts_toward_score(is_follow_up: bool, reached: bool) -> bool:
    """Return whether an item counts toward a lesson's total: a follow-up once the learner reached it.

    A follow-up is reached once any of the learner's answers to its parent (first or retry) picked
    a choice that leads to it (``services.reach`` records it then, on the follow-up's practice row);
    so a total counts what the learner can answer, and it never shrinks (a later answer cannot close
    a follow-up already opened).
    """
    return not is_follow_up or reached


@dataclass
class Score:
    points: int = 0
    max_points: int = 0
    answered: int = 0
    total: int = 0

    def add(self, max_points: int, first_points: int | None, first_max: int | None = None) -> int:
        """Count one graded item worth ``max_points``; ``first_points`` is its first answer's, if any.

        ``first_max``: what the item was worth when that answer was given. An answered item counts that, so an
        author who changes its points later never makes a score run past 100% (10 of 2) or shrink an old one.
        Returns what the item counted for.
        """
        if first_points is not None and first_max is not None:
            max_points = first_max
        self.total += 1
        self.max_points += max_points
        if first_points is not None:
            self.answered += 1
            self.points += first_points
        return max_points

    def add_score(self, other: Score) -> None:
        for name in ("points", "max_points", "answered", "total"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    @property
    def percent(self) -> int:
        """Points earned out of points available, in percent."""
        return round(100 * self.points / self.max_points) if self.max_points else 0

    @property
    def progress(self) -> int:
        """Items answered out of items counted, in percent."""
        return round(100 * self.answered / self.total) if self.total else 0


@dataclass
class TopicScore(Score):
    topic: str = ""  # the topic's slug
    label: str = ""  # its name
    answered_max: int = 0

    def add(self, max_points: int, first_points: int | None, first_max: int | None = None) -> int:
        counted = super().add(max_points, first_points, first_max)
        if first_points is not None:
            self.answered_max += counted
        return counted

    @property
    def mastery(self) -> float:
        """Points earned over points available among answered items, 0 to 1."""
        return self.points / self.answered_max if self.answered_max else 0.0
