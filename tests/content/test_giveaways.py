"""The give-away lint (lessons.content.validate.giveaway_warnings): each rule, and shipped content clean."""

import shutil
from io import StringIO
from pathlib import Path

import pytest
import yaml
from django.core.management import call_command

from lessons.content.validate import ABSOLUTE_WORDS, giveaway_warnings
from lessons.models import Choice

CONTENT = Path(__file__).resolve().parents[2] / "content"


def choice(text, verdict="weak", follow_up=None):
    made = {"text": text, "verdict": verdict, "feedback": "Why."}
    return {**made, "follow_up": follow_up} if follow_up else made


def deep_dive(key, choices, prompt="Which one?"):
    return {"deep_dive": {"key": key, "topic": "routing", "prompt": prompt, "choices": choices}}


def lesson(*deep_dives):
    return {"slug": "made-up", "sections": [{"key": "only", "items": list(deep_dives)}]}


def balanced(key, best_at=0):
    """A deep dive whose best choice (at position best_at) is one character shorter than the others."""
    texts = ["Route by a hash key.", "Route at random now.", "Route by the queue."]
    return deep_dive(
        key, [choice(t[:-1] if i == best_at else t, "best" if i == best_at else "weak") for i, t in enumerate(texts)]
    )


def best_longest(key):
    return deep_dive(key, [choice("Least queued tokens.", "best"), choice("Hash by user."), choice("Round robin.")])


def test_a_clean_lesson_has_no_warnings():
    clean = lesson(
        deep_dive(
            "pick",
            [
                choice("Least load, measured in queued tokens.", "best", "why"),
                choice("Round robin across all the replicas."),
                choice("Hash the user id onto a replica ring.", "acceptable"),
            ],
        ),  # fmt: skip
        deep_dive(
            "why",
            [
                choice("Tokens, not requests, fill the cache.", "best"),
                choice("Because requests take the same time each."),
                choice("Because the replicas are all equal in size."),
            ],
        ),  # fmt: skip
        balanced("third"),
    )
    assert giveaway_warnings(clean) == []


def test_best_is_longest_in_more_than_a_third_of_the_deep_dives_is_caught():
    # 2 of 6 deep dives may have the longest best choice (a third); 3 may not.
    two = lesson(best_longest("a"), best_longest("b"), *(ranked(k, 2 + n % 3) for n, k in enumerate("cdef")))
    three = lesson(
        best_longest("a"), best_longest("b"), best_longest("c"), *(ranked(k, 2 + n) for n, k in enumerate("def"))
    )
    assert giveaway_warnings(two) == []
    (warning,) = [w for w in giveaway_warnings(three) if "best is longest" in w]
    assert "Lesson 'made-up'" in warning
    assert "3 of 6 deep dives (a, b, c)" in warning
    assert "at most 2" in warning


def test_a_tie_for_longest_counts_as_best_is_longest():
    same = [choice("Route by a hash key.", "best"), choice("Route at random now."), choice("Route by the queue.")]
    tied = lesson(deep_dive("a", same))  # the best choice is as long as the longest: length still points at it
    assert any("best is longest" in w and "(a)" in w for w in giveaway_warnings(tied))


def ranked(key, rank):
    """A deep dive of four choices, 10 to 13 characters long, whose best choice is the ``rank``-th longest."""
    texts = ["a" * 13, "b" * 12, "c" * 11, "d" * 10]
    return deep_dive(key, [choice(t, "best" if n == rank else "weak") for n, t in enumerate(texts, start=1)])


def test_best_at_one_length_rank_in_more_than_half_of_the_deep_dives_is_caught():
    """The best choice was the second longest in 39 of 81 shipped deep dives (chance: about 22): a learner
    who skipped the longest and took the next beat thinking."""
    half = lesson(ranked("a", 2), ranked("b", 2), ranked("c", 3), ranked("d", 4))
    assert giveaway_warnings(half) == []
    three = lesson(ranked("a", 2), ranked("b", 2), ranked("c", 2), ranked("d", 4))
    (warning,) = giveaway_warnings(three)
    assert warning == (
        "Lesson 'made-up': the best choice is the second longest in 3 of 4 deep dives (a, b, c); at most half may "
        "be, or skipping the longest and taking the next finds the answer: lengthen another choice, or trim the "
        "best one (rule: same length rank)."
    )
    # With fewer than four deep dives a repeated rank is chance, not a pattern.
    assert giveaway_warnings(lesson(ranked("a", 3), ranked("b", 3), ranked("c", 3))) == []


