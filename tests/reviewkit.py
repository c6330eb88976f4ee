"""Matches for the review's tests (tests/server/test_review*.py, tests/web/test_review_page.py):
bots play a match with ``engine.simulation.play_match`` and it is written into a store as a
table writes one (the match, its action log, its hands, its end), so the server reviews
exactly what it would have stored."""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Sequence
from datetime import UTC, datetime

from engine.bots import make_bot
from engine.rules import MCR
from engine.simulation import play_match
from server.db.store import Store

T0 = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
SALT = "ab" * 32


async def stored_match(
    store: Store,
    table_id: str,
    seats: Sequence[str],
    bots: Sequence[str],
    *,
    seed: int,
    hands: int = 1,
    finished: bool = True,
    stand_in: Collection[tuple[int, int]] = (),
) -> int:
    """A match of ``hands`` deals the bots named ``bots`` play in ``seats``, stored at
    ``table_id`` (finished unless told not to); its id. ``stand_in``: the (hand, player)
    whose moves are stored as the server's for a person (she away the whole hand)."""
    match_id = await store.create_match(
        table_id, MCR.name, seed, SALT, list(seats), T0, MCR.to_dict(), hands_planned=hands
    )
    match = play_match(seed, [make_bot(b) for b in bots], MCR, match_id, hands=hands)
    await asyncio.gather(
        *(
            store.append_action(
                match_id,
                seq,
                hand + 1,
                player,
                action.to_dict(),
                stand_in=(hand + 1, player) in stand_in,
            )
            for seq, (hand, player, action) in enumerate(match.log, 1)
        )
    )
    for record in match.records:
        await store.finish_hand(
            match_id, record.hand_no, record.to_dict(), record.result.deltas, now=T0
        )
    if finished:
        await store.finish_match(match_id, match.scores, T0)
    return match_id
