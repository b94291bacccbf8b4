"""The fleet simulator's two modes as the page and the API see them: parameters, presets, parse and run (no Django).

`ROUTING` and `AUTOSCALING` name every parameter (bounds, unit, help) once; the
page's form, the API and its OpenAPI description are built from them. The
numbers come from `calculators.simulation`. Parameter and output names are a
public contract (DESIGN.md, "Fleet simulator").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from calculators import maths, simulation
from calculators.calculator import Number, Parameter, parse_values
from calculators.errors import CalculatorError, CalculatorInputError
from calculators.simulator_charts import POLICY_LABELS

__all__ = [
    "AUTOSCALING",
    "MODES",
    "REFERENCE_SLUGS",
    "ROUTING",
    "Choice",
    "Mode",
    "SimPreset",
    "simulated_value",
    "zipf_for_hot_share",
]

MAX_REQUESTS = 100_000
MAX_REPLICAS = 256
# Drawing arrivals and the hit-rate sweep cost time in proportion to the families: 10,000 keeps the
# largest page (100,000 requests, every policy, the sweep) near 2 s of CPU on a small server.
MAX_FAMILIES = 10_000
# The simulations rate limit charges a run one per this many simulated requests (requests x policies),
# so the default page (10,000 requests, five policies) is one charge and the largest run ten.
CHARGE_REQUESTS = 50_000
SWEEP_COPIES = (0, 2, 8, 32)  # cache sizes of the hit-rate chart, with the current one
SWEEP_REQUESTS = 10_000  # the chart's runs play at most this many of the arrivals, to keep the page quick


@dataclass(frozen=True)
class Choice:
    """A parameter naming policies: one (`policy`) or a comma-separated list (`policies`)."""

    name: str
    options: tuple[str, ...]
    default: tuple[str, ...]
    many: bool
    label: str
    help: str

    def parse(self, raw: object) -> tuple[str, ...]:
        text = raw if isinstance(raw, str) else ""
        names = [part.strip() for part in text.split(",") if part.strip()]
        if not names:
            raise ValueError(f"Name {'at least one' if self.many else 'one'} of: {', '.join(self.options)}.")
        unknown = [name for name in names if name not in self.options]
        if unknown:
            raise ValueError(f"Unknown: {', '.join(unknown)}. Choose from: {', '.join(self.options)}.")
        if not self.many and len(names) > 1:
            raise ValueError(f"Name one policy of: {', '.join(self.options)}.")
        return tuple(dict.fromkeys(names))  # each once, in the order given


@dataclass(frozen=True)
class SimPreset:
    """A named scenario: parameter values (others keep their defaults) and where it comes from."""

    slug: str
    label: str
    values: Mapping[str, Number | str]


@dataclass(frozen=True)
class Mode:
    """One simulator mode: its parameters, its policy choice, presets and the function that runs it."""

    slug: str
    title: str
    parameters: tuple[Parameter, ...]
    choice: Choice
    presets: tuple[SimPreset, ...]
    run: Callable[[dict[str, Any]], dict[str, Any]]
    outputs: tuple[tuple[str, str, str], ...]  # (name, unit, help)
    check: Callable[[dict[str, Any]], None]  # raises CalculatorError for inputs that contradict each other

    def parse(self, raw: Mapping[str, object]) -> dict[str, Any]:
        """Return every input from `raw` (query strings), defaults filled; CalculatorInputError lists each problem."""
        errors: dict[str, list[str]] = {}
        values: dict[str, Any] = {}
        numeric = {key: value for key, value in raw.items() if key != self.choice.name}
        try:
            values.update(parse_values(self.parameters, numeric, self.title, extra=(self.choice.name,)))
        except CalculatorInputError as error:
            errors.update(error.errors)
        try:
            values[self.choice.name] = (
                self.choice.parse(raw[self.choice.name]) if self.choice.name in raw else self.choice.default
            )
        except ValueError as error:
            errors[self.choice.name] = [str(error)]
        if errors:
            raise CalculatorInputError(errors)
        try:
            self.check(values)
        except CalculatorError as error:
            raise CalculatorInputError({name: [error.message] for name in error.fields or ("__all__",)}) from error
        return values

    def compute(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """Run parsed inputs; a domain error (inputs that make no sense together) becomes a CalculatorInputError."""
        try:
            return self.run(inputs)
        except CalculatorError as error:
            fields = [name for name in error.fields if name in inputs] or ["__all__"]
            raise CalculatorInputError({name: [error.message] for name in fields}) from error

    def shown(self, inputs: Mapping[str, Any]) -> dict[str, Any]:
        """Return parsed inputs as the API echoes them: `policies` a list, `policy` one name."""
        shown = {name: list(value) if isinstance(value, tuple) else value for name, value in inputs.items()}
        if not self.choice.many:
            shown[self.choice.name] = inputs[self.choice.name][0]
        return shown

    def evaluate(self, raw: Mapping[str, object]) -> dict[str, Any]:
        """Parse and run: {"inputs", "results"} (uncached; the adapters cache through simulator_cache)."""
        inputs = self.parse(raw)
        return {"inputs": self.shown(inputs), "results": self.compute(inputs)}

    def preset(self, slug: str) -> SimPreset:
        return next(preset for preset in self.presets if preset.slug == slug)


def _p(
    name: str, type_: str, default: Number, low: Number, high: Number, unit: str, label: str, help_: str
) -> Parameter:
    return Parameter(name=name, type=type_, default=default, min=low, max=high, unit=unit, help=help_, label=label)  # type: ignore[arg-type]


# --- Routing -------------------------------------------------------------------------


def zipf_for_hot_share(families: int, hot_share: float) -> float:
    """Return the Zipf exponent at which the hottest of `families` gets `hot_share` of requests (bisection)."""
    low, high = 0.0, 20.0
    for _ in range(60):
        middle = (low + high) / 2
        if simulation.family_shares(families, middle)[0] < hot_share:
            low = middle
        else:
            high = middle
    return round((low + high) / 2, 4)


def _routing_setup(inputs: Mapping[str, Any], **changes: Any) -> simulation.RoutingSetup:
    names = simulation.RoutingSetup.__dataclass_fields__
    values = {name: value for name, value in inputs.items() if name in names}
    return simulation.RoutingSetup(**{**values, **changes})


def check_routing(inputs: Mapping[str, Any]) -> None:
    _routing_setup(inputs).check()


def run_charge(mode: Mode, query) -> int:
    """Return what a run costs against the simulations limit, from its raw query (a dict or a QueryDict).

    Routing: one per CHARGE_REQUESTS simulated requests (requests x policies chosen); autoscaling
    plays a fixed day, one. Values that do not parse count as the defaults (the run is refused anyway).
    """
    if mode is not ROUTING:
        return 1
    values = query.getlist("policies") if hasattr(query, "getlist") else [query.get("policies", "")]
    chosen = {name.strip() for value in values for name in str(value).split(",") if name.strip()}
    policies = len(chosen & set(mode.choice.options)) or len(mode.choice.options)
    parameter = next(p for p in mode.parameters if p.name == "requests")
    try:  # read as the run reads it ("1e5" and "100000.0" are 100,000 there too)
        requests = min(max(int(parameter.parse(query.get("requests", parameter.default))), 1), MAX_REQUESTS)
    except ValueError:
        requests = parameter.default
    return max(1, math.ceil(requests * policies / CHARGE_REQUESTS))


def run_routing(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Return each chosen policy's summary, all on the same arrivals."""
    return simulation.simulate_routing(_routing_setup(inputs), tuple(inputs["policies"]))


