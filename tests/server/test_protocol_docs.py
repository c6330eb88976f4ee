"""docs/protocol.md cannot drift: every example in it is checked against the real server.

Every ```json block of the document is read, object by object:

- a client message (a ``type`` the server decodes) must decode with ``server.protocol``;
- a server message, an event (``kind``), an HTTP body or an action-log line is compared
  with what the server really sends: a scripted session against a real server (every
  request, a whole MCR match, a custom hand, the HTTP API), plus, for event kinds too rare
  for one match (two winners on one discard), the events of engine bot matches projected as
  the server projects them. At each place in a message (``update.payload.view.seats[]``...)
  the example's keys must be among the keys the server sent there and include those it
  always sent, and each value must have a type the server sent there (a list indexed by
  player is not an object keyed by strings);
- every message type and event kind the server sent must have an example, and every message
  type it sent is in the message registry (``server.messages.registry``) with every payload
  field it sent (``test_protocol_registry`` holds the document to the registry);
- the table of error codes must be exactly ``server.errors.CODES``, and every code the
  server's and the engine's source raise is registered.
"""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import types
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from test_server_bad_input import (
    AutoPass,
    Wire,
    add_bots,
    content_types,
    get,
    is_update,
    legal_of,
    play_out,
    raw_http,
    url_of,
)

import server.table
from engine.bots import make_bot
from engine.match import Match
from engine.notation import parse_tiles
from engine.rules import RuleSet
from engine.shanten import shanten
from engine.table import Phase
from engine.tiles import counts_of
from server import errors, protocol
from server.app import App
from server.config import Config
from server.messages import registry

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "protocol.md"


# ------------------------------------------------------------ the document ---


@dataclass
class Example:
    value: Any
    section: str  # the ``##`` heading it is under
    endpoint: str | None  # in the HTTP section: the last ``GET /...`` before it
    line: int


def examples(text: str) -> list[Example]:
    """Every JSON value of every ```json block, with where it stands."""
    found: list[Example] = []
    section, endpoint = "", None
    lines = text.splitlines()
    i = 0
    decoder = json.JSONDecoder()
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section, endpoint = line[3:].strip(), None
        for path in re.findall(r"`GET (/[^`]*)`", line):
            endpoint = path
        if line.strip() == "```json":
            start = i + 1
            i += 1
            while lines[i].strip() != "```":
                i += 1
            block = "\n".join(lines[start:i])
            at = 0
            while True:
                while at < len(block) and block[at].isspace():
                    at += 1
                if at >= len(block):
                    break
                try:
                    value, end = decoder.raw_decode(block, at)
                except json.JSONDecodeError as exc:
                    raise AssertionError(f"{DOC.name}:{start}: not JSON: {exc}") from None
                found.append(Example(value, section, endpoint, start + block.count("\n", 0, at)))
                at = end
        i += 1
    return found


# ------------------------------------------------------------------ shapes ---


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    return {str: "str", float: "float", list: "list", dict: "object"}[type(value)]


@dataclass
class Place:
    """What the server sent at one place of a message: the types, and for objects the keys
    sent at least once and those sent every time."""

    types: set[str] = field(default_factory=set)
    keys: set[str] = field(default_factory=set)
    always: set[str] | None = None


