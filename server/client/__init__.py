"""An asyncio client for the guobiao wire protocol (``docs/protocol.md``).

    client = await Client.connect("ws://127.0.0.1:8765/ws")
    await client.guest()
    table = (await client.create_table(turn_seconds=15)).table
    await client.join_table(table)
    await client.add_bots(table, "fast")
    async for message in client.messages():
        if message.type == "update" and client.tables[table].legal:
            await client.act(table, {"type": "pass"})

- Requests carry an ``id``; each request method awaits the reply with the matching
  ``reply_to`` and returns it, or raises ``ServerError(code, reason)`` when the server answers
  with an ``error`` for that id (its ``table`` and ``match`` the ones the error names, if
  any: ``already_seated``, ``table_finished``). ``act`` does not wait: the server sends
  nothing back for an accepted action but the next ``update``; a refusal comes as an
  ``error`` message in ``messages()`` (with ``reply_to`` and ``table`` set) and in
  ``TableState.last_error``.
- A background reader task routes everything else (``update``, ``table``, ``commit``,
  ``reveal``, ``match_end``, errors that answer no pending request) to the per-table state
  (``client.tables``), to the ``on_message`` callback and to the ``messages()`` iterator.
- ``view_from_dict`` turns the wire view back into the engine's typed ``engine.table.View``,
  so that the engine bots can play over the network (``play`` does exactly that), and
  ``event_from_dict`` an event into its ``engine.wire`` type (``TableState.typed_events``):
  both decode through ``engine.wire``, the module the server encodes with.
- Tournaments (docs/tournaments.md): ``tournament_request`` sends any ``tournament_*``
  request and returns the ``tournament`` payload of its answer (its ``kind`` is
  positional-only: a penalty's payload has a ``kind`` of its own); the named methods
  (``tournament_create``, ``tournament_seat``, ...) are thin wrappers. When a session starts,
  the server pushes ``tournament_session`` to each seated player and attaches the connection
  to its table: the client records the seat (``tournament_seats``) and the table's seat, and
  ``wait_tournament_session`` awaits it (or, connected after the start, joins the table the
  tournament names as ``you.seat``); ``play_tournament`` waits and then plays that table.
- ``record=True`` keeps every received frame (``client.frames``), for tests that check what
  the server let a client see.
- Protocol version 2 (the default; ``versions=(1,)`` asks for version 1): an update that is
  not full has no seats in its view; the reader follows them from the last view and the
  events (``engine.follow``), so ``TableState.view`` is always whole. An update it cannot
  follow (one missed, a hand it did not see start) leaves ``view`` None and asks for a
  full one (``sync``). ``Client.connect(..., follow_seats=False)`` keeps each view as sent
  instead (no seats but a full update's; nothing to follow, nothing asked for): for a bot
  that reads only ``legal`` and ``drawn`` (``engine.bots.SEATLESS``: the fast bot, as
  ``guobiao loadtest`` plays it).

The package, one concept a module: ``errors`` (what it raises), ``views`` (wire views and
events back to the engine's types), ``state`` (``Incoming``, ``TableState``...),
``connection`` (the websocket, pacing, requests and their answers, the reader),
``requests`` (``Client``: the protocol's requests as methods) and ``play`` (an engine bot
at a table). Requests are written and answers read through the message registry
(``server.messages.registry``): ``Incoming.message()`` is the typed server message.

Outgoing messages are paced by a token bucket (by default 20 a second, bursts of 20: within
the server's default limit of 20 a second, bursts of 40), so that a client does not trip the
server's ``rate_limited`` error.
"""

from server.client.connection import (
    CLIENT_NAME,
    DEFAULT_BURST,
    DEFAULT_RATE,
    PROTOCOL_VERSIONS,
    REQUEST_TIMEOUT,
    RESYNC_SECONDS,
    TABLE_MESSAGES,
    Connection,
    normalize_url,
)
from server.client.errors import (
    ClientError,
    ConnectFailed,
    ConnectionLost,
    RequestTimeout,
    ServerError,
    ViewError,
)
from server.client.play import PLAYED, fallback_action, play, play_tournament
from server.client.requests import MAX_TRACKED_ACTIONS, TOURNAMENT_PREFIX, Client
from server.client.state import WINDS, CreatedTable, Incoming, Session, TableState, TournamentSeat
from server.client.views import HIDDEN_KONG, event_from_dict, parse_meld, view_from_dict

__all__ = [
    "CLIENT_NAME",
    "DEFAULT_BURST",
    "DEFAULT_RATE",
    "HIDDEN_KONG",
    "MAX_TRACKED_ACTIONS",
    "PLAYED",
    "PROTOCOL_VERSIONS",
    "REQUEST_TIMEOUT",
    "RESYNC_SECONDS",
    "TABLE_MESSAGES",
    "TOURNAMENT_PREFIX",
    "WINDS",
    "Client",
    "ClientError",
    "ConnectFailed",
    "Connection",
    "ConnectionLost",
    "CreatedTable",
    "Incoming",
    "RequestTimeout",
    "ServerError",
    "Session",
    "TableState",
    "TournamentSeat",
    "ViewError",
    "event_from_dict",
    "fallback_action",
    "normalize_url",
    "parse_meld",
    "play",
    "play_tournament",
    "view_from_dict",
]