def routing_sweep(
    inputs: Mapping[str, Any], results: Mapping[str, Mapping[str, Any]]
) -> dict[str, list[tuple[int, float]]]:
    """Return (cache copies, hit rate) per policy at SWEEP_COPIES and the current size, on the same arrivals.

    Every size replays the first SWEEP_REQUESTS arrivals; when the run has no
    more than that, the current size's hit rates are `results`' own.
    """
    setup = _routing_setup(inputs, requests=min(inputs["requests"], SWEEP_REQUESTS))
    setup.check()
    arrivals = simulation.draw_arrivals(setup)
    current = inputs["cache_copies"]
    curves: dict[str, list[tuple[int, float]]] = {policy: [] for policy in inputs["policies"]}
    for size in sorted({*SWEEP_COPIES, current}):
        sized = _routing_setup(setup.__dict__, cache_copies=size)
        for policy in inputs["policies"]:
            if size == current and inputs["requests"] <= SWEEP_REQUESTS:
                rate = results[policy]["hit_rate"]
            else:
                rate = float(simulation.simulate_policy(sized, arrivals, policy, summarise=False).hit.mean())
            curves[policy].append((size, rate))
    return curves


# The cache-aware routing lesson: a 1,200-token opening of a 70B-class model, 8 GB of prefix cache.
LESSON_COPIES = maths.kv_cache(80, 8, 128, 2, 1200, 8).copies_per_cache
# The load-balancing lesson's worked example: 64 cards, one family carrying 80% of the traffic.
HOT_FAMILY_ZIPF = zipf_for_hot_share(50, 0.8)

