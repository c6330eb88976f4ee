"""Hidden information over whole matches against the real server (the ``app`` fixture of
conftest: in-process on 127.0.0.1, a SQLite file under ``tmp_path``, real websockets).

Four network clients play a whole 16-hand match with engine bots on the wire views
(``server.client.play`` over ``view_from_dict``), a spectator watches from the start and a
second one comes in mid-hand. Every frame each of them received is then checked:

- against the server's ground truth: the stored action log and seed replayed through
  ``engine.match.Match`` give the table after every ``seq``; each update must be exactly the
  reader's projection of it (``HandState.view`` and ``Event.visible_to``);
- structurally, on the frames alone: no other player's concealed tiles, face-down kong,
  dealt or drawn tile before the hand is over; a spectator sees no concealed tile at all;
  ``seed`` and ``salt`` only in a ``reveal`` of a hand that has ended; and the positive side:
  each player does see its own tiles and its own drawn tile;
- fairness, as a client can check it: each reader holds every hand's commitment before its
  ``reveal`` (from ``commit``, or with the hand for one who came mid-hand), the reveal
  matches it, and the wall rebuilt from the revealed seed gives the dice, the deal and every
  draw seen.

The match seed is pinned (``secrets.randbits`` of ``server.table``) to one whose match, with
four default bots, has a concealed kong, an added kong, claims and a drawn hand.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import hashlib
import json
import secrets
import types
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from fakes import QUICK, FakePeer, pin_tables, table_for, until

import server.table
from engine.actions import Action, Event
from engine.bots import make_bot
from engine.match import CLOSING_KINDS, Match, hand_seeds
from engine.notation import parse_tiles
from engine.simulation import play_match
from engine.tiles import name
from engine.wall import SplitMix64, Wall
from server.app import App
from server.client import Client, Incoming, play
from server.db.store import ActionRow

Frame = dict[str, Any]
HttpGet = Callable[[int, str], Awaitable[tuple[int, str]]]  # the ``http_get`` fixture

BOTS = ("default", "default", "default", "default")
SECRET_KEYS = frozenset({"seed", "salt"})
HIDDEN_KONG = "[????]"


@functools.cache
def covering_seed() -> int:
    """The first of a fixed series of 63-bit match seeds (as the server draws them) whose
    match, simulated locally with ``BOTS``, has a concealed kong, an added kong, claims and a
    drawn hand: what makes the checks below bite. (The network match plays the same: the
    bots are deterministic and see the same views.)"""
    rng = SplitMix64(20261129)
    for _ in range(200):
        seed = rng.next() >> 1
        match = play_match(seed, [make_bot(b, seed=i) for i, b in enumerate(BOTS)])
        kinds = Counter(action.kind.value for _, _, action in match.log)
        if (
            kinds["concealed_kong"]
            and kinds["add_kong"]
            and kinds["pung"] + kinds["chow"]
            and any(r.result.result == "draw" for r in match.records)
        ):
            return seed
    raise AssertionError("none of 200 seeds gives a match with all of that")


@pytest.fixture
def pinned_seed(monkeypatch: pytest.MonkeyPatch) -> int:
    """The next match the server starts has ``covering_seed()`` (salts stay random)."""
    seed = covering_seed()
    fake = types.SimpleNamespace(
        randbits=lambda bits: seed,
        token_bytes=secrets.token_bytes,
        token_hex=secrets.token_hex,
        token_urlsafe=secrets.token_urlsafe,
    )
    monkeypatch.setattr(server.table.sources, "secrets", fake)
    return seed


# ------------------------------------------------------------ ground truth ---


def wire(value: Any) -> Any:
    """As it comes out of JSON (e.g. integer keys become strings)."""
    return json.loads(json.dumps(value))


def visible(events: list[Event], viewer: int | None) -> list[Frame]:
    shown: list[Frame] = wire([{"kind": e.kind, **e.data} for e in events if e.visible_to(viewer)])
    return shown


@dataclass
class Step:
    """The table right after one ``seq``."""

    hand_no: int
    events: list[Event]  # published at this seq
    history: list[Event]  # of the hand, up to and with these
    last_hand: list[Event]  # the events that closed the hand before
    views: dict[int | None, Frame]  # each viewer's wire view
    scores: list[int]


@dataclass
class Truth:
    steps: dict[int, Step] = field(default_factory=dict)
    hand_seeds: list[int] = field(default_factory=list)
    records: list[Frame] = field(default_factory=list)  # the hands, as ``HandRecord.to_dict``


def ground_truth(seed: int, actions: list[ActionRow]) -> Truth:
    """Replay the stored log the way the table publishes it: one ``seq`` per hand start, per
    accepted action that produced events and per close of a claim window (people sit at the
    table: every discard's and added kong's window is held until all have answered)."""
    match = Match(seed, hold_claims=True)
    truth = Truth(hand_seeds=list(match.seeds))
    history: list[Event] = []
    last_hand: list[Event] = []

    def publish(events: list[Event]) -> None:
        assert match.hand is not None
        history.extend(events)
        truth.steps[len(truth.steps) + 1] = Step(
            hand_no=match.hand_index + 1,
            events=list(events),
            history=list(history),
            last_hand=last_hand,
            views={v: wire(match.hand.view(v).to_dict()) for v in (0, 1, 2, 3, None)},
            scores=list(match.scores),
        )

    def close_window() -> None:
        if match.hand is not None and match.hand.claims_answered():
            publish(match.close_claims())

    for _, hand_no, player, action in (a.played for a in actions):
        close_window()
        while match.hand_index + 1 < hand_no:
            last_hand = [e for e in history if e.kind in CLOSING_KINDS]
            history.clear()
            publish(match.start_hand())
        events = match.apply(player, Action.from_dict(action))
        if events:
            publish(events)
    close_window()
    assert match.over
    truth.records = [r.to_dict() for r in match.records]
    return truth


# -------------------------------------------------------------- the checks ---


def secret_paths(value: Any, path: str = "") -> list[str]:
    """Where ``seed`` or ``salt`` keys occur in ``value``."""
    found = []
    if isinstance(value, dict):
        for key, item in value.items():
            if key in SECRET_KEYS:
                found.append(f"{path}.{key}")
            found += secret_paths(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += secret_paths(item, f"{path}[{i}]")
    return found


def brief(view: Frame) -> Frame:
    """``view`` as protocol version 2 sends it in an update that is not full."""
    out = {k: v for k, v in view.items() if k != "seats"}
    out["players"] = [s["player"] for s in view["seats"]]
    return out


def is_concealed_kong(meld: str) -> bool:
    """``"[5555p]"``: four of a kind, no offer (an exposed kong is ``"[5555p,2]"``)."""
    return meld != HIDDEN_KONG and "," not in meld


@dataclass
class Seen:
    """What one reader's frames went through, for the coverage assertions."""

    updates: int = 0
    full: int = 0
    counts: Counter[str] = field(default_factory=Counter)


