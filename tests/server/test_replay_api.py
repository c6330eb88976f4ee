"""``GET /api/matches/{id}/replay?hand=N`` against the real server (the ``app`` fixture): a
person's seat (a raw ``Wire`` client playing with an engine bot) and three server bots play a
whole match; then every hand's replay is read over HTTP and checked against what the seated
player saw live, update by update, against the stored hands and the stored action log; and
the refusals (a match in play, bad ids and hand numbers) are clean JSON errors. The same
match's ``reveal`` messages check out as a browser checks them (``seed_hex``).

A replay shows everything (every concealed tile, concealed kongs): what the player saw is the
replay with the others' tiles taken out (``as_seen_by``), exactly, at the same ``seq`` offset.
"""

from __future__ import annotations

import asyncio
import gzip
import hashlib
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from test_server_bad_input import (
    Frame,
    Wire,
    add_bots,
    assert_json_error,
    get,
    guest,
    play_out,
    raw_http,
    url_of,
)

from engine.actions import Action, Event
from engine.bots import make_bot
from engine.match import Match
from engine.notation import parse_tiles
from engine.simulation import play_match
from engine.tiles import name
from engine.wire import HIDDEN_KONG
from server.app import App
from server.config import Config
from server.db.store import ActionRow, MatchRow
from server.replay import accepts_gzip, hand_frames

LIVE_ONLY = {"table", "deadline_ms", "full", "commitment"}  # keys of a live update a frame has not
PRIVATE_EVENTS = {"deal", "draw", "concealed_kong"}  # in full to their player only


def is_concealed_kong(meld: str) -> bool:
    return "," not in meld  # every other meld says who offered its tile: "[555p,2]"


def as_seen_by(view: Frame, me: int) -> Frame:
    """An open replay view as player ``me`` saw it live: the others' concealed tiles and
    concealed kongs hidden while the hand is played, the drawn tile only on its own turn."""
    seen = {k: v for k, v in view.items() if k != "drawn"}
    if "drawn" in view and view["current"] == me:
        seen["drawn"] = view["drawn"]
    if view["phase"] == "over":
        return seen
    seen["seats"] = [seat if seat["player"] == me else hidden(seat) for seat in view["seats"]]
    return seen


def hidden(seat: Frame) -> Frame:
    """Another player's seat as a player sees it: no concealed tiles, its concealed kongs
    face down (``"[????]"``, after the melds it shows)."""
    shown = [m for m in seat["melds"] if not is_concealed_kong(m)]
    out = {k: v for k, v in seat.items() if k != "concealed"}
    out["melds"] = shown + [HIDDEN_KONG] * (len(seat["melds"]) - len(shown))
    return out


def event_seen_by(event: Frame, me: int) -> Frame:
    """A replay event (in full) as player ``me`` got it."""
    if event["kind"] not in PRIVATE_EVENTS or event["player"] == me:
        return event
    if event["kind"] == "deal":
        return {"kind": "deal", "player": event["player"], "count": len(event["tiles"])}
    return {k: v for k, v in event.items() if k != "tile"}


def check_open(view: Frame) -> None:
    """Four seats, each with its concealed tiles (as many as it holds), no concealed kong
    hidden, nobody's ``you`` or ``legal``."""
    assert "you" not in view and "legal" not in view, view
    assert len(view["seats"]) == 4
    for seat in view["seats"]:
        assert len(parse_tiles(seat["concealed"])) == seat["concealed_count"], seat
        assert HIDDEN_KONG not in seat["melds"], seat
    if "drawn" in view:
        assert view["phase"] == "turn", view
        current = next(s for s in view["seats"] if s["player"] == view["current"])
        assert view["drawn"] in {name(t) for t in parse_tiles(current["concealed"])}, view


async def http_json(app: App, path: str, *, gzip_ok: bool = False) -> tuple[int, Any]:
    accept = b"Accept-Encoding: gzip, deflate\r\n" if gzip_ok else b""
    status, headers, body = await raw_http(
        app.port, get(path).replace(b"Connection: close\r\n", b"Connection: close\r\n" + accept)
    )
    encodings = [v for k, v in headers if k == "content-encoding"]
    if gzip_ok and status == 200:
        assert encodings == ["gzip"], headers
        length = int(next(v for k, v in headers if k == "content-length"))
        assert length == len(body)
        body = gzip.decompress(body)
    else:
        assert encodings == [], headers
    if status != 200:
        assert_json_error(status, headers, body)
    return status, json.loads(body)


