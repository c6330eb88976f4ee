"""Argument types shared by the ``guobiao`` commands: refuse nonsense with a clear message."""

from __future__ import annotations

import argparse
import math

from engine.match import MATCH_HANDS


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number of at least 1, got {text!r}")
    return value


def match_hands(text: str) -> int:
    """A match's length in deals, 1..16 (``engine.match.MATCH_HANDS``)."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= MATCH_HANDS:
        raise argparse.ArgumentTypeError(f"expected a whole number 1..{MATCH_HANDS}, got {text!r}")
    return value


def positive_seconds(text: str) -> float:
    """A positive, finite number of seconds."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0 or math.isinf(value):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, got {text!r}")
    return value
