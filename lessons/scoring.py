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


def counts_toward_score(is_follow_up: bool, answered: bool) -> bool:
    """Return whether an item counts: a follow-up only once answered (opening it is not enough)."""
    return not is_follow_up or answered


@dataclass
class Score:
    points: int = 0
    max_points: int = 0
    answered: int = 0
    total: int = 0

    def add(self, max_points: int, first_points: int | None) -> None:
        """Count one graded item worth ``max_points``; ``first_points`` is its first answer's, if any."""
        self.total += 1
        self.max_points += max_points
        if first_points is not None:
            self.answered += 1
            self.points += first_points

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

    def add(self, max_points: int, first_points: int | None) -> None:
        super().add(max_points, first_points)
        if first_points is not None:
            self.answered_max += max_points

    @property
    def mastery(self) -> float:
        """Points earned over points available among answered items, 0 to 1."""
        return self.points / self.answered_max if self.answered_max else 0.0
