"""The server's coded errors: one exception base, one registry of every wire error code.

::

    ServerError(code, reason)        base of every refusal the server sends as an ``error``
    ├── protocol.ProtocolError        a frame that does not decode (or comes out of order)
    ├── accounts.AccountError         an account request refused
    └── table.LobbyError              a lobby or table request refused

The engine's ``IllegalAction`` is not a ``ServerError`` (the engine knows nothing of the
server), but its codes go on the wire as they are, so they are registered here too.

``CODES`` is every ``code`` an ``error`` message can carry, with its meaning in one line
(``NOT_SENT``: the few codes raised but caught before the wire);
``docs/protocol.md`` has the same table (a test checks that they agree, and that every code
the server's source raises or sends is in it). Raising a ``ServerError`` with a code not in
the registry is a bug, caught at once.

``shown`` is how every error quotes what a client sent (a name, an id, a path): a client's
input may be as long as a frame, and an error echoes at most the first ``QUOTED`` characters
of it, with its length.
"""

from __future__ import annotations

# code -> when it is sent. Keep in step with the "Errors" table of docs/protocol.md.
CODES: dict[str, str] = {
    # Frames (server.protocol)
    "bad_json": "the frame is not JSON",
    "bad_message": "not an object, no string `type`, a payload of the wrong shape, a string "
    "that is not valid Unicode, or nesting deeper than 32 (the reason names the field)",
    "unknown_type": "a `type` the server does not know",
    "unsupported_version": "`hello` lists no version the server speaks (the server closes)",
    "hello_first": "a message before `hello`",
    "not_authenticated": "a table message before `register` / `login` / `guest` / `resume`",
    "rate_limited": "too many messages (or `analyze` requests); this one was dropped, slow down",
    # Accounts (server.accounts)
    "auth_failed": "wrong username or password, or an unknown, expired or revoked token",
    "username_taken": "registration refused: the name is taken",
    "username_confusable": "registration refused: the name looks like an existing account's "
    "(compared in any case, with I, l and 1 alike, O and 0 alike, m and rn alike)",
    "bad_username": "registration refused: not 3-20 letters, digits, `_` or `-`, or `guest-...`",
    "weak_password": "registration refused: a password needs at least 8 characters",
    # Lobby and tables (server.lobby, server.table)
    "no_such_table": "there is no table of that id",
    "table_finished": "the table is gone, its match over; to one of its players only, the "
    "refusal names the match (`match`), whose page has its end",
    "table_full": "the table has no free seat, or the server holds as many tables as it may",
    "too_many_tables": "this account, or this client address, has as many tables waiting for "
    "players as the server allows (`[limits] waiting_tables_per_account`, "
    "`waiting_tables_per_address`): sit at one, or wait until one starts or closes",
    "seat_taken": "that seat is taken",
    "wrong_invite": "a private table needs its invite code",
    "already_seated": "the player already sits at another table (the refusal names it: `table`)",
    "not_seated": "the request needs a seat at (or, for `sync`, a place watching) the table",
    "table_started": "the table's match has started",
    "stale": "the action answers an old `seq`; the current `update` follows",
    "hand_over": "no hand is being played at the table",
    "aids_off": "the table allows no playing aids (`analyze`; its `aids` is false)",
    "not_watchable": "the table cannot be watched (a duplicate session's, while it is played)",
    # The ladder (server.ladder)
    "not_registered": "rated play (a rated table, the ladder queue) and tournaments are for "
    "registered accounts",
    "rated_table": "a rated table takes no bots",
    "same_four_limit": "these four accounts played as many rated matches together today as "
    "the server allows (`[ladder] same_four_per_day`)",
    "no_such_ladder": "there is no ladder of that name (a rated table, the queue)",
    # Tournaments (server.tournaments)
    "no_such_tournament": "there is no tournament of that id",
    "not_director": "the request is for the tournament's directors (or, to create one, for an "
    "account the operator allowed to)",
    "registration_closed": "the tournament takes no registrations (closed, or by the director)",
    "already_registered": "the player is registered already (or checked in already)",
    "not_a_player": "the request needs a registered player of the tournament",
    "tournament_state": "not at this point of the tournament (the reason says why)",
    "no_seating": "the next session has no seating yet (`tournament_seat` first)",
    "too_few_players": "fewer than four players to seat",
    # The engine (engine.errors.IllegalAction): the action was refused, nothing changed
    "not_your_turn": "it is not this player's turn to act",
    "illegal_action": "the action is not in `view.legal`",
    "tile_not_in_hand": "a discard or kong of a tile the player does not hold",
    "wild_tile": "a wild tile cannot be discarded, claimed with or konged",
    "already_answered": "the player has already answered this discard",
    # The server itself
    "internal_error": "the server failed to handle the message (logged); nothing changed, "
    "try again",
    "server_shutdown": "the server is stopping (sent before the close)",
    "server_busy": "cluster mode: the node that runs the queue and tournaments is changing "
    "hands, or a table did not answer another node in time; try again",
}

# Codes raised deliberately that never reach the wire: the server catches, converts or logs
# them (a test checks each is raised somewhere and none is in ``CODES``).
NOT_SENT: dict[str, str] = {
    "bad_action": "engine: an action that does not decode (sent as `bad_message`)",
    "no_such_player": "engine: an action for a player not at the table (the server never asks)",
    "already_started": "engine: a hand dealt twice (the server never asks)",
    "hand_in_play": "engine: the next hand before the current one is over (never asked)",
    "match_over": "engine: a hand after the last one (the server never asks)",
    "no_hand": "engine: an action before the first deal (the server checks first)",
    "corrupt_match": "lobby: a stored match that cannot be restored (logged at start)",
    "claims_unanswered": "engine: a claim window closed before every answer (never asked)",
    "no_claim_window": "engine: a claim window closed when none is open (never asked)",
}


QUOTED = 40  # characters of a client's input that an error quotes at most


def shown(value: object, limit: int = QUOTED) -> str:
    """``value`` as an error quotes it: its ``repr`` (so control and format characters show
    as escapes), but of a longer string only its first ``limit`` characters, an ellipsis and
    its length (``'aaaa…' (3000 characters)``), and of any other value whose ``repr`` is
    longer than ``limit``, that much of it and an ellipsis (a list or object: its size)."""
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        cut = repr(value[:limit])
        return f"{cut[:-1]}…{cut[-1]} ({len(value)} characters)"
    text = repr(value)
    if len(text) <= limit:
        return text
    size = f" ({len(value)} items)" if isinstance(value, (list, tuple, dict)) else ""
    return f"{text[:limit]}…{size}"


class ServerError(Exception):
    """A request the server refuses: ``code`` (one of ``CODES``) and ``reason`` go on the wire
    as an ``error`` message; ``reason`` says, for a person, what was wrong. ``table``: the
    table the refusal is about, for a client to go to (``already_seated``: where the player
    sits), and ``match`` the match it is about (``table_finished``: the table's last), sent
    with it (``server.protocol.refusal``)."""

    def __init__(
        self, code: str, reason: str, *, table: str | None = None, match: int | None = None
    ) -> None:
        if code not in CODES and code not in NOT_SENT:
            raise ValueError(f"unregistered error code {code!r} (add it to server.errors.CODES)")
        super().__init__(reason)
        self.code = code
        self.reason = reason
        self.table = table
        self.match = match
