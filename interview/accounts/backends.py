"""Authentication backend: Django's ModelBackend, with the account's learner read in the same query."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend


class LearnerModelBackend(ModelBackend):
    """Load a signed-in user together with their learner row (``user.learner``), saving a query per answer."""

    def get_user(self, user_id):
        model = get_user_model()
        user = model._default_manager.select_related("learner").filter(pk=user_id).first()
        return user if user is not None and self.user_can_authenticate(user) else None
