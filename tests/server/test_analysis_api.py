"""``analyze`` / ``analysis``: the playing aids over the wire, and the table option ``aids``.

Tables are driven directly (fake peers, the in-memory store, a stacked wall) where what is
checked is the table's doing: the answer's content, that it depends on nothing the player
cannot see, the refusals and the rate limit. The option's path through the protocol, the
lobby and the database is checked against a real server and a real store.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
import tablekit
from fakes import Clock, FakePeer, pin_tables, table_for, until

import server.table
from engine.actions import Action
from server import protocol
from server.app import App
from server.cli.fan import score_lines
from server.client import Client, ServerError
from server.config import Config
from server.db.store import Store
from server.lobby import Lobby

# Player 0 deals itself a hand that discards 9p to wait on 2s and 5s (7 fan on a discard,
# 9 self-drawn: the discard cannot win). The other hands differ between the two variants,
# and so does the wall (stacked_wall fills it around them); nobody can claim the 9p.
MINE = "234m567p3488s678s9p"
HIDDEN_A = {1: "111m999m111pEEES", 2: "222s999sSSSWWWN", 3: "CCCFFFPPPNNN1s"}
HIDDEN_B = {1: "CCCFFFPPP111s2s", 2: "111m999mEEESSSN", 3: "111p999sWWWNNN5m"}


class Seated:
    """A started table on a stacked wall with four fake people seated and one spectator."""

    def __init__(self, table: server.table.Table, clock: Clock) -> None:
        self.table = table
        self.clock = clock
        self.seats = [FakePeer(f"player{p}") for p in range(4)]
        self.spectator = FakePeer(None)

    @classmethod
    async def deal(
        cls, monkeypatch: pytest.MonkeyPatch, hidden: dict[int, str], **options: Any
    ) -> Seated:
        clock = pin_tables(monkeypatch, tablekit.stacked_wall({0: MINE, **hidden}))
        table = table_for(turn_seconds=600)
        for key, value in options.items():
            setattr(table, key, value)
        seated = cls(table, clock)
        table.start()
        await table.queue.put(server.table.WatchInput(seated.spectator, None, None))
        for p, peer in enumerate(seated.seats):
            await table.queue.put(server.table.JoinInput(peer, None, p, None))
        await until(lambda: table.match is not None and table.seq == 1, "the deal")
        return seated

    async def analyze(self, peer: FakePeer, mid: str = "a") -> dict[str, Any]:
        """Ask; the frame answering ``mid`` (its raw text kept as ``"text"``)."""
        told = len(peer.texts)
        await self.table.queue.put(server.table.AnalyzeInput(peer, mid))

        def answered() -> str | None:
            return next(
                (t for t in peer.texts[told:] if json.loads(t).get("reply_to") == mid), None
            )

        await until(lambda: answered() is not None, f"the answer to {mid}")
        text = answered()
        assert text is not None
        return {**json.loads(text), "text": text}

    async def discard_9p(self) -> None:
        """Player 0 discards 9p; nobody may claim it: the window closes, player 1 draws."""
        table = self.table
        action = Action.from_dict({"type": "discard", "tile": "9p"})
        await table.queue.put(server.table.PlayInput(self.seats[0], None, table.seq, action))
        await until(lambda: table.seq == 3, "the discard and the next draw")

    async def stop(self) -> None:
        await self.table.stop()


# ------------------------------------------------------------------ content ---


@pytest.mark.asyncio
async def test_the_dealer_sees_what_each_discard_leaves_then_its_waits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seated = await Seated.deal(monkeypatch, HIDDEN_A)
    try:
        first = await seated.analyze(seated.seats[0], "turn")
        assert first["type"] == "analysis"
        payload = first["payload"]
        assert list(payload) == ["table", "seq", "min_fan", "shanten", "discards"]
        assert (payload["table"], payload["seq"], payload["min_fan"]) == ("t1", 1, 8)
        best = payload["discards"][0]
        assert (best["tile"], best["shanten"]) == ("9p", 0)
        assert [w["tile"] for w in best["waits"]] == ["2s", "5s"]
        legal = {a["tile"] for a in seated.seats[0].updates()[-1]["view"]["legal"] if "tile" in a}
        assert {d["tile"] for d in payload["discards"]} == legal

        await seated.discard_9p()
        ready = (await seated.analyze(seated.seats[0], "ready"))["payload"]
        assert list(ready) == ["table", "seq", "min_fan", "shanten", "waits"]
        assert ready["seq"] == 3 and ready["shanten"] == 0
        assert ready["waits"] == best["waits"]  # the discard was foreseen exactly
        # The totals are `guobiao fan`'s for the same hand and situation.
        for wait in ready["waits"]:
            hand = f"234m567p3488s678s{wait['tile']}"
            requests = [json.dumps({"hand": hand}), json.dumps({"hand": hand, "self_drawn": True})]
            on_discard, drawn = score_lines(requests)
            assert wait["discard"] == {k: on_discard[k] for k in ("total", "meets_minimum")}
            assert wait["self_drawn"] == {k: drawn[k] for k in ("total", "meets_minimum")}
            assert wait["unseen"] == 4
        assert ready["waits"][0]["discard"] == {"total": 7, "meets_minimum": False}  # needs 8
        assert ready["waits"][0]["self_drawn"] == {"total": 9, "meets_minimum": True}
    finally:
        await seated.stop()


@pytest.mark.asyncio
async def test_two_tables_that_differ_only_where_the_player_cannot_see_answer_alike(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Other players' concealed tiles and the wall's order differ; every analysis player 0
    gets is the same text, byte for byte (and player 0's updates are too)."""
    answers: list[list[str]] = []
    for hidden in (HIDDEN_A, HIDDEN_B):
        seated = await Seated.deal(monkeypatch, hidden)
        try:
            texts = [(await seated.analyze(seated.seats[0], "dealt"))["text"]]
            await seated.discard_9p()
            texts.append((await seated.analyze(seated.seats[0], "waiting"))["text"])
            updates = [t for t in seated.seats[0].texts if json.loads(t)["type"] == "update"]
            answers.append(texts + updates)
        finally:
            await seated.stop()
    assert answers[0] == answers[1]
    assert '"waits":[{"tile":"2s"' in answers[0][1]