def test_a_warning_names_at_most_ten_deep_dives_and_counts_the_rest():
    """A warning naming 200 deep dives (the bench's generated lesson did) is no use to an author: ten, and a count."""
    keys = [f"m{n}" for n in range(1, 26)]
    (warning,) = giveaway_warnings(lesson(*(ranked(key, 2) for key in keys)))
    assert (
        "the second longest in 25 of 25 deep dives (m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, … and 15 more);" in warning
    )
    (warning,) = giveaway_warnings(lesson(*(best_longest(key) for key in keys[:12])))
    assert "the longest in 12 of 12 deep dives (m1, m2, m3, m4, m5, m6, m7, m8, m9, m10, … and 2 more);" in warning
    (warning,) = giveaway_warnings(lesson(*(ranked(key, 3) for key in keys[:10])))  # ten are named in full
    assert "(m1, m2, m3, m4, m5, m6, m7, m8, m9, m10);" in warning and "more" not in warning


def best_rank(dive: dict) -> int:
    """The best choice's length rank among its deep dive's choices: 1 the longest (a tie ranks with the best)."""
    lengths = [len(c["text"].strip()) for c in dive["choices"]]
    best = next(len(c["text"].strip()) for c in dive["choices"] if c["verdict"] == "best")
    return 1 + sum(length > best for length in lengths)


def test_across_the_course_no_length_rank_points_at_the_best_choice():
    """Whatever rank a learner bets on (longest, second longest, ...), it finds the best choice no more than
    half again as often as chance, over every shipped deep dive."""
    dives = [
        item["deep_dive"]
        for path in sorted((CONTENT / "lessons").glob("*.yaml"))
        for section in yaml.safe_load(path.read_text(encoding="utf-8"))["sections"]
        for item in section.get("items") or []
        if "deep_dive" in item
    ]
    assert len(dives) > 60
    for rank in range(1, max(len(d["choices"]) for d in dives) + 1):
        hits = sum(best_rank(d) == rank for d in dives)
        by_chance = sum(1 / len(d["choices"]) for d in dives if len(d["choices"]) >= rank)
        assert hits < by_chance * 1.5, (rank, hits, by_chance)


def test_a_choice_over_twice_the_median_of_the_others_is_caught():
    long_choice = "x" * 41
    dive = deep_dive("sizes", [choice("y" * 20, "best"), choice("z" * 20), choice(long_choice), choice("w" * 21)])
    warnings = giveaway_warnings(lesson(dive, balanced("b", 1), balanced("c", 2)))
    (warning,) = warnings
    assert warning.startswith("Lesson 'made-up', deep dive 'sizes': choice 3 is 41 characters")
    assert "(rule: long choice)" in warning


def test_a_choice_exactly_twice_the_median_is_allowed():
    dive = deep_dive("sizes", [choice("y" * 20, "best"), choice("z" * 20), choice("x" * 40), choice("w" * 20)])
    assert giveaway_warnings(lesson(dive, balanced("b", 1), balanced("c", 2))) == []


def test_a_follow_up_restating_its_parents_best_choice_is_caught():
    parent = deep_dive(
        "pick",
        [choice("Route each request to the replica with the fewest queued tokens.", "best", "why"),
         choice("Round robin across all the healthy replicas."),
         choice("Hash the user id onto a consistent ring.", "acceptable")],
    )  # fmt: skip
    follow_up = deep_dive(
        "why",
        [choice("The queue would drain faster.", "best"), choice("Requests all cost the same."),
         choice("The GPUs differ in their size.")],
        prompt="You said: route to the replica with the FEWEST queued tokens. Why?",
    )  # fmt: skip
    warnings = giveaway_warnings(lesson(parent, follow_up, balanced("third", 1)))
    (warning,) = warnings
    assert "deep dive 'why': its prompt repeats" in warning
    assert "'pick'" in warning and "(rule: restated best)" in warning


def test_a_follow_up_choice_restating_its_parents_best_choice_is_caught():
    parent = deep_dive(
        "pick",
        [choice("Cap each tenant with a token bucket at the gateway.", "acceptable", "why"),
         choice("Shed the free tier first when queues pass two seconds.", "best"),
         choice("Add replicas until the queue drains on its own.")],
    )  # fmt: skip
    follow_up = deep_dive(
        "why",
        [choice("Buckets refill too slowly for a spike.", "best"),
         choice("Shed the free tier first when queues grow."),
         choice("Nothing: the bucket is enough on its own.")],
    )  # fmt: skip
    (warning,) = giveaway_warnings(lesson(parent, follow_up, balanced("third", 2)))
    assert "deep dive 'why': its choice 2 repeats \"shed the free tier first when\"" in warning


def absolute(key, text="Route at random, always.", best="Route by the queue."):
    """A deep dive whose weak choice ``text`` (by default) uses an absolute word; the best is the shortest."""
    return deep_dive(key, [choice(best, "best"), choice(text), choice("Route by a hash key.")])


def test_absolute_words_in_three_choices_that_are_not_the_best_are_caught():
    """A learner who rules out every choice with an absolute word ("always", "never", "the only") should not
    thereby keep the best one."""
    three = lesson(absolute("a"), absolute("b", "NEVER route by the queue."), absolute("c", "It works on its own."))
    (warning,) = giveaway_warnings(three)
    assert warning == (
        "Lesson 'made-up': 3 choices that are not the best, in 3 deep dives (a, b, c), use an absolute word "
        '("always", "never", "the only", ...) and no best choice does; at most 2 may, or ruling out absolutes '
        "finds the answer: reword the choice so its reason, not an absolute, carries it; or let a best choice "
        "state a true absolute (rule: absolute words)."
    )


