"""URLs of the calculator pages (mounted at /calculators/)."""

from django.urls import path

from calculators import views

app_name = "calculators"

urlpatterns = [
    path("", views.index, name="index"),
    path("<slug:slug>/", views.detail, name="detail"),
]
