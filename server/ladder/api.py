"""The ladder's HTTP API (docs/protocol.md, "HTTP API"): read-only JSON.

- ``GET /api/ladders``: every ladder with its current season.
- ``GET /api/ladders/{id}?season=N&offset=0&limit=50&provisional=false|true|all&q=PREFIX``:
  a page of the leaderboard (the current season unless ``season`` names one).
- ``GET /api/ladders/{id}/players/{name}?season=N``: a player's rating, rank and history.
- ``GET /api/seasons?ladder=ID``: the seasons; ``GET /api/seasons/{id}``: one season and a
  page of its table (the same query as a leaderboard; a past season's table is final).

``route`` answers these paths with ``(status, body)``, or None for a path not its own.
"""

from __future__ import annotations

import http
from typing import Any

from server.errors import shown
from server.ladder.store import PAGE_LIMIT, PROVISIONAL_FILTERS, LadderError, LadderStore
from server.query import BadRequest, parse_query, whole_number

Answer = tuple[http.HTTPStatus, dict[str, Any]]

MAX_NUMBER = 10**9


def _number(
    query: dict[str, str], key: str, default: int | None, low: int, high: int
) -> int | None:
    text = query.get(key)
    if text is None or text == "":
        return default
    return whole_number(text, key, low, high)


def _page(query: dict[str, str]) -> dict[str, Any]:
    provisional = query.get("provisional", "false") or "false"
    if provisional not in PROVISIONAL_FILTERS:
        raise BadRequest(
            f"provisional must be one of {', '.join(PROVISIONAL_FILTERS)}, got {shown(provisional)}"
        )
    search = query.get("q", "").strip()
    if len(search) > 32:
        raise BadRequest("q (a name prefix) has at most 32 characters")
    return {
        "offset": _number(query, "offset", 0, 0, MAX_NUMBER),
        "limit": _number(query, "limit", 50, 1, PAGE_LIMIT),
        "provisional": provisional,
        "search": search or None,
    }


def _not_found(what: str) -> Answer:
    return http.HTTPStatus.NOT_FOUND, {"error": what}


async def route(ladder: LadderStore, parts: list[str], query_text: str) -> Answer | None:
    """Answer ``/api/ladders...`` and ``/api/seasons...`` (``parts``: the path split at
    ``/``, without the empty first part); None for any other path."""
    if len(parts) < 2 or parts[0] != "api" or parts[1] not in ("ladders", "seasons"):
        return None
    try:
        query = parse_query(query_text)
        if parts[1] == "ladders":
            return await _ladders(ladder, parts[2:], query)
        return await _seasons(ladder, parts[2:], query)
    except BadRequest as exc:
        return http.HTTPStatus.BAD_REQUEST, {"error": str(exc)}
    except LadderError as exc:
        return _not_found(str(exc))


async def _ladders(ladder: LadderStore, rest: list[str], query: dict[str, str]) -> Answer | None:
    if not rest:
        return http.HTTPStatus.OK, {"ladders": await ladder.ladders()}
    name = rest[0]
    ladder.check_ladder(name)
    season = _number(query, "season", None, 1, MAX_NUMBER)
    if len(rest) == 1:
        page = _page(query)
        board = await ladder.leaderboard(name, season=season, **page)
        if board is None:
            if season is None:  # no rated match yet: an empty first page
                return http.HTTPStatus.OK, {
                    "ladder": name,
                    "season": None,
                    "provisional_matches": ladder.policy.provisional_matches,
                    "total": 0,
                    "players": [],
                    **page,
                }
            return _not_found(f"ladder {shown(name)} has no season {season}")
        return http.HTTPStatus.OK, board
    if len(rest) == 3 and rest[1] == "players":
        found = await ladder.player(name, rest[2], season=season)
        if found is None:
            return _not_found(f"no player {shown(rest[2])}")
        if season is not None and found["season"] is None:
            return _not_found(f"ladder {shown(name)} has no season {season}")
        return http.HTTPStatus.OK, found
    return None


async def _seasons(ladder: LadderStore, rest: list[str], query: dict[str, str]) -> Answer | None:
    if not rest:
        name = query.get("ladder") or None
        if name is not None:
            ladder.check_ladder(name)
        return http.HTTPStatus.OK, {"seasons": await ladder.seasons(name)}
    if len(rest) != 1:
        return None
    season_id = whole_number(rest[0], "a season id")
    found = await ladder.season_by_id(season_id)
    if found is None:
        return _not_found(f"no season {season_id}")
    board = await ladder.leaderboard(found["ladder"], season_id=found["id"], **_page(query))
    assert board is not None
    return http.HTTPStatus.OK, board