def check_update(payload: Frame, me: int | None, truth: Truth, seen: Seen) -> None:
    """One update: exactly the reader's projection of the table, and structurally hiding
    what the reader may not know."""
    seq = payload["seq"]
    step = truth.steps[seq]
    full = bool(payload.get("full"))
    where = f"reader {me}, seq {seq}"
    # Exactly the projection of the ground truth (protocol version 2, not full: the view
    # without its seats, and the players in position order).
    assert payload["hand_no"] == step.hand_no, where
    assert payload["view"] == (
        step.views[me] if "seats" in payload["view"] else brief(step.views[me])
    ), where
    assert payload["events"] == visible(step.history if full else step.events, me), where
    assert payload["scores"] == step.scores, where
    assert ("deadline_ms" in payload) <= (me is not None), where
    # A full update in play after the first hand says again how the hand before ended.
    if full and step.last_hand and step.views[me]["phase"] != "over":
        last = {"hand_no": step.hand_no - 1, "events": visible(step.last_hand, me)}
        shown = dict(payload["last_hand"])
        assert shown.pop("reveal")["hand_no"] == step.hand_no - 1, where  # (checked below)
        assert shown == last, where
        assert [e["kind"] for e in last["events"]][-1] == "hand_end", where
        seen.counts["last hand again"] += 1
    else:
        assert "last_hand" not in payload, where

    # And, on the frame alone, nothing hidden.
    view, events = payload["view"], payload["events"]
    over = view["phase"] == "over"
    assert view.get("you") == me, where
    assert ("legal" in view) == (me is not None), where
    if "drawn" in view:
        assert me is not None and view["current"] == me and view["phase"] == "turn", where
        seen.counts["own drawn tile"] += 1
    for seat in view.get("seats", []):
        melds = seat["melds"]
        if seat["player"] == me or over:
            assert "concealed" in seat, where
            assert len(parse_tiles(seat["concealed"])) == seat["concealed_count"], where
            assert HIDDEN_KONG not in melds, where
            if seat["player"] == me and not over:
                seen.counts["own concealed tiles"] += 1
                seen.counts["own concealed kong shown"] += sum(map(is_concealed_kong, melds))
        else:
            assert "concealed" not in seat, (where, seat)
            assert not any(is_concealed_kong(m) for m in melds), (where, seat)
            seen.counts["face-down kong hidden"] += melds.count(HIDDEN_KONG)
    for event in events:
        kind = event["kind"]
        seen.counts[f"event {kind}"] += 1
        if kind in ("hand_end", "win", "exhausted"):
            assert over, (where, event)
        if kind not in ("deal", "draw", "concealed_kong"):
            continue
        field_name = "tiles" if kind == "deal" else "tile"
        if event["player"] == me:
            assert field_name in event, (where, event)  # one's own tiles, always
            seen.counts[f"own {kind} tile"] += 1
        else:
            assert "tile" not in event and "tiles" not in event, (where, event)
            if kind == "deal":
                assert isinstance(event["count"], int), (where, event)
    # The tile just drawn is in the view, on one's own turn.
    draws = [e for e in events if e["kind"] == "draw"]
    if (
        draws
        and me is not None
        and draws[-1]["player"] == me
        and view["phase"] == "turn"
        and view["current"] == me
        and not draws[-1]["tile"].startswith("f")  # a flower is replaced at once
    ):
        assert view["drawn"] == draws[-1]["tile"], where