class Shapes:
    """The places of every real message, by root (``update``, ``event:draw``...)."""

    def __init__(self) -> None:
        self.places: dict[str, Place] = defaultdict(Place)

    def add(self, root: str, value: Any) -> None:
        place = self.places[root]
        place.types.add(kind_of(value))
        if isinstance(value, dict):
            place.keys |= set(value)
            place.always = set(value) if place.always is None else place.always & set(value)
            for key, item in value.items():
                self.add(self._child(root, key, item), item)
        elif isinstance(value, list):
            for item in value:
                self.add(self._item(root, item), item)

    @staticmethod
    def _child(root: str, key: str, item: Any) -> str:
        return f"{root}.{key}"

    @staticmethod
    def _item(root: str, item: Any) -> str:
        if root.endswith(".events") and isinstance(item, dict) and "kind" in item:
            return f"event:{item['kind']}"  # events are judged by kind, wherever they are
        return f"{root}[]"

    def mismatches(self, root: str, value: Any) -> Iterator[str]:
        """How ``value`` (an example) differs from what the server sent at ``root``."""
        place = self.places.get(root)
        if place is None:
            yield f"{root}: the server never sent anything here"
            return
        sent = place.types | ({"str", "int"} if root.endswith(".reply_to") else set())
        if kind_of(value) not in sent:  # a reply_to is whatever id the client chose
            yield f"{root}: a {kind_of(value)} where the server sends {sorted(place.types)}"
            return
        if isinstance(value, dict):
            unknown = set(value) - place.keys
            missing = (place.always or set()) - set(value)
            if unknown:
                yield f"{root}: the server never sends {sorted(unknown)}"
            if missing:
                yield f"{root}: the server always sends {sorted(missing)}, not in the example"
            for key, item in value.items():
                if key in place.keys:
                    yield from self.mismatches(self._child(root, key, item), item)
        elif isinstance(value, list):
            for item in value:
                if item == "...":
                    continue  # "and so on"
                yield from self.mismatches(self._item(root, item), item)


# --------------------------------------------------------- the real server ---


@dataclass
class Session:
    shapes: Shapes
    types: set[str]  # server message types sent
    kinds: set[str]  # event kinds sent


def frames_of(*wires: Wire) -> list[dict[str, Any]]:
    return [frame for wire in wires for frame in wire.frames]


HTTP_ROOTS = {
    "/healthz": "http:healthz",
    "/api/players/{name}": "http:player",
    "/api/matches/{id}": "http:match",
    "/api/matches/{id}/replay": "http:replay",
    "/api/matches/{id}/review": "http:review",
    "/api/ladders": "http:ladders",
    "/api/ladders/{ladder}": "http:leaderboard",
    "/api/ladders/{ladder}/players/{name}": "http:ladder_player",
    "/api/seasons": "http:seasons",
    "/api/seasons/{season}": "http:season",
    "/api/queue": "http:queue",
    "/api/tournaments": "http:tournaments",
    "/api/tournaments/{tournament}": "http:tournament",
    "/api/tournaments/{tournament}/sessions/{n}": "http:tournament_session",
    "/api/tournaments/{tournament}/export.json": "http:tournament_export",
}


