"""Check the shipped lessons against the curriculum: structure, branching, and every number they ask for."""

import itertools
import math
import re
from pathlib import Path

import pytest
import yaml

from calculators.registry import get_calculator
from calculators.simulator import REFERENCE_SLUGS, simulated_value

CONTENT = Path(__file__).resolve().parents[2] / "content"
CALC = re.compile(r"\{\{\s*calc\s+(?P<ref>[^}|]*?)\s*(?:\|\s*(?P<format>[A-Za-z0-9]+)\s*)?\}\}")
FORMATS = {"int", "pct", "usd", "usd2", "x", "sci", "bool", "kB", "MB", "GB", "TB", "KiB", "MiB", "GiB"} | {
    *(f"f{n}" for n in range(5)),
    *(f"pct{n}" for n in range(1, 5)),
    "points1",
    "points2",
}
CASE_STUDY_TOPICS = {
    "kv_allocation",
    "batching",
    "tensor_parallel",
    "speculative_decoding",
    "routing",
    "autoscaling",
}
SERVING = {
    "load-balancing": ("concept", 1),
    "cache-aware-routing": ("simulation", 2),
    "buying-the-fleet": ("simulation", 3),
    "design-chatgpt-tiers": ("simulation", 4),
    "llm-serving-platform": ("case_study", 5),
}
SIMULATION_OUTPUTS = {
    "cache-aware-routing": {
        ("routing", "round_robin_share"),
        ("kv-cache", "copies_per_cache"),
        ("routing", "hash_busiest_share"),
    },
    "buying-the-fleet": {
        ("fleet", "tokens_per_card_month"),
        ("fleet", "rented_cards_to_cover"),
        ("fleet", "api_usd"),
    },
    "design-chatgpt-tiers": {
        ("token-bucket", "admitted"),
        ("queue-wait", "wait_after_ms"),
        ("shed", "free_shed_rps"),
    },
}


def load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def lessons() -> dict[str, dict]:
    return {data["slug"]: data for data in map(load, sorted((CONTENT / "lessons").glob("*.yaml")))}


def items(lesson: dict, kind: str) -> list[dict]:
    return [item[kind] for section in lesson["sections"] for item in section.get("items") or [] if kind in item]


def follow_ups(lesson: dict) -> set[str]:
    return {
        choice["follow_up"]
        for dive in items(lesson, "deep_dive")
        for choice in dive["choices"]
        if choice.get("follow_up")
    }


def asks(lesson: dict) -> list[tuple[str, dict]]:
    found = [(challenge["key"], challenge["ask"]) for challenge in items(lesson, "challenge")]
    for walkthrough in items(lesson, "walkthrough"):
        found += [
            (f"{walkthrough['key']}#{n}", step["ask"])
            for n, step in enumerate(walkthrough["steps"], 1)
            if "ask" in step
        ]
    return found