ROUTING_PARAMETERS = (
    _p("replicas", "int", 64, 1, MAX_REPLICAS, "replicas", "Replicas", "Serving replicas (cards) behind the router."),
    _p("slots_per_replica", "int", 16, 1, 512, "requests", "Decode slots per replica",
       "Requests one replica runs at once; more wait in its queue."),
    _p("cache_copies", "int", 4, 0, 1000, "copies", "Prefix cache, in preamble copies",
       "Preambles one replica's LRU prefix cache holds (0 = no cache)."),
    _p("families", "int", 200, 1, MAX_FAMILIES, "families", "Prompt families",
       "Distinct preambles (system prompts, tool schemas) requests start with."),
    _p("zipf", "float", 1.1, 0.0, 5.0, "", "Zipf exponent",
       "Popularity skew: family k gets a share proportional to 1 / k^s (0 = all equal)."),
    _p("arrival_rps", "float", 100.0, 0.01, 100_000.0, "requests/s", "Arrival rate",
       "Mean requests per second of the Poisson arrivals."),
    _p("requests", "int", 10_000, 1, MAX_REQUESTS, "requests", "Requests simulated",
       f"How many arrivals to play out (at most {MAX_REQUESTS:,} to keep a run under a second or two)."),
    _p("preamble_tokens", "int", 2000, 0, 200_000, "tokens", "Preamble tokens",
       "Shared opening of each family: prefilled only on a cache miss."),
    _p("suffix_tokens", "int", 200, 0, 200_000, "tokens", "Own prompt tokens",
       "Each request's own part of the prompt, always prefilled."),
    _p("output_tokens", "int", 250, 1, 100_000, "tokens", "Output tokens", "Tokens decoded per request."),
    _p("prefill_tokens_per_s", "float", 10_000.0, 1.0, 10_000_000.0, "tokens/s", "Prefill speed",
       "Prompt tokens one slot prefills per second."),
    _p("decode_ms_per_token", "float", 20.0, 0.01, 10_000.0, "ms", "Decode time per token",
       "Time between output tokens of one request."),
    _p("load_gap", "int", 4, 0, 10_000, "requests", "Prefix-aware load gap",
       "Prefix-aware routing leaves the replica with the cache when it has more than this many requests "
       "in flight above the least-loaded one."),
    _p("epsilon", "float", 0.25, 0.05, 10.0, "", "Bounded-load slack (ε)",
       "Bounded-load hashing caps a replica at ceil((1 + ε) × in-flight requests ÷ replicas): "
       "0.25 lets a replica take a quarter more than an even share."),
    _p("seed", "int", 1, 0, 2**32 - 1, "", "Random seed", "The same seed and inputs give the same arrivals and numbers."),
)  # fmt: skip

ROUTING_OUTPUTS = (
    ("hit_rate", "fraction", "Share of requests whose preamble was in the chosen replica's prefix cache."),
    ("busiest_share", "fraction", "Share of all requests the busiest replica received."),
    ("busiest_utilization", "fraction", "Busy share of the busiest replica's slots over the run."),
    ("mean_utilization", "fraction", "Busy share of all slots over the run."),
    ("ttft_p50_ms", "ms", "Median time to first token: queue wait plus prefill."),
    ("ttft_p99_ms", "ms", "99th percentile time to first token."),
    ("queue_wait_mean_ms", "ms", "Mean wait for a free slot."),
    ("queue_wait_p99_ms", "ms", "99th percentile wait for a free slot."),
    ("prefill_tokens", "tokens", "Prompt tokens prefilled (preambles only on misses)."),
    ("evictions", "copies", "Preamble copies pushed out of prefix caches."),
    ("replica_share", "fraction", "Share of requests each replica received, replica 0 first."),
    ("ttft_percentiles_ms", "ms", "TTFT at percentiles 0, 5, 10, ..., 100."),
)