def verify_wall(
    me: int | None, seed: int, first_view: Frame, events: list[Frame], counts: Counter[str]
) -> None:
    """Rebuild the hand's wall from its revealed seed as a client would, and check the dice,
    the deal, every draw the reader saw (its own tiles; the source of the others') and every
    flower shown (a tile the wall gave that player)."""
    # East, South, West, North
    order = (
        [s["player"] for s in first_view["seats"]]
        if "seats" in first_view
        else first_view["players"]
    )
    dealer = first_view["dealer"]
    wall = Wall.from_seed(seed, order.index(dealer))
    start = next(e for e in events if e["kind"] == "hand_start")
    assert start["dice"] == [list(wall.dice.first), list(wall.dice.second)]
    turn = [order[(order.index(dealer) + k) % 4] for k in range(4)]
    got: dict[int, list[int]] = {p: [] for p in order}
    for _ in range(3):
        for p in turn:
            got[p] += [wall.draw() for _ in range(4)]
    for p in turn:
        got[p].append(wall.draw())
    got[dealer].append(wall.draw())
    for event in events:
        kind, player = event["kind"], event.get("player", -1)
        if kind == "deal":
            if player == me:
                assert event["tiles"] == [name(t) for t in sorted(got[player])]
                counts["own deal verified"] += 1
            else:
                assert event["count"] == len(got[player])
        elif kind == "draw":
            tile = wall.draw() if event["source"] == "wall" else wall.draw_tail()
            got[player].append(tile)
            if player == me:
                assert event["tile"] == name(tile), event
                counts["own draw verified"] += 1
        elif kind == "flower":
            names = [name(t) for t in got[player]]
            assert event["flower"] in names, event
            del got[player][names.index(event["flower"])]
            counts["flower verified"] += 1
        elif kind == "exhausted":
            assert wall.remaining == 0


