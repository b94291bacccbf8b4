"""URLs of the calculator API (mounted at /api/v1/calculators/)."""

from django.urls import path

from calculators import api

urlpatterns = [
    path("", api.CalculatorListView.as_view(), name="calculator-list"),
    path("<slug:slug>/", api.CalculatorDetailView.as_view(), name="calculator-detail"),
]