# ---------------------------------------------------------------- refusals ---


@pytest.mark.asyncio
async def test_spectators_and_strangers_may_not_analyze(monkeypatch: pytest.MonkeyPatch) -> None:
    seated = await Seated.deal(monkeypatch, HIDDEN_A)
    try:
        for peer in (seated.spectator, FakePeer("stranger")):
            refused = await seated.analyze(peer)
            assert refused["type"] == "error"
            assert refused["payload"]["code"] == "not_seated"
            assert not any(json.loads(t)["type"] == "analysis" for t in peer.texts)
    finally:
        await seated.stop()


@pytest.mark.asyncio
async def test_a_table_without_aids_refuses_analyze(monkeypatch: pytest.MonkeyPatch) -> None:
    seated = await Seated.deal(monkeypatch, HIDDEN_A, aids=False)
    try:
        refused = await seated.analyze(seated.seats[0])
        assert refused["payload"]["code"] == "aids_off"
        assert "allows no playing aids" in refused["payload"]["reason"]
        assert seated.table.summary()["aids"] is False
    finally:
        await seated.stop()


@pytest.mark.asyncio
async def test_no_hand_no_analysis() -> None:
    table = table_for()
    peer = FakePeer("lin")
    table.start()
    try:
        await table.queue.put(server.table.JoinInput(peer, None, 0, None))
        await table.queue.put(server.table.AnalyzeInput(peer, "early"))
        await until(lambda: any(json.loads(t)["type"] == "error" for t in peer.texts), "refusal")
        (refusal,) = peer.frames("error")
        assert refusal["code"] == "hand_over"
    finally:
        await table.stop()


