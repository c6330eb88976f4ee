"""Fencing tokens (cluster mode): a node whose lease on a table moved on writes nothing more.

``Store.take_table`` increments a table's token; an append to its action log, a save of its row
or a new match with an older token is refused (``Fenced``) in the very transaction that would
write it, so nothing of it is stored, while the new owner's writes go through. On both
databases; on PostgreSQL also under concurrency: once ``take_table`` has returned, the log
read then is all the old owner ever stored.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from server.db.errors import Fenced
from server.db.store import Store, TableRow

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
SALT = "00" * 16
SEATS = ("ann", "bot:default", "bot:default", "bot:default")


async def _table(store: Store, table_id: str = "t1") -> int:
    await store.save_table(TableRow(table_id, "mcr", 15, False, None, SEATS, T0, "playing"))
    return await store.create_match(table_id, "mcr", 7, SALT, SEATS, T0)


def _action(n: int) -> dict[str, object]:
    return {"kind": "discard", "tile": n}


async def _seqs(store: Store, match_id: int) -> list[int]:
    return [row.seq for row in await store.match_actions(match_id)]


@pytest.mark.asyncio
async def test_an_old_token_appends_nothing(store: Store) -> None:
    match_id = await _table(store)
    await store.append_action(match_id, 1, 1, 0, _action(1), fence=("t1", 0))
    assert await store.take_table("t1") == 1
    with pytest.raises(Fenced, match=r"token 0 refused \(its token is 1 now\)"):
        await store.append_action(match_id, 2, 1, 0, _action(2), fence=("t1", 0))
    assert await _seqs(store, match_id) == [1]
    await store.append_action(match_id, 2, 1, 0, _action(2), fence=("t1", 1))
    assert await _seqs(store, match_id) == [1, 2]
    assert await store.take_table("t1") == 2
    with pytest.raises(Fenced):
        await store.append_action(match_id, 3, 1, 0, _action(3), fence=("t1", 1))


@pytest.mark.asyncio
async def test_a_fenced_append_keeps_whether_the_server_played_it_for_a_person(
    store: Store,
) -> None:
    match_id = await _table(store)
    await store.append_action(match_id, 1, 1, 0, _action(1), fence=("t1", 0), stand_in=True)
    await store.append_action(match_id, 2, 1, 1, _action(2), fence=("t1", 0))
    assert [row.stand_in for row in await store.match_actions(match_id)] == [True, False]


@pytest.mark.asyncio
async def test_an_old_token_saves_no_row_and_starts_no_match(store: Store) -> None:
    await _table(store)
    await store.take_table("t1")
    finished = TableRow("t1", "mcr", 15, False, None, SEATS, T0, "finished")
    with pytest.raises(Fenced):
        await store.save_table(finished, fence=0)
    assert (await store.get_table("t1")).state == "playing"  # type: ignore[union-attr]
    with pytest.raises(Fenced):
        await store.create_match("t1", "mcr", 8, SALT, SEATS, T0, fence=0)
    assert len(await store.table_matches("t1")) == 1
    await store.save_table(finished, fence=1)
    assert (await store.get_table("t1")).state == "finished"  # type: ignore[union-attr]


@pytest.mark.asyncio
async def test_one_fenced_append_does_not_refuse_the_others_in_its_commit(store: Store) -> None:
    """Appends of many tables share a commit: only the fenced one is refused."""
    first = await _table(store, "t1")
    second = await _table(store, "t2")
    await store.take_table("t2")
    results = await asyncio.gather(
        store.append_action(first, 1, 1, 0, _action(1), fence=("t1", 0)),
        store.append_action(second, 1, 1, 0, _action(1), fence=("t2", 0)),
        store.append_action(first, 2, 1, 0, _action(2)),  # no token: one process
        return_exceptions=True,
    )
    assert results[0] is None and results[2] is None
    assert isinstance(results[1], Fenced)
    assert await _seqs(store, first) == [1, 2]
    assert await _seqs(store, second) == []


@pytest.mark.asyncio
async def test_unknown_table_is_fenced(store: Store) -> None:
    match_id = await _table(store)
    with pytest.raises(Fenced, match="it is gone"):
        await store.append_action(match_id, 1, 1, 0, _action(1), fence=("nope", 0))
    with pytest.raises(LookupError):
        await store.take_table("nope")


@pytest.mark.asyncio
async def test_a_takeover_sees_every_append_the_old_owner_ever_stored(store: Store) -> None:
    """The old owner keeps appending (one action after another, as a table does) while a
    takeover happens: the log read just after ``take_table`` returned is the whole of what
    the old owner stored, and every append it was told succeeded is in it."""
    match_id = await _table(store)
    stored: list[int] = []

    async def old_owner() -> None:
        for seq in range(1, 400):
            try:
                await store.append_action(match_id, seq, 1, 0, _action(seq), fence=("t1", 0))
            except Fenced:
                return
            stored.append(seq)

    writer = asyncio.create_task(old_owner())
    # The takeover comes while the old owner is appending: once it has stored a few (a
    # fixed 50 ms was not always enough on a loaded machine: CI once found none stored).
    while len(stored) < 5 and not writer.done():
        await asyncio.sleep(0.005)
    await store.take_table("t1")
    seen = await _seqs(store, match_id)
    await writer
    assert await _seqs(store, match_id) == seen == stored
    assert seen, "the old owner stored nothing before the takeover: the test proves nothing"
