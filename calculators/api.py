"""The public calculator API (DRF): list the calculators, evaluate one from query parameters."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from calculators.errors import CalculatorInputError
from calculators.formatting import input_text
from calculators.registry import CALCULATORS, get_calculator

# --- Serializers: they document the responses; the registry builds the data. ---


class ParameterSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="Query parameter name, e.g. `layers`.")
    type = serializers.ChoiceField(choices=["int", "float"], help_text="`int` takes whole numbers only.")
    default = serializers.FloatField(help_text="Value used when the parameter is left out.")
    min = serializers.FloatField(help_text="Smallest accepted value (inclusive).")
    max = serializers.FloatField(help_text="Largest accepted value (inclusive).")
    unit = serializers.CharField(help_text="`fraction` means a share in [0, 1]; `GB` is decimal (10^9 bytes).")
    help = serializers.CharField()


class OutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    unit = serializers.CharField(help_text="`check` outputs are booleans; `B` is plain bytes.")


class CalculatorSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    title = serializers.CharField()
    parameters = ParameterSerializer(many=True)
    outputs = OutputSerializer(many=True)


class StepSerializer(serializers.Serializer):
    label = serializers.CharField(help_text="What this step computes.")
    expression = serializers.CharField(help_text="The arithmetic with the actual numbers.")
    value = serializers.JSONField(help_text="A number, a boolean for checks, or null (an unstable queue).")
    unit = serializers.CharField(allow_blank=True)


class ResultSerializer(serializers.Serializer):
    slug = serializers.SlugField()
    inputs = serializers.DictField(child=serializers.FloatField(), help_text="Every parameter, defaults filled in.")
    outputs = serializers.DictField(
        child=serializers.JSONField(),
        help_text="Output name to value: a number, a boolean for checks, or null where the contract allows it "
        "(`wait_after_ms` of an unstable queue).",
    )
    steps = StepSerializer(many=True)


class ErrorsSerializer(serializers.Serializer):
    errors = serializers.DictField(
        child=serializers.ListField(child=serializers.CharField()),
        help_text="Parameter name (or `__all__`) to its messages.",
    )


class NotFoundSerializer(serializers.Serializer):
    detail = serializers.CharField()


def _parameters_table() -> str:
    lines = ["Parameters by calculator (all optional):", ""]
    for calculator in CALCULATORS.values():
        params = ", ".join(f"`{p.name}` ({p.unit}, default {input_text(p.default)})" for p in calculator.parameters)
        outputs = ", ".join(f"`{o.name}`" for o in calculator.outputs)
        lines.append(f"- **{calculator.slug}**: {params}. Outputs: {outputs}.")
    return "\n".join(lines)


# --- Views ----------------------------------------------------------------------


class CalculatorListView(APIView):
    """List every calculator with its parameters and outputs."""

    @extend_schema(
        operation_id="calculators_list",
        summary="List the calculators",
        description="Every calculator with its parameters (type, default, bounds, unit) and outputs.",
        responses={200: CalculatorSerializer(many=True)},
        tags=["calculators"],
    )
    def get(self, request: Request) -> Response:
        return Response([calculator.describe() for calculator in CALCULATORS.values()])


class CalculatorDetailView(APIView):
    """Evaluate one calculator from query parameters."""

    @extend_schema(
        operation_id="calculators_evaluate",
        summary="Evaluate a calculator",
        description=(
            "Pass any of the calculator's parameters as query parameters (`?layers=32&tokens=4096`); the others "
            "take their defaults. Returns every input, the outputs and the derivation steps. A value that is not "
            "a finite number, out of range, not whole for an `int` parameter, or an unknown parameter name gives "
            "400 with a message per parameter.\n\n" + _parameters_table()
        ),
        parameters=[
            OpenApiParameter(
                "slug",
                OpenApiTypes.STR,
                OpenApiParameter.PATH,
                enum=list(CALCULATORS),
                description="Which calculator.",
            ),
            OpenApiParameter(
                "parameters",
                {"type": "object", "additionalProperties": {"type": "number"}},
                OpenApiParameter.QUERY,
                style="form",
                explode=True,
                description="The calculator's parameters as name=value pairs (see the list above).",
            ),
        ],
        responses={
            200: ResultSerializer,
            400: OpenApiResponse(ErrorsSerializer, description="Bad parameter values or names."),
            404: OpenApiResponse(NotFoundSerializer, description="No calculator with this slug."),
        },
        examples=[
            OpenApiExample(
                "Out of range",
                value={"errors": {"layers": ["Must be at least 1 layer; got 0."]}},
                response_only=True,
                status_codes=["400"],
            )
        ],
        tags=["calculators"],
    )
    def get(self, request: Request, slug: str) -> Response:
        try:
            calculator = get_calculator(slug)
        except KeyError:
            raise NotFound(f"No calculator called “{slug}”. See /api/v1/calculators/ for the list.") from None
        raw = {name: request.query_params[name] for name in request.query_params}
        # DRF's own format override (?format=json) is not a calculator parameter.
        raw.pop(api_settings.URL_FORMAT_OVERRIDE or "", None)
        try:
            result = calculator.evaluate(raw)
        except CalculatorInputError as error:
            return Response({"errors": error.errors}, status=400)
        return Response(result.as_dict())