@pytest.mark.asyncio
async def test_analyze_requests_are_rate_limited_per_connection(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A burst of ANALYSIS_BURST, then ANALYSES_PER_SECOND: the clock is the test's."""
    seated = await Seated.deal(monkeypatch, HIDDEN_A)
    me, other = seated.seats[0], seated.seats[1]
    try:
        kinds = [
            (await seated.analyze(me, f"n{n}"))["type"]
            for n in range(server.table.ANALYSIS_BURST + 1)
        ]
        assert kinds == ["analysis"] * server.table.ANALYSIS_BURST + ["error"]
        refusal = me.frames("error")[-1]
        assert refusal["code"] == "rate_limited" and refusal["retry_after"] == 1
        assert (await seated.analyze(other, "theirs"))["type"] == "analysis"  # its own bucket
        seated.clock.now += 1 / server.table.ANALYSES_PER_SECOND
        assert (await seated.analyze(me, "later"))["type"] == "analysis"
        assert (await seated.analyze(me, "again"))["type"] == "error"
    finally:
        await seated.stop()


@pytest.mark.asyncio
async def test_one_analysis_at_a_time_per_connection(monkeypatch: pytest.MonkeyPatch) -> None:
    seated = await Seated.deal(monkeypatch, HIDDEN_A)
    me = seated.seats[0]
    try:
        for mid in ("first", "second"):  # handled one after the other, the first still running
            await seated.table.queue.put(server.table.AnalyzeInput(me, mid))
        await until(lambda: len(me.frames("analysis")) == 1, "the first answer")
        (refusal,) = me.frames("error")
        assert refusal["code"] == "rate_limited" and refusal["retry_after"] == 1
        assert "still being answered" in refusal["reason"]
        assert [f.get("reply_to") for f in me.sent if f["type"] in ("analysis", "error")] == [
            "second",
            "first",
        ]
    finally:
        await seated.stop()


# ---------------------------------------------------- the option, end to end ---


def test_create_table_takes_aids() -> None:
    decoded = protocol.decode(json.dumps({"type": "create_table", "payload": {"aids": False}}))
    assert isinstance(decoded, protocol.CreateTable) and decoded.aids is False
    default = protocol.decode(json.dumps({"type": "create_table", "payload": {}}))
    assert isinstance(default, protocol.CreateTable) and default.aids is True
    with pytest.raises(protocol.ProtocolError, match="'aids' must be true or false"):
        protocol.decode(json.dumps({"type": "create_table", "payload": {"aids": "no"}}))
    asked = protocol.decode(json.dumps({"type": "analyze", "id": 3, "payload": {"table": "t4"}}))
    assert asked == protocol.Analyze(3, "t4")


@pytest.mark.asyncio
async def test_tables_show_their_aids_and_a_client_analyzes(app: App) -> None:
    client = await Client.connect(f"ws://127.0.0.1:{app.port}/ws")
    try:
        await client.guest()
        strict = (await client.create_table(aids=False)).table
        free = (await client.create_table()).table
        listed = {t["table"]: t["aids"] for t in await client.list_tables()}
        assert listed == {strict: False, free: True}
        await client.join_table(free, seat=0)
        with pytest.raises(ServerError) as caught:
            await client.analyze(free)  # seated, but nothing dealt yet
        assert caught.value.code == "hand_over"
        # (waited for from before the bots sit: it may come in the same read as the reply)
        dealt = asyncio.create_task(
            client.wait_for(lambda m: m.type == "update" and m.table == free)
        )
        await asyncio.sleep(0)
        await client.add_bots(free)
        await dealt
        found = await client.analyze(free)  # whatever the bots made of the hand since
        assert found["table"] == free and found["min_fan"] == 8 and found["seq"] >= 1
        assert isinstance(found["shanten"], int)
    finally:
        await client.close()


@pytest.mark.asyncio
async def test_a_restart_keeps_a_tables_aids(store: Store) -> None:
    config = Config()
    lobby = Lobby(config, store)
    try:
        strict = (await lobby.create("mcr", None, False, aids=False)).id
        free = (await lobby.create("mcr", None, False)).id
    finally:
        await lobby.shutdown()
    again = Lobby(config, store)
    try:
        assert await again.restore() == 2
        assert {t: again.tables[t].aids for t in (strict, free)} == {strict: False, free: True}
    finally:
        await again.shutdown()
