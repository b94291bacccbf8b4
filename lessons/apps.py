from django.apps import AppConfig


class LessonsConfig(AppConfig):
    name = "lessons"
    verbose_name = "Lessons and learner progress"

    def ready(self) -> None:
        from lessons import schema  # noqa: F401 - registers the OpenAPI authentication extensions
