"""Who is at a table: ``Seating`` handles joins, leaves, bots added, spectators, lost
and regained connections, and seats replaced mid-match (a tournament's substitute)."""

from __future__ import annotations

import logging

from engine.bots import BOTS, LEVELS
from server.errors import shown
from server.messages.outbound import Joined, Left, TableInfo, Watching
from server.protocol import encode
from server.table import sources
from server.table.errors import LobbyError
from server.table.inputs import (
    AddBotsInput,
    BackInput,
    GoneInput,
    JoinInput,
    LeaveInput,
    ReplaceInput,
    WatchInput,
)
from server.table.playing import Playing
from server.table.ports import Peer
from server.table.seats import BOT, HUMAN, Seat

log = logging.getLogger("guobiao.table")


def unknown_bot(name: str) -> LobbyError:
    """The refusal of a bot ``name`` the registry (``engine.bots.BOTS``) does not know: it
    lists the levels players choose from, and the other names still accepted."""
    others = ", ".join(sorted(set(BOTS) - set(LEVELS)))
    return LobbyError(
        "bad_message",
        f"unknown bot {shown(name)}; levels: {', '.join(LEVELS)} (also accepted: {others})",
    )


class Seating(Playing):
    """A table seating its players and spectators (the module's docstring)."""

    async def _join(self, item: JoinInput) -> None:
        peer = item.peer
        assert peer is not None and peer.username is not None
        username = peer.username
        mine = self.seat_of(username)
        took_seat = mine is None
        # A player already seated (a private tournament's table) needs no invite to sit down.
        if self.settings.private and mine is None and item.invite_code != self.settings.invite_code:
            raise LobbyError(
                "wrong_invite", f"table {self.id} is private: a valid invite code is needed"
            )
        if mine is None:
            if self.state != "waiting":
                raise LobbyError("table_started", f"table {self.id} has started without you")
            elsewhere = self.host.seated_at(username)
            if elsewhere is not None and elsewhere != self.id:
                raise LobbyError(
                    "already_seated", f"you already sit at table {elsewhere}", table=elsewhere
                )
            free = [i for i, s in enumerate(self.seats) if s is None]
            if not free:
                raise LobbyError("table_full", f"table {self.id} is full")
            seat = free[0] if item.seat is None else item.seat
            if self.seats[seat] is not None:
                raise LobbyError("seat_taken", f"seat {seat} of table {self.id} is taken")
            if self.settings.rated:
                await self._check_rated_join(peer, free)
            self.seats[seat] = Seat(HUMAN, username, address=peer.address)
            self._changed()
            mine = seat
        else:
            info = self.seats[mine]
            assert info is not None
            info.connected, info.away_since, info.address = True, None, peer.address
        self.peers[peer] = mine
        peer.send(encode(Joined(self.id, mine), item.reply_to))
        if took_seat:
            await self._lobby_changed()  # everyone at the table sees the seat taken
        else:
            # Back at a seat the table kept for her (the queue's or a tournament's table,
            # made with its players seated; hers after leave_table): nothing changed for
            # the others, only she needs the summary.
            peer.send(encode(TableInfo(self.summary())))
        if self.state == "playing":
            self._send_update(peer, mine, [], full=True)

    async def _check_rated_join(self, peer: Peer, free: list[int]) -> None:
        """A rated table seats registered accounts only; the last seat also not when its
        four have played as many rated matches together today as the limit allows."""
        if peer.guest:
            raise LobbyError(
                "not_registered",
                f"table {self.id} is rated: only registered accounts play rated matches "
                "(register, or play at a casual table)",
            )
        if len(free) == 1:
            names = [s.name for s in self.seats if s is not None]
            assert peer.username is not None
            refusal = await self.host.rated_refusal([*names, peer.username])
            if refusal is not None:
                raise LobbyError("same_four_limit", refusal)

    async def _leave(self, item: LeaveInput) -> None:
        peer = item.peer
        assert peer is not None
        mine = self.seat_of(peer.username)
        watching = self.peers.pop(peer, -1) is None
        self.spectators.watch_next.pop(peer, None)
        if mine is None:
            if not watching:  # neither seated nor watching: there is nothing to leave
                raise LobbyError("not_seated", f"you neither sit at nor watch table {self.id}")
            peer.send(encode(Left(self.id), item.reply_to))  # stops watching
            return
        waiting = self.state == "waiting"
        if waiting:
            self.seats[mine] = None
        else:
            seat = self.seats[mine]
            assert seat is not None
            seat.connected, seat.away_since = False, sources.time.monotonic()
        self._changed()
        peer.send(encode(Left(self.id), item.reply_to))
        if waiting:  # (in play the seat stays hers: the table's summary is as it was)
            await self._lobby_changed()

    async def _add_bots(self, item: AddBotsInput) -> None:
        peer = item.peer
        assert peer is not None
        if self.seat_of(peer.username) is None:
            raise LobbyError("not_seated", f"only a player seated at table {self.id} may add bots")
        if item.bot not in BOTS:
            raise unknown_bot(item.bot)
        if self.settings.rated:
            raise LobbyError(
                "rated_table", f"table {self.id} is rated: bots never play rated matches"
            )
        if self.state != "waiting":
            raise LobbyError("table_started", f"table {self.id} has started")
        for i, seat in enumerate(self.seats):
            if seat is None:
                self.seats[i] = Seat(BOT, item.bot)
        self._changed()
        peer.send(encode(TableInfo(self.summary()), item.reply_to))
        await self._lobby_changed()

    def _watch(self, item: WatchInput) -> None:
        peer = item.peer
        assert peer is not None
        if self.settings.private and item.invite_code != self.settings.invite_code:
            raise LobbyError(
                "wrong_invite", f"table {self.id} is private: a valid invite code is needed"
            )
        mine = self.seat_of(peer.username)  # a seated player watching keeps its own view
        if mine is None and not self.settings.watchable:
            raise LobbyError(
                "not_watchable",
                f"table {self.id} cannot be watched (a duplicate session's, while it is played)",
            )
        self.peers[peer] = mine
        if mine is None and self.settings.spectator_delay_seconds:
            self._delayed_view(peer, item.reply_to, answer=Watching)
            return
        # The summary: a private table is not listed, and the spectator needs its seats' names.
        peer.send(encode(Watching(self.summary()), item.reply_to))
        if self.state == "playing":
            self._send_update(peer, mine, [], full=True)

    def _gone(self, item: GoneInput) -> None:
        peer = item.peer
        if peer is None or peer not in self.peers:
            return
        player = self.peers.pop(peer)
        if player is not None and player not in self.peers.values():
            self.clock.has_read(player)  # nobody is left to read the result
            seat = self.seats[player]
            if seat is not None and self.state == "waiting":
                self.seats[player] = None  # nobody waits for a player who is gone
                self._changed()
                self._broadcast_text(encode(TableInfo(self.summary())))
            elif seat is not None:
                seat.connected, seat.away_since = False, sources.time.monotonic()

    def _back(self, item: BackInput) -> None:
        peer = item.peer
        assert peer is not None
        mine = self.seat_of(peer.username)
        if mine is None:
            return
        if self.ended is not None:
            # Back after the match's end (a node of hers was stopped, or her ``resume`` came
            # as the table was finishing): told the end as she would have been, and not
            # again later (``tell_later`` counted her away).
            seat = self.seats[mine]
            assert seat is not None
            self.host.untold_end(seat.name)
            for frame in self._end_frames(mine):
                peer.send(frame)
            return
        self._sit(peer, mine)
        peer.send(encode(TableInfo(self.summary())))
        if self.state == "playing":
            self._send_update(peer, mine, [], full=True)

    def _sit(self, peer: Peer, mine: int) -> None:
        """``peer``, a connection of the player of seat ``mine``, plays the seat from now."""
        seat = self.seats[mine]
        assert seat is not None
        seat.connected, seat.away_since, seat.address = True, None, peer.address
        self.peers[peer] = mine

    def _attach_seated(self, peer: Peer | None) -> None:
        """A connection of a seated player that the table does not know yet (cluster mode:
        a message of hers reached the table's new owner before her re-attach did) plays
        her seat from its first message, as a ``resume`` would have made it: a ``sync`` is
        answered with her view, not ``not_seated``."""
        if peer is None or peer in self.peers:
            return
        mine = self.seat_of(peer.username)
        if mine is not None:
            self._sit(peer, mine)

    async def _replace(self, item: ReplaceInput) -> None:
        """``ReplaceInput``: another occupant for a seat (see there)."""
        index, label = item.seat, item.label
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= 3:
            raise LobbyError("bad_message", f"a seat is 0..3, got {shown(index)}")
        if self.state == "finished":
            raise LobbyError("hand_over", f"table {self.id}'s match is over: its seats stay")
        if label.startswith("bot:"):
            if label[4:] not in BOTS:
                raise unknown_bot(label)
            if self.settings.rated:
                raise LobbyError(
                    "rated_table", f"table {self.id} is rated: bots never play rated matches"
                )
            seat = Seat(BOT, label[4:])
        else:
            if not label or label != label.strip():
                raise LobbyError(
                    "bad_message", f"a seat's player is a username, got {shown(label)}"
                )
            elsewhere = self.host.seated_at(label)
            if elsewhere is not None and elsewhere != self.id:
                raise LobbyError(
                    "already_seated", f"{label} already sits at table {elsewhere}", table=elsewhere
                )
            there = self.seat_of(label)
            if there is not None and there != index:
                raise LobbyError("seat_taken", f"{label} already sits at seat {there}")
            # Away until they attach (join_table, resume): played for after the grace.
            seat = Seat.from_label(label, self.timers.restart_grace_seconds)
        before = self.seats[index]
        if before is not None and before.label == label:  # already so: nothing changes
            if item.peer is not None:
                item.peer.send(encode(TableInfo(self.summary()), item.reply_to))
            if item.done is not None and not item.done.done():
                item.done.set_result(None)
            return
        self.seats[index] = seat
        self.bots.pop(index, None)  # a bot kept for the seat may not be the new one's
        self.clock.has_read(index)  # the one replaced no longer reads the seat's result
        moved = [peer for peer, player in self.peers.items() if player == index]
        for peer in moved:  # the one replaced no longer sees the seat's tiles
            if self.settings.watchable:
                self.peers[peer] = None
            else:
                del self.peers[peer]
        self._changed()
        await self._save()
        summary = encode(TableInfo(self.summary()))
        for peer in moved:
            if not self.settings.watchable:
                peer.send(summary)  # the last it hears of the table: it sits there no more
            elif self.settings.spectator_delay_seconds:
                self._delayed_view(peer, None, answer=None)
            else:
                self._send_update(peer, None, [], full=True)
        self._broadcast_text(summary)
        log.info(
            "table %s: seat %s, %s, now played by %s",
            self.id,
            index,
            before.label if before is not None else "empty",
            seat.label,
        )
        if item.peer is not None:
            item.peer.send(encode(TableInfo(self.summary()), item.reply_to))
        if item.done is not None and not item.done.done():
            item.done.set_result(None)

    async def _lobby_changed(self) -> None:
        self._broadcast_text(encode(TableInfo(self.summary())))
        await self._save()
        if self.state == "waiting" and all(s is not None for s in self.seats):
            await self._start_match()
