"""Replays of finished matches, one hand at a time: ``GET /api/matches/{id}/replay?hand=N``.

A browser cannot rebuild a hand from the match's seed: the wall is shuffled by the engine
(``engine.wall.Wall.from_seed``), in Python. So the server replays the stored action log
through the engine, as a restart restores a table (``server.lobby.replay_log``), and sends
the frames a viewer steps through: the hand after the deal, then after each accepted action,
each shaped like a live ``update`` (the same ``engine.wire`` encoders) but with nothing
hidden (``HandState.open_view``, every event in full). Only finished matches: while a match
is played its seed and its hands are secret.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import http
import logging
import re
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import parse_qs

from websockets.http11 import Request, Response

from engine.actions import Action, Event
from engine.errors import MahjongError
from engine.match import Match
from engine.rules import RuleSet
from server.db.store import ActionRow, MatchRow
from server.errors import shown
from server.lobby import replay_log, stored_rules
from server.table import LobbyError

log = logging.getLogger("guobiao.replay")

MAX_HAND_DIGITS = 6  # far above any match's hands (16, a few more with dealer repeat)
GZIP_LEVEL = 6
REFUSED_CODING = re.compile(r"q\s*=\s*0(\.0*)?\s*$")  # ``gzip;q=0``: anything but gzip


class ReplayStore(Protocol):
    """The database as a replay reads it (``server.db.store.Store``)."""

    async def get_match(self, match_id: int) -> MatchRow | None: ...

    async def match_actions(self, match_id: int) -> list[ActionRow]: ...


class Refused(Exception):
    """A replay the server does not give: the HTTP ``status`` and the ``reason`` to send."""

    def __init__(self, status: http.HTTPStatus, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


def hand_number(query: str) -> int:
    """The ``hand`` of a query string (``hand=3``), 1 when it has none; ``Refused`` (400)
    for anything but one whole number."""
    values = parse_qs(query, keep_blank_values=True).get("hand", [])
    if not values:
        return 1
    text = values[0]
    if len(values) > 1 or not (text.isascii() and text.isdigit()) or len(text) > MAX_HAND_DIGITS:
        given = values if len(values) > 1 else text
        raise Refused(
            http.HTTPStatus.BAD_REQUEST,
            f"'hand' is one whole number (1 for the first hand), got {shown(given)}",
        )
    return int(text)


async def hand_replay(
    store: ReplayStore, presets: dict[str, RuleSet], match_id: int, query: str
) -> dict[str, Any]:
    """The replay of one hand (``hand_number(query)``) of the finished match ``match_id``.
    ``Refused``: 400 for a malformed hand number, 404 for a match that is unknown or still
    in play or a hand it does not have, 500 for a stored log that does not replay."""
    hand_no = hand_number(query)
    stored = await store.get_match(match_id)
    if stored is None or stored.ended_at is None:
        raise Refused(
            http.HTTPStatus.NOT_FOUND,
            f"no finished match {match_id} (replays are published at its end)",
        )
    rows = await store.match_actions(match_id)
    # The hands its log has: all of them, or fewer for a match stopped at a time cap.
    hands = max((row.hand_no for row in rows), default=0)
    if not 1 <= hand_no <= hands:
        raise Refused(
            http.HTTPStatus.NOT_FOUND,
            f"match {match_id} has hands 1..{hands}, not hand {hand_no}",
        )
    try:
        # In a thread: a late hand replays the whole match before it (tens of ms of CPU),
        # which would hold up every table of the server.
        frames = await asyncio.to_thread(hand_frames, stored, rows, hand_no, presets)
    except (LobbyError, MahjongError) as exc:
        log.error("match %s, hand %s does not replay: %s", match_id, hand_no, exc)
        raise Refused(
            http.HTTPStatus.INTERNAL_SERVER_ERROR,
            f"match {match_id}'s stored log does not replay (logged); it cannot be shown",
        ) from None
    return {
        "match": match_id,
        "hand_no": hand_no,
        "hands": hands,
        "seats": list(stored.seats),
        "rules": stored.rules,
        "rule_options": stored_rules(stored, presets).to_dict(),
        "frames": frames,
    }


def hand_frames(
    stored: MatchRow, rows: Sequence[ActionRow], hand_no: int, presets: dict[str, RuleSet]
) -> list[dict[str, Any]]:
    """The frames of hand ``hand_no``: the match replayed to the end of the hand before,
    this hand dealt, then its actions applied one by one, claim windows held as at a table
    where a person sits (``server.table``). So the frames are the updates such a table
    sends: one for the deal, one for each action that shows (a discard stops at its claim
    window), one for each closed window (what followed the discard); the answers in a window
    show nothing until it closes. ``LobbyError`` or ``MahjongError`` when the log does not
    replay."""
    match = replay_log(stored, (row for row in rows if row.hand_no < hand_no), presets)
    match.hold_claims = True
    frames = [frame(match, 0, match.start_hand(), [])]
    hand = match.hand
    assert hand is not None
    taken: list[ActionRow] = []  # the actions since the last frame
    for row in rows:
        if row.hand_no != hand_no:
            continue
        events = match.apply(row.player, Action.from_dict(row.action))
        taken.append(row)
        if events:
            frames.append(frame(match, len(frames), events, taken))
            taken = []
        if hand.claims_answered():
            frames.append(frame(match, len(frames), match.close_claims(), taken))
            taken = []
    return frames


def frame(
    match: Match, seq: int, events: list[Event], taken: Sequence[ActionRow]
) -> dict[str, Any]:
    """One step of a replay: a live ``update``'s fields (``server.table``) but the table's
    id, the view open, every event in full (an event with ``hide`` is the copy the others
    got of one its player saw in full), and the logged actions that led to it."""
    hand = match.hand
    assert hand is not None
    out: dict[str, Any] = {
        "seq": seq,
        "hand_no": match.hand_index + 1,
        "events": [{"kind": e.kind, **e.data} for e in events if e.hide is None],
        "view": hand.open_view().to_dict(),
        "scores": list(match.scores),
        "hands_total": match.hands_total,
    }
    if match.extended:
        out["repeat"] = match.repeat
        out["dealer_position"] = match.dealer_position
    out["actions"] = [{"player": row.player, "action": row.action} for row in taken]
    return out


def compressed(response: Response, request: Request) -> Response:
    """``response`` gzipped if the client accepts it (browsers do): a hand's frames repeat
    the whole table at every step, 60-190 KB of JSON that gzip makes 3-8 KB."""
    response.headers["Vary"] = "Accept-Encoding"
    if not accepts_gzip(request.headers.get("Accept-Encoding", "")):
        return response
    body = gzip.compress(response.body, GZIP_LEVEL)
    del response.headers["Content-Length"]
    response.headers["Content-Length"] = str(len(body))
    response.headers["Content-Encoding"] = "gzip"
    return dataclasses.replace(response, body=body)


def accepts_gzip(header: str) -> bool:
    """Whether an ``Accept-Encoding`` header accepts gzip: ``gzip`` (or ``*``) listed, and
    not with ``q=0``."""
    codings: dict[str, bool] = {}
    for item in header.split(","):
        coding, _, params = item.partition(";")
        codings.setdefault(coding.strip().lower(), REFUSED_CODING.match(params.strip()) is None)
    for coding in ("gzip", "x-gzip", "*"):
        if coding in codings:
            return codings[coding]
    return False
