"""JSON API routes for learners, under /api/v1/ (separate from the HTML endpoints)."""

from django.urls import path

from lessons import api

urlpatterns = [
    path("lessons/", api.LessonListView.as_view(), name="api-lesson-list"),
    path("lessons/<slug:slug>/", api.LessonDetailView.as_view(), name="api-lesson-detail"),
    path("deep-dives/<int:pk>/answer/", api.DeepDiveAnswerView.as_view(), name="api-deep-dive-answer"),
    path("steps/<int:pk>/answer/", api.StepAnswerView.as_view(), name="api-step-answer"),
    path("challenges/<int:pk>/answer/", api.ChallengeAnswerView.as_view(), name="api-challenge-answer"),
    path("deep-dives/<int:pk>/hint/", api.DeepDiveHintView.as_view(), name="api-deep-dive-hint"),
    path("deep-dives/<int:pk>/reveal/", api.DeepDiveRevealView.as_view(), name="api-deep-dive-reveal"),
    path("steps/<int:pk>/hint/", api.StepHintView.as_view(), name="api-step-hint"),
    path("steps/<int:pk>/reveal/", api.StepRevealView.as_view(), name="api-step-reveal"),
    path("challenges/<int:pk>/hint/", api.ChallengeHintView.as_view(), name="api-challenge-hint"),
    path("challenges/<int:pk>/reveal/", api.ChallengeRevealView.as_view(), name="api-challenge-reveal"),
    path("open-questions/<int:pk>/write/", api.OpenQuestionWriteView.as_view(), name="api-open-question-write"),
    path("open-questions/<int:pk>/answer/", api.OpenQuestionAnswerView.as_view(), name="api-open-question-answer"),
    path("results/", api.ResultsView.as_view(), name="api-results"),
    path("review/", api.ReviewView.as_view(), name="api-review"),
    path("interviews/", api.InterviewListView.as_view(), name="api-interview-list"),
    path("interviews/<int:pk>/", api.InterviewDetailView.as_view(), name="api-interview-detail"),
    path("interviews/<int:pk>/answer/", api.InterviewAnswerView.as_view(), name="api-interview-answer"),
    path("interviews/<int:pk>/finish/", api.InterviewFinishView.as_view(), name="api-interview-finish"),
    path("review/next/", api.ReviewNextView.as_view(), name="api-review-next"),
    path("review/answer/", api.ReviewAnswerView.as_view(), name="api-review-answer"),
]
