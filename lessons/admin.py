"""Authoring in the admin: lessons, sections, deep dives with inline choices, walkthroughs with inline steps."""

from __future__ import annotations

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db import models
from django.forms.models import BaseInlineFormSet

from calculators.registry import CalculatorInputError, get_calculator
from interview.json_input import JSONFormField
from lessons.content import Checker, ContentError, parse_challenge, parse_walkthrough, validate_ask
from lessons.markup import MarkupError, check_markup
from lessons.models import Answer, Challenge, Choice, DeepDive, Learner, Lesson, Section, Step, Track, Walkthrough

# JSON fields refuse NUL characters and absurd nesting with a form error, not a database error.
JSON_FORM_FIELDS = {models.JSONField: {"form_class": JSONFormField}}
MARKDOWN_FIELDS = ("summary", "body", "prompt", "context", "feedback", "intro", "explanation", "text")


class MarkdownCheckMixin:
    """Refuse Markdown whose {{calc ...}} numbers cannot be computed, with the reason beside the field."""

    def clean(self):
        cleaned = super().clean()
        for name in MARKDOWN_FIELDS:
            value = cleaned.get(name)
            if isinstance(value, str) and value:
                try:
                    check_markup(value)
                except MarkupError as error:
                    self.add_error(name, f"{error}.")
        return cleaned


def check_graded_number(form: forms.ModelForm, cleaned: dict, inputs: dict | None = None) -> None:
    """Validate the calculator, inputs, output, unit and tolerance of a numeric question."""
    slug = cleaned.get("calculator")
    if not slug:
        return
    try:
        calculator = get_calculator(slug)
    except KeyError:
        form.add_error("calculator", f"Unknown calculator '{slug}'.")
        return
    if not cleaned.get("unit"):
        form.add_error("unit", "A numeric question needs a unit, e.g. GB or requests.")
    tolerance = cleaned.get("tolerance")
    if tolerance is None or tolerance <= 0:
        form.add_error("tolerance", "A numeric question needs a tolerance above zero, e.g. 0.02.")
    band = cleaned.get("partial_band")
    if band is not None and band <= 1:
        form.add_error("partial_band", "The partial-credit band is a factor above 1, such as 2.")
    output = cleaned.get("output")
    if output not in {o.name for o in calculator.outputs}:
        names = ", ".join(o.name for o in calculator.outputs)
        form.add_error("output", f"'{slug}' has no output '{output}'. Choose one of: {names}.")
        return
    values = cleaned.get("inputs") or {}
    if not isinstance(values, dict):
        form.add_error("inputs", 'Inputs must be a JSON object such as {"gpus": 4}.')
        return
    try:
        result = calculator.evaluate({**values, **(inputs or {})})
    except CalculatorInputError as error:
        problems = "; ".join(f"{name}: {' '.join(msgs)}" for name, msgs in error.errors.items())
        form.add_error("inputs", f"The calculator refuses these inputs: {problems}.")
        return
    value = result.outputs.get(output)
    if value is None or isinstance(value, bool):
        form.add_error("output", f"'{output}' is not a number for these inputs.")


def ask_data(cleaned: dict, ranges: dict | None = None) -> dict:
    """Return a numeric question's fields in the content-file shape, for the shared validator."""
    ask = {name: cleaned.get(name) for name in ("calculator", "inputs", "output", "scale", "unit", "tolerance",
                                                 "tolerance_kind", "partial_band", "points", "slips")}  # fmt: skip
    if ranges:
        ask["ranges"] = ranges
    return {name: value for name, value in ask.items() if value not in (None, "", [], {})}


def run_validator(form: forms.Form, validate) -> None:
    """Run a content-file validator and show its refusal as the form's error."""
    try:
        validate()
    except ContentError as error:
        form.add_error(None, f"{error.item}: {error.problem}.")


class UniqueKeyMixin:
    """An item's key must be unique within its lesson: links and follow-ups name items by it."""

    def clean(self):
        cleaned = super().clean()
        section, key = cleaned.get("section"), cleaned.get("key")
        if section is not None and key:
            for model in (DeepDive, Walkthrough, Challenge):
                taken = model.objects.filter(section__lesson_id=section.lesson_id, key=key)
                if model is self._meta.model:
                    taken = taken.exclude(pk=self.instance.pk)
                if taken.exists():
                    name = model._meta.verbose_name
                    self.add_error("key", f"A {name} in this lesson already uses the key '{key}'; keys name items.")
                    break
        return cleaned


