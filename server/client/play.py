"""Playing a table with an engine bot over the network (``play``, ``play_tournament``), and
the simplest safe move when the bot fails or the server refuses its choice."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from engine.actions import Action
from engine.bots import Bot, safe_action
from engine.errors import MahjongError
from engine.table import View
from server.client.connection import DEFAULT_RATE
from server.client.errors import ConnectionLost
from server.client.requests import Client
from server.client.state import Incoming, TableState

log = logging.getLogger("guobiao.client")

# Refusals that mean our answer to this seq is in already (a resent duplicate).
PLAYED = frozenset({"stale", "already_answered"})
# The database could not store the action: the table pauses, and asks again when it resumes.
STORE_FAILED = "internal_error"


def fallback_action(view: View) -> Action:
    """The move sent when the bot fails or its action is refused: the engine's one safe
    move (``engine.bots.safe_action``: pass, else the drawn tile, else a discard), the same
    the server's table plays for a player out of time."""
    return safe_action(view)


async def play(
    client: Client,
    table: str,
    bot: Bot,
    *,
    stopping: Callable[[], bool] | None = None,
    think: float | Callable[[Action], float] = 0.0,
    on_message: Callable[[Incoming], None] | None = None,
) -> dict[str, Any] | None:
    """Play ``table`` with ``bot`` until the match ends; return the ``match_end`` payload.

    Reads ``client.messages()``: on each update that asks this seat to decide, the bot
    chooses on the typed view (``view_from_dict``; a move that is the only legal one is made
    without it) and the action goes out for the update's ``seq`` (once per ``seq``), after
    ``think`` seconds (or ``think(action)``: a pause drawn per decision, as ``guobiao
    loadtest --think`` does). When the server refuses an action other than as ``stale``,
    the simplest safe move (``fallback_action``) is sent once instead, except after an
    ``internal_error`` (the database could not store it): the table asks that update again
    once it resumes, and the bot answers it again; after a
    ``rate_limited`` error an action still without update is sent again, once. Returns None
    when the connection closes first, or the table is finished without a ``match_end`` for
    this connection; stops acting once ``stopping()`` is true.
    """
    state = client._table(table)
    try:
        return await _play(client, table, bot, state, stopping, think, on_message)
    except ConnectionLost:
        return None  # the server went away (a restart, a shutdown): the caller may resume


async def _play(  # noqa: PLR0917
    client: Client,
    table: str,
    bot: Bot,
    state: TableState,
    stopping: Callable[[], bool] | None,
    think: float | Callable[[Action], float],
    on_message: Callable[[Incoming], None] | None,
) -> dict[str, Any] | None:
    acted: int | None = None  # the seq we answered
    last: Action | None = None  # and how
    rescued: int | None = None  # the seq we sent a fallback for
    resent: int | None = None  # the seq we resent after a rate_limited error
    async for message in client.messages():
        if on_message is not None:
            on_message(message)
        if message.code == "rate_limited":
            # The server dropped a message of ours (the reply_to says which, when it had
            # an id); if our action has had no update yet, it may be that one: send it
            # again (a duplicate is refused harmlessly as stale or already answered).
            if (
                last is not None
                and acted == state.seq
                and resent != acted
                and state.action_sent_at is not None
                and not (stopping is not None and stopping())
            ):
                resent = acted
                await asyncio.sleep(1 / (client.rate or DEFAULT_RATE))
                if state.seq == acted:
                    await client.act(table, last)
            continue
        if message.table != table:
            continue
        if message.type == "match_end":
            return message.payload
        if message.type == "table" and message.payload.get("state") == "finished":
            return state.match_end  # over without a match_end for us (we were away)
        if message.type == "table" and message.reply_to is None:
            # Given our seat again (the table moved to another node, or restarted): what we
            # sent last may never have arrived, so the next prompt is answered even if it is
            # the one we answered (a duplicate is refused harmlessly as stale).
            acted = None
        if stopping is not None and stopping():
            continue
        if message.type == "error" and message.reply_to is not None:
            if message.code == STORE_FAILED and state.seq == acted:
                # Not taken, nothing changed: the table asks this update again once it
                # can store moves (docs/protocol.md); that ask is answered afresh.
                acted = None
                continue
            if message.code in PLAYED or state.seq != acted or rescued == acted:
                continue
            view = state.typed_view()
            if view is None or not view.legal:
                continue
            rescued = acted
            log.info("table %s: action refused (%s); playing safe", table, message.code)
            await client.act(table, fallback_action(view))
            continue
        if message.type != "update" or not state.legal or state.seq == acted:
            continue
        if not _newest(message, state):
            continue  # a newer update of this table is on its way: answer that one
        action = _forced(state.legal)
        if action is None:
            view = state.typed_view()
            assert view is not None
            try:
                action = bot.choose(view)
            except Exception:
                log.exception("table %s: the bot failed; playing safe", table)
                action = fallback_action(view)
        pause = think(action) if callable(think) else think
        if pause > 0:
            await asyncio.sleep(pause)
            if state.seq != message.payload.get("seq") or (stopping is not None and stopping()):
                continue
        acted, last = state.seq, action
        await client.act(table, action)
    return None


def _forced(legal: list[dict[str, Any]]) -> Action | None:
    """The one legal action, when there is only one (most claim windows: pass), else None.
    Every bot would play it; sent without reading the view (``typed_view`` decodes every
    seat) or asking the bot."""
    if len(legal) != 1:
        return None
    try:
        return Action.from_dict(legal[0])
    except MahjongError:
        return None  # (the view's own decoding says what is wrong)


def _newest(message: Incoming, state: TableState) -> bool:
    return message.payload.get("seq") == state.seq


async def play_tournament(
    client: Client,
    tournament: int,
    bot: Bot,
    *,
    session: int | None = None,
    timeout: float | None = None,
    **options: Any,
) -> dict[str, Any] | None:
    """Wait for our seat in ``session`` of ``tournament`` (None: the next session;
    ``Client.wait_tournament_session``, ``timeout`` seconds at most), then play that table
    with ``bot`` until its match ends (``play``, with ``options``: ``stopping``, ``think``,
    ``on_message``); return the ``match_end`` payload, or None as ``play`` does."""
    seat = await client.wait_tournament_session(tournament, session, timeout)
    return await play(client, seat.table_id, bot, **options)