ROUTING = Mode(
    slug="routing",
    title="Routing simulation",
    parameters=ROUTING_PARAMETERS,
    choice=Choice(
        "policies",
        simulation.ROUTING_POLICIES,
        simulation.ROUTING_POLICIES,
        many=True,
        label="Policies",
        help="Comma-separated; every policy sees the same arrivals.",
    ),
    presets=(
        SimPreset(
            "cache-aware-routing",
            f"Cache-aware routing: 1,200-token preamble, an 8 GB cache of {LESSON_COPIES} copies",
            {"replicas": 64, "preamble_tokens": 1200, "cache_copies": LESSON_COPIES, "families": 200, "zipf": 1.1},
        ),
        SimPreset(
            "round-robin-crossover",
            "Round robin's crossover: 200 families, a cache of 4 copies",
            {"replicas": 64, "preamble_tokens": 1200, "cache_copies": 4, "families": 200, "zipf": 1.1},
        ),
        SimPreset(
            "hot-family",
            "Load balancing: 64 cards, one family with 80% of the traffic",
            {"replicas": 64, "families": 50, "zipf": HOT_FAMILY_ZIPF, "cache_copies": 4, "arrival_rps": 100},
        ),
        SimPreset(
            "mm1-check",
            "Check against theory: one replica, one slot, no cache",
            {"replicas": 1, "slots_per_replica": 1, "cache_copies": 0, "preamble_tokens": 0, "arrival_rps": 0.1},
        ),
    ),
    run=run_routing,
    outputs=ROUTING_OUTPUTS,
    check=check_routing,
)


# --- Autoscaling ---------------------------------------------------------------------


def _autoscaling_setup(inputs: Mapping[str, Any]) -> simulation.AutoscalingSetup:
    names = simulation.AutoscalingSetup.__dataclass_fields__
    values = {name: value for name, value in inputs.items() if name in names and name != "policy"}
    return simulation.AutoscalingSetup(policy=inputs["policy"][0], **values)


def check_autoscaling(inputs: Mapping[str, Any]) -> None:
    _autoscaling_setup(inputs).check()


def run_autoscaling(inputs: Mapping[str, Any]) -> dict[str, Any]:
    """Return one policy's day: SLO-violating minutes, GPU-hours, cost and the minute-by-minute timeline."""
    result = simulation.simulate_autoscaling(_autoscaling_setup(inputs))
    return {
        "slo_violation_minutes": result.slo_violation_minutes,
        "gpu_hours": result.gpu_hours,
        "cost_usd": result.cost_usd,
        "timeline": result.timeline,
    }


AUTOSCALING_PARAMETERS = (
    _p("base_rps", "float", 100.0, 0.0, 100_000.0, "requests/s", "Night-time demand", "Mean arrivals at 04:00, the quietest minute."),
    _p("peak_rps", "float", 300.0, 0.0, 100_000.0, "requests/s", "Daytime peak", "Mean arrivals at 16:00, the busiest minute."),
    _p("spike_multiplier", "float", 2.0, 1.0, 20.0, "×", "Spike size", "Demand is multiplied by this during the spike."),
    _p("spike_start_minute", "int", 600, 0, 1439, "minutes", "Spike starts", "Minute of the day the spike begins (600 = 10:00)."),
    _p("spike_minutes", "int", 30, 0, 1440, "minutes", "Spike length", "How long the spike lasts."),
    _p("slots_per_replica", "int", 64, 1, 1024, "requests", "Slots per replica", "Requests one replica runs at once."),
    _p("request_s", "float", 6.0, 0.01, 3600.0, "s", "Mean request time", "Mean time a request holds its slot (prefill and decode)."),
    _p("prefill_ms", "float", 220.0, 0.0, 600_000.0, "ms", "Prefill time", "Time to first token with no queue."),
    _p("slo_ttft_ms", "float", 2000.0, 1.0, 3_600_000.0, "ms", "TTFT objective", "A minute whose p99 TTFT exceeds this violates the SLO."),
    _p("cold_start_s", "float", 300.0, 0.0, 7200.0, "s", "Cold start", "Time a new replica takes to load weights before serving."),
    _p("warm_replicas", "int", 0, 0, 256, "replicas", "Warm pool", "Standby replicas with weights loaded (billed), ready in the warm start time."),
    _p("warm_start_s", "float", 20.0, 0.0, 3600.0, "s", "Warm start", "Time a warm replica takes to start serving."),
    _p("scale_down_delay_s", "float", 300.0, 0.0, 86_400.0, "s", "Scale-down delay", "Scale down only when every decision over this window wanted fewer."),
    _p("min_replicas", "int", 2, 0, MAX_REPLICAS, "replicas", "Minimum replicas", "Never fewer."),
    _p("max_replicas", "int", 128, 1, MAX_REPLICAS, "replicas", "Maximum replicas", "Never more."),
    _p("queue_target", "float", 48.0, 0.01, 100_000.0, "requests", "Queue-depth target",
       f"{POLICY_LABELS['queue_depth']} policy: requests per replica, running or waiting, to aim for."),
    _p("kv_target", "float", 0.7, 0.01, 1.0, "fraction", "KV-use target", f"{POLICY_LABELS['kv_use']} policy: busy share of slots (KV in use) to aim for."),
    _p("ttft_target_ms", "float", 1000.0, 1.0, 3_600_000.0, "ms", "TTFT target", f"{POLICY_LABELS['ttft']} policy: p99 TTFT to aim for."),
    _p("gpus_per_replica", "int", 4, 1, 64, "GPUs", "GPUs per replica", "Cards one replica occupies."),
    _p("card_month_usd", "float", 2100.0, 0.0, 1_000_000.0, "USD", "Card price per month", "One GPU for a month (730 hours)."),
    _p("seed", "int", 1, 0, 2**32 - 1, "", "Random seed", "The same seed and inputs give the same day."),
)  # fmt: skip

