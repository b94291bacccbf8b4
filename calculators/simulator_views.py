"""The simulator pages: /simulator/ (routing) and /simulator/autoscaling/, htmx-enhanced, plain GET forms."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django import forms
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from calculators import maths
from calculators.charts import Chart
from calculators.errors import CalculatorInputError
from calculators.formatting import input_text, milliseconds, money, number, percent
from calculators.forms import ParameterField, parameter_rows
from calculators.simulation import PERCENTILES
from calculators.simulator import AUTOSCALING, ROUTING, SWEEP_REQUESTS, Mode, routing_sweep, run_charge
from calculators.simulator_api import run_mode
from calculators.simulator_cache import cached_run
from calculators.simulator_charts import POLICY_LABELS, day_chart, hit_rate_chart, load_chart, ttft_chart
from interview.ratelimit import limit_per_visitor
from interview.views import bad_input_status

# What the routing table shows of each policy, in order: (output, label, how to write it).
ROUTING_ROWS = (
    ("hit_rate", "Prefix-cache hit rate", lambda v: percent(v, 3)),
    ("busiest_share", "Busiest replica's share of requests", lambda v: percent(v, 3)),
    ("busiest_utilization", "Busiest replica's slots busy", lambda v: percent(v, 3)),
    ("mean_utilization", "All slots busy", lambda v: percent(v, 3)),
    ("queue_wait_mean_ms", "Mean queue wait", milliseconds),
    ("queue_wait_p99_ms", "p99 queue wait", milliseconds),
    ("ttft_p50_ms", "TTFT p50", milliseconds),
    ("ttft_p99_ms", "TTFT p99", milliseconds),
    ("prefill_tokens", "Prompt tokens prefilled", number),
    ("evictions", "Cache evictions", number),
)
AUTOSCALING_ROWS = (
    ("slo_violation_minutes", "SLO-violating minutes", number),
    ("gpu_hours", "GPU-hours", lambda v: number(v, 5)),
    ("cost_usd", "Cost", money),
    ("peak_replicas", "Most replicas at once", number),
)


class SimulatorForm(forms.Form):
    """The controls of one mode: a number box per parameter and a checkbox per policy.

    The page may compare several policies in either mode, so both use
    `policies` (repeated or comma-separated); the mode's own parser checks
    every value, so the page shows the API's messages.
    """

    def __init__(self, mode: Mode, data: QueryDict) -> None:
        self.mode = mode
        self.given = {p.name: data[p.name] for p in mode.parameters if p.name in data}
        chosen = [name.strip() for value in data.getlist("policies") for name in value.split(",") if name.strip()]
        self.policies = chosen or list(mode.choice.options)
        values = {p.name: input_text(p.default) for p in mode.parameters}
        super().__init__({**values, **self.given, "policies": self.policies}, label_suffix="")
        for parameter in mode.parameters:
            self.fields[parameter.name] = ParameterField(parameter)
        self.fields["policies"] = forms.MultipleChoiceField(
            choices=[(name, POLICY_LABELS[name]) for name in mode.choice.options],
            widget=forms.CheckboxSelectMultiple,
            required=False,
            label="Policies to compare",
        )
        self.inputs: dict[str, dict[str, Any]] = {}

    def clean(self) -> dict[str, Any]:
        problems: dict[str, list[str]] = {}
        for policy in self.policies:
            try:
                self.inputs[policy] = self.mode.parse({**self.given, self.mode.choice.name: policy})
            except CalculatorInputError as error:
                problems.update(error.errors)
        for name, messages in problems.items():
            field = "policies" if name == self.mode.choice.name else name
            if field in self.errors:  # the checkboxes already said which names are unknown
                continue
            for message in messages:
                self.add_error(field if field in self.fields else None, message)
        return {}

    def query(self) -> dict[str, str]:
        """Return the valid current values as URL parameters (invalid ones back to their defaults)."""
        values = {p.name: input_text(p.default) for p in self.mode.parameters}
        values |= {name: str(value).strip() for name, value in self.given.items() if name not in self.errors}
        known = [name for name in self.policies if name in self.mode.choice.options]
        return values | {"policies": ",".join(known or self.mode.choice.options)}


def _chart(chart: Chart) -> dict[str, Any]:
    return {
        "chart": chart,
        "svg": mark_safe(chart.svg),  # noqa: S308 - every text node is escaped in charts.py
        "rows": [{"head": row[0], "cells": row[1:]} for row in chart.table.rows],
    }


def _table(rows: tuple, results: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Return the results table's rows: a measure per row (in words), a policy per column."""
    return [
        {"name": name, "label": label, "cells": [write(results[p][name]) for p in results]}
        for name, label, write in rows
    ]