def texts(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [text for value in node.values() for text in texts(value)]
    if isinstance(node, list):
        return [text for value in node for text in texts(value)]
    return []


def draws(ask: dict) -> list[dict]:
    """Return the inputs for every combination a learner could draw."""
    ranges = ask.get("ranges") or {}
    values = {}
    for name, (low, high, step) in ranges.items():
        count = round((high - low) / step) + 1
        values[name] = [low + n * step for n in range(count)]
    combos = [dict(zip(values, combo)) for combo in itertools.product(*values.values())]
    return [{**(ask.get("inputs") or {}), **combo} for combo in combos]


def expected(ask: dict, inputs: dict) -> float:
    value = get_calculator(ask["calculator"]).evaluate(inputs).outputs[ask["output"]]
    return float(value) * ask.get("scale", 1)


def accepted(answer: float, ask: dict, inputs: dict) -> bool:
    target, tolerance = expected(ask, inputs), ask["tolerance"]
    kind = ask.get("tolerance_kind", "relative")
    if kind == "nominal":
        return abs(answer - target) <= tolerance
    if kind == "geometric":
        return target / (1 + tolerance) <= answer <= target * (1 + tolerance)
    return abs(answer - target) <= abs(target) * tolerance


def test_tracks_are_serving_and_the_tour():
    tracks = load(CONTENT / "tracks.yaml")["tracks"]
    assert {track["slug"] for track in tracks} == {"serving", "tour"}


def test_serving_lessons_have_their_kinds_and_order():
    found = {slug: (data["kind"], data["order"]) for slug, data in lessons().items() if data["track"] == "serving"}
    assert found == SERVING


def test_the_tour_is_one_lesson_using_every_feature():
    tour = lessons()["how-the-lab-works"]
    assert tour["track"] == "tour"
    assert {section["layer"] for section in tour["sections"]} == {1, 2, 3}
    assert {w["kind"] for w in items(tour, "walkthrough")} == {"build_up", "request_flow", "envelope"}
    assert follow_ups(tour)
    assert any(challenge["ask"].get("ranges") for challenge in items(tour, "challenge"))
    slips = [slip for _, ask in asks(tour) for slip in ask.get("slips") or []]
    assert any("factor" in slip for slip in slips) and any("inputs" in slip for slip in slips)


@pytest.mark.parametrize("slug", sorted(lessons()))
def test_every_deep_dive_has_a_topic_and_exactly_one_best_choice(slug):
    for dive in items(lessons()[slug], "deep_dive"):
        verdicts = [choice["verdict"] for choice in dive["choices"]]
        assert dive["topic"], dive["key"]
        assert len(verdicts) >= 3 and verdicts.count("best") == 1, dive["key"]


@pytest.mark.parametrize("slug", sorted(lessons()))
def test_follow_ups_exist_and_never_loop_back(slug):
    lesson = lessons()[slug]
    dives = {dive["key"]: dive for dive in items(lesson, "deep_dive")}
    for dive in dives.values():
        for choice in dive["choices"]:
            target = choice.get("follow_up")
            if target:
                assert target in dives and target != dive["key"], (dive["key"], target)
                assert dive["key"] not in {c.get("follow_up") for c in dives[target]["choices"]}


def test_load_balancing_has_two_deep_dives_and_the_worked_example():
    lesson = lessons()["load-balancing"]
    assert len(items(lesson, "deep_dive")) >= 2
    body = " ".join(texts(lesson))
    assert "routing.round_robin_share" in body and "routing.hash_busiest_share" in body


@pytest.mark.parametrize("slug", sorted(SIMULATION_OUTPUTS))
def test_each_simulation_has_its_three_challenges(slug):
    challenges = items(lessons()[slug], "challenge")
    asked = {(c["ask"]["calculator"], c["ask"]["output"]) for c in challenges}
    assert len(challenges) == 3
    assert asked == SIMULATION_OUTPUTS[slug]
    assert any(c["ask"].get("ranges") for c in challenges)


def test_the_case_study_goes_deeper_as_the_curriculum_asks():
    lesson = lessons()["llm-serving-platform"]
    assert {section["layer"] for section in lesson["sections"]} == {1, 2, 3}
    assert sum(s["minutes"] for s in lesson["sections"] if s["layer"] == 3) == 11
    walkthroughs = {w["kind"]: w for w in items(lesson, "walkthrough")}
    assert [s["ask"]["calculator"] for s in walkthroughs["envelope"]["steps"]] == ["replica", "pool", "token-cost"]
    assert len(walkthroughs["build_up"]["steps"]) == 5
    assert walkthroughs["build_up"]["steps"][0]["title"] == "Stream from a model"
    assert len(walkthroughs["request_flow"]["steps"]) == 6
    leading = [d for d in items(lesson, "deep_dive") if d["key"] not in follow_ups(lesson)]
    assert {d["topic"] for d in leading} == CASE_STUDY_TOPICS and len(leading) == 6
    assert all(len(d["choices"]) >= 4 for d in leading)
    assert len({d["key"] for d in leading if any(c.get("follow_up") for c in d["choices"])}) >= 2


@pytest.mark.parametrize("slug", sorted(lessons()))
def test_every_calc_reference_names_a_real_output_and_format(slug):
    for text in texts(lessons()[slug]):
        for match in CALC.finditer(text):
            head, *pairs = match["ref"].split()
            calculator, output = head.split(".", 1)
            params = dict(pair.split("=", 1) for pair in pairs)
            assert match["format"] in FORMATS, match[0]
            if calculator in REFERENCE_SLUGS:  # a number from a fleet-simulator run
                assert math.isfinite(simulated_value(calculator, output, params)), match[0]
                continue
            result = get_calculator(calculator).evaluate(params)
            assert output in result.outputs, match[0]


@pytest.mark.parametrize("slug", sorted(lessons()))
def test_every_asked_number_is_computable_for_every_draw(slug):
    for key, ask in asks(lessons()[slug]):
        assert ask["unit"] and ask["tolerance"] > 0, key
        for inputs in draws(ask):
            value = expected(ask, inputs)
            assert math.isfinite(value) and value > 0, (key, inputs, value)


@pytest.mark.parametrize("slug", sorted(lessons()))
def test_no_slip_is_itself_an_accepted_answer(slug):
    for key, ask in asks(lessons()[slug]):
        for slip in ask.get("slips") or []:
            for inputs in draws(ask):
                if "factor" in slip:
                    wrong = expected(ask, inputs) * slip["factor"]
                else:
                    wrong = expected(ask, {**inputs, **slip["inputs"]})
                assert not accepted(wrong, ask, inputs), (key, slip, inputs)