class StepForm(MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = Step
        fields = "__all__"

    def clean(self):
        cleaned = super().clean()
        check_graded_number(self, cleaned)
        if cleaned.get("calculator") and not self.errors:
            check = Checker("admin", f"step '{cleaned.get('title', '')}'")
            run_validator(self, lambda: validate_ask(check, ask_data(cleaned), allow_ranges=False))
        return cleaned


def kept_rows(formset: BaseInlineFormSet) -> list[dict]:
    """Return the cleaned data of the inline rows that stay (not marked for deletion)."""
    return [f.cleaned_data for f in formset.forms if f.cleaned_data and not f.cleaned_data.get("DELETE")]


class StepFormSet(BaseInlineFormSet):
    """Validate the steps together, as a content file is: diagram keys, connections, envelope numbers."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        live = kept_rows(self)
        walkthrough = self.instance
        steps = []
        for data in sorted(live, key=lambda d: d.get("order") or 0):
            step = {name: data.get(name) for name in ("title", "body", "hints", "explanation", "components",
                                                       "connections")}  # fmt: skip
            step = {name: value for name, value in step.items() if value not in (None, "", [])}
            if data.get("calculator"):
                step["ask"] = ask_data(data)
            steps.append(step)
        payload = {"key": walkthrough.key or "walkthrough", "kind": walkthrough.kind, "title": walkthrough.title or "-",
                   "topic": walkthrough.topic, "steps": steps}  # fmt: skip
        check = Checker("admin", f"walkthrough '{walkthrough.key}'")
        try:
            parse_walkthrough(check, payload)
        except ContentError as error:
            raise ValidationError(f"{error.item}: {error.problem}.") from None


class ChallengeForm(UniqueKeyMixin, MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = Challenge
        fields = "__all__"

    def clean(self):
        cleaned = super().clean()
        if not cleaned.get("calculator"):
            self.add_error("calculator", "A challenge asks for a number: name a calculator.")
            return cleaned
        check_graded_number(self, cleaned)
        if not self.errors:
            payload = {name: cleaned.get(name) for name in ("key", "topic", "title", "prompt", "hints", "explanation")}
            payload = {name: value for name, value in payload.items() if value not in (None, "", [])}
            payload["ask"] = ask_data(cleaned, cleaned.get("ranges"))
            check = Checker("admin", f"challenge '{cleaned.get('key')}'")
            run_validator(self, lambda: parse_challenge(check, payload))
        return cleaned


class ChoiceFormSet(BaseInlineFormSet):
    """A deep dive needs at least three choices and exactly one best; follow-ups may not loop back."""

    def clean(self):
        super().clean()
        if any(self.errors):
            return
        live = kept_rows(self)
        if len(live) < 3:
            raise ValidationError("A deep dive needs at least three choices.")
        best = sum(1 for data in live if data.get("verdict") == "best")
        if best != 1:
            raise ValidationError(f"A deep dive needs exactly one best choice; this one has {best}.")
        orders = [data.get("order") for data in live]
        if len(set(orders)) != len(orders):
            raise ValidationError("Two choices share an order; give each its own position.")
        for data in live:
            follow_up = data.get("follow_up")
            if follow_up is None:
                continue
            section = getattr(self.instance, "section", None) if self.instance.section_id else None
            if section is not None and follow_up.section.lesson_id != section.lesson_id:
                raise ValidationError("A follow-up must be a deep dive of the same lesson.")
            if self.instance.pk is None:
                continue  # a new deep dive cannot be anyone's follow-up yet, so it cannot loop
            if follow_up.pk == self.instance.pk:
                raise ValidationError("A follow-up cannot lead back to its own deep dive.")
            if leads_to(follow_up, self.instance.pk):
                raise ValidationError(f"The follow-up '{follow_up.key}' leads back to this deep dive in a loop.")
        points = self.instance.points
        for data in live:
            if data.get("verdict") == "best" and data.get("points") != points:
                raise ValidationError(f"The best choice must earn the deep dive's full {points} points.")
            if data.get("verdict") != "best" and (data.get("points") or 0) >= points:
                raise ValidationError(f"Only the best choice may earn the full {points} points.")


def leads_to(start: DeepDive, target_pk: int, limit: int = 50) -> bool:
    """Return whether following choices from ``start`` reaches ``target_pk`` (one query per hop)."""
    frontier, seen = [start.pk], set()
    while frontier and len(seen) < limit:
        node = frontier.pop()
        if node == target_pk:
            return True
        if node in seen:
            continue
        seen.add(node)
        frontier.extend(
            Choice.objects.filter(deep_dive_id=node, follow_up__isnull=False).values_list("follow_up_id", flat=True)
        )
    return False


class ChoiceInline(admin.StackedInline):
    model = Choice
    formset = ChoiceFormSet
    fk_name = "deep_dive"
    extra = 0
    min_num = 3
    fields = ("order", "text", "verdict", "points", "feedback", "follow_up")
    autocomplete_fields = ("follow_up",)


class StepInline(admin.StackedInline):
    model = Step
    formfield_overrides = JSON_FORM_FIELDS
    form = StepForm
    formset = StepFormSet
    extra = 0
    fieldsets = (
        (None, {"fields": ("order", "title", "body")}),
        ("Diagram (build-up and request-flow walkthroughs)", {"fields": ("components", "connections")}),
        (
            "A graded number (envelope walkthroughs)",
            {
                "fields": (
                    "calculator",
                    "inputs",
                    "output",
                    "scale",
                    "unit",
                    "tolerance",
                    "tolerance_kind",
                    "partial_band",
                    "points",
                    "slips",
                    "hints",
                    "explanation",
                )  # fmt: skip
            },
        ),
    )


class SectionInline(admin.TabularInline):
    model = Section
    extra = 0
    fields = ("order", "key", "layer", "title", "minutes")
    show_change_link = True


class ContentAdmin(admin.ModelAdmin):
    """The admin of an authored content row."""

    save_on_top = True
    formfield_overrides = JSON_FORM_FIELDS


@admin.register(Track)
class TrackAdmin(ContentAdmin):
    list_display = ("title", "slug", "order")
    prepopulated_fields = {"slug": ("title",)}


class LessonForm(MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = Lesson
        fields = "__all__"


@admin.register(Lesson)
class LessonAdmin(ContentAdmin):
    form = LessonForm
    list_display = ("title", "track", "kind", "order", "published", "updated_at")
    list_filter = ("track", "kind", "published")
    list_editable = ("published",)
    search_fields = ("title", "slug", "summary")
    prepopulated_fields = {"slug": ("title",)}
    inlines = [SectionInline]


class SectionForm(MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = Section
        fields = "__all__"


@admin.register(Section)
class SectionAdmin(ContentAdmin):
    form = SectionForm
    list_display = ("title", "lesson", "layer", "order", "minutes")
    list_filter = ("lesson", "layer")
    list_select_related = ("lesson",)
    search_fields = ("title", "body")

    def view_on_site(self, obj):
        return f"{obj.lesson.get_absolute_url()}#{obj.anchor}"


class DeepDiveForm(UniqueKeyMixin, MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = DeepDive
        fields = "__all__"


@admin.register(DeepDive)
class DeepDiveAdmin(ContentAdmin):
    form = DeepDiveForm
    list_display = ("key", "topic", "section", "order")
    list_filter = ("topic", "section__lesson")
    list_select_related = ("section__lesson",)
    search_fields = ("key", "prompt")
    inlines = [ChoiceInline]


class WalkthroughForm(UniqueKeyMixin, MarkdownCheckMixin, forms.ModelForm):
    class Meta:
        model = Walkthrough
        fields = "__all__"


@admin.register(Walkthrough)
class WalkthroughAdmin(ContentAdmin):
    form = WalkthroughForm
    list_display = ("title", "kind", "section", "order")
    list_filter = ("kind", "section__lesson")
    list_select_related = ("section__lesson",)
    search_fields = ("title", "key")
    inlines = [StepInline]


@admin.register(Challenge)
class ChallengeAdmin(ContentAdmin):
    form = ChallengeForm
    list_display = ("title", "topic", "calculator", "output", "section")
    list_filter = ("topic", "calculator", "section__lesson")
    list_select_related = ("section__lesson",)
    search_fields = ("title", "prompt", "key")


@admin.register(Learner)
class LearnerAdmin(admin.ModelAdmin):
    list_display = ("__str__", "user", "created_at")
    search_fields = ("user__username",)
    list_select_related = ("user",)


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ("learner", "outcome", "points", "max_points", "is_first", "created_at")
    list_filter = ("outcome", "is_first")
    list_select_related = ("learner__user",)
    readonly_fields = [f.name for f in Answer._meta.fields]

    def has_add_permission(self, request):
        return False
