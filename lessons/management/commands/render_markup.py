"""Render every content row's stored HTML again, after the Markdown renderer or a calculator changed."""

from django.apps import apps
from django.core.management.base import BaseCommand
from django.db import transaction

from lessons.markup import STORED_MARKDOWN


class Command(BaseCommand):
    help = "Render the authored Markdown of every lesson row to its stored HTML again (make run does it)."

    @transaction.atomic
    def handle(self, *args, **options):
        rows = 0
        for name in STORED_MARKDOWN:
            for row in apps.get_model("lessons", name).objects.iterator():
                row.save()  # the models' save() renders (lessons.models.RenderedMarkdown)
                rows += 1
        self.stdout.write(f"Rendered the Markdown of {rows} content row(s).")
