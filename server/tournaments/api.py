"""The tournaments' HTTP API (docs/protocol.md, "HTTP API"): read-only.

- ``GET /api/tournaments``: the public tournaments, newest first.
- ``GET /api/tournaments/{id}``: settings, players, sessions, standings, duplicate
  results, the corrections log.
- ``GET /api/tournaments/{id}/sessions/{n}``: a session's seating, tables and results.
- ``GET /api/tournaments/{id}/export.json`` and ``.../export.csv``: the standings for a
  ranking body (players, places, table points, scores per session).

A private tournament (``public`` false) is not listed, but its pages answer whoever has its
id, as a private table's invite link does. ``route`` answers these paths with an
``Answer``, or None for a path not its own.
"""

from __future__ import annotations

import http
import json
from dataclasses import dataclass
from typing import Any

from server.errors import shown
from server.query import ID_MAX as MAX_ID
from server.query import BadRequest, whole_number
from server.tournaments.host import Tournaments
from server.tournaments.settings import TournamentError


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer: JSON ``body``, or ``text`` of ``content_type`` (an export) to be
    downloaded as ``filename``."""

    status: http.HTTPStatus
    body: Any = None
    text: str | None = None
    content_type: str = ""
    filename: str = ""


def _id(text: str, what: str) -> int | Answer:
    try:
        return whole_number(text, f"a {what}", 1, MAX_ID)
    except BadRequest as exc:
        return Answer(http.HTTPStatus.BAD_REQUEST, {"error": str(exc)})


async def route(tournaments: Tournaments, parts: list[str]) -> Answer | None:
    """The answer for the path ``parts`` (``["api", "tournaments", ...]``), else None."""
    if parts[:2] != ["api", "tournaments"] or len(parts) > 5:
        return None
    if len(parts) == 2:
        return Answer(http.HTTPStatus.OK, {"tournaments": await tournaments.listing()})
    tournament_id = _id(parts[2], "tournament id")
    if isinstance(tournament_id, Answer):
        return tournament_id
    try:
        if len(parts) == 3:
            return Answer(http.HTTPStatus.OK, await tournaments.detail(tournament_id))
        if len(parts) == 4 and parts[3] in ("export.json", "export.csv"):
            form = parts[3].rsplit(".", 1)[1]
            text = await tournaments.export(tournament_id, form)
            if form == "json":
                return Answer(http.HTTPStatus.OK, json.loads(text))
            return Answer(
                http.HTTPStatus.OK,
                text=text,
                content_type="text/csv; charset=utf-8",
                filename=f"tournament-{tournament_id}.csv",
            )
        if len(parts) == 5 and parts[3] == "sessions":
            number = _id(parts[4], "session number")
            if isinstance(number, Answer):
                return number
            detail = await tournaments.session_detail(tournament_id, number)
            if detail is None:
                return Answer(
                    http.HTTPStatus.NOT_FOUND,
                    {"error": f"tournament {tournament_id} has no session {number} (yet)"},
                )
            return Answer(http.HTTPStatus.OK, detail)
    except TournamentError as exc:
        if exc.code == "no_such_tournament":
            return Answer(http.HTTPStatus.NOT_FOUND, {"error": f"no tournament {tournament_id}"})
        raise
    return Answer(
        http.HTTPStatus.NOT_FOUND, {"error": f"nothing at {shown('/' + '/'.join(parts))}"}
    )