def check_frames(frames: list[Frame], me: int | None, truth: Truth, *, from_start: bool) -> Seen:
    """Every frame one reader got, in order."""
    seen = Seen()
    commits: dict[int, str] = {}
    revealed: set[int] = set()
    hand_no = 0  # the hand of the last update
    ended = False  # that hand is over (its hand_end came)
    first_view: dict[int, Frame] = {}
    hand_events: dict[int, list[Frame]] = {}
    for frame in frames:
        kind, payload = frame["type"], frame.get("payload", {})
        secrets_in = secret_paths(frame)
        if kind == "reveal":
            assert secrets_in == [".payload.seed", ".payload.salt"], frame
        elif secrets_in:  # only the reveal of the hand before, with a full update after it
            assert secrets_in == [
                ".payload.last_hand.reveal.seed",
                ".payload.last_hand.reveal.salt",
            ]
            last = payload["last_hand"]["reveal"]
            assert payload["full"] and last["hand_no"] == payload["hand_no"] - 1, (me, frame)
            assert last["seed"] == truth.hand_seeds[last["hand_no"] - 1], (me, frame)
            digest = hashlib.sha256(bytes.fromhex(last["salt"]) + last["seed"].to_bytes(8, "big"))
            assert commits.get(last["hand_no"], last["commitment"]) == digest.hexdigest()
        if kind == "commit":
            h = payload["hand_no"]
            assert h == hand_no + 1 and (hand_no == 0 or ended), (me, frame)
            commits[h] = payload["commitment"]
        elif kind == "reveal":
            h = payload["hand_no"]
            # Only for a hand that has ended, and only once it ended for this reader.
            assert h == hand_no and ended and h not in revealed, (me, frame)
            revealed.add(h)
            seed, salt = payload["seed"], bytes.fromhex(payload["salt"])
            assert len(salt) == 32
            digest = hashlib.sha256(salt + seed.to_bytes(8, "big")).hexdigest()
            assert digest == payload["commitment"], (me, frame)
            # Every reader holds the hand's commitment before its reveal: from ``commit``,
            # or (one who came in mid-hand) from the first update it got of the hand.
            assert commits.get(h) == digest, (me, frame)
            assert seed == truth.hand_seeds[h - 1]
            verify_wall(me, seed, first_view[h], hand_events[h], seen.counts)
        elif kind == "update":
            assert payload["view"] is not None, (me, frame)  # no empty update, ever
            h = payload["hand_no"]
            if "commitment" in payload:
                assert commits.setdefault(h, payload["commitment"]) == payload["commitment"]
            if h != hand_no:
                if from_start or hand_no:
                    assert h == hand_no + 1, (me, frame)
                assert h in commits, (me, frame)  # committed first, or with the hand
                hand_no, ended = h, False
                first_view[h] = payload["view"]
                assert not payload["events"] or payload["events"][0]["kind"] == "match"
            check_update(payload, me, truth, seen)
            seen.updates += 1
            if payload.get("full"):
                seen.full += 1
                hand_events[h] = list(payload["events"])
            else:
                hand_events.setdefault(h, []).extend(payload["events"])
            if any(e["kind"] == "hand_end" for e in payload["events"]):
                ended = True
    assert ended and hand_no == 16
    assert revealed == set(range(min(first_view), 17)), (me, revealed)
    assert not from_start or min(first_view) == 1
    return seen


# -------------------------------------------------------------- the match ---


def first_update(frames: list[Frame]) -> Frame:
    return next(f["payload"] for f in frames if f["type"] == "update")