AUTOSCALING_OUTPUTS = (
    ("slo_violation_minutes", "minutes", "Minutes whose p99 TTFT exceeded the objective."),
    ("gpu_hours", "GPU-hours", "Replicas provisioned, starting or warm, times GPUs, over the day."),
    ("cost_usd", "USD", "GPU-hours at card_month_usd ÷ 730 per hour."),
    ("timeline", "", "Per minute: minute, demand_rps, arrival_rps, replicas, ready_replicas, ttft_p99_ms."),
)

AUTOSCALING = Mode(
    slug="autoscaling",
    title="Autoscaling simulation",
    parameters=AUTOSCALING_PARAMETERS,
    choice=Choice(
        "policy",
        simulation.AUTOSCALING_POLICIES,
        ("queue_depth",),
        many=False,
        label="Policy",
        help="What the autoscaler watches: queue depth, KV use or TTFT.",
    ),
    presets=(
        SimPreset(
            "evening-spike", "A spike at 10:00 with a five-minute cold start", {"cold_start_s": 300, "warm_replicas": 0}
        ),
        SimPreset(
            "warm-pool", "The same spike with a warm pool of 16 replicas", {"cold_start_s": 300, "warm_replicas": 16}
        ),
        SimPreset("fast-start", "Weights that load in a minute", {"cold_start_s": 60, "warm_replicas": 0}),
    ),  # fmt: skip
    run=run_autoscaling,
    outputs=AUTOSCALING_OUTPUTS,
    check=check_autoscaling,
)

MODES = {mode.slug: mode for mode in (ROUTING, AUTOSCALING)}


# --- Lessons: numbers from a run, for {{calc simulator-routing.<policy>.<output> ...}} -----------------

REFERENCE_SLUGS = {f"simulator-{mode.slug}": mode for mode in MODES.values()}


@functools.lru_cache(maxsize=256)
def _run_for_reference(slug: str, params: tuple[tuple[str, str], ...]) -> dict[str, Any]:
    return REFERENCE_SLUGS[slug].evaluate(dict(params))["results"]


def simulated_value(slug: str, output: str, params: Mapping[str, str]) -> float | int:
    """Return one number of a simulator run, for a lesson's {{calc ...}} reference.

    `slug` is `simulator-routing` (output `<policy>.<name>`, e.g.
    `round_robin.hit_rate`) or `simulator-autoscaling` (output `<name>`, the
    policy a parameter). `preset=<slug>` starts from one of the mode's presets;
    other parameters override it. Raise ValueError with a message for an
    author: an unknown preset, output or policy, or bad parameters.
    """
    mode = REFERENCE_SLUGS[slug]
    values: dict[str, str] = {}
    if "preset" in params:
        try:
            preset = mode.preset(params["preset"])
        except StopIteration:
            known = ", ".join(p.slug for p in mode.presets)
            raise ValueError(f"{slug} has no preset '{params['preset']}' (presets: {known})") from None
        values = {name: str(value) for name, value in preset.values.items()}
    values |= {name: value for name, value in params.items() if name != "preset"}
    if mode is ROUTING:
        policy, _, name = output.partition(".")
        if policy not in ROUTING.choice.options:
            raise ValueError(f"'{output}' should be <policy>.<output>, e.g. round_robin.hit_rate")
        values["policies"] = policy
    else:
        policy, name = "", output
    try:
        results = _run_for_reference(slug, tuple(sorted(values.items())))
    except CalculatorInputError as error:
        problems = "; ".join(f"{field}: {' '.join(messages)}" for field, messages in error.errors.items())
        raise ValueError(f"bad inputs for {slug}: {problems}") from None
    found = results[policy] if policy else results
    value = found.get(name)
    if not isinstance(value, (int, float)):
        numbers = ", ".join(key for key, item in found.items() if isinstance(item, (int, float)))
        raise ValueError(f"{slug} has no number '{output}' (numbers: {numbers})")
    return value
