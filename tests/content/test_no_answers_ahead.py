"""The tour lesson does not print a question's answer where the learner reads it before committing.

What a fresh learner sees on load (skim text, prompts, walkthroughs, challenge text, choices) must not
contain the expected number of any envelope step, in the forms a reader would recognise: the
calculator's raw figure (327,680 bytes) and the asked figure in its unit (320 KiB, 393.2 MB).
"""

import html
import re
from pathlib import Path

import yaml
from django.urls import reverse

from calculators.registry import get_calculator

LESSON = Path(__file__).resolve().parents[2] / "content" / "lessons" / "how-the-lab-works.yaml"


def _asked_numbers() -> list[tuple[str, set[str]]]:
    """Return (step title, ways its expected answer could be printed) for every envelope step."""
    data = yaml.safe_load(LESSON.read_text(encoding="utf-8"))
    asked = []
    for section in data["sections"]:
        for item in section["items"]:
            for step in item.get("walkthrough", {}).get("steps", []):
                ask = step.get("ask")
                if not ask:
                    continue
                raw = get_calculator(ask["calculator"]).evaluate(ask.get("inputs", {})).outputs[ask["output"]]
                value = raw * ask.get("scale", 1.0)
                forms = {f"{raw:,.0f}", f"{value:.1f} {ask['unit']}", f"{value:,.0f} {ask['unit']}", f"{value:.1f}"}
                asked.append((step["title"], forms))
    return asked


def test_the_lesson_page_gives_no_envelope_answer_away_before_it_is_asked(client, content):
    page = client.get(reverse("lesson", args=["how-the-lab-works"]))
    assert page.status_code == 200
    text = html.unescape(re.sub(r"<[^>]+>", " ", page.content.decode()))
    text = re.sub(r"\s+", " ", text)
    asked = _asked_numbers()
    assert len(asked) == 2
    for title, forms in asked:
        shown = sorted(form for form in forms if form in text)
        assert shown == [], f"{title!r}: the page shows {shown} before the learner answers"


def test_shrinking_the_bytes_tables_do_not_print_its_envelopes_answers(client, content):
    """The layer tables time decode at tensor parallelism 4; the envelope asks for 8, so no table answers it."""
    from tests.lesson_pages import whole_lesson

    path = LESSON.with_name("shrinking-the-bytes.yaml")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    steps = [
        step
        for section in data["sections"]
        for item in section["items"]
        for step in item.get("walkthrough", {}).get("steps", [])
        if step.get("ask")
    ]
    assert len(steps) == 4
    text = html.unescape(re.sub(r"<[^>]+>", " ", whole_lesson(client, reverse("lesson", args=["shrinking-the-bytes"]))))
    text = re.sub(r"\s+", " ", text)
    for step in steps:
        ask = step["ask"]
        value = get_calculator(ask["calculator"]).evaluate(ask.get("inputs", {})).outputs[ask["output"]]
        forms = {f"{value:.2f} {ask['unit']}", f"{value:,.0f} {ask['unit']}"} if value > 10 else {f"{value:.2f}"}
        shown = sorted(form for form in forms if form in text)
        assert shown == [], f"{step['title']!r}: the lesson shows {shown} before the learner answers"


def test_the_page_asking_how_many_gpus_a_replica_gets_does_not_say_it_elsewhere(client, content):
    """The case study asked "How do you serve it?" (best: four GPUs with tensor parallelism) at the top of layer 3, on
    the page whose walkthrough sized "one 70B replica on four GPUs" and whose design drew "4 × H100" right below
    (newcomer's finding, twice). The question now ends layer 2: nothing else on its page names a replica's GPUs."""
    from lessons.models import DeepDive

    asked = DeepDive.objects.get(key="tensor-parallel", section__lesson__slug="llm-serving-platform")
    body = client.get(asked.get_absolute_url().partition("#")[0]).content.decode()
    start = body.index('<article class="item deep-dive" id="dd-tensor-parallel"')
    rest = body[:start] + body[body.index("</article>", start) :]  # the page without the question and its choices
    text = re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", rest))).lower()
    assert "how many gpus one 70b replica gets" in text  # the page is the one asking
    for told in ("four gpus", "four h100s", "4 × h100", "four-gpu", "4 gpus", "on four"):
        assert told not in text, told
