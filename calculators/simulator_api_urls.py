"""URLs of the simulator API (mounted at /api/v1/simulator/)."""

from django.urls import path

from calculators import simulator_api

urlpatterns = [
    path("routing/", simulator_api.RoutingSimulationView.as_view(), name="simulator-routing"),
    path("autoscaling/", simulator_api.AutoscalingSimulationView.as_view(), name="simulator-autoscaling"),
]
