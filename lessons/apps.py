from django.apps import AppConfig


class LessonsConfig(AppConfig):
    name = "lessons"
    verbose_name = "Lessons and learner progress"

    def ready(self) -> None:
        from lessons import content_cache

        content_cache.connect_signals()