def live_updates(wire: Wire, table: str, hand_no: int) -> list[Frame]:
    """The updates of hand ``hand_no`` the seated player got as the table went on (not the
    full resends that follow a ``stale``), in order."""
    return [
        f["payload"]
        for f in wire.frames
        if f["type"] == "update"
        and f["payload"]["table"] == table
        and f["payload"]["hand_no"] == hand_no
        and not f["payload"].get("full")
    ]


@pytest.mark.asyncio
async def test_every_hand_replays_as_the_seated_player_saw_it(app: App) -> None:
    wire = await Wire.open(url_of(app))
    try:
        await guest(wire)
        created = await wire.answered("create_table", {"turn_seconds": 20}, "table_created")
        table = created["payload"]["table"]
        await wire.answered("join_table", {"table": table, "seat": 0}, "joined")
        await add_bots(wire, table, "default")  # default bots claim: melds and kongs
        await wire.wait(lambda f: f["type"] == "update")
        (playing,) = await app.store.unfinished_matches()
        # While the match is played, its replay is secret like its log.
        status, body = await http_json(app, f"/api/matches/{playing.id}/replay")
        assert status == 404 and "no finished match" in body["error"], body
        end = await asyncio.wait_for(play_out(wire, table, make_bot("default", seed=0)), 120)
        assert end is not None, f"closed ({wire.close_code}) before the match ended"
    finally:
        await wire.close()
    match_id = end["match"]
    assert match_id == playing.id
    _, detail = await http_json(app, f"/api/matches/{match_id}")
    records = detail["hands"]
    _, _, log_body = await raw_http(app.port, get(f"/api/matches/{match_id}/log"))
    lines = [json.loads(line) for line in log_body.decode().splitlines()]
    logged = [line for line in lines if line["type"] == "action"]

    sizes = []
    kinds: set[str] = set()
    for hand_no in range(1, len(records) + 1):
        query = f"/api/matches/{match_id}/replay" + ("" if hand_no == 1 else f"?hand={hand_no}")
        status, replay = await http_json(app, query, gzip_ok=hand_no % 2 == 0)
        assert status == 200, replay
        sizes.append(len(json.dumps(replay)))
        assert replay["match"] == match_id and replay["hand_no"] == hand_no
        assert replay["hands"] == len(records) == 16
        assert replay["seats"] == detail["seats"] and replay["rules"] == "mcr"
        assert replay["rule_options"] == detail["rule_options"]
        frames = replay["frames"]
        assert [f["seq"] for f in frames] == list(range(len(frames)))
        for f in frames:
            assert f["hand_no"] == hand_no and f["hands_total"] == 16
            check_open(f["view"])
            kinds |= {e["kind"] for e in f["events"]}
        assert frames[0]["actions"] == [] and frames[0]["events"][0]["kind"] == "match"

        # Every logged action of the hand, once, in order.
        taken = [a for f in frames for a in f["actions"]]
        assert taken == [
            {"player": a["player"], "action": a["action"]} for a in logged if a["hand"] == hand_no
        ]

        # The end: the revealed hands, the stored record.
        last, record = frames[-1], records[hand_no - 1]
        assert last["view"]["phase"] == "over"
        assert last["events"][-1]["kind"] == "hand_end"
        revealed = last["events"][-1]["hands"]
        for seat in last["view"]["seats"]:
            assert revealed[seat["player"]] == {
                "concealed": seat["concealed"],
                "melds": seat["melds"],
            }
        assert last["scores"] == record["scores"]
        wins = [e for f in frames for e in f["events"] if e["kind"] == "win"]
        if record["result"] == "win":
            assert [(w["winner"], w["deltas"]) for w in wins] == [
                (record["winner"], record["deltas"])
            ]
        else:
            assert not wins and any(e["kind"] == "exhausted" for e in last["events"])

        # What the seated player saw, update by update.
        live = live_updates(wire, table, hand_no)
        assert len(live) == len(frames), (hand_no, len(live), len(frames))
        first = live[0]["seq"]
        for update, f in zip(live, frames, strict=True):
            assert update["seq"] == first + f["seq"]
            assert set(update) - LIVE_ONLY == set(f) - {"actions"}
            view = {k: v for k, v in update["view"].items() if k not in ("you", "legal")}
            assert view == as_seen_by(f["view"], 0), (hand_no, f["seq"])
            assert update["events"] == [event_seen_by(e, 0) for e in f["events"]]
            assert update["scores"] == f["scores"]
    assert {"claim", "draw", "discard", "win", "hand_end"} <= kinds

    # Each hand's reveal: seed_hex is the seed's 8 bytes as hashed into the commitment (a
    # browser cannot use ``seed``: JSON numbers above 2**53 lose digits in JavaScript).
    commits = {
        f["payload"]["hand_no"]: f["payload"]["commitment"]
        for f in wire.frames
        if f["type"] == "commit"
    }
    reveals = [f["payload"] for f in wire.frames if f["type"] == "reveal"]
    assert [r["hand_no"] for r in reveals] == list(range(1, 17))
    for reveal in reveals:
        seed_hex = reveal["seed_hex"]
        assert len(seed_hex) == 16 and seed_hex == seed_hex.lower()
        assert int(seed_hex, 16) == reveal["seed"]
        digest = hashlib.sha256(bytes.fromhex(reveal["salt"]) + bytes.fromhex(seed_hex))
        assert digest.hexdigest() == reveal["commitment"] == commits[reveal["hand_no"]]
    assert any(r["seed"] >= 2**53 for r in reveals)  # the case that needs it (p = 1 - 2**-176)
    print(f"replay of a hand: {min(sizes)}..{max(sizes)} bytes, mean {sum(sizes) // len(sizes)}")

    # Refusals.
    for path, code, words in [
        (f"/api/matches/{match_id}/replay?hand=0", 404, "has hands 1..16, not hand 0"),
        (f"/api/matches/{match_id}/replay?hand=17", 404, "not hand 17"),
        (f"/api/matches/{match_id}/replay?hand=x", 400, "'hand' (1 for the first hand) must"),
        (f"/api/matches/{match_id}/replay?hand=-1", 400, "got '-1'"),
        (f"/api/matches/{match_id}/replay?hand=1.0", 400, "got '1.0'"),
        (f"/api/matches/{match_id}/replay?hand=", 400, "got ''"),
        (f"/api/matches/{match_id}/replay?hand=1&hand=2", 400, "'hand' is given more than once"),
        (f"/api/matches/{match_id}/replay?hand=" + "9" * 5000, 400, "(5000 characters)"),
        (f"/api/matches/{match_id + 1}/replay", 404, f"no finished match {match_id + 1}"),
        ("/api/matches/2147483648/replay", 400, "must be a whole number 1..2147483647"),
        ("/api/matches/abc/replay", 400, "a match id must be a whole number"),
    ]:
        status, body = await http_json(app, path)
        assert status == code and words in body["error"], (path, status, body)