@pytest.mark.asyncio
@pytest.mark.parametrize("version", [1, 2])
async def test_no_frame_of_a_whole_match_tells_its_reader_what_it_may_not_know(
    app: App, http_get: HttpGet, pinned_seed: int, version: int
) -> None:
    """Protocol version 1 (a full view in every update) and 2 (seats followed by the client
    from the events): each frame is the reader's projection of the ground truth, hides
    what it must, and (version 2) the client's followed view is the full view, every time."""
    seed = pinned_seed
    url = f"ws://127.0.0.1:{app.port}/ws"
    followed: dict[int, list[tuple[int, Frame | None]]] = {}  # reader -> (seq, view)

    async def reader(key: int) -> Client:
        def keep(message: Incoming) -> None:
            if message.type == "update" and message.table is not None:
                state = client.tables[message.table]
                followed.setdefault(key, []).append((message.payload["seq"], state.view))

        client = await Client.connect(
            url, record=True, rate=None, versions=(version,), on_message=keep
        )
        assert client.version == version
        return client

    clients = [await reader(p) for p in range(4)]
    watcher = await reader(4)
    late = await reader(5)
    try:
        for client in (*clients, watcher, late):
            await client.guest()
        # A long turn: the server never plays for a network bot (the match goes as simulated).
        table = (await clients[0].create_table(turn_seconds=30)).table
        await watcher.watch(table)  # from the start
        for seat, client in enumerate(clients):
            assert await client.join_table(table, seat=seat) == seat
        playing = asyncio.gather(
            *(
                play(c, table, make_bot(b, seed=i))
                for i, (c, b) in enumerate(zip(clients, BOTS, strict=True))
            )
        )

        # Mid-match: the HTTP API keeps the seed and the log to itself.
        async with asyncio.timeout(30):
            while clients[0].tables[table].hand_no < 3:
                await asyncio.sleep(0.005)
        assert app.lobby is not None
        match_id = app.lobby.get(table).match_id
        assert match_id is not None
        status, body = await http_get(app.port, f"/api/matches/{match_id}")
        assert status == 200, body
        detail = json.loads(body)
        assert not detail["finished"] and not secret_paths(detail), detail
        assert str(seed) not in body
        assert all(h["hand_no"] < clients[0].tables[table].hand_no for h in detail["hands"])
        status, body = await http_get(app.port, f"/api/matches/{match_id}/log")
        assert status == 404, body
        assert str(seed) not in body
        # A second spectator, mid-hand: a full update, then the rest.
        await late.watch(table)

        ends = await asyncio.wait_for(playing, 50)
        end = ends[0]
        assert end is not None and all(e == end for e in ends) and end["match"] == match_id
        for spectator in (watcher, late):
            if spectator.tables[table].match_end is None:
                await spectator.wait_for(lambda m: m.type == "match_end", timeout=10)
    finally:
        for client in (*clients, watcher, late):
            await client.close()

    # The server's ground truth: the stored seed and action log, replayed.
    assert app.store is not None
    row = await app.store.get_match(match_id)
    assert row is not None and row.seed == seed and row.ended_at is not None
    truth = ground_truth(row.seed, await app.store.match_actions(match_id))
    # The match went as simulated (the order of answers to a claim may differ, not the play).
    simulated = play_match(seed, [make_bot(b, seed=i) for i, b in enumerate(BOTS)])
    assert truth.records == [r.to_dict() for r in simulated.records], (
        "the network match went otherwise than simulated (did the server play for a bot?)"
    )
    assert truth.hand_seeds == hand_seeds(seed, 16)
    assert len(truth.steps) == max(
        f["payload"]["seq"] for f in clients[0].frames if f["type"] == "update"
    )

    total: Counter[str] = Counter()
    for player, client in enumerate(clients):
        # The very first update is hand 1's deal, own tiles included.
        first = first_update(client.frames)
        assert first["hand_no"] == 1 and first["seq"] == 1
        own = next(e for e in first["events"] if e["kind"] == "deal" and e["player"] == player)
        assert len(own["tiles"]) in (13, 14)
        seen = check_frames(client.frames, player, truth, from_start=True)
        assert seen.updates == len(truth.steps) and seen.full == 0
        # (Version 2: no update but the full ones has seats, so none shows concealed tiles.)
        parts = ("own drawn tile", "own deal tile", "own draw tile")
        for part in (*parts, "own concealed tiles") if version == 1 else parts:
            assert seen.counts[part], (player, part, seen.counts)
        assert seen.counts["own deal verified"] == 16 and seen.counts["own draw verified"]
        total += seen.counts
    # Someone saw their own face-down kong as the others saw "[????]" (version 2: its tile
    # in its own event only).
    if version == 1:
        assert total["own concealed kong shown"] and total["face-down kong hidden"]
    assert total["own concealed_kong tile"]
    assert total["event add_kong"] and total["event exhausted"]
    assert total["flower verified"] and total["event claim"]

    first = first_update(watcher.frames)
    assert first["hand_no"] == 1 and first["seq"] == 1 and "you" not in first["view"]
    seen = check_frames(watcher.frames, None, truth, from_start=True)
    assert seen.updates == len(truth.steps) and seen.full == 0
    assert seen.counts["face-down kong hidden"] or version == 2
    assert seen.counts["flower verified"]
    assert not seen.counts["own drawn tile"] and not seen.counts["own concealed tiles"]
    seen = check_frames(late.frames, None, truth, from_start=False)
    assert seen.full == 1 and first_update(late.frames)["full"]
    assert first_update(late.frames)["hand_no"] >= 3
    assert seen.counts["last hand again"] == (first_update(late.frames)["view"]["phase"] != "over")

    # What each client made of its updates: the whole view, every time.
    for key, me in enumerate((0, 1, 2, 3, None, None)):
        assert followed[key], key
        for seq, view in followed[key]:
            assert view == truth.steps[seq].views[me], (key, seq)

    # Now that the match is over, the seed and the log are published.
    status, body = await http_get(app.port, f"/api/matches/{match_id}")
    assert status == 200 and json.loads(body)["seed"] == seed
    status, body = await http_get(app.port, f"/api/matches/{match_id}/log")
    assert status == 200 and json.loads(body.splitlines()[0])["seed"] == seed


