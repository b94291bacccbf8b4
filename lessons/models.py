"""Learning content (tracks, lessons, deep dives, walkthroughs, challenges) and learner progress."""

from __future__ import annotations

import operator
import random
from functools import reduce
from typing import ClassVar
from urllib.parse import urlencode

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models import Q
from django.db.models.base import ModelState
from django.urls import reverse

from interview.dates import utc_text
from lessons import diagram
from lessons.markup import MarkupError, check_prompt, render_stored_markup
from lessons.scoring import choice_points, hint_cost

# The longest an item's prompt may be (characters): the interviewer's question, shown as a heading; the
# setting belongs in its context. The shipped prompts stay under 400. Checked in the admin (the form's
# max_length) and in content files (lessons.content.validate).
MAX_PROMPT = 1500
KEY_VALIDATOR = RegexValidator(
    r"^[a-z0-9]+(?:-[a-z0-9]+)*$",
    "Use lowercase letters, digits and single hyphens, e.g. kv-allocation.",
)


class ContentRow(models.Model):
    """A content row (lessons.content_cache.CONTENT_MODELS): read from the cache far more often than saved.

    Pickled as its class, its field values, its database and the parents attached to it (``restore_row``),
    not as Django pickles a row: by app label and model name, looked up in the app registry for every row,
    with a copy of its ModelState object and a version check. A lesson's cached content holds hundreds of
    rows (a thousand for 200 deep dives): this unpickles them in three quarters of the time.
    content_cache.SCHEMA names Django's version and the app's code, so a release never reads rows pickled by another.
    """

    class Meta:
        abstract = True

    def __reduce__(self):
        values = self.__dict__.copy()
        state = values.pop("_state")
        return restore_row, (type(self), values, state.db, state.adding, state.fields_cache)


def restore_row(cls: type[models.Model], values: dict, db: str | None, adding: bool, parents: dict) -> models.Model:
    """Return the content row ``ContentRow.__reduce__`` pickled (a copy.copy() too), parents attached."""
    row = cls.__new__(cls)
    row.__dict__.update(values)
    row._state = ModelState()
    row._state.db, row._state.adding, row._state.fields_cache = db, adding, dict(parents)
    return row


class Topic(ContentRow):
    """What a question is about; the results page shows mastery per topic. Instructors add them in the admin."""

    slug = models.SlugField(
        max_length=40, unique=True, help_text="Named by content files (topic: kv_allocation); letters, digits, _ and -."
    )
    name = models.CharField(max_length=80, help_text="Shown to learners, e.g. KV memory allocation.")
    description = models.TextField(blank=True, help_text="What the topic covers, for instructors.")
    order = models.PositiveSmallIntegerField(default=0, help_text="Position on the results page.")

    class Meta:
        ordering = ["order", "slug"]

    def __str__(self) -> str:
        return self.name


def topic_field(**options) -> models.ForeignKey:
    """Return the field naming an item's topic: stored as the topic's slug, in the column ``topic``."""
    return models.ForeignKey(
        Topic, to_field="slug", db_column="topic", on_delete=models.PROTECT, related_name="+", **options
    )


class Layer(models.IntegerChoices):
    SKIM = 1, "Skim"
    CORE = 2, "Core"
    DEEPER = 3, "Go deeper"


class RenderedMarkdown(ContentRow):
    """A content row whose authored Markdown is stored beside its sanitised HTML (``<field>_html``).

    lessons.markup.STORED_MARKDOWN names the fields; pages and the API read the stored HTML.
    """

    class Meta:
        abstract = True

    def save(self, *args, update_fields=None, **kwargs):
        # Rendered here rather than by a view or a form: every write path (the admin,
        # load_content, the shell, data migrations) must refresh the HTML, and reads then do
        # no Markdown work. STYLE.md keeps logic out of save(); this one belongs here, as the
        # body's HTML does in djangoproject.com's Entry.save().
        rendered = render_stored_markup(self)
        if update_fields is not None:
            update_fields = {*update_fields, *rendered}
        super().save(*args, update_fields=update_fields, **kwargs)


class Track(ContentRow):
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=120)
    summary = models.TextField(blank=True)
    order = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["order", "slug"]

    def __str__(self) -> str:
        return self.title