async def scripted_session(app: App) -> Session:
    """Every request of the protocol against ``app``, a whole MCR match, two hands at a
    custom table (dealer repeat, an indicator), every HTTP endpoint."""
    shapes = Shapes()
    url = url_of(app)
    lin, other = [await Wire.open(url) for _ in range(2)]
    watcher = await Wire.open(url, version=2)  # its updates not full have no seats
    wires = [lin, watcher, other]
    try:
        await lin.alive()
        await lin.answered("register", {"username": "lin", "password": "correct horse"}, "session")
        await lin.answered("logout", {}, "logged_out")
        await lin.answered("login", {"username": "lin", "password": "correct horse"}, "session")
        await watcher.answered("guest", {}, "session")
        token = (await other.answered("guest", {}, "session"))["payload"]["token"]
        await lin.refused("join_table", {"table": "t-none"}, "no_such_table")

        private = await other.answered(
            "create_table", {"rules": "mcr", "turn_seconds": 15, "private": True}, "table_created"
        )
        table = private["payload"]["table"]
        code = private["payload"]["invite_code"]
        await other.answered("join_table", {"table": table, "invite_code": code}, "joined")
        await other.answered("leave_table", {"table": table}, "left")

        await watcher.answered("subscribe_lobby", {}, "tables")
        created = await lin.answered(
            "create_table", {"rules": "mcr", "turn_seconds": 15, "private": False}, "table_created"
        )
        table = created["payload"]["table"]
        await watcher.wait(lambda f: f["type"] == "tables" and "reply_to" not in f)  # the feed
        await watcher.answered("subscribe_lobby", {"on": False}, "tables")
        await lin.answered("join_table", {"table": table, "seat": 0}, "joined")
        await lin.answered("list_tables", {}, "tables")
        await watcher.answered("watch", {"table": table}, "watching")
        await add_bots(lin, table, "default")
        first = await lin.wait(is_update(table, lambda p: bool(p["view"].get("legal"))))
        synced = await lin.request("sync", {"table": table})
        assert synced["type"] == "update" and synced["payload"]["full"], synced
        assert synced["reply_to"] is not None
        stale = {"table": table, "seq": first["payload"]["seq"] - 1, "action": {"type": "pass"}}
        await lin.refused("action", stale, "stale")
        await lin.refused("create_table", {}, "already_seated")  # naming her table: `table`
        # The other guest comes back on a new connection with its token.
        again = await Wire.open(url)
        wires.append(again)
        await again.answered("resume", {"token": token}, "session")
        # An account limit: failed logins of one name back off (an error with retry_after).
        flood = await Wire.open(url)
        wires.append(flood)
        await flood.alive()
        for _ in range(app.config.accounts.login_backoff_after):
            await flood.refused(
                "login", {"username": "nobody", "password": "wrong!!!"}, "auth_failed"
            )
        await flood.refused("login", {"username": "nobody", "password": "wrong!!!"}, "rate_limited")

        end = await asyncio.wait_for(play_out(lin, table, AutoPass()), 120)
        assert end is not None
        await watcher.wait(lambda f: f["type"] == "match_end")
        # Once nobody is at it the table is gone; to her it is a match over (naming it).
        await watcher.answered("leave_table", {"table": table}, "left")
        await lin.answered("leave_table", {"table": table}, "left")
        finished = await lin.request("sync", {"table": table})
        for _ in range(100):
            if finished["payload"].get("code") == "table_finished":
                break
            await asyncio.sleep(0.05)
            finished = await lin.request("sync", {"table": table})
        assert finished["payload"]["match"] == end["match"], finished

        # A rated one-hand match: lin and three other accounts.
        rated = [lin]
        for name in ("mei", "jun", "ana"):
            wire = await Wire.open(url)
            wires.append(wire)
            rated.append(wire)
            await wire.answered(
                "register", {"username": name, "password": "correct horse"}, "session"
            )
        created = await lin.answered(
            "create_table", {"rated": True, "hands": 1, "turn_seconds": 15}, "table_created"
        )
        ladder_table = created["payload"]["table"]
        for wire in rated:
            await wire.answered("join_table", {"table": ladder_table}, "joined")
        rated_ends = await asyncio.wait_for(
            asyncio.gather(*(play_out(w, ladder_table, AutoPass()) for w in rated)), 120
        )
        assert all(e is not None and len(e["ratings"]) == 4 for e in rated_ends), rated_ends
        tournament = await scripted_tournament(lin, rated)
        for frame in frames_of(*wires):
            shapes.add(frame["type"], frame)

        # HTTP.
        status, _, body = await raw_http(app.port, get("/api/ladders"))
        season = json.loads(body)["ladders"][0]["season"]["id"]
        for endpoint, root in HTTP_ROOTS.items():
            path = endpoint.format(
                name="lin", id=end["match"], ladder="mcr", season=season, tournament=tournament, n=1
            )
            path += "?provisional=all" if root in ("http:leaderboard", "http:season") else ""
            path += "?player=lin" if root == "http:review" else ""
            status, _, body = await raw_http(app.port, get(path))
            assert status == 200, (path, body)
            shapes.add(root, json.loads(body))
        status, headers, body = await raw_http(app.port, get(f"/api/matches/{end['match']}/log"))
        assert status == 200 and content_types(headers) == ["application/x-ndjson; charset=utf-8"]
        for line in body.decode().splitlines():
            entry = json.loads(line)
            shapes.add(f"log:{entry['type']}", entry)
        status, _, body = await raw_http(app.port, get("/api/matches/999999"))
        assert status == 404
        shapes.add("http:error", json.loads(body))

        # A custom table, played until its second hand is dealt.
        player = await Wire.open(url)
        wires.append(player)
        await player.answered("guest", {}, "session")
        created = await player.answered("create_table", {"rules": "custom"}, "table_created")
        custom = created["payload"]["table"]
        await player.answered("join_table", {"table": custom, "seat": 0}, "joined")
        await add_bots(player, custom, "default")
        reached = await asyncio.wait_for(
            play_out(player, custom, AutoPass(), until=lambda p: p["hand_no"] >= 2), 60
        )
        assert reached is not None
        for frame in player.frames:
            shapes.add(frame["type"], frame)

        # Playing aids: refused at a table without them; a bot's hand analysed when ready
        # (13 tiles: its waits) and on its turn when a discard leaves it ready.
        aided = await Wire.open(url)
        wires.append(aided)
        await aided.answered("guest", {}, "session")
        strict = (await aided.answered("create_table", {"aids": False}, "table_created"))[
            "payload"
        ]["table"]
        await aided.answered("join_table", {"table": strict, "seat": 0}, "joined")
        await aided.refused("analyze", {"table": strict}, "aids_off")
        await aided.answered("leave_table", {"table": strict}, "left")
        await analysed_until_ready(aided)
        for frame in aided.frames:
            shapes.add(frame["type"], frame)

        # The ladder queue: four guests queue casually and are seated together; one more
        # queues and leaves.
        queued = [await Wire.open(url) for _ in range(5)]
        wires.extend(queued)
        for wire in queued:
            await wire.answered("guest", {}, "session")
        await queued[4].answered("queue_join", {"casual": True}, "queue")
        await queued[4].answered("queue_leave", {}, "queue")
        for wire in queued[:4]:
            await wire.answered("queue_join", {"ladder": "mcr", "casual": True}, "queue")
        for wire in queued[:4]:
            await wire.wait(lambda f: f["type"] == "queue" and f["payload"]["state"] == "matched")
        status, _, body = await raw_http(app.port, get("/api/queue"))
        assert status == 200, body
        shapes.add("http:queue", json.loads(body))
        for frame in frames_of(*queued):
            shapes.add(frame["type"], frame)
    finally:
        for wire in wires:
            if not wire.reader.done():
                await wire.close()
    sent = [f for wire in wires for f in wire.frames]
    kinds = {e["kind"] for f in sent if f["type"] == "update" for e in f["payload"]["events"]}
    return Session(shapes, {f["type"] for f in sent}, kinds)