def test_gzip_is_sent_only_to_clients_that_accept_it() -> None:
    assert accepts_gzip("gzip, deflate, br")
    assert accepts_gzip("br;q=1.0, GZIP;q=0.5")
    assert accepts_gzip("*")
    assert not accepts_gzip("")
    assert not accepts_gzip("deflate, br")
    assert not accepts_gzip("gzip;q=0")
    assert not accepts_gzip("gzip; q=0.000, *")
    assert not accepts_gzip("*;q=0")


def test_custom_rules_frames_carry_the_deal_and_the_rules() -> None:
    # A match played by engine bots, stored as the server stores it, replayed hand by hand.
    rules = Config().rule_presets()["custom"]
    bots = [make_bot("default", p) for p in range(4)]
    rows: list[ActionRow] = []

    def store(match: Match, player: int, action: Action, events: list[Event]) -> None:
        rows.append(ActionRow(len(rows) + 1, match.hand_index + 1, player, action.to_dict()))

    match = play_match(3, bots, rules, on_action=store)
    now = datetime.now(UTC)
    stored = MatchRow(1, "t1", "custom", 3, "00", ("a", "b", "c", "d"), now, now, None)
    presets = Config().rule_presets()
    for hand_no, record in enumerate(match.records, 1):
        frames = hand_frames(stored, rows, hand_no, presets)
        for f in frames:
            check_open(f["view"])
            assert f["view"]["rules"] == rules.to_dict()
            assert (f["repeat"], f["dealer_position"]) == (record.repeat, record.dealer_position)
        assert frames[-1]["scores"] == list(record.scores)
        # Dealer repeat: the number of hands is known only once the match is over.
        last = hand_no == len(match.records)
        assert [f["hands_total"] for f in frames[:-1]] == [None] * (len(frames) - 1)
        assert frames[-1]["hands_total"] == (len(match.records) if last else None)
