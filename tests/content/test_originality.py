"""Check that no lesson file repeats eight consecutive words of the source documents."""

from pathlib import Path

import yaml

from lessons.content.validate import word_runs, words

REPO = Path(__file__).resolve().parents[2]
CONTENT = REPO / "content"
SHARED_SEEDS = REPO.parent / "shared" / "seeds"
# Copies of the source documents, so the test also runs on a clean clone.
VENDORED_SEEDS = Path(__file__).resolve().parent / "seeds"
RUN = 8


def runs(text: str, size: int = RUN) -> set[tuple[str, ...]]:
    """Return every run of `size` consecutive words in text."""
    return word_runs(text, size)


def seed_files() -> list[Path]:
    folder = SHARED_SEEDS if SHARED_SEEDS.is_dir() else VENDORED_SEEDS
    return sorted(folder.glob("*.txt"))


def seed_runs() -> set[tuple[str, ...]]:
    found: set[tuple[str, ...]] = set()
    for path in seed_files():
        found |= runs(path.read_text(encoding="utf-8"))
    return found


def content_files() -> list[Path]:
    return sorted(CONTENT.rglob("*.yaml"))


def strings_in(node) -> list[str]:
    """Return every string value in a parsed YAML document."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for value in node.values() for s in strings_in(value)]
    if isinstance(node, list):
        return [s for value in node for s in strings_in(value)]
    return []


def copied_runs(path: Path, seeds: set[tuple[str, ...]]) -> set[str]:
    text = path.read_text(encoding="utf-8")
    # The raw text catches runs that span YAML lines; the parsed strings catch
    # runs hidden behind escapes in quoted scalars.
    texts = [text, *strings_in(yaml.safe_load(text))]
    return {" ".join(run) for t in texts for run in runs(t) & seeds}


def test_seed_documents_are_found():
    assert len(seed_files()) == 2
    assert len(seed_runs()) > 1000


def test_vendored_seeds_match_the_shared_ones():
    if not SHARED_SEEDS.is_dir():
        return
    for shared in sorted(SHARED_SEEDS.glob("*.txt")):
        vendored = VENDORED_SEEDS / shared.name
        assert vendored.read_bytes() == shared.read_bytes(), vendored


def test_there_is_content_to_check():
    assert (CONTENT / "tracks.yaml").is_file()
    assert len(list((CONTENT / "lessons").glob("*.yaml"))) >= 1


def test_the_check_catches_a_copied_run():
    seeds = seed_runs()
    sentence = "The plain job is arithmetic: arrivals divided across the fleet."
    assert runs(sentence) & seeds
    assert not runs("Spread the arrivals so that every card is equally busy.") & seeds


def test_words_ignore_case_and_punctuation():
    assert words("Round-robin, or LEAST-loaded; don't!") == [
        "round",
        "robin",
        "or",
        "least",
        "loaded",
        "dont",
    ]


def test_no_content_file_repeats_eight_words_of_a_source_document():
    seeds = seed_runs()
    copied = {}
    for path in content_files():
        found = copied_runs(path, seeds)
        if found:
            copied[str(path.relative_to(REPO))] = sorted(found)
    assert not copied, f"Runs of {RUN} words copied from the sources: {copied}"