# ----------------------------------------------------------- logging out ---


def private_parts(frame: Frame) -> list[str]:
    """What in an update only a seated player may see: its view (``you``), concealed tiles
    in play, its drawn tile, its dealt or drawn tiles."""
    if frame["type"] != "update":
        return []
    payload = frame["payload"]
    view = payload.get("view") or {}
    parts = []
    if view.get("you") is not None:
        parts.append(f"you={view['you']}")
    if view.get("phase") != "over":
        parts += [f"concealed of {s['player']}" for s in view.get("seats", []) if "concealed" in s]
    if "drawn" in view:
        parts.append("drawn")
    for event in payload.get("events", []):
        if event["kind"] in ("deal", "draw", "concealed_kong") and (
            "tiles" in event or "tile" in event
        ):
            parts.append(f"{event['kind']} tile of {event['player']}")
    return parts


@pytest.mark.asyncio
async def test_a_connection_that_logs_out_stops_getting_the_seats_private_view(app: App) -> None:
    url = f"ws://127.0.0.1:{app.port}/ws"
    client = await Client.connect(url, record=True, rate=None)
    try:
        await client.guest()
        # The player never acts: each of its turns lasts a second, the bots play at once.
        table = (await client.create_table(turn_seconds=1)).table
        await client.join_table(table, seat=0)
        await client.add_bots(table, "fast")
        await client.wait_for(lambda m: m.type == "update", timeout=10)
        assert app.lobby is not None
        live = app.lobby.get(table)
        await client.logout()
        mark, seq = len(client.frames), live.seq
        await asyncio.sleep(1.5)
        await client.guest()  # someone else, on the same connection
        await asyncio.sleep(1.5)
        assert live.seq > seq  # the table played on meanwhile
        updates = [f for f in client.frames[mark:] if f["type"] == "update"]
        leaks = [(f["payload"]["seq"], private_parts(f)) for f in updates]
        assert not [leak for leak in leaks if leak[1]], leaks
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_visitor_without_a_session_watches_with_the_spectator_view(app: App) -> None:
    url = f"ws://127.0.0.1:{app.port}/ws"
    host = await Client.connect(url, record=True, rate=None)
    visitor = await Client.connect(url, record=True, rate=None)
    try:
        await host.guest()
        table = (await host.create_table(turn_seconds=1)).table
        await host.join_table(table, seat=0)
        await host.add_bots(table, "fast")
        await host.wait_for(lambda m: m.type == "update", timeout=10)
        await visitor.watch(table)  # no register, login, guest or resume
        first = await visitor.wait_for(lambda m: m.type == "update", timeout=10)
        assert first.payload["view"].get("you") is None, first.payload  # no seat of its own
        await asyncio.sleep(1.5)  # a few turns go by
        updates = [f for f in visitor.frames if f["type"] == "update"]
        leaks = [(f["payload"]["seq"], private_parts(f)) for f in updates]
        assert len(updates) > 1 and not [leak for leak in leaks if leak[1]], leaks
    finally:
        await host.close()
        await visitor.close()


