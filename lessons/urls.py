"""HTML routes of the lessons app (the JSON API lives in lessons/api_urls.py)."""

from django.contrib.auth import views as auth_views
from django.urls import path

from lessons import views

urlpatterns = [
    path("", views.home, name="home"),
    path("results/", views.results, name="results"),
    path("results/reset/", views.reset_progress, name="reset-progress"),
    path("review/", views.review_queue, name="review"),
    path("lessons/<slug:slug>/", views.lesson_detail, name="lesson"),
    path(
        "lessons/<slug:slug>/walkthroughs/<slug:key>/<int:number>/",
        views.walkthrough_step,
        name="walkthrough-step",
    ),
    path("lessons/<slug:slug>/deep-dives/<int:pk>/answer/", views.answer_deep_dive, name="answer-deep-dive"),
    path("lessons/<slug:slug>/steps/<int:pk>/answer/", views.answer_step, name="answer-step"),
    path("lessons/<slug:slug>/challenges/<int:pk>/answer/", views.answer_challenge, name="answer-challenge"),
    path("accounts/", views.account, name="account"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", views.login_view.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/change/", auth_views.PasswordChangeView.as_view(), name="password_change"),
    path(
        "accounts/password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/password/reset/", auth_views.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/done/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "accounts/reset/<uidb64>/<token>/",
        auth_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path("accounts/reset/done/", auth_views.PasswordResetCompleteView.as_view(), name="password_reset_complete"),
]