async def scripted_tournament(director: Wire, players: list[Wire]) -> int:
    """A one-session tournament of one-hand matches: ``director`` (a director by the
    server's config) creates and runs it, ``players`` (the director among them) register,
    check in, are seated and play; a penalty and its undo. Returns its id."""
    made = await director.answered(
        "tournament_create",
        {"name": "Club night", "sessions": 1, "hands": 1, "turn_seconds": 15},
        "tournament",
    )
    tid = made["payload"]["id"]
    await director.answered(
        "tournament_configure", {"tournament": tid, "time_cap_minutes": 90}, "tournament"
    )
    await director.answered(
        "tournament_add_players", {"tournament": tid, "players": ["lin"]}, "tournament"
    )
    for wire in players[1:]:
        await wire.answered("tournament_register", {"tournament": tid}, "tournament")
    await players[-1].answered("tournament_withdraw", {"tournament": tid}, "tournament")
    await players[-1].answered("tournament_register", {"tournament": tid}, "tournament")
    await director.answered(
        "tournament_registration", {"tournament": tid, "open": False}, "tournament"
    )
    await players[1].refused("tournament_seat", {"tournament": tid}, "not_director")
    await director.refused("tournament_start_session", {"tournament": tid}, "no_seating")
    for wire in players:
        await wire.answered("tournament_check_in", {"tournament": tid}, "tournament")
    await director.answered(
        "tournament_seat", {"tournament": tid, "method": "random"}, "tournament"
    )
    await director.answered(
        "tournament_swap", {"tournament": tid, "a": "mei", "b": "jun"}, "tournament"
    )
    # The last player's seat goes to a bot (a substitute: not counted in the standings).
    substitute = {"tournament": tid, "player": "ana", "substitute": "bot"}
    await director.answered("tournament_substitute", substitute, "tournament")
    await director.answered("tournament_get", {"tournament": tid}, "tournament")
    await director.answered("tournament_start_session", {"tournament": tid}, "tournament")
    seated = [w for w in players if w is not players[-1]]
    tables = []
    for wire in seated:
        told = await wire.wait(lambda f: f["type"] == "tournament_session")
        tables.append(told["payload"]["table_id"])
    ends = await asyncio.wait_for(
        asyncio.gather(*(play_out(w, t, AutoPass()) for w, t in zip(seated, tables, strict=True))),
        120,
    )
    assert all(e is not None for e in ends), ends
    for _ in range(200):
        got = await director.answered("tournament_get", {"tournament": tid}, "tournament")
        if got["payload"]["state"] == "finished":
            break
        await asyncio.sleep(0.05)
    penalty = await director.answered(
        "tournament_penalty",
        {"tournament": tid, "player": "mei", "kind": "penalty", "amount": -5, "reason": "late"},
        "tournament",
    )
    await director.answered(
        "tournament_undo",
        {"tournament": tid, "entry": penalty["payload"]["entry"], "reason": "appeal upheld"},
        "tournament",
    )
    spare = await director.answered("tournament_create", {"name": "Spare"}, "tournament")
    await director.answered(
        "tournament_close", {"tournament": spare["payload"]["id"]}, "tournament"
    )
    await players[1].wait(lambda f: f["type"] == "tournament_changed")
    return int(tid)


