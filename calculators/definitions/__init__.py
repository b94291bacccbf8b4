"""One module per calculator: its parameters, outputs, derivation, presets, chart and notes.

A module defines `CALCULATOR` and is listed in `calculators/registry.py`.
Notes are Markdown whose figures are computed from `calculators.maths` when
the module is imported, never typed by hand.
"""
