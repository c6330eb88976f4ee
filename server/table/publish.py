"""What a table sends about its match, as pure functions of the match: each viewer's
``update`` payload (its events as that viewer may see them, its view, the scores), the
hand's ``commitment`` and a finished hand's ``reveal`` (``server.fairness``), and the
``deadline_ms`` of a seat asked to act. The time, where it matters, is passed in.

Events carry their audience (``Event.visible_to``): a seat gets its own projection, a
spectator (``player`` None) the spectators'; a protocol-2 client a ``brief`` view (no
seats: it follows them from the events).
"""

from __future__ import annotations

from typing import Any

from engine.actions import Event
from engine.match import Match
from engine.table import Phase
from engine.wire import MatchStart
from server.fairness import commitment, hand_reveal, hand_salt

# From this protocol version on, an update that is not full has no seats in its view: the
# client follows them from the events (``engine.follow``).
BRIEF_VERSION = 2

Wired = list[tuple[Event, dict[str, Any]]]


def wired(events: list[Event]) -> Wired:
    """Each event with its wire form in an ``update`` (shared by every update of one change:
    not to be modified)."""
    return [(e, {"kind": e.kind, **e.data}) for e in events]


def hand_commitment(match: Match, salt: bytes, hand_no: int) -> str:
    """The commitment to hand ``hand_no``'s wall (``commit``), as every viewer gets it."""
    return commitment(match.hand_seed(hand_no), hand_salt(salt, hand_no))


def reveal(table: str, match: Match, salt: bytes, hand_no: int) -> dict[str, Any]:
    """The ``reveal`` of finished hand ``hand_no``: its seed and salt, the commitment sent
    before it, and the position of its dealer (what ``guobiao verify`` rebuilds from)."""
    record = match.records[hand_no - 1]
    return {
        "table": table,
        **hand_reveal(match.seed, salt, hand_no),
        "dealer_position": record.dealer_position,
    }


def update_payload(  # noqa: PLR0917 (what an update is made of)
    table: str,
    match: Match | None,
    salt: bytes,
    seq: int,
    history: list[Event],
    player: int | None,
    events: list[Event],
    *,
    full: bool = False,
    wire: Wired | None = None,
    brief: bool = False,
    reveals: bool = True,
) -> dict[str, Any] | None:
    """The ``update`` ``seq`` of table ``table`` with ``events`` (``full``: of the whole
    hand, its ``history``; ``wire``: the events with their wire forms, ``wired``, when the
    caller has them) as ``player`` (None: a spectator) may see it, but its deadline; None
    before the first deal. ``brief`` (protocol version 2, not ``full``): its view without
    the seats. ``reveals``: whether a full update's ``last_hand`` carries its ``reveal``."""
    if match is None or match.hand is None:
        return None  # nothing dealt yet: the first update is the deal itself
    if full:
        wire = wired(history)
    elif wire is None:
        wire = wired(events)
    visible = [form for e, form in wire if e.visible_to(player)]
    payload: dict[str, Any] = {
        "table": table,
        "seq": seq,
        "hand_no": match.hand_index + 1,
        "events": visible,
        "view": (
            match.hand.brief(player) if brief and not full else match.hand.view(player).to_dict()
        ),
        "scores": list(match.scores),
        "hands_total": match.hands_total,  # None until a match with dealer repeat ends
    }
    if match.extended:
        payload["repeat"] = match.repeat
        payload["dealer_position"] = match.dealer_position
    if full or (wire and wire[0][0].kind == MatchStart.KIND):
        # The hand's commitment with every update that gives a viewer the hand (its
        # deal, or the whole of it): one who was not there for ``commit`` (a player whose
        # tournament table dealt before he sat down, a spectator who came mid-hand, a
        # reconnection) can check its ``reveal`` all the same.
        payload["commitment"] = hand_commitment(match, salt, match.hand_index + 1)
    if full:
        payload["full"] = True
        if match.last_hand_end and match.hand.phase is not Phase.OVER:
            # How the hand before ended, for a client that missed it (a reconnection
            # between hands); once this hand is over its own result is in ``events``.
            last_hand: dict[str, Any] = {
                "hand_no": match.hand_index,
                "events": [form for e, form in wired(match.last_hand_end) if e.visible_to(player)],
            }
            if reveals:  # its ``reveal`` too, which went by with it
                last_hand["reveal"] = reveal(table, match, salt, match.hand_index)
            payload["last_hand"] = last_hand
    return payload


def deadline_ms(deadline: float | None, deadline_seq: int, seq: int, now: float, turn: int) -> int:
    """The ``deadline_ms`` of update ``seq`` to a seat asked to act, at monotonic ``now``:
    what is left of the decision's clock (``deadline``, set for update ``deadline_seq``),
    else a whole turn of ``turn`` seconds (the clock starts when the table drives on)."""
    if deadline is not None and deadline_seq == seq:
        return max(0, int((deadline - now) * 1000))
    return turn * 1000