def _routing_result(form: SimulatorForm) -> dict[str, Any]:
    inputs = next(iter(form.inputs.values()))
    inputs = {**inputs, "policies": tuple(form.policies)}
    results = run_mode(ROUTING, {**form.given, "policies": ",".join(form.policies)})["results"]
    sweep = cached_run("routing", "sweep", inputs, lambda: routing_sweep(inputs, results))
    best = max(results, key=lambda p: results[p]["hit_rate"])
    return {
        "policies": [POLICY_LABELS[p] for p in results],
        "table": _table(ROUTING_ROWS, results),
        "charts": [
            _chart(hit_rate_chart(sweep, inputs["cache_copies"], min(inputs["requests"], SWEEP_REQUESTS))),
            _chart(load_chart(results)),
            _chart(ttft_chart(results, PERCENTILES)),
        ],
        "status": f"Highest hit rate: {POLICY_LABELS[best]}, {percent(results[best]['hit_rate'], 3)}",
    }


def _autoscaling_result(form: SimulatorForm) -> dict[str, Any]:
    days = {}
    for policy in form.policies:
        results = run_mode(AUTOSCALING, {**form.given, "policy": policy})["results"]
        days[policy] = {**results, "peak_replicas": max(entry["replicas"] for entry in results["timeline"])}
    inputs = next(iter(form.inputs.values()))
    needed = [
        maths.concurrency(entry["demand_rps"], inputs["request_s"]) / inputs["slots_per_replica"]
        for entry in next(iter(days.values()))["timeline"]
    ]
    fewest = min(days, key=lambda p: days[p]["slo_violation_minutes"])
    return {
        "policies": [POLICY_LABELS[p] for p in days],
        "table": _table(AUTOSCALING_ROWS, days),
        "charts": [_chart(day_chart(days, needed))],
        "status": f"Fewest minutes over the objective: {POLICY_LABELS[fewest]}, "
        f"{number(days[fewest]['slo_violation_minutes'])}",
    }


def _page(request: HttpRequest, mode: Mode, url_name: str) -> HttpResponse:
    form = SimulatorForm(mode, request.GET)
    valid = form.is_valid()
    result = None
    if valid:
        result = _routing_result(form) if mode is ROUTING else _autoscaling_result(form)
    fragment = request.htmx and not request.htmx.history_restore_request
    page_url = reverse(url_name)
    query = form.query()
    api_query = {**query}
    if mode is AUTOSCALING:
        api_query["policy"] = api_query.pop("policies").split(",")[0]
    context = {
        "mode": mode,
        "form": form,
        "rows": parameter_rows(form, mode.parameters),
        "policy_field": form["policies"],
        "result": result,
        "presets": [
            {"label": preset.label, "query": urlencode({k: input_text(v) for k, v in preset.values.items()})}
            for preset in mode.presets
        ],
        "page_url": page_url,
        "routing_url": reverse("simulator:routing"),
        "autoscaling_url": reverse("simulator:autoscaling"),
        "api_url": reverse(f"simulator-{mode.slug}"),
        "api_query": urlencode(api_query),
        "is_htmx": fragment,
    }
    template = "calculators/_simulator_result.html" if fragment else "calculators/simulator.html"
    return render(request, template, context, status=200 if valid else bad_input_status(fragment))


@require_safe
@vary_on_headers("HX-Request")
@limit_per_visitor("simulations", charge=lambda request: run_charge(ROUTING, request.GET))
def routing(request: HttpRequest) -> HttpResponse:
    return _page(request, ROUTING, "simulator:routing")


@require_safe
@vary_on_headers("HX-Request")
@limit_per_visitor("simulations", charge=lambda request: run_charge(AUTOSCALING, request.GET))
def autoscaling(request: HttpRequest) -> HttpResponse:
    return _page(request, AUTOSCALING, "simulator:autoscaling")