def own_shanten(payload: dict[str, Any]) -> tuple[int, int]:
    """The number of tiles (melds three each) and the shanten of our hand in ``payload``."""
    view = payload["view"]
    me = next(s for s in view["seats"] if s["player"] == view["you"])
    melds = len(me["melds"])
    counts = counts_of(parse_tiles(me["concealed"]))
    return sum(counts) + 3 * melds, shanten(counts, melds)


async def analysed_until_ready(wire: Wire) -> None:
    """Play a new table with a bot until ``analyze`` has answered once with 13 tiles ready
    (``waits``) and once on our turn when a discard leaves the hand ready (``discards``)."""
    created = await wire.answered(
        "create_table", {"rules": "mcr", "turn_seconds": 15}, "table_created"
    )
    table = created["payload"]["table"]
    await wire.answered("join_table", {"table": table, "seat": 0}, "joined")
    await add_bots(wire, table, "default")
    wanted = {13: 0, 14: 0}  # tiles held -> the shanten that gives a listing with waits
    after = -1

    def worth_asking(payload: dict[str, Any]) -> bool:
        if payload["seq"] <= after or not legal_of(payload):
            return False
        size, value = own_shanten(payload)
        return wanted.get(size) == value

    while wanted:
        reached = await asyncio.wait_for(
            play_out(wire, table, make_bot("default", 1), until=worth_asking), 120
        )
        assert reached is not None, "the match ended before the hand was ready"
        after = reached["seq"]
        reply = await wire.request("analyze", {"table": table})
        assert reply["type"] == "analysis", reply
        if "waits" in reply["payload"] and reply["payload"]["waits"]:
            wanted.pop(13, None)
        if any(d["waits"] for d in reply["payload"].get("discards", ())):
            wanted.pop(14, None)
    await wire.answered("leave_table", {"table": table}, "left")