class LessonQuerySet(models.QuerySet):
    def visible_to(self, user) -> LessonQuerySet:
        """Return published lessons, and drafts too for staff (preview), with their track."""
        lessons = self.select_related("track")
        if user.is_authenticated and user.is_staff:
            return lessons
        return lessons.filter(published=True)


class Lesson(RenderedMarkdown):
    class Kind(models.TextChoices):
        CONCEPT = "concept", "Concept"
        SIMULATION = "simulation", "Simulation"
        CASE_STUDY = "case_study", "Case study"

    track = models.ForeignKey(Track, on_delete=models.PROTECT, related_name="lessons")
    slug = models.SlugField(unique=True)
    title = models.CharField(max_length=200)
    kind = models.CharField(max_length=20, choices=Kind.choices)
    summary = models.TextField()
    summary_html = models.TextField(blank=True, editable=False)
    order = models.PositiveSmallIntegerField(default=0)
    published = models.BooleanField(default=False, help_text="Drafts are hidden from learners; staff can preview them.")
    updated_at = models.DateTimeField(auto_now=True)
    source_digest = models.CharField(
        max_length=64, blank=True, editable=False, help_text="SHA-256 of the content file last loaded into it."
    )

    objects = LessonQuerySet.as_manager()

    class Meta:
        ordering = ["track__order", "order", "slug"]
        constraints = [
            models.UniqueConstraint(fields=["track", "order"], name="lesson_order_unique_in_track"),
            models.CheckConstraint(
                condition=Q(kind__in=["concept", "simulation", "case_study"]), name="lesson_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        from lessons.links import url_maker  # links imports the models; reversed once per process (url_maker)

        return url_maker("lesson")(self.slug)


class Section(RenderedMarkdown):
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="sections")
    key = models.CharField(max_length=80, validators=[KEY_VALIDATOR])
    layer = models.PositiveSmallIntegerField(choices=Layer.choices, default=Layer.SKIM)
    order = models.PositiveSmallIntegerField(default=0)
    title = models.CharField(max_length=200)
    minutes = models.PositiveSmallIntegerField(default=1, validators=[MaxValueValidator(120)])
    body = models.TextField(blank=True, help_text="Markdown; {{calc ...}} asks a calculator for a number.")
    body_html = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["lesson", "order"]
        constraints = [
            models.UniqueConstraint(fields=["lesson", "order"], name="section_order_unique_in_lesson"),
            models.UniqueConstraint(fields=["lesson", "key"], name="section_key_unique_in_lesson"),
            models.CheckConstraint(condition=Q(layer__in=[1, 2, 3]), name="section_layer_valid"),
        ]

    def __str__(self) -> str:
        """Return "Lesson title · Section title" (costs a query unless the lesson was selected)."""
        return f"{self.lesson.title} · {self.title}"

    @property
    def anchor(self) -> str:
        return f"sec-{self.key}"

    @property
    def page_query(self) -> str:
        """Return ``?layer=N&section=key``: the lesson page that shows this section (see ``page_query``)."""
        return page_query(self.layer, self.key)


def page_query(layer: int, section_key: str) -> str:
    """Return the query of the lesson page showing a section: its layer, and the part of a long layer
    holding it (lessons.pages.LayerView.split; a page shows one layer, a layer of many items in parts)."""
    return "?" + urlencode({"layer": layer, "section": section_key})


class Item(models.Model):
    """Fields shared by the interactive items that sit inside a section."""

    section = models.ForeignKey(Section, on_delete=models.CASCADE, related_name="%(class)ss")
    key = models.CharField(
        max_length=80, validators=[KEY_VALIDATOR], help_text="Unique within the lesson; used in links."
    )
    order = models.PositiveSmallIntegerField(default=0, help_text="Position among the section's items.")

    class Meta:
        abstract = True
        ordering = ["section__order", "order"]

    @property
    def lesson(self) -> Lesson:
        """Return the lesson (costs a query unless the section and lesson were selected)."""
        return self.section.lesson

    anchor_prefix: ClassVar[str]  # each kind's anchor is "<prefix>-<key>"

    @classmethod
    def anchor_for(cls, key: str) -> str:
        """Return the page anchor of the item keyed ``key`` (links build it from a key alone)."""
        return f"{cls.anchor_prefix}-{key}"

    @property
    def anchor(self) -> str:
        return self.anchor_for(self.key)

    def get_absolute_url(self) -> str:
        """Return the item on its section's page: a lesson page shows one layer (``?layer=N``), a long
        layer one part of it (``&section=key``, the part holding the section: pages.LayerView.split)."""
        return f"{self.section.lesson.get_absolute_url()}{self.section.page_query}#{self.anchor}"


class DeepDive(RenderedMarkdown, Item):
    anchor_prefix = "dd"

    topic = topic_field()
    prompt = models.TextField(max_length=MAX_PROMPT, help_text="The interviewer's question, as spoken.")
    prompt_html = models.TextField(blank=True, editable=False)
    context = models.TextField(blank=True, help_text="Optional Markdown shown under the prompt.")
    context_html = models.TextField(blank=True, editable=False)
    points = models.PositiveSmallIntegerField(default=10, validators=[MinValueValidator(1)])
    keep_choice_order = models.BooleanField(
        default=False,
        help_text="Show the choices in the authored order to everyone (when their order carries meaning); "
        "otherwise each learner sees them in their own shuffled order.",
    )
    hints = models.JSONField(
        default=list, blank=True, help_text="Up to three Markdown hints; one taken before answering costs points."
    )
    hints_html = models.JSONField(default=list, blank=True, editable=False)

    class Meta(Item.Meta):
        verbose_name = "deep dive"
        constraints = [
            models.UniqueConstraint(fields=["section", "order"], name="deepdive_order_unique_in_section"),
            models.CheckConstraint(condition=Q(points__gt=0), name="deepdive_points_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.prompt[:60]}"


class Verdict(models.TextChoices):
    BEST = "best", "Best"
    ACCEPTABLE = "acceptable", "Acceptable"
    WEAK = "weak", "Weak"


class Choice(RenderedMarkdown):
    deep_dive = models.ForeignKey(DeepDive, on_delete=models.CASCADE, related_name="choices")
    order = models.PositiveSmallIntegerField(default=0)
    text = models.TextField()
    text_html = models.TextField(blank=True, editable=False)
    verdict = models.CharField(
        max_length=12,
        choices=Verdict.choices,
        help_text="Best earns the deep dive's points, acceptable half, weak none.",
    )
    feedback = models.TextField(help_text="Markdown: why this approach holds up or breaks.")
    feedback_html = models.TextField(blank=True, editable=False)
    follow_up = models.ForeignKey(
        DeepDive,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="reached_from",
        help_text="Optional: the deep dive this answer leads to.",
    )

    class Meta:
        ordering = ["deep_dive", "order"]
        constraints = [
            models.UniqueConstraint(fields=["deep_dive", "order"], name="choice_order_unique_in_deepdive"),
            models.CheckConstraint(
                condition=Q(verdict__in=["best", "acceptable", "weak"]), name="choice_verdict_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_verdict_display()}: {self.text[:60]}"

    @staticmethod
    def creation_order(rows: list, deep_dive_key: str) -> list:
        """Return a deep dive's new choices (any rows) in the order to create them: one unrelated to the authored one.

        A choice's primary key is what its button sends; keys rising in authored order, the best approach often
        written first, made the lowest the best in 54 of 81 deep dives, readable in the page's source. Each row keeps
        its ``order``. Seeded by the deep dive, so a load repeats. Used by the content loader and the admin.
        """
        rows = list(rows)
        random.Random(f"choices:{deep_dive_key}").shuffle(rows)
        return rows

    @property
    def points(self) -> int:
        """Return what picking this choice earns, from its verdict (reads the deep dive: select it with the choice)."""
        return choice_points(self.verdict, self.deep_dive.points)


class ToleranceKind(models.TextChoices):
    RELATIVE = "relative", "Relative (± |answer| × t)"
    NOMINAL = "nominal", "Nominal (± t)"
    GEOMETRIC = "geometric", "Geometric ([answer / (1 + t), answer × (1 + t)])"


class GradedNumber(models.Model):
    """A number a learner is asked for; the expected value comes from a calculator."""

    calculator = models.CharField(
        max_length=40, blank=True, help_text="Calculator slug, e.g. replica. Empty: no number is asked."
    )
    inputs = models.JSONField(default=dict, blank=True, help_text='Calculator inputs, e.g. {"gpus": 4}.')
    output = models.CharField(max_length=60, blank=True, help_text="The calculator output asked for.")
    scale = models.FloatField(default=1.0, help_text="Expected = output × scale (100 for a percentage).")
    unit = models.CharField(max_length=30, blank=True)
    tolerance = models.FloatField(null=True, blank=True, help_text="Above zero, e.g. 0.02.")
    tolerance_kind = models.CharField(max_length=12, choices=ToleranceKind.choices, default=ToleranceKind.RELATIVE)
    partial_band = models.FloatField(
        null=True, blank=True, help_text="Within this factor earns half credit (e.g. 2). Empty: none."
    )
    slips = models.JSONField(
        default=list,
        blank=True,
        help_text='Predictable wrong answers: [{"factor": 0.9537, "feedback": "..."}] or '
        '[{"inputs": {...}, "feedback": "..."}].',
    )
    hints = models.JSONField(
        default=list,
        blank=True,
        help_text="Up to three Markdown hints, revealed one at a time; one taken before answering costs points.",
    )
    hints_html = models.JSONField(default=list, blank=True, editable=False)
    explanation = models.TextField(blank=True, help_text="Markdown revealed after answering.")
    explanation_html = models.TextField(blank=True, editable=False)
    points = models.PositiveSmallIntegerField(default=10, validators=[MinValueValidator(1)])

    class Meta:
        abstract = True


def graded_number_constraints(prefix: str) -> list[models.BaseConstraint]:
    """Return the checks that keep a numeric question answerable."""
    return [
        models.CheckConstraint(
            condition=Q(calculator="") | (Q(tolerance__gt=0) & ~Q(unit="") & ~Q(output="")),
            name=f"{prefix}_number_has_unit_and_tolerance",
        ),
        models.CheckConstraint(
            condition=Q(partial_band__isnull=True) | Q(partial_band__gt=1),
            name=f"{prefix}_partial_band_above_one",
        ),
        models.CheckConstraint(
            condition=Q(tolerance_kind__in=["relative", "nominal", "geometric"]),
            name=f"{prefix}_tolerance_kind_valid",
        ),
    ]


class Walkthrough(RenderedMarkdown, Item):
    anchor_prefix = "wt"

    class Kind(models.TextChoices):
        BUILD_UP = "build_up", "Build-up"
        REQUEST_FLOW = "request_flow", "Request flow"
        ENVELOPE = "envelope", "Back of the envelope"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    title = models.CharField(max_length=200)
    intro = models.TextField(blank=True)
    intro_html = models.TextField(blank=True, editable=False)
    topic = topic_field(null=True, blank=True, help_text="The topic of its graded steps (envelope walkthroughs).")
    diagram = models.JSONField(
        default=dict,
        blank=True,
        editable=False,
        help_text="The diagram's layout by Graphviz, made when steps are saved.",
    )

    class Meta(Item.Meta):
        constraints = [
            models.UniqueConstraint(fields=["section", "order"], name="walkthrough_order_unique_in_section"),
            models.CheckConstraint(
                condition=Q(kind__in=["build_up", "request_flow", "envelope"]), name="walkthrough_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def has_diagram(self) -> bool:
        return self.kind in (self.Kind.BUILD_UP, self.Kind.REQUEST_FLOW)

    def lay_out_diagram(self) -> None:
        """Store the layout of every step's components and connections (see lessons/diagram.py)."""
        if not self.has_diagram and not self.diagram:
            return
        components, connections = [], []
        for step in self.steps.order_by("order").only("components", "connections"):
            components += step.components if isinstance(step.components, list) else []
            connections += step.connections if isinstance(step.connections, list) else []
        components, connections = diagram.normalize(components, connections)
        self.diagram = diagram.lay_out(components, connections) if self.has_diagram and components else {}
        Walkthrough.objects.filter(pk=self.pk).update(diagram=self.diagram)


class Step(RenderedMarkdown, GradedNumber):
    walkthrough = models.ForeignKey(Walkthrough, on_delete=models.CASCADE, related_name="steps")
    order = models.PositiveSmallIntegerField(default=0)
    title = models.CharField(max_length=200)
    body = models.TextField(blank=True)
    body_html = models.TextField(blank=True, editable=False)
    components = models.JSONField(
        default=list, blank=True, help_text='Diagram boxes added: [{"key", "label", "col", "row"}].'
    )
    connections = models.JSONField(
        default=list, blank=True, help_text='Diagram arrows added: [{"from", "to", "label"}].'
    )

    class Meta:
        ordering = ["walkthrough", "order"]
        constraints = [
            models.UniqueConstraint(fields=["walkthrough", "order"], name="step_order_unique_in_walkthrough"),
            *graded_number_constraints("step"),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        """Return the step's own page, at its walkthrough (a walkthrough shows one step at a time)."""
        walkthrough = self.walkthrough
        url = reverse("walkthrough-step", args=[walkthrough.section.lesson.slug, walkthrough.key, self.order])
        return f"{url}#{walkthrough.anchor}"

    def save(self, *args, **kwargs):
        # As stored HTML is rendered on save (RenderedMarkdown), the diagram is laid out on save:
        # pages then draw it without layout work.
        super().save(*args, **kwargs)
        self.walkthrough.lay_out_diagram()

    def delete(self, *args, **kwargs):
        result = super().delete(*args, **kwargs)
        self.walkthrough.lay_out_diagram()
        return result

    @property
    def anchor(self) -> str:
        return f"{self.walkthrough.anchor}-step-{self.order}"


class Challenge(RenderedMarkdown, Item, GradedNumber):
    anchor_prefix = "ch"
    topic = topic_field()
    title = models.CharField(max_length=200)
    prompt = models.TextField(max_length=MAX_PROMPT, help_text="Markdown; {name} shows a drawn input.")
    prompt_html = models.TextField(blank=True, editable=False, help_text="Empty when inputs are drawn per learner.")
    ranges = models.JSONField(
        default=dict,
        blank=True,
        help_text='Inputs drawn per learner: {"cards": [8, 64, 8]} = min, max, step.',
    )

    class Meta(Item.Meta):
        constraints = [
            models.UniqueConstraint(fields=["section", "order"], name="challenge_order_unique_in_section"),
            *graded_number_constraints("challenge"),
            models.CheckConstraint(condition=~Q(calculator=""), name="challenge_asks_a_number"),
        ]

    def __str__(self) -> str:
        return self.title

    def clean(self) -> None:
        """Refuse prompt fields that name no input or carry a format that could blow up the page."""
        try:
            check_prompt(self.prompt, self.prompt_names(self.inputs, self.ranges))
        except MarkupError as error:
            raise ValidationError({"prompt": f"{error}."}) from None

    def drawn_fit(self, inputs: dict | None) -> bool:
        """Whether numbers drawn earlier (a learner's draw, an answer's, an interview's) still fit this challenge:
        the names its ranges draw, each inside its range. An author who gave it another calculator or other
        ranges since made them numbers of a question no longer asked (its calculator may refuse them)."""
        inputs = inputs or {}
        if set(inputs) != set(self.ranges):
            return False
        return all(low <= inputs[name] <= high for name, (low, high, _step) in self.ranges.items())

    @staticmethod
    def prompt_names(inputs, ranges) -> set[str]:
        """Return the names a prompt may show: the fixed inputs and the ranges drawn per learner."""
        return {*(inputs if isinstance(inputs, dict) else ()), *(ranges if isinstance(ranges, dict) else ())}


class OpenQuestion(RenderedMarkdown, Item):
    """An interviewer's open question: the learner writes an answer, then ticks the checklist points it covered."""

    anchor_prefix = "oq"

    topic = topic_field()
    prompt = models.TextField(max_length=MAX_PROMPT, help_text="The interviewer's question, as spoken (Markdown).")
    prompt_html = models.TextField(blank=True, editable=False)
    points = models.PositiveSmallIntegerField(default=10, validators=[MinValueValidator(1)])

    class Meta(Item.Meta):
        verbose_name = "open question"
        constraints = [
            models.UniqueConstraint(fields=["section", "order"], name="openquestion_order_unique_in_section"),
            models.CheckConstraint(condition=Q(points__gt=0), name="openquestion_points_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.prompt[:60]}"


class ChecklistPoint(RenderedMarkdown):
    """One point a strong answer to an open question covers; the share of points ticked is the score."""

    question = models.ForeignKey(OpenQuestion, on_delete=models.CASCADE, related_name="checklist")
    order = models.PositiveSmallIntegerField(default=0)
    text = models.TextField(help_text="Markdown, one point a strong answer makes.")
    text_html = models.TextField(blank=True, editable=False)

    class Meta:
        ordering = ["question", "order"]
        verbose_name = "checklist point"
        constraints = [
            models.UniqueConstraint(fields=["question", "order"], name="checklistpoint_order_unique_in_question"),
        ]

    def __str__(self) -> str:
        return self.text[:80]


class ContentGeneration(models.Model):
    """Which version of the authored content is current: one row whose token changes with every content edit.

    lessons/content_cache.py replaces the token whenever a content row is saved or deleted (and
    load_content and render_markup do at their end), and keys the cached content by it.
    """

    token = models.CharField(max_length=32)

    def __str__(self) -> str:
        return self.token


class Learner(models.Model):
    """Whoever answers: an anonymous session at first, tied to an account once signed in."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="learner"
    )
    # The anonymous session the learner was created for: unique, so concurrent first answers
    # of one session find or create the same learner (lessons.services.current_learner).
    session_key = models.CharField(max_length=40, null=True, blank=True, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.user.get_username() if self.user_id else f"anonymous #{self.pk}"


class AboutItem(models.Model):
    """A row about one item: exactly one of a deep dive, a step, a challenge or an open question.

    Answer, ReviewCard and ItemPractice are such rows; this is the one place that knows which
    of the foreign keys names the item.
    """

    ITEM_KINDS = ("deep_dive", "step", "challenge", "open_question")
    # The path from such a row to its item's lesson, per kind (a step's lesson is its walkthrough's).
    LESSON_PATHS = {
        "deep_dive": "deep_dive__section__lesson",
        "step": "step__walkthrough__section__lesson",
        "challenge": "challenge__section__lesson",
        "open_question": "open_question__section__lesson",
    }

    deep_dive = models.ForeignKey(DeepDive, null=True, blank=True, on_delete=models.CASCADE)
    step = models.ForeignKey(Step, null=True, blank=True, on_delete=models.CASCADE)
    challenge = models.ForeignKey(Challenge, null=True, blank=True, on_delete=models.CASCADE)
    open_question = models.ForeignKey(OpenQuestion, null=True, blank=True, on_delete=models.CASCADE)

    class Meta:
        abstract = True

    @property
    def item_key(self) -> tuple[str, int]:
        """Return (kind, id) of the item: kind is one of ITEM_KINDS, e.g. "deep_dive"."""
        return item_key_of({f"{kind}_id": getattr(self, f"{kind}_id") for kind in self.ITEM_KINDS})

    @property
    def item_fields(self) -> dict:
        """Return the lookup naming the same item, e.g. {"step_id": 3}."""
        kind, pk = self.item_key
        return {f"{kind}_id": pk}

    @classmethod
    def one_per_item(cls, prefix: str, **condition) -> list[models.UniqueConstraint]:
        """Return the constraints allowing one row per learner and item (``condition`` narrows them)."""
        return [
            models.UniqueConstraint(
                fields=["learner", kind], condition=Q(**condition) if condition else None, name=f"{prefix}_{kind}"
            )
            for kind in cls.ITEM_KINDS
        ]

    @classmethod
    def items_q(cls, kind_ids: dict[str, list[int]]) -> Q:
        """Return the condition selecting rows about the given items ({"step": [ids], ...}).

        Only the kinds with ids are named: an always-false ``pk__in=[]`` in the OR cost each query a
        third more to build (Django compiles it by raising and catching EmptyResultSet).
        """
        wanted = [Q(**{f"{kind}_id__in": ids}) for kind, ids in kind_ids.items() if ids]
        return reduce(operator.or_, wanted) if wanted else Q(pk__in=[])


ITEM_ID_FIELDS = tuple(f"{kind}_id" for kind in AboutItem.ITEM_KINDS)  # for values() rows read by item_key_of


def exactly_one_item(name: str) -> models.CheckConstraint:
    """Return the check that a row names exactly one item (one of AboutItem.ITEM_KINDS)."""
    condition = Q(pk__in=[])
    for kind in AboutItem.ITEM_KINDS:
        condition |= Q(**{f"{other}__isnull": other != kind for other in AboutItem.ITEM_KINDS})
    return models.CheckConstraint(condition=condition, name=name)


def item_key_of(row: dict) -> tuple[str, int]:
    """Return (kind, id) of the item a ``values()`` row of Answer or ReviewCard names."""
    for kind in AboutItem.ITEM_KINDS:
        if row[f"{kind}_id"]:
            return kind, row[f"{kind}_id"]
    raise ValueError("the row names no item")


class Outcome(models.TextChoices):
    CORRECT = "correct", "Correct"
    PARTIAL = "partial", "Partly right"
    INCORRECT = "incorrect", "Missed"


class Answer(AboutItem):
    """One try at one item; the first try per learner and item is the one that scores."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="answers")
    choice = models.ForeignKey(Choice, null=True, blank=True, on_delete=models.SET_NULL)
    value = models.FloatField(null=True, blank=True)
    expected = models.FloatField(null=True, blank=True)
    drawn_inputs = models.JSONField(default=dict, blank=True)
    seed = models.BigIntegerField(null=True, blank=True)
    outcome = models.CharField(max_length=12, choices=Outcome.choices)
    points = models.PositiveSmallIntegerField()
    max_points = models.PositiveSmallIntegerField()
    message = models.TextField(blank=True)
    text = models.TextField(blank=True, help_text="An open question's written answer.")
    ticked = models.JSONField(default=list, blank=True, help_text="An open question's checklist points ticked (ids).")
    hints_taken = models.PositiveSmallIntegerField(default=0, help_text="Hints taken before this answer.")
    is_first = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "pk"]
        constraints = [
            exactly_one_item("answer_has_exactly_one_item"),
            *AboutItem.one_per_item("one_first_answer_per", is_first=True),
            models.CheckConstraint(condition=Q(points__lte=models.F("max_points")), name="answer_points_within_max"),
            models.CheckConstraint(
                condition=Q(outcome__in=["correct", "partial", "incorrect"]), name="answer_outcome_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["learner", "created_at"]),
            *(models.Index(fields=["learner", kind], name=f"answer_learner_{kind}") for kind in AboutItem.ITEM_KINDS),
            # Which of the learner's answers picked a choice (the item analysis, merging a visitor's reach).
            models.Index(fields=["learner", "choice"], name="answer_learner_choice"),
        ]

    def __str__(self) -> str:
        return f"{self.learner} · {self.get_outcome_display()} · {self.points}/{self.max_points}"

    @property
    def hints_cost(self) -> int:
        """Return the points the hints taken before this answer took off it (lessons.scoring.hint_cost).

        0 when it earned nothing: its points are zero whatever the hints cost, and what it would have
        earned without them is not stored.
        """
        return hint_cost(self.max_points, self.hints_taken) if self.points else 0


class ChallengeDraw(models.Model):
    """The seed and inputs drawn for one learner and one challenge, so retries show the same numbers."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="draws")
    challenge = models.ForeignKey(Challenge, on_delete=models.CASCADE, related_name="draws")
    seed = models.BigIntegerField()
    inputs = models.JSONField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "challenge"], name="one_draw_per_learner_and_challenge")
        ]


class LessonProgress(models.Model):
    """Where a learner last was in a lesson, so "Resume" lands on that exact item."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="positions")
    lesson = models.ForeignKey(Lesson, on_delete=models.CASCADE, related_name="positions")
    anchor = models.CharField(max_length=200)
    url = models.CharField(max_length=300)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["learner", "lesson"], name="one_position_per_learner_and_lesson")
        ]


class ApiToken(models.Model):
    """A named API token of one account; only its SHA-256 is stored, the key is shown once."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=8, help_text="The first characters of the key, to tell tokens apart.")
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"


class ReviewCard(AboutItem):
    """When a learner should see an item again: an FSRS card set by their first answer and each answer once due."""

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="review_cards")
    card = models.JSONField(help_text="The scheduler's card state (fsrs.Card.to_dict()).")
    due = models.DateTimeField()
    last_outcome = models.CharField(max_length=12, choices=Outcome.choices)
    reviews = models.PositiveIntegerField(default=1, help_text="Answers given to the item, retries included.")
    hints_shown = models.PositiveSmallIntegerField(
        default=0,
        help_text="Hints the review page or API showed since the card was last graded (a hinted recall is Hard).",
    )
    latest_answer = models.ForeignKey(Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    recall_outcome = models.CharField(
        max_length=12,
        choices=Outcome.choices,
        blank=True,
        help_text="The outcome of a review-session answer given since the latest answer on a lesson page (blank when "
        "none): it is the learner's latest try, so a right recall makes a miss 'right on a retry'.",
    )
    # The item's scoring answer, so a page reads a learner's state from the cards alone (one query).
    first_answer = models.ForeignKey(Answer, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class Meta:
        ordering = ["due"]
        constraints = [
            exactly_one_item("review_card_has_exactly_one_item"),
            *AboutItem.one_per_item("one_card_per"),
        ]
        indexes = [models.Index(fields=["learner", "due"])]

    def __str__(self) -> str:
        return f"{self.learner} · due {utc_text(self.due)}"


class ItemPractice(AboutItem):
    """A learner's work on one item besides their answers: hints taken, reveals asked for, a pending answer.

    ``hints_taken`` counts the hints shown (before the first answer they cost points, see
    lessons.scoring.hint_cost); ``revealed`` is set when the learner asked to see every approach
    or the worked arithmetic before earning it; ``draft`` is an open question's written answer
    waiting for its checklist to be ticked; ``reached`` marks a follow-up one of the learner's
    answers opened (the reach rule, lessons.scoring.counts_toward_score), set with that answer.
    """

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="practice")
    hints_taken = models.PositiveSmallIntegerField(default=0, validators=[MaxValueValidator(3)])
    revealed = models.BooleanField(default=False)
    reached = models.BooleanField(
        default=False, help_text="A follow-up: an answer to its parent picked a choice leading here."
    )
    draft = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "item practice"
        verbose_name_plural = "item practice"
        constraints = [
            exactly_one_item("item_practice_has_exactly_one_item"),
            *AboutItem.one_per_item("one_practice_per"),
            models.CheckConstraint(condition=Q(hints_taken__lte=3), name="item_practice_at_most_three_hints"),
        ]

    def __str__(self) -> str:
        return f"{self.learner} · {self.hints_taken} hint(s){' · revealed' if self.revealed else ''}"


class Interview(models.Model):
    """A timed mock interview: the items drawn for it (in phases), the server-held deadline, the answers.

    Everything the scorecard shows is computed from the stored items by lessons.interviews.scorecard.
    """

    learner = models.ForeignKey(Learner, on_delete=models.CASCADE, related_name="interviews")
    lesson = models.ForeignKey(
        Lesson, null=True, blank=True, on_delete=models.SET_NULL, related_name="+", help_text="The scenario."
    )
    surprise = models.BooleanField(default=False, help_text="The scenario was drawn, weighted toward weak topics.")
    seed = models.BigIntegerField(help_text="Drew the items, their choice order and fresh numbers.")
    phases = models.JSONField(help_text='The phases and their budgets: [{"key", "label", "seconds"}].')
    started_at = models.DateTimeField()
    deadline = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-started_at", "-pk"]
        indexes = [models.Index(fields=["learner", "started_at"])]

    def __str__(self) -> str:
        return f"{self.learner} · interview #{self.pk}"

    def get_absolute_url(self) -> str:
        return reverse("interview", args=[self.pk])


class InterviewItem(AboutItem):
    """One drawn item of an interview and the learner's answer to it (graded silently when given).

    ``kind``: a deep dive (``deep_dive``), a number (``number``: an envelope step or a challenge,
    with freshly drawn inputs), the next component of a build-up (``design``: ``step`` is the step
    the design has reached, ``options`` the steps offered), or an open question (``open``).
    """

    class Kind(models.TextChoices):
        DEEP_DIVE = "deep_dive", "Interview moment"
        NUMBER = "number", "Estimate"
        DESIGN = "design", "Next component"
        OPEN = "open", "Open question"

    interview = models.ForeignKey(Interview, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField()
    phase = models.CharField(max_length=20)
    kind = models.CharField(max_length=12, choices=Kind.choices)
    drawn_inputs = models.JSONField(default=dict, blank=True)
    options = models.JSONField(default=list, blank=True, help_text="Ids offered, in the order shown.")
    answer = models.JSONField(null=True, blank=True, help_text='{"choice": id}, {"value", "number", "unit"}, ...')
    answered_at = models.DateTimeField(null=True, blank=True)
    late = models.BooleanField(default=False, help_text="Answered after the deadline.")
    score = models.FloatField(null=True, blank=True, help_text="0 to 1, graded when answered, shown at the end.")
    feedback = models.TextField(blank=True)

    class Meta:
        ordering = ["interview", "position"]
        constraints = [
            models.UniqueConstraint(fields=["interview", "position"], name="interview_item_position_unique"),
            models.CheckConstraint(
                condition=Q(kind__in=["deep_dive", "number", "design", "open"]), name="interview_item_kind_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.interview} · {self.position}: {self.kind}"
