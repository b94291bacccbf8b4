"""The calculator registry: every calculator, in display order, looked up by slug (no Django).

Each calculator is defined in its own module under `calculators/definitions/`
(parameters, outputs, derivation, presets, chart and notes); the formulas live
once, in `calculators/maths.py`. Forms, the API, pages and the learning engine
are generated from these definitions. The names are a public contract (see
DESIGN.md): slugs, parameter names, defaults and output names never change
without a new API version.
"""

from __future__ import annotations

from calculators.calculator import Calculator, DerivationStep, Output, Parameter, Preset, Result
from calculators.definitions import (
    autoscale,
    bounded_load,
    decode_step,
    fleet,
    headroom,
    kv_cache,
    latent_kv,
    pool,
    prefill,
    queue_wait,
    rehash,
    replica,
    request_cost,
    routing,
    shed,
    spec_decode,
    token_bucket,
    token_cost,
    window_kv,
)
from calculators.errors import CalculatorError, CalculatorInputError

__all__ = [
    "CALCULATORS",
    "Calculator",
    "CalculatorError",
    "CalculatorInputError",
    "DerivationStep",
    "Output",
    "Parameter",
    "Preset",
    "Result",
    "get_calculator",
]

_IN_DISPLAY_ORDER = (
    kv_cache,
    latent_kv,
    window_kv,
    routing,
    replica,
    pool,
    token_cost,
    fleet,
    token_bucket,
    queue_wait,
    shed,
    spec_decode,
    decode_step,
    prefill,
    bounded_load,
    rehash,
    autoscale,
    headroom,
    request_cost,
)

CALCULATORS: dict[str, Calculator] = {module.CALCULATOR.slug: module.CALCULATOR for module in _IN_DISPLAY_ORDER}


def get_calculator(slug: str) -> Calculator:
    """Return the calculator with this slug (KeyError for an unknown slug)."""
    return CALCULATORS[slug]
