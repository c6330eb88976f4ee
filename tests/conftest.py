"""Shared pytest configuration for guobiao's tests.

There is no ``tests/__init__.py``: this root conftest marks the test tree, and pytest runs from
the repository root so ``engine`` and ``server`` import from the working tree.
"""
