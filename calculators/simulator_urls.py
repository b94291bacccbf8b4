"""URLs of the simulator pages (mounted at /simulator/)."""

from django.urls import path

from calculators import simulator_views

app_name = "simulator"

urlpatterns = [
    path("", simulator_views.routing, name="routing"),
    path("autoscaling/", simulator_views.autoscaling, name="autoscaling"),
]
