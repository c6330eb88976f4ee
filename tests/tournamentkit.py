"""Helpers for the tournament tests (tests/server/test_tournament_*.py).

- ``connect``: a network client registered (or a guest) on a running ``App``.
- ``ask`` / ``refused``: a ``tournament_*`` request and its ``tournament`` reply, or the
  ``ServerError`` refusing it.
- ``until_finished``: the tournament once its session ``n`` has finished (polling).
- ``table_points``: 4-2-1-0 by final score, ties sharing the summed points: the tests' own
  computation, independent of ``server.tournaments.scoring``.
"""

from __future__ import annotations

import asyncio
from fractions import Fraction
from typing import Any

import pytest

from server.app import App
from server.client import Client, ServerError

PASSWORD = "correct horse battery"


async def connect(app: App, name: str | None) -> Client:
    """A client registered as ``name`` (a guest for None) on ``app``."""
    client = await Client.connect(f"ws://127.0.0.1:{app.port}/ws", rate=None)
    if name is None:
        await client.guest()
    else:
        await client.register(name, PASSWORD)
    return client


async def ask(client: Client, kind: str, /, **payload: Any) -> dict[str, Any]:
    """The ``tournament`` reply to a request (``ServerError`` if refused)."""
    reply = await client.request(kind, payload)
    assert reply.type == "tournament", reply
    return reply.payload


async def refused(client: Client, kind: str, /, **payload: Any) -> ServerError:
    """The refusal of a request that must be refused."""
    with pytest.raises(ServerError) as caught:
        await client.request(kind, payload)
    return caught.value


async def until_finished(
    client: Client, tournament: int, number: int, seconds: float = 60
) -> dict[str, Any]:
    """The tournament (``tournament_get``) once its session ``number`` has finished."""
    for _ in range(int(seconds * 20)):
        body = await ask(client, "tournament_get", tournament=tournament)
        if len(body["sessions"]) >= number and body["sessions"][number - 1]["state"] == "finished":
            return body
        await asyncio.sleep(0.05)
    raise AssertionError(f"session {number} of tournament {tournament} never finished")


def table_points(scores: list[int]) -> list[Fraction]:
    """4, 2, 1, 0 by score, highest first; tied players share the points of their places."""
    points = [4, 2, 1, 0]
    out = []
    for score in scores:
        above = sum(1 for x in scores if x > score)
        tied = sum(1 for x in scores if x == score)
        out.append(Fraction(sum(points[above : above + tied]), tied))
    return out