def engine_events(rules: RuleSet, matches: int) -> Iterator[dict[str, Any]]:
    """The events of bot matches as the server sends them (``{"kind": ..., **data}``), for
    each audience: every player and a spectator."""
    for seed in range(matches):
        bots = [make_bot("default", seed * 4 + p) for p in range(4)]
        match = Match(seed, rules)
        while not match.over:
            events = match.start_hand()
            hand = match.hand
            assert hand is not None
            while True:
                for event in events:
                    for viewer in (0, 1, 2, 3, None):
                        if event.visible_to(viewer):
                            yield {"kind": event.kind, **event.data}
                if hand.phase is Phase.OVER:
                    break
                player = hand.awaiting()[0]
                events = match.apply(player, bots[player].choose(hand.view(player)))


# -------------------------------------------------------------------- tests ---


@pytest.fixture(scope="module")
def doc_examples() -> list[Example]:
    return examples(DOC.read_text(encoding="utf-8"))


def is_client_message(example: Example) -> bool:
    value = example.value
    return (
        isinstance(value, dict)
        and value.get("type") in registry.INBOUND
        and "reply_to" not in value
        and example.section != "HTTP on the same port"
    )


def test_every_client_example_decodes(doc_examples: list[Example]) -> None:
    client = [e for e in doc_examples if is_client_message(e)]
    assert {e.value["type"] for e in client} == set(registry.INBOUND)
    for example in client:
        try:
            message = protocol.decode(json.dumps(example.value))
        except protocol.ProtocolError as exc:
            pytest.fail(f"{DOC.name}:{example.line}: {example.value} does not decode: {exc}")
        kind = example.value["type"]
        assert type(message) is registry.INBOUND[kind].cls, (example.line, kind, message)
        if isinstance(message, protocol.TournamentRequest):  # one class for these requests
            assert message.kind == kind


def with_each_string_long(value: Any, long: str) -> list[Any]:
    """``value`` once for each string in it (keys too, at any depth), that string replaced
    by ``long``."""
    if isinstance(value, str):
        return [long]
    out: list[Any] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append({(long if k == key else k): v for k, v in value.items()})
            out += [{**value, key: changed} for changed in with_each_string_long(item, long)]
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out += [
                [*value[:i], changed, *value[i + 1 :]]
                for changed in with_each_string_long(item, long)
            ]
    return out


def test_no_error_quotes_a_long_input_in_full(doc_examples: list[Example]) -> None:
    """Every documented client message with any one of its strings 3,000 characters long:
    if refused, the reason quotes at most the string's start (and says its length)."""
    long = "n" * 3000
    refused = 0
    for example in (e for e in doc_examples if is_client_message(e)):
        for changed in with_each_string_long(example.value, long):
            try:
                protocol.decode(json.dumps(changed))
            except errors.ServerError as exc:
                refused += 1
                assert "n" * (errors.QUOTED + 1) not in exc.reason, (example.line, changed.keys())
                assert len(exc.reason) < 1500, (example.line, exc.reason[:200])
    assert refused > 100  # nearly every one is refused: no field takes 3,000 characters


MATCH_SEED = 20261201  # every match of the session is dealt from it: the session replays


