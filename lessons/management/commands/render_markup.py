"""Render every content row's stored HTML again, after the Markdown renderer or a calculator changed."""

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import transaction

from lessons import content_cache
from lessons.markup import STORED_MARKDOWN, render_stored_markup


class Command(BaseCommand):
    help = "Render the authored Markdown of every lesson row to its stored HTML, and lay out diagrams, again (make run does it)."

    @transaction.atomic
    def handle(self, *args, **options):
        rows = 0
        for name in STORED_MARKDOWN:
            model = apps.get_model("lessons", name)
            for row in model.objects.iterator():
                # Only the HTML columns are written: an edit saved meanwhile keeps its other fields.
                names = render_stored_markup(row)
                model.objects.filter(pk=row.pk).update(**{field: getattr(row, field) for field in names})
                rows += 1
        diagrams = 0
        for walkthrough in apps.get_model("lessons", "Walkthrough").objects.iterator():
            walkthrough.lay_out_diagram()
            diagrams += bool(walkthrough.diagram)
        content_cache.new_generation()  # written with update(), which sends no signal
        self.stdout.write(f"Rendered the Markdown of {rows} content row(s) and laid out {diagrams} diagram(s).")
