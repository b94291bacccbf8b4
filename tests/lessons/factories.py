"""Test data for lessons: the one place tests build content rows."""

from lessons.models import Challenge, Choice, DeepDive, Lesson, Section, Step, Track, Walkthrough


def make_lesson(slug="sample", deep_dives=1, published=True, order=None, steps=2, challenges=1) -> Lesson:
    """Return a lesson with ``deep_dives`` deep dives (three choices each), a build-up, an envelope and a challenge.

    The envelope asks ``steps`` numbers and the section ends with ``challenges`` challenges (the
    first draws its numbers per learner, the others are fixed).
    """
    track, _ = Track.objects.get_or_create(slug="t", defaults={"title": "Track"})
    lesson = Lesson.objects.create(
        track=track,
        slug=slug,
        title=f"Lesson {slug}",
        kind="concept",
        summary="A lesson for tests.",
        published=published,
        order=order if order is not None else Lesson.objects.count() + 1,
    )
    core = Section.objects.create(lesson=lesson, key="core", layer=2, order=1, title="Core", minutes=4, body="Read me.")
    for n in range(1, deep_dives + 1):
        make_deep_dive(core, key=f"dd-{n}", order=n)
    build = Walkthrough.objects.create(section=core, key="build", order=100, kind="build_up", title="Build it")
    Step.objects.create(
        walkthrough=build, order=1, title="Front end",
        components=[{"key": "client", "label": "Client", "col": 0, "row": 0},
                    {"key": "fe", "label": "Front end", "col": 1, "row": 0}],
        connections=[{"from": "client", "to": "fe", "label": "SSE"}],
    )  # fmt: skip
    Step.objects.create(
        walkthrough=build, order=2, title="Router",
        components=[{"key": "router", "label": "Router", "col": 2, "row": 0}],
        connections=[{"from": "fe", "to": "router", "label": ""}],
    )  # fmt: skip
    envelope = Walkthrough.objects.create(
        section=core, key="size", order=101, kind="envelope", title="Size it", topic_id="capacity_planning"
    )
    Step.objects.create(
        walkthrough=envelope, order=1, title="Requests per replica", calculator="replica", output="requests_per_replica",
        unit="requests", tolerance=0.02, partial_band=2, explanation="Budget over per-request KV.",
    )  # fmt: skip
    Step.objects.create(
        walkthrough=envelope, order=2, title="Preamble size", calculator="kv-cache", output="copy_bytes",
        scale=1e-6, unit="MB", tolerance=0.01, partial_band=2,
        slips=[{"factor": 1 / 1.048576, "feedback": "That is MiB; the question asks for decimal MB."}],
    )  # fmt: skip
    for n in range(3, steps + 1):
        Step.objects.create(
            walkthrough=envelope, order=n, title=f"Requests per replica {n}", calculator="replica",
            output="requests_per_replica", unit="requests", tolerance=0.02,
        )  # fmt: skip
    Challenge.objects.create(
        section=core, key="copies", order=102, topic_id="caching", title="Copies in a cache",
        prompt="A cache of {cache_gb} GB holds how many 1,200-token copies?", calculator="kv-cache",
        output="copies_per_cache", unit="copies", tolerance=0.01, ranges={"cache_gb": [4, 40, 4]},
    )  # fmt: skip
    for n in range(2, challenges + 1):
        Challenge.objects.create(
            section=core, key=f"copies-{n}", order=102 + n, topic_id="caching", title=f"Copies, fixed {n}",
            prompt="An 8 GB cache holds how many copies?", calculator="kv-cache", inputs={"cache_gb": 8},
            output="copies_per_cache", unit="copies", tolerance=0.01,
        )  # fmt: skip
    return lesson


def make_deep_dive(section, key="dd-1", order=1, follow_up=None) -> DeepDive:
    dd = DeepDive.objects.create(
        section=section, key=key, order=order, topic_id="kv_allocation", prompt=f"How? ({key})"
    )
    Choice.objects.create(deep_dive=dd, order=1, text="Paged blocks", verdict="best", feedback="Holds up.")
    Choice.objects.create(
        deep_dive=dd, order=2, text="Reserve max length", verdict="weak", feedback="Wastes 60-80%.",
        follow_up=follow_up,
    )  # fmt: skip
    Choice.objects.create(deep_dive=dd, order=3, text="Reserve mean", verdict="acceptable", feedback="Meh.")
    return dd


def answer_deep_dive(client, lesson, key, verdict):
    """Answer a deep dive of ``lesson`` through the page, picking the choice with ``verdict``."""
    from django.urls import reverse

    dd = DeepDive.objects.get(key=key, section__lesson=lesson)
    choice = Choice.objects.get(deep_dive=dd, verdict=verdict)
    return client.post(reverse("answer-deep-dive", args=[lesson.slug, dd.pk]), {"choice": choice.pk})


def answer_steps_before(client, step, *values):
    """Answer the numeric steps before ``step``, as a learner must before answering it (a step opens once the
    steps before it are answered, right or wrong): with ``values`` in turn, else each step's right answer (not
    due for review for days). Through the API for a DRF client, else through the lesson's page."""
    from django.urls import reverse

    from lessons.services import expected_for

    lesson = step.walkthrough.section.lesson
    earlier = list(step.walkthrough.steps.filter(order__lt=step.order).exclude(calculator="").order_by("order"))
    for before, value in zip(earlier, values or [repr(expected_for(s).value) for s in earlier], strict=True):
        if hasattr(client, "credentials"):  # rest_framework.test.APIClient
            response = client.post(f"/api/v1/steps/{before.pk}/answer/", {"value": value}, format="json")
            assert response.status_code == 200, response.content
        else:
            response = client.post(reverse("answer-step", args=[lesson.slug, before.pk]), {"value": value})
            assert response.status_code == 303, response.status_code


def store_answer_skipping_earlier_steps(client, step, value):
    """Store an answer to ``step`` with the steps before it unanswered, as the page and the API took one until they
    refused a step not open yet (a learner may still hold one), for the learner of ``client``'s session (made now
    when the session has none)."""
    from lessons import services
    from lessons.models import Learner

    session = client.session
    learner = Learner.objects.filter(pk=session.get(services.SESSION_KEY)).first()
    if learner is None:
        learner = Learner.objects.create(session_key=session.session_key)
        session[services.SESSION_KEY] = learner.pk
        session.save()
    return services.answer_number(learner, step, float(value))


def make_open_question(section, key="walk-me-through", order=200, points=10, checklist=4):
    """Return an open question of ``section`` with ``checklist`` points."""
    from lessons.models import ChecklistPoint, OpenQuestion

    question = OpenQuestion.objects.create(
        section=section,
        key=key,
        order=order,
        topic_id="routing",
        prompt="Walk me through a replica dying.",
        points=points,
    )
    for n in range(1, checklist + 1):
        ChecklistPoint.objects.create(question=question, order=n, text=f"Point {n} a strong answer makes.")
    return question
