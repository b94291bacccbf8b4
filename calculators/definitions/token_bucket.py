"""The token-bucket calculator: how many requests a gateway's token bucket admits."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from calculators import maths
from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, step
from calculators.charts import Chart, DataTable, Plot, line_svg, nice_ticks
from calculators.formatting import number

# A stream spread over a window: 100 requests over 10 s into a bucket of 10 refilling at 5/s.
WINDOW_CASE = {"rate_per_s": 5, "burst": 10, "arrivals": 100, "window_s": 10}
# redis-cell's README example: CL.THROTTLE key 15 30 60 (max_burst, count per period, period in s).
REDIS_CELL_MAX_BURST, REDIS_CELL_COUNT, REDIS_CELL_PERIOD_S = 15, 30, 60
REDIS_CELL_BURST = 20
REDIS_CELL_CASE = {
    "rate_per_s": REDIS_CELL_COUNT / REDIS_CELL_PERIOD_S,
    "burst": REDIS_CELL_MAX_BURST + 1,  # GCRA's limit: one more than max_burst
    "arrivals": REDIS_CELL_BURST,
    "window_s": 0,
}


def derive(i: Mapping[str, Any], o: Mapping[str, Any]) -> list[DerivationStep]:
    """Return the derivation of a result: each step with the arithmetic and its value."""
    rate, burst, arrivals, window = i["rate_per_s"], i["burst"], i["arrivals"], i["window_s"]
    spacing = window / arrivals
    refill = rate * spacing
    steps = [
        step(
            "Time between arrivals",
            (
                f"{number(window)} s ÷ {number(arrivals)} arrivals"
                if window > 0
                else "window of 0 s: every request arrives at t = 0"
            ),
            spacing,
            "s",
        ),
        step(
            "Tokens refilled between arrivals (d)",
            f"{number(rate)} tokens/s × {number(spacing)} s",
            refill,
            "tokens",
        ),
        step(
            "Upper bound: what the bucket can hand out over the window",
            f"min({number(arrivals)}, {number(burst)} + {number(rate)} tokens/s × {number(window)} s)",
            min(arrivals, burst + rate * window),
            "requests",
        ),
    ]
    if refill == 0 or burst >= 2 or refill >= 1 - 1e-9:
        steps.append(
            step(
                "Admitted: the bucket starts full, then each arrival adds d",
                f"min({number(arrivals)}, ⌊{number(burst)} + ({number(arrivals)} − 1) × {number(refill)}⌋)",
                o["admitted"],
                "requests",
            )
        )
    else:
        period = maths.one_token_period(refill, arrivals)
        steps.append(
            step(
                "Admitted: a one-token bucket passes one request every ⌈1 ÷ d⌉ arrivals",
                f"1 + ⌊({number(arrivals)} − 1) ÷ {number(period)}⌋",
                o["admitted"],
                "requests",
            )
        )
    steps.append(step("Rejected", f"{number(arrivals)} − {number(o['admitted'])}", o["rejected"], "requests"))
    return steps


def chart(i: Mapping[str, Any], o: Mapping[str, Any]) -> Chart:
    """Return the chart of a result, with its table."""
    rate, burst, arrivals, window = i["rate_per_s"], i["burst"], i["arrivals"], i["window_s"]
    count = min(arrivals, 240)
    picks = np.unique(np.linspace(1, arrivals, count).round().astype(np.int64))
    curve = maths.token_bucket_curve(rate, burst, arrivals, window) if arrivals <= 2_000_000 else None
    if curve is not None:
        admitted = curve[picks - 1]
    else:  # too many arrivals to hold in memory: evaluate the closed form at the picks
        admitted = np.array([maths.token_bucket(rate, burst, int(k), window * (k / arrivals)).admitted for k in picks])
    title = "Requests admitted as they arrive"
    description = (
        f"{number(arrivals)} requests arrive "
        + (f"evenly over {number(window)} s" if window > 0 else "all at once")
        + f"; the bucket of {number(burst)} tokens refilling at {number(rate)} per second admits "
        f"{number(o['admitted'])} and rejects {number(o['rejected'])}."
    )
    svg = line_svg("token-bucket", title, description)
    x_ticks = nice_ticks(arrivals, 5)
    y_ticks = nice_ticks(arrivals, 5)
    plot = Plot(
        svg,
        x_ticks,
        y_ticks,
        lambda t: number(t, 3),
        lambda t: number(t, 3),
        "Arrivals so far (in arrival order)",
        "requests",
    )
    svg.polyline([(plot.x(0), plot.y(0)), (plot.x(arrivals), plot.y(arrivals))], "chart-line chart-line-muted")
    svg.text(plot.x(arrivals * 0.55) - 6, plot.y(arrivals * 0.55) - 6, "arrived", "chart-point-label", "end")
    svg.polyline(
        [(plot.x(0), plot.y(0))] + [(plot.x(k), plot.y(a)) for k, a in zip(picks.tolist(), admitted.tolist())],
        "chart-line",
    )
    svg.text(
        plot.x(arrivals) - 4,
        plot.y(o["admitted"]) + 16,
        f"admitted {number(o['admitted'])}",
        "chart-point-label",
        "end",
    )
    marks = np.unique(np.linspace(1, arrivals, min(arrivals, 8)).round().astype(np.int64))
    rows = []
    for k in marks:
        so_far = (
            int(admitted[np.searchsorted(picks, k)])
            if k in picks
            else maths.token_bucket(rate, burst, int(k), window * k / arrivals).admitted
        )
        t = (int(k) - 1) * window / arrivals
        rows.append((number(int(k)), f"{number(t, 4)} s", number(so_far), number(int(k) - so_far)))
    table = DataTable(
        "Admissions over the arrivals", ("Arrival", "Time", "Admitted so far", "Rejected so far"), tuple(rows)
    )
    return Chart(svg.render(), title, description, table)


def notes() -> tuple[str, ...]:
    """Return the notes, a Markdown paragraph each, every figure computed from the maths."""
    window = WINDOW_CASE
    admitted = maths.token_bucket(**window).admitted
    last_arrival_s = (window["arrivals"] - 1) * window["window_s"] / window["arrivals"]
    bound = window["burst"] + window["rate_per_s"] * last_arrival_s
    cell = maths.token_bucket(**REDIS_CELL_CASE).admitted
    return (
        "**Semantics.** The bucket starts full with `burst` tokens and refills "
        "continuously at `rate_per_s`, never above `burst`. Arrival i comes at "
        "t = i × window ÷ arrivals (all at t = 0 when the window is 0). An arrival "
        "takes one token if a whole token is there; otherwise it is rejected (a 429), "
        "not queued.",
        "**Bounds.** One burst of N admits min(N, b). Over a window T at most "
        f"min(N, b + r × T) pass: {number(window['arrivals'])} requests over {number(window['window_s'])} s at "
        f"{number(window['rate_per_s'])}/s with a bucket of {number(window['burst'])} admit "
        f"{number(admitted)}, just under the bound of {number(bound)}.",
        "**In Redis.** redis-cell's `CL.THROTTLE key max_burst count period` implements "
        "GCRA, equivalent to this bucket with capacity max_burst + 1: its README example "
        f"`{_redis_cell_args()}` reports a limit of {number(REDIS_CELL_CASE['burst'])} and admits "
        f"{number(cell)} of a burst of {number(REDIS_CELL_BURST)}. Keeping the "
        "count in Redis makes each grant atomic across gateway replicas.",
    )


def _redis_cell_args() -> str:
    return f"{REDIS_CELL_MAX_BURST} {REDIS_CELL_COUNT} {REDIS_CELL_PERIOD_S}"


CALCULATOR = Calculator(
    slug="token-bucket",
    title="Token bucket admissions",
    purpose=(
        "How many requests the gateway's token-bucket limiter lets through from a "
        "burst or from a stream spread over a window."
    ),
    parameters=(
        Parameter(
            name="rate_per_s",
            type="float",
            default=10.0,
            min=0.0,
            max=1_000_000.0,
            unit="tokens/s",
            help="Tokens added per second (the sustained rate).",
            label="Refill rate",
        ),
        Parameter(
            name="burst",
            type="int",
            default=20,
            min=1,
            max=1_000_000_000,
            unit="tokens",
            help="Bucket capacity; it starts full.",
            label="Burst (bucket size)",
        ),
        Parameter(
            name="arrivals",
            type="int",
            default=50,
            min=1,
            max=1_000_000_000,
            unit="requests",
            help="Requests arriving, one token each.",
            label="Arrivals",
        ),
        Parameter(
            name="window_s",
            type="float",
            default=0.0,
            min=0.0,
            max=10_000_000.0,
            unit="s",
            help="Arrivals are evenly spaced over this window; 0 means all at once.",
            label="Window",
        ),
    ),
    outputs=(
        Output(name="admitted", unit="requests", label="Admitted"),
        Output(name="rejected", unit="requests", label="Rejected"),
    ),
    compute=maths.token_bucket,
    derive=derive,
    headline="admitted",
    presets=(
        Preset(
            label="Burst of 50 at once, bucket 20, 10/s",
            values={"rate_per_s": 10, "burst": 20, "arrivals": 50, "window_s": 0},
        ),
        Preset(
            label=(
                f"{WINDOW_CASE['arrivals']} requests over {WINDOW_CASE['window_s']} s, "
                f"bucket {WINDOW_CASE['burst']}, {WINDOW_CASE['rate_per_s']}/s"
            ),
            values=WINDOW_CASE,
        ),
        Preset(
            label="Steady stream under the rate: 100 over 20 s",
            values={"rate_per_s": 10, "burst": 20, "arrivals": 100, "window_s": 20},
        ),
        Preset(
            label=f"redis-cell CL.THROTTLE {_redis_cell_args()}, burst of {REDIS_CELL_BURST}",
            values=REDIS_CELL_CASE,
        ),
    ),
    chart=chart,
    notes=notes(),
)
