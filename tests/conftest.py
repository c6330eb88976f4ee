"""Shared pytest configuration for guobiao's tests.

There is no ``tests/__init__.py``: this root conftest marks the test tree, and pytest runs from
the repository root so ``engine`` and ``server`` import from the working tree.
"""

from hypothesis import HealthCheck, settings

# Timing is not what these tests check (the brief: no timing assertions in tests). On a loaded
# machine Hypothesis's own clocks (a 200 ms deadline per example, "data generation is slow")
# would fail a test whose every assertion held, so they are off; examples and assertions are
# unchanged.
settings.register_profile("guobiao", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("guobiao")
