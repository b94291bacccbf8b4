"""HTML routes of the lessons app (the JSON API lives in lessons/api_urls.py)."""

from django.urls import path

from lessons import interview_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("results/", views.results, name="results"),
    path("results/reset/", views.reset_progress, name="reset-progress"),
    path("review/", views.review_queue, name="review"),
    path("review/answer/", views.review_answer, name="review-answer"),
    path("review/finish/", views.review_finish, name="review-finish"),
    path("lessons/<slug:slug>/", views.lesson_detail, name="lesson"),
    path(
        "lessons/<slug:slug>/walkthroughs/<slug:key>/<int:number>/",
        views.walkthrough_step,
        name="walkthrough-step",
    ),
    path("lessons/<slug:slug>/deep-dives/<int:pk>/answer/", views.answer_deep_dive, name="answer-deep-dive"),
    path("lessons/<slug:slug>/steps/<int:pk>/answer/", views.answer_step, name="answer-step"),
    path("lessons/<slug:slug>/challenges/<int:pk>/answer/", views.answer_challenge, name="answer-challenge"),
    path("interviews/", interview_views.interview_list, name="interviews"),
    path("interviews/start/", interview_views.interview_start, name="interview-start"),
    path("interviews/<int:pk>/", interview_views.interview_detail, name="interview"),
    path("interviews/<int:pk>/answer/", interview_views.interview_answer, name="interview-answer"),
    path("interviews/<int:pk>/finish/", interview_views.interview_finish, name="interview-finish"),
    path("interviews/<int:pk>/timer/", interview_views.interview_timer, name="interview-timer"),
    path("lessons/<slug:slug>/open-questions/<int:pk>/write/", views.write_open_question, name="write-open-question"),
    path(
        "lessons/<slug:slug>/open-questions/<int:pk>/answer/", views.answer_open_question, name="answer-open-question"
    ),
    path("lessons/<slug:slug>/hint/<str:kind>/<int:pk>/", views.take_hint, name="take-hint"),
    path("lessons/<slug:slug>/reveal/<str:kind>/<int:pk>/", views.reveal, name="reveal"),
]
