"""Shared pytest configuration for guobiao's tests.

There is no ``tests/__init__.py``: this root conftest marks the test tree, and pytest runs from
the repository root so ``engine`` and ``server`` import from the working tree.

The suite runs in parallel (``make test``: pytest-xdist, ``-n 4 --dist loadscope
--no-loadscope-reorder``; plain ``pytest``, ``-n 0`` or ``-p no:xdist`` runs it in one
process). Each worker is a process of its own, and every resource a test uses is its own
already: servers listen on port 0, Redis servers and cluster nodes on free ports, files go
under ``tmp_path``, and each session (each worker) makes its own PostgreSQL database.
``loadscope`` sends all the tests of a module to one worker, so a fixture the module's tests
share (``scope="module"``: the wheel built once, a simulation run once) is made once, as in a
serial run.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, settings

# Timing is not what these tests check (the brief: no timing assertions in tests). On a loaded
# machine Hypothesis's own clocks (a 200 ms deadline per example, "data generation is slow")
# would fail a test whose every assertion held, so they are off; examples and assertions are
# unchanged.
settings.register_profile("guobiao", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("guobiao")

# Every test's time limit, and what a test that hangs says (``tests/timelimits.py``).
pytest_plugins = ("timelimits",)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """In an xdist worker (each collects the same list, in the same order) the tests marked
    ``slow`` come first. The scheduler hands out the modules in the order their first test
    comes (``--no-loadscope-reorder``), so the modules of the minutes-long tests (the wheel,
    the crash tests) and the modules minutes long in all (the custom rules' properties, the
    longest pages' browser tests) start at once instead of last, where they would keep the
    run waiting. A serial run keeps the files' order."""
    if hasattr(config, "workerinput"):  # an xdist worker
        items.sort(key=lambda item: item.get_closest_marker("slow") is None)
