"""Claims an expert review found wrong in the source documents stay corrected in the shipped lessons."""

import re
from pathlib import Path

import pytest
import yaml

CONTENT = Path(__file__).resolve().parents[2] / "content" / "lessons"


def texts(node):
    """Yield every string in a lesson file, however deeply nested."""
    if isinstance(node, str):
        yield node
    elif isinstance(node, dict):
        for value in node.values():
            yield from texts(value)
    elif isinstance(node, list):
        for value in node:
            yield from texts(value)


def all_texts() -> list[tuple[str, str]]:
    return [
        (path.name, " ".join(text.split()))
        for path in sorted(CONTENT.glob("*.yaml"))
        for text in texts(yaml.safe_load(path.read_text(encoding="utf-8")))
    ]


# Under round robin every card keeps its own LRU prefix cache and sees the same mix of
# families, so popular families stay resident everywhere; hits collapse only for the tail.
ROUND_ROBIN_MYTHS = [
    r"round robin throws away",
    r"hit share round robin throws away",
    r"in practice hits are rare",
    r"too few to keep its opening resident",
    r"bigger cache does not rescue round robin",
    r"round robin is polite and cache-blind",
]


@pytest.mark.parametrize("myth", ROUND_ROBIN_MYTHS)
def test_no_lesson_repeats_the_round_robin_myth(myth):
    found = [name for name, text in all_texts() if re.search(myth, text, re.IGNORECASE)]
    assert found == [], f"{myth!r} is stated as a fact in {found}"


def test_the_one_in_n_figure_always_comes_with_its_assumption():
    """The source's "one time in N" only holds if each family's opening lives on exactly one card."""
    quoting = [(name, text) for name, text in all_texts() if re.search(r"one time in N|100% / N", text)]
    assert quoting, "the lessons should still teach the source's figure, with its assumption"
    for name, text in quoting:
        assert re.search(r"exactly one card|assumption", text), f"{name}: {text[:120]}..."


# Engine details that changed or were wrong: vLLM renamed its KV-use metric and its V1 engine
# preempts by recomputation only; nginx buffers responses unless told not to; the usage chunk
# of a stream is sent only when asked for; gpu_memory_utilization's 10% is not kept for activations.
OUTDATED = [
    r"gpu_cache_usage_perc`(?!\s+in older)",
    r"proxies untouched",
    r"keeps 10% back for activations",
]


@pytest.mark.parametrize("claim", OUTDATED)
def test_no_lesson_states_an_outdated_engine_detail(claim):
    found = [name for name, text in all_texts() if re.search(claim, text)]
    assert found == [], f"{claim!r} in {found}"


def test_the_usage_chunk_is_taught_with_the_option_that_asks_for_it():
    mentions = [text for _name, text in all_texts() if "usage chunk" in text or "carrying the token usage" in text]
    assert mentions
    assert all("include_usage" in text for text in mentions)
