"""One live table: the owner task that alone drives its match, and the inputs it takes.

A ``Table`` owns its ``engine.match.Match``. Connections never touch it: they put
inputs (joins, actions, syncs, disconnections) on the table's queue, and the
table's task handles them one at a time, so the engine is only ever driven
from one place. The task also plays for bots, for disconnected players and for
players whose time ran out, starts hands, and finishes the match.

A table stands alone: it is given its settings, the timer settings, the rules of its
preset, a ``TableStore`` (the few database methods it uses) and a ``TableHost`` (whoever
created it: the lobby today, a tournament or another node later). It never reaches into
its host; it tells it what changed (``TableHost.table_changed`` with a ``TableSummary``)
and asks it one question (``TableHost.seated_at``: does this player sit elsewhere?).

Every input goes: check it against the engine's legal actions, append it to the
database, apply it, send it. Memory never holds an action the log lacks, so a crash
loses nothing anyone saw, and a failed append refuses the action (``internal_error``,
nothing changed). While the database keeps failing, a table pauses its clocks instead
of playing on into a log it cannot write, and resumes when a write works again (see
``server.table.durable``). On restart ``server.lobby.Lobby.restore`` rebuilds each
unfinished match by replaying its stored actions through the engine and hands it to a
new table (``Table.resume``).

At every table, every discard and added kong opens a claim window
(``engine.table.HandState.hold_claims``): the update stops at the discard for everyone,
answers to it are sent nowhere, and the table goes on (``close_claims``) once every answer
is in and, where a person sits, at least ``claim_window_ms`` have passed, whether or not
anyone could claim. So no update, ``seq`` or ``deadline_ms`` tells a seat without an option,
or a spectator (of an all-bot table too), whether another seat had one (docs/protocol.md,
"The claim window").

In cluster mode (``server.cluster.node``) a table has a ``Lease``: whether its node still
runs it. Before each input and each automatic move the table asks it; while its node may
have lost the table (its lease not renewed for a lease: the process was paused, Redis cannot
be reached), the table does nothing and sends nothing, its clocks stopped, until the node
knows: it then goes on, or ends (another node runs the table). What the table's task sends a
connection of another node carries the table's fencing token (``speaking``), so that node
drops the words of an owner older than one it has heard.

A seated player may ``analyze`` its hand when the table's ``aids`` allow it: the table
hands that player's own view (nothing else) to ``engine.analysis`` in a worker thread and
sends the answer with the ``seq`` it was taken at (docs/protocol.md, "Playing aids").

A tournament's table (``Lobby.create``'s keyword arguments, docs/protocol.md "Tournament
tables") may have: a time cap ``ends_at`` (checked only between hands, just before a new
one would be dealt: the match then stops with the scores so far, ``engine.match.Match.stop``,
and finishes as any match does); a fixed match ``seed`` (duplicate: the same walls at every
table of a session, each table with its own salt); no ``reveal`` messages (``reveals``
false: ``hand_reveals`` gives the seeds once the session is over); no spectators
(``watchable`` false); spectators who see it ``spectator_delay_seconds`` late: whatever
they would get is kept, time-stamped, and sent once it is that old (``spectators``), and a
new spectator starts from the table as it was then; its match ended, the table stays, listed
as it was while played (``TableSummary.listed``), until they are shown the end. Seated
players are never delayed. ``ReplaceInput`` puts another player (or a bot) in a seat
mid-match (a substitute); the match and its log do not change.

A table made to wait for players (``close_when_empty`` seconds, ``[timers]
empty_table_seconds``) closes itself once it has waited that long with no person at it: its
creator never sat down, or left (``leave_table``, or a lost connection: a waiting table frees
a disconnected player's seat at once; sitting down again is coming back), and nobody else sat
down. It ends as a finished table that played no match (``hand_no`` 0), its spectators told.

The package's rooms depend one way, bottom up::

    errors, settings, seats      the refusals; ``TableSettings``, one frozen value; who sits
    ports                        what a table is given: ``Peer``, ``TableStore``, ``TableHost``,
                                 ``Lease``, ``TableObserver`` (the metrics implement it)
    inputs                       what its queue takes, and ``input_for``
    clock, publish, spectators   pure, the time passed in: the timers (deadline, claim window,
                                 time cap, hand pause, pace), each viewer's update, the
                                 delayed spectators' feed
    durable                      the action log's writes, the unknown-outcome reconcile, the
                                 database-failure pause
    core                         ``TableCore``: the rules over the match, sans I/O (what is
                                 due next; an action applied only once stored; auto-play)
    state, showing, playing,     ``Table``, the asyncio owner task that carries it all out, in
    seating, task                layers of one job each: the shared fields; what viewers are
                                 sent; the match (actions, hands, the database, the aids);
                                 who sits and watches; the task's loop, inputs and drive

The seed commitments are ``server.fairness``'s. Nothing here imports the lobby, the
metrics, the tournaments, the ladder or the cluster.

The table's sources of time and randomness and its database retry timings are
``sources``'s, looked up there at each use: a test replaces them there, once.
"""

from __future__ import annotations

import logging

__all__ = [
    "ANALYSES_PER_SECOND",
    "ANALYSIS_BURST",
    "BOT",
    "HUMAN",
    "AddBotsInput",
    "AnalyzeInput",
    "BackInput",
    "GoneInput",
    "JoinInput",
    "Lease",
    "LeaveInput",
    "LobbyError",
    "NextHandInput",
    "Peer",
    "PlayInput",
    "ReplaceInput",
    "Seat",
    "Shown",
    "StopInput",
    "StoreDown",
    "SyncInput",
    "Table",
    "TableHost",
    "TableObserver",
    "TableSettings",
    "TableStore",
    "TableSummary",
    "WatchInput",
    "commitment",
    "hand_reveal",
    "hand_reveals",
    "hand_salt",
    "input_for",
    "listed",
    "log",
    "logging",
    "speaking",
]

from server.fairness import commitment, hand_reveal, hand_reveals, hand_salt
from server.table.errors import LobbyError, StoreDown
from server.table.inputs import (
    AddBotsInput,
    AnalyzeInput,
    BackInput,
    GoneInput,
    JoinInput,
    LeaveInput,
    NextHandInput,
    PlayInput,
    ReplaceInput,
    StopInput,
    SyncInput,
    WatchInput,
    input_for,
)
from server.table.ports import (
    Lease,
    Peer,
    TableHost,
    TableObserver,
    TableStore,
    TableSummary,
)
from server.table.seats import BOT, HUMAN, Seat
from server.table.settings import TableSettings, listed
from server.table.spectators import Shown
from server.table.state import ANALYSES_PER_SECOND, ANALYSIS_BURST
from server.table.task import Table, speaking

# The tables' logger (every room logs to it).
log = logging.getLogger("guobiao.table")
