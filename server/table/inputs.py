"""The inputs a table's task takes from its queue, one class each, and ``input_for``: the
table a client's message is for and its input there. Connections only ever put these on
a table's queue; the table's task alone acts on them."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from engine.actions import Action
from server import protocol
from server.table import sources
from server.table.ports import Peer


@dataclass(frozen=True, slots=True)
class _Input:
    peer: Peer | None
    reply_to: str | int | None


@dataclass(frozen=True, slots=True)
class JoinInput(_Input):
    seat: int | None
    invite_code: str | None


@dataclass(frozen=True, slots=True)
class LeaveInput(_Input):
    pass


@dataclass(frozen=True, slots=True)
class AddBotsInput(_Input):
    bot: str


@dataclass(frozen=True, slots=True)
class WatchInput(_Input):
    invite_code: str | None


@dataclass(frozen=True, slots=True)
class PlayInput(_Input):
    seq: int
    action: Action
    received: float | None = None  # monotonic time the message was decoded (the metrics')


@dataclass(frozen=True, slots=True)
class SyncInput(_Input):
    pass


@dataclass(frozen=True, slots=True)
class AnalyzeInput(_Input):
    """The playing aids for the peer's own hand (``engine.analysis``)."""


@dataclass(frozen=True, slots=True)
class NextHandInput(_Input):
    """The peer's player has read the result of hand ``hand_no`` (``next_hand``)."""

    hand_no: int


@dataclass(frozen=True, slots=True)
class GoneInput(_Input):
    """The peer's connection closed."""


@dataclass(frozen=True, slots=True)
class BackInput(_Input):
    """A seated player authenticated again (``resume``) on a new connection."""


@dataclass(frozen=True, slots=True)
class ReplaceInput(_Input):
    """Put ``label`` (a username, or ``"bot:NAME"``) in ``seat`` 0..3 in place of whoever
    sits there, mid-match too (a tournament's substitute). The match and its log do not
    change; the table's row is saved and its summary pushed. A connection of the player
    replaced stops getting that seat's view (it becomes a spectator, or, at a table that
    may not be watched, is detached); a new human gets the seat with ``join_table`` (or
    ``resume``). ``done``, when given, gets None once the seat is replaced, or the
    ``LobbyError`` that refused it (a bad seat or label, a finished table, a bot at a rated
    table, a player seated at another table)."""

    seat: int
    label: str
    done: asyncio.Future[None] | None = None


@dataclass(frozen=True, slots=True)
class StopInput(_Input):
    pass


@dataclass(frozen=True, slots=True)
class WakeInput(_Input):
    """Not a client's: the table's own timer, put on its queue when something may be due
    (``Table._next_input``). The task drives the table on it as on a timeout."""


WAKE = WakeInput(None, None)


def input_for(peer: Peer, m: protocol.Message) -> tuple[str, _Input] | None:
    """The table a client's message is for and the input it is there, or None if it is no
    table's: the same whether the table is on the client's node or another."""
    if isinstance(m, protocol.JoinTable):
        return m.table, JoinInput(peer, m.id, m.seat, m.invite_code)
    if isinstance(m, protocol.AddBots):
        return m.table, AddBotsInput(peer, m.id, m.bot)
    if isinstance(m, protocol.LeaveTable):
        return m.table, LeaveInput(peer, m.id)
    if isinstance(m, protocol.Watch):
        return m.table, WatchInput(peer, m.id, m.invite_code)
    if isinstance(m, protocol.Play):
        return m.table, PlayInput(peer, m.id, m.seq, m.action, sources.time.monotonic())
    if isinstance(m, protocol.Sync):
        return m.table, SyncInput(peer, m.id)
    if isinstance(m, protocol.Analyze):
        return m.table, AnalyzeInput(peer, m.id)
    if isinstance(m, protocol.NextHand):
        return m.table, NextHandInput(peer, m.id, m.hand_no)
    return None
