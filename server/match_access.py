"""Who may read a match's record over HTTP, and how much of it: the rules ``server.app``
applies once, before any of a match's paths (``GET /api/matches/{id}``, its ``/log``,
``/replay`` and ``/review``) answers, as pure functions of what the store says of the
match's table (``MatchPrivacy``) and the time (docs/protocol.md, "HTTP on the same port").

- **A private table's match is its invite code's.** Only a request that carries the table's
  invite code (``?invite=CODE``) is answered, as only the code lets anyone join or watch the
  table; any other is refused (403) whatever the path, and the lists that name matches
  (``Store.player_summary``) leave it out. The code is compared in constant time.
- **A table whose spectators see it late shows its record as late.** A hand is listed once
  it finished at least the delay ago, and the match reads as finished (its scores, seed,
  log, replays and reviews) once it ended at least the delay ago: what a spectator learns
  over HTTP is what the table has already shown them.
"""

from __future__ import annotations

import hmac
from datetime import datetime, timedelta

from server.db.store import MatchPrivacy

INVITE = "invite"  # the query parameter that carries a private table's invite code


def invite_refusal(privacy: MatchPrivacy, match_id: int, given: str | None) -> str | None:
    """Why the request for match ``match_id``, carrying the invite code ``given`` (None:
    none), is refused (403); None when it may be answered (not a private table's match, or
    its table's code). Compared in constant time, so that the answer's time says nothing
    of how much of a guess was right."""
    code = privacy.invite_code
    if code is None:
        return None
    if given is None or given == "":
        return (
            f"match {match_id} was played at a private table: it is shown only with the "
            f"table's invite code (?{INVITE}=CODE)"
        )
    if not hmac.compare_digest(given.encode("utf-8"), code.encode("utf-8")):
        return (
            f"match {match_id} was played at a private table, and the invite code given is "
            "not its table's"
        )
    return None


def shown_until(privacy: MatchPrivacy, now: datetime) -> datetime | None:
    """The latest end of a hand that may be shown at ``now`` of a match whose table's
    spectators see it late (the match then reads as still in play); None when the whole
    record may be: no delay, or the match ended at least the delay ago."""
    delay = privacy.spectator_delay_seconds
    if delay <= 0:
        return None
    cutoff = now - timedelta(seconds=delay)
    if privacy.ended_at is not None and privacy.ended_at <= cutoff:
        return None
    return cutoff


def delayed_refusal(privacy: MatchPrivacy, match_id: int) -> str:
    """Why a finished match's log, replays and review are not given yet (404, as for a
    match in play): its table's spectators have not seen its end."""
    delay = privacy.spectator_delay_seconds
    return (
        f"match {match_id} is shown {delay} s late, as its table's spectators see it: its "
        f"log, replays and reviews are published {delay} s after its end"
    )
