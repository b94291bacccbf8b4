"""Write the database's tracks and lessons back to content files (the load_content format)."""

from pathlib import Path

from django.core.management.base import BaseCommand

from lessons.content.export import export_directory
from lessons.content.load import content_dir


class Command(BaseCommand):
    help = "Export every track and lesson to tracks.yaml and lessons/<slug>.yaml."

    def add_arguments(self, parser):
        parser.add_argument("--dir", type=Path, default=None, help="Target folder (default: content/).")

    def handle(self, *args, dir=None, **options):
        written = export_directory(dir or content_dir())
        self.stdout.write(self.style.SUCCESS(f"Wrote {len(written)} file(s) to {(dir or content_dir())}."))
