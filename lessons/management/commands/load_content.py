"""Load the lesson files in content/ into the database (idempotent)."""

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from lessons.content.load import content_dir, write
from lessons.content.validate import ContentError, LessonSpec, all_problems, parse_directory, sentence


class Command(BaseCommand):
    help = "Validate and load content/tracks.yaml and content/lessons/*.yaml; nothing is written if any file is bad."

    def add_arguments(self, parser):
        parser.add_argument("--dir", type=Path, default=None, help="Content folder (default: content/).")
        parser.add_argument("--check", action="store_true", help="Validate only; write nothing.")
        parser.add_argument(
            "--force", action="store_true", help="Reload every file, also those unchanged since the last load."
        )
        parser.add_argument(
            "--prune", action="store_true", help="Delete items no longer in a file even if learners answered them."
        )

    def handle(self, *args, dir=None, check=False, force=False, prune=False, **options):
        directory = dir or content_dir()
        try:
            if check:
                tracks, specs = parse_directory(directory)
                self.warn(specs)
                self.stdout.write(f"{len(specs)} lesson file(s) and {len(tracks)} track(s) are valid.")
                return
            if not (directory / "tracks.yaml").exists():
                self.stdout.write(f"No content found in {directory} (no tracks.yaml): nothing to load.")
                return
            tracks, specs = parse_directory(directory)
            self.warn(specs)
            report = write(tracks, specs, force=force, prune=prune)
        except ContentError as error:
            problems = all_problems(error)
            if len(problems) == 1:
                raise CommandError(
                    f"Refused {error.file}: {error.item}: {sentence(error.problem)} Nothing was written."
                ) from None
            lines = "".join(f"\n  {e.file}: {e.item}: {sentence(e.problem)}" for e in problems)
            raise CommandError(f"Refused: {len(problems)} problems, nothing was written.{lines}") from None
        self.stdout.write(self.style.SUCCESS(f"Loaded {report}."))

    def warn(self, specs: list[LessonSpec]) -> None:
        """Print each file's give-away warnings: a draft still loads, the test suite refuses them."""
        for spec in specs:
            for warning in spec.warnings:
                self.stderr.write(self.style.WARNING(f"Warning: {spec.file}: {warning}"))