@pytest.mark.asyncio
async def test_the_first_update_of_every_player_is_the_deal() -> None:
    """(On the table itself, with fake connections: what it sends is the table's doing.)"""
    table = table_for(turn_seconds=30)
    table.start()
    peers = [FakePeer(f"player{p}") for p in range(4)]
    try:
        for seat, peer in enumerate(peers):
            await table.queue.put(server.table.JoinInput(peer, None, seat, None))
        await until(lambda: all(p.updates() for p in peers), "every player's first update")
        firsts = [p.updates()[0] for p in peers]
        assert [(u["seq"], u["hand_no"], u["view"] is not None) for u in firsts] == [
            (1, 1, True)
        ] * 4
    finally:
        await table.stop()


# -------------------------------------------------------- the claim window ---
# Two tables that differ only in player 2's concealed tiles: on one player 2 may pung the
# dealer's 5p, on the other nobody may claim it. Players 1 and 3 and a spectator must get
# the same messages from both, byte for byte, and the table must wait for the window
# whether or not anyone may claim. The players are fake connections on the table task (the
# messages are the raw text the server sends); the clock is the test's.

WINDOW_MS = 5000
DEALER_5P = "5p48m48p48sCFPESWN"
QUIET = {1: "37m37p37sCFPESWN", 3: "48m48p48sCFPESWN"}
CAN_PUNG = {0: DEALER_5P, **QUIET, 2: "55p26m26sCFPESWN"}
NOBODY = {0: DEALER_5P, **QUIET, 2: "26m26p26sCFPESWN"}


