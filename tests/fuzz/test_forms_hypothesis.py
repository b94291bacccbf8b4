"""hypothesis drives the answer forms and the calculator pages with arbitrary text and numbers: never a 500."""

import pytest
from django.urls import reverse
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from calculators.registry import CALCULATORS
from lessons.models import Challenge, DeepDive, Step
from tests.lessons.factories import make_lesson

# PostgreSQL refuses NUL characters, and lone surrogates cannot be encoded.
TEXT = st.text(st.characters(exclude_characters="\x00", exclude_categories=("Cs",)), max_size=60)
NUMBER_TEXT = st.one_of(
    TEXT,
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers().map(str),
    st.sampled_from(["1e309", "-0", "1,000,000", "0x10", "½", "١٢٣", "  42  ", "1e-400", "5e-324", "1,5", "1e308"]),
)
FUZZ = settings(
    max_examples=int(__import__("os").environ.get("FUZZ_EXAMPLES", "60")),
    deadline=None,
    suppress_health_check=list(HealthCheck),
    database=None,
)


@pytest.fixture
def items(db):
    lesson = make_lesson()
    return {
        "lesson": lesson,
        "dd": DeepDive.objects.get(key="dd-1"),
        "step": Step.objects.filter(walkthrough__kind="envelope").first(),
        "challenge": Challenge.objects.get(),
    }


@pytest.mark.parametrize("htmx", [False, True])
def test_number_answers_never_500(client, items, htmx):
    headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
    step_url = reverse("answer-step", args=[items["lesson"].slug, items["step"].pk])
    challenge_url = reverse("answer-challenge", args=[items["lesson"].slug, items["challenge"].pk])

    @given(value=NUMBER_TEXT, seed=st.one_of(TEXT, st.integers().map(str)))
    @FUZZ
    def check(value, seed):
        for url, data in ((step_url, {"value": value}), (challenge_url, {"value": value, "seed": seed})):
            response = client.post(url, data, **headers)
            assert response.status_code in (200, 303, 400, 422), (url, data, response.status_code)

    check()


def test_deep_dive_answers_never_500(client, items):
    url = reverse("answer-deep-dive", args=[items["lesson"].slug, items["dd"].pk])

    @given(choice=st.one_of(TEXT, st.integers().map(str)))
    @FUZZ
    def check(choice):
        assert client.post(url, {"choice": choice}).status_code in (303, 400)

    check()


@pytest.mark.parametrize("slug", list(CALCULATORS))
def test_calculator_pages_and_api_never_500(client, db, slug):
    calculator = CALCULATORS[slug]
    names = [p.name for p in calculator.parameters] + ["unknown_param"]

    @given(params=st.dictionaries(st.sampled_from(names), st.one_of(NUMBER_TEXT, st.floats().map(str)), max_size=4))
    @FUZZ
    def check(params):
        page = client.get(reverse("calculators:detail", args=[slug]), params)
        assert page.status_code in (200, 400), (params, page.status_code)
        fragment = client.get(reverse("calculators:detail", args=[slug]), params, HTTP_HX_REQUEST="true")
        expected = {200: 200, 400: 422}[page.status_code]  # bad input: a 400 page, a 422 fragment htmx swaps in
        assert fragment.status_code == expected, (params, page.status_code, fragment.status_code)
        api = client.get(f"/api/v1/calculators/{slug}/", params)
        assert api.status_code in (200, 400), (params, api.status_code)
        if api.status_code == 400:
            assert api.json()["errors"]

    check()