@pytest.mark.asyncio
async def test_every_server_example_is_what_the_server_sends(
    start_server: Any, doc_examples: list[Example], monkeypatch: pytest.MonkeyPatch
) -> None:
    pinned = types.SimpleNamespace(
        randbits=lambda bits: MATCH_SEED,
        token_bytes=secrets.token_bytes,
        token_hex=secrets.token_hex,
        token_urlsafe=secrets.token_urlsafe,
    )
    monkeypatch.setattr(server.table.sources, "secrets", pinned)
    session = await scripted_session(await start_server(tournaments={"directors": "lin"}))
    shapes = session.shapes
    mcr = Config().rule_presets()["mcr"]
    custom = Config().rule_presets()["custom"]
    for rules, matches in ((mcr, 5), (custom, 1)):
        for event in engine_events(rules, matches):
            shapes.add(f"event:{event['kind']}", event)
            session.kinds.add(event["kind"])

    problems: list[str] = []
    documented_types: set[str] = set()
    documented_kinds: set[str] = set()
    for example in doc_examples:
        value = example.value
        where = f"{DOC.name}:{example.line}"
        if is_client_message(example):
            continue
        if example.section == "HTTP on the same port":
            if isinstance(value, dict) and value.get("type") in ("match", "action", "result"):
                root = f"log:{value['type']}"
            elif isinstance(value, dict) and set(value) == {"error"}:
                root = "http:error"
            elif example.endpoint in HTTP_ROOTS:
                root = HTTP_ROOTS[example.endpoint]
            else:
                problems.append(f"{where}: an HTTP example of which endpoint? {value!r:.80}")
                continue
        elif isinstance(value, dict) and "kind" in value:
            root = f"event:{value['kind']}"
            documented_kinds.add(value["kind"])
        elif isinstance(value, dict) and "type" in value and "payload" in value:
            root = value["type"]
            documented_types.add(value["type"])
        else:
            problems.append(f"{where}: an example of what? {value!r:.80}")
            continue
        problems.extend(f"{where}: {p}" for p in shapes.mismatches(root, value))
    for frame_type in sorted(session.types - set(registry.OUTBOUND)):
        problems.append(f"the server sends {frame_type!r} messages: not in the registry")
    for frame_type in sorted(session.types & set(registry.OUTBOUND)):
        sent = shapes.places[f"{frame_type}.payload"].keys
        unknown = sent - set(registry.OUTBOUND[frame_type].fields)
        if unknown:
            problems.append(
                f"the server sends {frame_type!r} with {sorted(unknown)}: not in the registry"
            )
    for frame_type in sorted(session.types - documented_types):
        problems.append(f"the server sends {frame_type!r} messages: no example documents them")
    for kind in sorted(session.kinds - documented_kinds):
        problems.append(f"the server sends {kind!r} events: no example documents them")
    assert not problems, "\n".join(problems)


def test_the_error_table_is_the_registry() -> None:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("\n## Errors", 1)[1].split("\n## ", 1)[0]
    documented: dict[str, str] = {}
    for row in section.splitlines():
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            for code in re.findall(r"`([a-z_]+)`", cells[0]):
                documented[code] = cells[1]
    assert set(documented) == set(errors.CODES), (
        f"only in the docs: {sorted(set(documented) - set(errors.CODES))}; "
        f"only in server.errors.CODES: {sorted(set(errors.CODES) - set(documented))}"
    )
    assert not set(errors.CODES) & set(errors.NOT_SENT)


RAISED = re.compile(
    r"(?<![.\w])(?:ProtocolError|LobbyError|AccountError|ServerError|IllegalAction|"
    r"TournamentError|error)"
    r'\(\s*"([a-z_]+)"'
)
REFUSAL = re.compile(r'return "([a-z_]+)"')


def test_every_code_raised_or_sent_is_registered() -> None:
    raised: dict[str, str] = {}
    for folder in ("server", "engine"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            for code in RAISED.findall(source):
                raised.setdefault(code, path.name)
    table = (ROOT / "engine" / "table.py").read_text(encoding="utf-8")
    refusal = table.split("def _refusal_code", 1)[1].split("\n    def ", 1)[0]
    for code in REFUSAL.findall(refusal):
        raised.setdefault(code, "table.py (_refusal_code)")
    unregistered = {c: f for c, f in raised.items() if c not in errors.CODES | errors.NOT_SENT}
    assert not unregistered, f"codes raised but not in server.errors: {unregistered}"
    assert set(errors.NOT_SENT) <= set(raised), "a NOT_SENT code nothing raises any more"
    # The registry's base refuses what it does not know.
    with pytest.raises(ValueError, match="unregistered"):
        errors.ServerError("no_such_code", "x")