async def play_the_window(
    monkeypatch: pytest.MonkeyPatch,
    hands: dict[int, str],
    *,
    timeout: bool = False,
) -> dict[str, list[str]]:
    """Deal ``hands``; the dealer discards 5p, player 2 passes if it may answer (with
    ``timeout``: its 1 s turn runs out instead), the window runs out and player 1 draws.
    Returns every text each connection got, by name. (The table is driven directly, with
    fake peers and the in-memory store: what the window hides is the table's doing.)"""
    import tablekit  # noqa: PLC0415 (tests/ is on the path; only this section needs it)

    clock = pin_tables(monkeypatch, tablekit.stacked_wall(hands, draws="9p 9m"))
    timers = dataclasses.replace(QUICK, turn_seconds=60, claim_window_ms=WINDOW_MS)
    table = table_for(timers=timers, turn_seconds=1 if timeout else None)
    table.start()
    assert table.claim_window_ms == WINDOW_MS
    seats = [FakePeer(f"player{p}") for p in range(4)]
    spectator = FakePeer(None)
    await table.queue.put(server.table.WatchInput(spectator, None, None))
    for p, peer in enumerate(seats):
        await table.queue.put(server.table.JoinInput(peer, None, p, None))
    await until(lambda: table.match is not None and table.seq == 1, "the deal")
    assert table.match is not None and table.match.hold_claims

    stranger = FakePeer("stranger")

    async def poke() -> None:
        """Make the table look at the clock, and wait until it has: a stranger's sync is
        refused (to the stranger alone) and the table drives on; the second refusal comes
        once it is done with the first."""
        for told in (len(stranger.texts), len(stranger.texts) + 1):
            await table.queue.put(server.table.SyncInput(stranger, None))
            await until(lambda n=told: len(stranger.texts) > n, "the stranger's refusal")

    discard = server.table.PlayInput(
        seats[0], None, table.seq, Action.from_dict({"type": "discard", "tile": "5p"})
    )
    await table.queue.put(discard)
    await until(lambda: table.seq == 2, "the discard")
    hand = table.match.hand
    assert hand is not None
    may_answer = bool(hand.legal_actions(2))
    elapsed = 0.0
    if timeout:  # the server passes for player 2 when its turn is up, not sooner
        clock.now += 1.5
        elapsed += 1.5
        await poke()
    elif may_answer:
        await table.queue.put(
            server.table.PlayInput(seats[2], None, 2, Action.from_dict({"type": "pass"}))
        )
    await until(hand.claims_answered, "every answer in")
    # A second later everyone but player 2 asks for a full update.
    clock.now += 1.0
    elapsed += 1.0
    readers = (seats[0], seats[1], seats[3], spectator)
    asked = [len(peer.texts) for peer in readers]
    for peer in readers:
        await table.queue.put(server.table.SyncInput(peer, None))
    await until(
        lambda: all(len(p.texts) > n for p, n in zip(readers, asked, strict=True)), "the syncs"
    )
    # Nothing goes on before the window has passed: not the draw, not even a seq.
    heard = {peer.username: len(peer.texts) for peer in (*seats, spectator)}
    clock.now += WINDOW_MS / 1000 - elapsed - 0.01
    await poke()
    assert table.seq == 2 and hand.phase.value == "claim"
    assert {peer.username: len(peer.texts) for peer in (*seats, spectator)} == heard
    clock.now += 0.01
    await poke()
    await until(lambda: table.seq == 3, "the close of the window")
    await until(lambda: len(seats[1].updates()) == 4, "player 1's draw")
    assert hand.current == 1 and hand.drawn is not None
    got = {str(peer.username): peer.texts for peer in (*seats, spectator)}
    got["answered"] = [str(may_answer)]
    await table.stop()
    return got


@pytest.mark.asyncio
@pytest.mark.parametrize("timeout", [False, True], ids=["pass", "timeout"])
async def test_the_claim_window_tells_a_non_claimant_and_a_spectator_nothing(
    monkeypatch: pytest.MonkeyPatch, timeout: bool
) -> None:
    claim = await play_the_window(monkeypatch, CAN_PUNG, timeout=timeout)
    nobody = await play_the_window(monkeypatch, NOBODY, timeout=timeout)
    assert claim["answered"] == ["True"] and nobody["answered"] == ["False"]  # the test bites
    # Player 2 was asked on one table and not on the other ...
    legal_2 = [u["view"]["legal"] for u in FakePeer(None, claim["player2"]).updates()]
    assert {"type": "pung"} in legal_2[1]
    assert [u["view"]["legal"] for u in FakePeer(None, nobody["player2"]).updates()][1] == []
    # ... and the others cannot tell: the same texts, in the same updates.
    for reader in ("player0", "player1", "player3", "None"):
        assert claim[reader] == nobody[reader], reader
    updates = FakePeer(None, claim["None"]).updates()
    kinds = [[e["kind"] for e in u["events"]] for u in updates]
    assert kinds[1] == ["discard"] and kinds[3] == ["draw"]  # the window split the same way
    assert updates[2]["full"] and kinds[2] == kinds[0] + kinds[1]  # the sync
    assert updates[1]["view"]["phase"] == "claim" and "claim" in updates[1]["view"]
    assert all("deadline_ms" not in u for u in FakePeer(None, claim["player3"]).updates())
