"""What a table shows: ``Showing`` sends each viewer its update (``publish``), broadcasts,
and keeps the delayed spectators' feed (``spectators``), the time read at each use."""

from __future__ import annotations

import json
import logging
from typing import Any

from engine.actions import Event
from server.messages.outbound import TableInfo, Update, Watching
from server.protocol import encode
from server.table import publish, sources
from server.table.ports import Peer
from server.table.state import TableState

log = logging.getLogger("guobiao.table")


class Showing(TableState):
    """A table as it shows itself to its seats and spectators (the module's docstring)."""

    def hand_commitment(self, hand_no: int) -> str:
        """The commitment to hand ``hand_no``'s wall (``commit``), as every viewer gets it."""
        assert self.match is not None
        return publish.hand_commitment(self.match, self.salt, hand_no)

    def _reveal(self, hand_no: int) -> dict[str, Any]:
        """The ``reveal`` of finished hand ``hand_no`` (``publish.reveal``)."""
        assert self.match is not None
        return publish.reveal(self.id, self.match, self.salt, hand_no)

    def _publish(self, events: list[Event]) -> None:
        self.seq += 1
        self.history.extend(events)
        delayed = self.settings.spectator_delay_seconds > 0
        # Built once per change, not once per connection: each event's wire form, and the
        # spectators' update (the same text for every spectator).
        wired = publish.wired(events)
        watched: dict[bool, str] = {}  # the spectators' update, by whether it is brief
        for peer, player in list(self.peers.items()):
            if player is not None:
                self._send_update(peer, player, events, wired=wired)
            elif not delayed:
                brief = peer.version >= publish.BRIEF_VERSION
                text = watched.get(brief)
                if text is None:
                    payload = self._update_payload(None, events, wire=wired, brief=brief)
                    assert payload is not None  # (an update is of a hand dealt)
                    text = watched[brief] = encode(Update(payload))
                peer.send(text)
        if delayed:
            payload = self._update_payload(None, events, wire=wired)
            assert payload is not None  # (an update is of a hand dealt)
            self._keep_for_spectators(encode(Update(payload)), dealt=True)

    def _update_payload(
        self,
        player: int | None,
        events: list[Event],
        full: bool = False,
        wire: publish.Wired | None = None,
        brief: bool = False,
    ) -> dict[str, Any] | None:
        """The ``update`` of ``events`` as ``player`` may see it (``publish.update_payload``),
        stamped with ``input_at`` while a player's action is served, if the server stamps."""
        payload = publish.update_payload(
            self.id,
            self.match,
            self.salt,
            self.seq,
            self.history,
            player,
            events,
            full=full,
            wire=wire,
            brief=brief,
            reveals=self.settings.reveals,
        )
        if self.serving is not None and payload is not None and not full:
            payload["input_at"] = self.serving
        return payload

    def _send_update(
        self,
        peer: Peer,
        player: int | None,
        events: list[Event],
        *,
        full: bool = False,
        reply_to: str | int | None = None,
        wired: publish.Wired | None = None,
    ) -> None:
        brief = peer.version >= publish.BRIEF_VERSION
        payload = self._update_payload(player, events, full, wired, brief)
        match = self.match
        if payload is None or match is None or match.hand is None:
            return
        # Only to a seat that must decide: that others have a deadline would tell them that
        # someone may claim.
        asked = player is not None and bool(match.hand.legal_actions(player))
        if asked:
            payload["deadline_ms"] = publish.deadline_ms(
                self.clock.deadline,
                self.clock.deadline_seq,
                self.seq,
                sources.time.monotonic(),
                self.settings.turn_seconds,
            )
        peer.send(encode(Update(payload), reply_to))
        if asked:
            peer.prompted(self.id, self.seq)

    def _broadcast_text(self, text: str) -> None:
        """Send ``text`` to everyone at the table: spectators late, if they see it late."""
        delayed = self.settings.spectator_delay_seconds > 0
        for peer, player in list(self.peers.items()):
            if not (delayed and player is None):
                peer.send(text)
        if delayed:
            self._keep_for_spectators(text)

    def _keep_for_spectators(self, text: str | None, *, dealt: bool = False) -> None:
        """Keep ``text`` for the delayed spectators (``SpectatorFeed.keep``), with the table
        as they are to find it then: its full spectator update computed again if ``dealt``
        (the hand changed), else the last one."""

        def full() -> str | None:
            payload = self._update_payload(None, [], full=True)
            return encode(Update(payload)) if payload is not None else None

        delay = self.settings.spectator_delay_seconds
        self.spectators.keep(sources.time.monotonic(), delay, text, self.summary(), full, dealt)

    def _delayed_view(
        self, peer: Peer, reply_to: str | int | None, answer: type[TableInfo | Watching] | None
    ) -> None:
        """Show ``peer``, a spectator, the table as it was ``spectator_delay_seconds`` ago:
        ``answer`` (``Watching``, or ``TableInfo`` for a ``sync``) with its summary then, then
        its full update then (if anything was dealt), and from there on what followed,
        as it comes due (``_release``). A table that started less than the delay ago
        shows how it started, once that is old enough."""
        if not self.spectators.shown:
            self._keep_for_spectators(None, dealt=True)
        now, delay = sources.time.monotonic(), self.settings.spectator_delay_seconds
        summary, full = self.spectators.start(peer, now, delay)
        if full is not None and answer is TableInfo:  # a sync: its full update is the answer
            peer.send(encode(Update(json.loads(full)["payload"]), reply_to))
        else:
            if answer is not None:
                peer.send(encode(answer(summary), reply_to))
            if full is not None:
                peer.send(full)

    def _release(self) -> None:
        """Send each delayed spectator what has become ``spectator_delay_seconds`` old."""
        now, delay = sources.time.monotonic(), self.settings.spectator_delay_seconds
        for peer, text in self.spectators.release(now, delay, self._watching):
            peer.send(text)

    def _watching(self, peer: Peer) -> bool:
        """Whether ``peer`` still watches the table (not gone, not seated since)."""
        return self.peers.get(peer, -1) is None

    def _next_release(self) -> float | None:
        """When the next entry some delayed spectator waits for is due (monotonic)."""
        return self.spectators.next_release(self.settings.spectator_delay_seconds)