def test_at_all_and_ever_count_as_absolutes():
    """A newcomer still ruled out "…adds no memory at all" and "…no running stream ever pauses" (the re-check)."""
    three = lesson(absolute("a", "It adds no memory at all."), absolute("b", "No stream ever pauses."), absolute("c"))
    assert any("(rule: absolute words)" in w and "(a, b, c)" in w for w in giveaway_warnings(three))
    assert (
        giveaway_warnings(lesson(absolute("a"), absolute("b"), absolute("c", "However, evergreen at allocation.")))
        == []
    )


def test_two_absolute_choices_or_a_best_choice_using_one_pass():
    assert giveaway_warnings(lesson(absolute("a"), absolute("b"), balanced("c"))) == []
    # Whole words only: "nevertheless" and "alwayson" are not absolutes.
    assert giveaway_warnings(lesson(absolute("a"), absolute("b"), absolute("c", "Nevertheless, at alwayson."))) == []
    # A best choice stating a true absolute: absolutes no longer rule the best choice out.
    assert giveaway_warnings(lesson(absolute("a"), absolute("b"), absolute("c", best="Never at random."))) == []


def test_across_the_course_ruling_out_absolutes_gives_nothing_away():
    """Best choices use an absolute word at least a third as often as the others do, or at most three of the
    others use one in all: once 19 choices that were not the best used one and no best choice did."""
    choices = [
        c
        for path in sorted((CONTENT / "lessons").glob("*.yaml"))
        for section in yaml.safe_load(path.read_text(encoding="utf-8"))["sections"]
        for item in section.get("items") or []
        if "deep_dive" in item
        for c in item["deep_dive"]["choices"]
    ]
    best = [bool(ABSOLUTE_WORDS.search(c["text"])) for c in choices if c["verdict"] == "best"]
    others = [bool(ABSOLUTE_WORDS.search(c["text"])) for c in choices if c["verdict"] != "best"]
    assert len(best) > 60
    assert sum(others) <= 3 or sum(best) / len(best) >= sum(others) / len(others) / 3, (sum(best), sum(others))


def test_malformed_data_gives_no_warnings_and_no_error():
    for data in (None, [], {"sections": "x"}, {"sections": [{"items": [{"deep_dive": {"choices": "x"}}]}]}):
        assert giveaway_warnings(data) == []


@pytest.mark.parametrize("path", sorted((CONTENT / "lessons").glob("*.yaml")), ids=lambda p: p.stem)
def test_shipped_lessons_give_nothing_away(path):
    assert giveaway_warnings(yaml.safe_load(path.read_text(encoding="utf-8"))) == []


@pytest.mark.django_db
def test_load_content_warns_but_still_loads_a_draft_with_a_give_away(tmp_path):
    folder = tmp_path / "content"
    shutil.copytree(CONTENT, folder)
    path = folder / "lessons" / "how-the-lab-works.yaml"
    data = yaml.safe_load(path.read_text())
    dive = next(i["deep_dive"] for s in data["sections"] for i in s.get("items") or [] if "deep_dive" in i)
    dive["choices"][-1]["text"] = "A padded choice. " * 40
    path.write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True))
    for check in (True, False):
        err = StringIO()
        call_command("load_content", dir=folder, check=check, stderr=err, stdout=StringIO())
        assert f"how-the-lab-works.yaml: Lesson 'how-the-lab-works', deep dive '{dive['key']}'" in err.getvalue()
        assert "(rule: long choice)" in err.getvalue()
    assert Choice.objects.filter(text=dive["choices"][-1]["text"].strip()).exists()


@pytest.mark.django_db
def test_a_choices_primary_key_does_not_say_which_is_best(content):
    """A choice's button sends its primary key. Created in authored order, with the best approach often
    written first, the lowest key was the best in 54 of 81 deep dives: the answer, in the page's source."""
    by_deep_dive: dict[int, list[Choice]] = {}
    for row in Choice.objects.order_by("pk"):
        by_deep_dive.setdefault(row.deep_dive_id, []).append(row)
    lowest_best = sum(rows[0].verdict == "best" for rows in by_deep_dive.values())
    by_chance = sum(1 / len(rows) for rows in by_deep_dive.values())  # about a quarter: four choices apiece
    assert len(by_deep_dive) > 60
    assert lowest_best < by_chance * 1.5, (lowest_best, by_chance, len(by_deep_dive))
    # Each still shows in its authored place where the author pinned the order, and exports as written.
    assert all(
        [c.order for c in sorted(rows, key=lambda c: c.order)] == list(range(1, len(rows) + 1))
        for rows in by_deep_dive.values()
    )
