from django.apps import AppConfig


class LessonsConfig(AppConfig):
    name = "lessons"
    verbose_name = "Lessons and learner progress"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from lessons import content_cache, services
        from lessons.models import Choice

        content_cache.connect_signals()
        # A choice pointed at a follow-up opens it for the learners who picked that choice (the reach rule).
        post_save.connect(services.reach_through_saved_choice, sender=Choice, dispatch_uid="reach-through-choice")
