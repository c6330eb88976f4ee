"""How ``guobiao loadtest``'s bots pace themselves like people: a think time before
each decision, drawn from ``--think LOW-HIGH`` by each connection's own seeded stream
(``Pacer``), or a fixed ``--think-ms``.
"""

from __future__ import annotations

import argparse
import math
import random
from dataclasses import dataclass

from engine.actions import Action, ActionKind


@dataclass(frozen=True, slots=True)
class Think:
    """A range of think times, in seconds: ``low`` <= a pause <= ``high``."""

    low: float
    high: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)):
            raise ValueError(f"think times must be finite, got {self.low!r}-{self.high!r}")
        if not 0 <= self.low <= self.high:
            raise ValueError(f"think times need 0 <= LOW <= HIGH, got {self.low:g}-{self.high:g} s")

    @property
    def fixed(self) -> bool:
        return self.low == self.high

    def text(self) -> str:
        return f"{self.low:g} s" if self.fixed else f"{self.low:g}-{self.high:g} s"


class Pacer:
    """One connection's think times: a random stream of its own, seeded by the run's
    ``seed`` and the connection's ``index``, so that two runs with one seed draw the same
    pauses and no two connections draw in step.

    Called with the action the bot chose, it returns the pause before sending it: uniform
    in ``think``'s range, or in the range's quickest quarter for a pass (people decline a
    claim sooner than they choose a discard). ``bot_seed`` is the first draw of the stream:
    the seed of this connection's bot.
    """

    __slots__ = ("_random", "bot_seed", "think")

    def __init__(self, think: Think, seed: int, index: int) -> None:
        self.think = think
        # A string seed is hashed whole (SHA-512), so nearby seeds and indexes give
        # unrelated streams; an int pair packed together could collide.
        self._random = random.Random(f"guobiao loadtest {seed} {index}")
        self.bot_seed = self._random.getrandbits(32)

    def __call__(self, action: Action) -> float:
        low, high = self.think.low, self.think.high
        if action.kind is ActionKind.PASS:
            high = low + (high - low) / 4
        return low if low == high else self._random.uniform(low, high)


def think_range(text: str) -> Think:
    """``LOW-HIGH`` seconds (``0.8-3``) or one number (a fixed pause), for ``--think``."""
    low, sep, high = text.strip().partition("-")
    try:
        return Think(float(low), float(high) if sep else float(low))
    except ValueError as exc:
        detail = str(exc) if str(exc).startswith("think times") else "not a number"
        raise argparse.ArgumentTypeError(
            f"expected seconds LOW-HIGH with 0 <= LOW <= HIGH (e.g. 0.8-3) or one number, "
            f"got {text!r} ({detail})"
        ) from None


def think_ms(text: str) -> Think:
    """A fixed pause in milliseconds (``--think-ms``), as a ``Think`` in seconds."""
    try:
        return Think(float(text) / 1000, float(text) / 1000)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected milliseconds, a number of at least 0, got {text!r}"
        ) from None
