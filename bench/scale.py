"""Write the bench's content folder: the shipped lessons plus two generated ones of 2 and 200 deep dives.

The generated lessons have the same shape and differ only in size, so their pages must cost
the same number of queries. They are written in the documented content format and loaded
with ``manage.py load_content --dir``, as an instructor's files would be.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
TRACK = "bench"
SMALL, LARGE = 2, 200


def lesson_slug(deep_dives: int) -> str:
    return f"bench-{deep_dives}-deep-dives"


# Each verdict's choice in three lengths (short, middle, long; every short one shorter than every middle
# one, every middle one shorter than every long one), so a deep dive's choices rank as its slots say.
CHOICES = {
    "best": (
        ("Batch continuously, admitting new requests at each decode step.",
         "Batch requests continuously, admitting new ones at every decode step.",
         "Batch requests continuously, admitting new ones at every decode step as slots free."),
        "Right: **continuous batching** keeps the GPU busy as requests finish.",
    ),
    "acceptable": (
        ("Wait for a full static batch before starting any request.",
         "Wait for a full static batch of requests before starting any of them.",
         "Wait for a full static batch of requests before starting any of them on the GPU."),
        "It fills the batch, but short requests wait for the *longest* one.",
    ),
    "weak": (
        ("Serve one request at a time, so each one streams fast.",
         "Serve one request at a time, so each one streams as fast as it can.",
         "Serve one request at a time, so each one streams as fast as the GPU allows."),
        "Decoding is memory-bound: one stream leaves most of the GPU idle.",
    ),
}  # fmt: skip
LONG, MIDDLE, SHORT = 2, 1, 0  # indexes into a verdict's texts


def moment_choices(number: int) -> list[dict]:
    """Return deep dive ``number``'s three choices, passing the give-away rules as real content must.

    Which length rank the best choice has, and where it stands in the list, go round with ``number``:
    the longest in a third of the deep dives (those numbered 3, 6, ...; none of a lesson of 2), the
    second and third longest in the rest, so no rank holds more than half of a lesson.
    """
    best = (LONG, MIDDLE, SHORT)[number % 3]
    others = [slot for slot in (LONG, MIDDLE, SHORT) if slot != best]
    if (number // 3) % 2:
        others.reverse()
    slots = dict(zip(("best", "acceptable", "weak"), [best, *others], strict=True))
    choices = [
        {"text": texts[slots[verdict]], "verdict": verdict, "feedback": feedback}
        for verdict, (texts, feedback) in CHOICES.items()
    ]
    turn = (number // 3) % 3  # the best first, second or third in the file
    return choices[-turn:] + choices[:-turn] if turn else choices


def generated_lesson(deep_dives: int) -> dict:
    """Return a lesson of ``deep_dives`` interview moments, ten to a section, each with three choices."""
    sections = []
    for start in range(0, deep_dives, 10):
        items = []
        for number in range(start + 1, min(start + 10, deep_dives) + 1):
            items.append(
                {
                    "deep_dive": {
                        "key": f"moment-{number}",
                        "topic": "batching",
                        "prompt": f"“Moment {number}: the queue grows at peak. What do you change first?”",
                        "choices": moment_choices(number),
                    }
                }
            )
        sections.append(
            {
                "key": f"part-{start // 10 + 1}",
                "layer": 2,
                "title": f"Moments {start + 1} to {min(start + 10, deep_dives)}",
                "minutes": 2,
                "body": f"Ten interview moments, from {start + 1} on. *Markdown* is rendered here too.",
                "items": items,
            }
        )
    return {
        "format": 1,
        "slug": lesson_slug(deep_dives),
        "track": TRACK,
        "order": deep_dives,
        "title": f"Bench: {deep_dives} deep dives",
        "kind": "concept",
        "summary": f"A generated lesson of {deep_dives} interview moments, for make bench.",
        "sections": sections,
    }


def write_content(directory: Path, shipped: bool = True) -> Path:
    """Write the bench track and the two generated lessons into ``directory``, after a copy of content/; return it.

    With ``shipped=False`` only the generated lessons are written (quicker to load, for tests).
    """
    if shipped:
        shutil.copytree(ROOT / "content", directory, dirs_exist_ok=True)
    (directory / "lessons").mkdir(parents=True, exist_ok=True)
    tracks_file = directory / "tracks.yaml"
    tracks = yaml.safe_load(tracks_file.read_text()) if tracks_file.exists() else {"format": 1, "tracks": []}
    if not any(track["slug"] == TRACK for track in tracks["tracks"]):
        tracks["tracks"].append({"slug": TRACK, "title": "Bench", "summary": "Generated lessons for make bench."})
    tracks_file.write_text(yaml.safe_dump(tracks, sort_keys=False, allow_unicode=True))
    for deep_dives in (SMALL, LARGE):
        path = directory / "lessons" / f"{lesson_slug(deep_dives)}.yaml"
        path.write_text(yaml.safe_dump(generated_lesson(deep_dives), sort_keys=False, allow_unicode=True))
    return directory


def layer_pages(url: str) -> list[str]:
    """Return the pages of a lesson's three layers: a learner reads layer 1 and answers on layers 2 and 3."""
    return [f"{url}?layer={layer}" for layer in (1, 2, 3)]
