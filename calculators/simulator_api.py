"""The fleet simulator's JSON API (DRF): GET /api/v1/simulator/routing/ and /autoscaling/.

Parameters and outputs are described once, in `calculators.simulator`; the
OpenAPI schema lists each of them from there. Identical inputs and seed are
served from the cache (`calculators.simulator_cache`).
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from calculators.api import ErrorsSerializer
from calculators.errors import CalculatorInputError
from calculators.formatting import input_text
from calculators.simulator import AUTOSCALING, ROUTING, Mode
from calculators.simulator_cache import cached_run
from interview.ratelimit import SimulationsThrottle


def run_mode(mode: Mode, raw: dict[str, object]) -> dict:
    """Return {"inputs", "results"} for raw query values, the results from the cache when seen before."""
    inputs = mode.parse(raw)
    results = cached_run(mode.slug, "results", inputs, lambda: mode.compute(inputs))
    return {"inputs": mode.shown(inputs), "results": results}


def _query_parameters(mode: Mode) -> list[OpenApiParameter]:
    choice = mode.choice
    parameters = [
        OpenApiParameter(
            choice.name,
            OpenApiTypes.STR,
            OpenApiParameter.QUERY,
            description=f"{choice.help} One of: {', '.join(f'`{o}`' for o in choice.options)}. "
            f"Default: `{','.join(choice.default)}`.",
            enum=None if choice.many else list(choice.options),
        )
    ]
    for p in mode.parameters:
        unit = f" Unit: {p.unit}." if p.unit else ""
        parameters.append(
            OpenApiParameter(
                p.name,
                OpenApiTypes.INT if p.type == "int" else OpenApiTypes.NUMBER,
                OpenApiParameter.QUERY,
                description=f"{p.help}{unit} Default {input_text(p.default)}; "
                f"{input_text(p.min)} to {input_text(p.max)}.",
            )
        )
    return parameters


def _outputs_text(mode: Mode) -> str:
    return "\n".join(f"- `{name}` ({unit or 'list'}): {help_}" for name, unit, help_ in mode.outputs)


class PolicyResultSerializer(serializers.Serializer):
    hit_rate = serializers.FloatField(help_text="Share of requests that found their preamble cached (0 to 1).")
    busiest_share = serializers.FloatField(help_text="Share of all requests on the busiest replica.")
    busiest_utilization = serializers.FloatField(help_text="Busy share of the busiest replica's slots.")
    mean_utilization = serializers.FloatField(help_text="Busy share of all slots.")
    ttft_p50_ms = serializers.FloatField()
    ttft_p99_ms = serializers.FloatField()
    queue_wait_mean_ms = serializers.FloatField()
    queue_wait_p99_ms = serializers.FloatField()
    prefill_tokens = serializers.IntegerField(help_text="Prompt tokens prefilled: preambles only on misses.")
    evictions = serializers.IntegerField(help_text="Preamble copies evicted from prefix caches.")
    replica_share = serializers.ListField(child=serializers.FloatField(), help_text="Per replica, replica 0 first.")
    ttft_percentiles_ms = serializers.ListField(
        child=serializers.FloatField(), help_text="TTFT at percentiles 0, 5, ..., 100."
    )


class RoutingResponseSerializer(serializers.Serializer):
    inputs = serializers.DictField(child=serializers.JSONField(), help_text="Every parameter, defaults filled in.")
    results = serializers.DictField(child=PolicyResultSerializer(), help_text="One entry per policy asked for.")


class MinuteSerializer(serializers.Serializer):
    minute = serializers.IntegerField(help_text="0 to 1439.")
    demand_rps = serializers.FloatField(help_text="Mean demand of the minute.")
    arrival_rps = serializers.FloatField(help_text="Requests that arrived in the minute, per second.")
    replicas = serializers.IntegerField(help_text="Replicas provisioned (serving or loading).")
    ready_replicas = serializers.FloatField(help_text="Replicas serving, averaged over the minute.")
    ttft_p99_ms = serializers.FloatField(allow_null=True, help_text="Null in a minute without requests.")


class AutoscalingResultSerializer(serializers.Serializer):
    slo_violation_minutes = serializers.IntegerField()
    gpu_hours = serializers.FloatField()
    cost_usd = serializers.FloatField()
    timeline = MinuteSerializer(many=True)


class AutoscalingResponseSerializer(serializers.Serializer):
    inputs = serializers.DictField(child=serializers.JSONField(), help_text="Every parameter, defaults filled in.")
    results = AutoscalingResultSerializer()


_BAD = OpenApiExample(
    "Too many requests",
    value={"errors": {"requests": ["Must be at most 100,000 requests; got 200000."]}},
    response_only=True,
    status_codes=["400"],
)


class _SimulatorView(APIView):
    mode: Mode
    throttle_classes = [SimulationsThrottle]  # one budget with the simulator pages

    def get(self, request: Request) -> Response:
        raw = {name: request.query_params[name] for name in request.query_params}
        raw.pop(api_settings.URL_FORMAT_OVERRIDE or "", None)
        try:
            return Response(run_mode(self.mode, raw))
        except CalculatorInputError as error:
            return Response({"errors": error.errors}, status=400)


class RoutingSimulationView(_SimulatorView):
    """Run the routing simulation: every policy on the same arrivals."""

    mode = ROUTING

    @extend_schema(
        operation_id="simulator_routing",
        summary="Simulate routing policies on a fleet",
        description=(
            "Plays out Poisson arrivals from Zipf-popular prompt families over replicas with decode slots and "
            "LRU prefix caches, once per policy on the same arrivals. The same parameters and seed give the "
            "same numbers. Bad, unknown or oversized parameters give 400 with a message per parameter.\n\n"
            "Outputs per policy:\n" + _outputs_text(ROUTING)
        ),
        parameters=_query_parameters(ROUTING),
        responses={
            200: RoutingResponseSerializer,
            400: OpenApiResponse(ErrorsSerializer, description="Bad parameter values or names."),
        },
        examples=[_BAD],
        tags=["simulator"],
    )
    def get(self, request: Request) -> Response:
        return super().get(request)


class AutoscalingSimulationView(_SimulatorView):
    """Run the autoscaling simulation: one policy over a day."""

    mode = AUTOSCALING

    @extend_schema(
        operation_id="simulator_autoscaling",
        summary="Simulate an autoscaling policy over a day",
        description=(
            "A day of demand (a diurnal curve plus a spike) minute by minute, replicas added and removed by the "
            "policy with cold starts, a warm pool and a scale-down delay. Bad or oversized parameters, or a "
            "minimum above the maximum, give 400 with a message per parameter.\n\n"
            "Outputs:\n" + _outputs_text(AUTOSCALING)
        ),
        parameters=_query_parameters(AUTOSCALING),
        responses={
            200: AutoscalingResponseSerializer,
            400: OpenApiResponse(ErrorsSerializer, description="Bad parameter values or names."),
        },
        tags=["simulator"],
    )
    def get(self, request: Request) -> Response:
        return super().get(request)
