"""Calculators: pure serving maths, their registry and charts, with thin Django pages and API around them."""
