"""Matches in the database: a match's row, its finished hands, and its end
(``finish_match``: the players' counts and grades and, for a rated match, the ratings, in
one transaction).

A match is its seed plus its action log (``server.db.action_log``): after a crash
``unfinished_matches`` and ``Store.match_actions`` give back everything needed to rebuild
each match in play by replaying its actions through the engine.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import partial
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from engine.match import MATCH_HANDS, check_match_hands
from server.db.errors import Conflict, Fenced, StoreError
from server.db.models import GameTable, Hand, Match, MatchPlayer, Player
from server.db.rows import FinishedMatch, MatchRow, is_bot, utcnow
from server.db.transactions import Transactions
from server.grades import grade, match_counts
from server.ladder.rated_match import foursome_key, match_changes, rate_match
from server.ladder.seasons import SeasonPolicy
from server.tournaments.held import held

log = logging.getLogger(__name__)

SEED_RANGE = range(-(2**63), 2**63)  # a BIGINT column


class NotRateable(StoreError, ValueError):
    """A rated match whose seats are not four registered accounts."""


def _registered_ids(session: Session, seats: Sequence[str | None]) -> list[int]:
    """The account ids of a rated match's seats, by seat; ``NotRateable`` unless all four
    are registered accounts (not guests, not bots, not empty)."""
    keys = [s.lower() if s is not None and not is_bot(s) else None for s in seats]
    found = {
        p.username_key: p
        for p in session.scalars(
            select(Player).where(Player.username_key.in_([k for k in keys if k]))
        )
    }
    ids = []
    for seat, key in zip(seats, keys, strict=True):
        player = found.get(key) if key else None
        if player is None or player.guest:
            raise NotRateable(f"a rated match needs four registered accounts, not {seat!r}")
        ids.append(player.id)
    if len(set(ids)) != len(ids):
        raise NotRateable(f"a rated match needs four different accounts, got {list(seats)!r}")
    return ids


class NoSuchMatch(StoreError, LookupError):
    """A match id the database does not know."""


def _check_fence(session: Session, table_id: str, fence: int) -> None:
    """``Fenced`` unless ``fence`` is the table's token; holds the row till the commit."""
    current = session.scalar(
        select(GameTable.fence).where(GameTable.id == table_id).with_for_update(read=True)
    )
    if current != fence:
        raise Fenced(table_id, fence, current)


def _create_match(fields: dict[str, Any], fence: int | None, session: Session) -> int:
    """``Matches.create_match``'s transaction: a match of ``fields`` (a rated one with its
    foursome), its id; or the id of the match its table made already with that seed and
    salt."""
    if fence is not None:
        _check_fence(session, fields["table_id"], fence)
    made = session.scalar(
        select(Match.id)
        .where(
            Match.table_id == fields["table_id"],
            Match.seed == fields["seed"],
            Match.salt == fields["salt"],
        )
        .order_by(Match.id)
        .limit(1)
    )
    if made is not None:
        return made
    foursome = None
    if fields["rated"]:
        foursome = foursome_key(_registered_ids(session, fields["seats"]))
    match = Match(**fields, foursome=foursome)
    session.add(match)
    session.flush()
    return match.id


def _finish_hand(  # noqa: PLR0917 (partial's arguments, then the session)
    match_id: int,
    hand_no: int,
    record: dict[str, Any],
    deltas: list[int],
    finished_at: datetime,
    session: Session,
) -> bool:
    """``Matches.finish_hand``'s transaction: True if the hand is stored now, False if it
    was stored already with the same record and deltas; ``Conflict`` if with others. A
    plain ``INSERT`` (no unit of work: a hand is stored once and never read back here)."""
    stored = session.execute(
        select(Hand.record, Hand.deltas).where(Hand.match_id == match_id, Hand.hand_no == hand_no)
    ).first()
    if stored is not None:
        return _stored_again(match_id, hand_no, stored.record == record and stored.deltas == deltas)
    session.execute(
        insert(Hand).values(
            match_id=match_id,
            hand_no=hand_no,
            record=record,
            deltas=deltas,
            finished_at=finished_at,
        )
    )
    return True


def _stored_again(match_id: int, hand_no: int, same: bool) -> bool:
    """A hand found stored already: False (a replay, nothing to do) if it is the ``same``
    record and deltas, else ``Conflict``."""
    if same:
        return False
    raise Conflict(f"hand {hand_no} of match {match_id} is stored already, with another record")


class Matches(Transactions):
    """The ``Store``'s matches: created, their hands stored, finished and read."""

    policy: SeasonPolicy  # how the ladders run (``Store.policy``)

    async def create_match(  # noqa: PLR0917 (the signature the server codes against)
        self,
        table_id: str,
        rules: str,
        seed: int,
        salt: str,
        seats: Sequence[str | None],
        started_at: datetime,
        rule_options: Mapping[str, Any] | None = None,
        hands_planned: int = MATCH_HANDS,
        rated: bool = False,
        fence: int | None = None,
    ) -> int:
        """Record a new match; its id (use it as the engine's ``match_id``, so the hand
        records and the log agree). ``seed`` must fit a signed 64-bit integer.
        ``rule_options`` are the rules as played (``RuleSet.to_dict()``), ``hands_planned``
        the match's length in deals (``Match.hands``). A ``rated`` match needs four
        registered accounts (``NotRateable`` otherwise); it records them as its foursome.
        ``fence``: the writer's fencing token for the table (``Fenced`` unless current).

        A match is named by its table, ``seed`` and ``salt`` (a table draws a salt for each
        match and keeps both for every try): a match the table made already with them is
        not made again, its id is returned. So a try that failed in the caller's eyes but did
        commit (its answer lost, or a PostgreSQL backend that ran it late) is found by the
        next try, and the table's match is made once, whatever the database did."""
        if seed not in SEED_RANGE:
            raise ValueError(f"a match seed must fit in a signed 64-bit integer, got {seed}")
        bytes.fromhex(salt)  # ValueError unless hex
        if len(seats) != 4:
            raise ValueError(f"a match has 4 seats, got {seats!r}")
        check_match_hands(hands_planned)
        fields = {
            "table_id": table_id,
            "rules": rules,
            "seed": seed,
            "salt": salt,
            "seats": list(seats),
            "started_at": started_at,
            "rule_options": dict(rule_options) if rule_options is not None else None,
            "hands_planned": hands_planned,
            "rated": rated,
        }
        if self._pg_now is not None and not rated:  # one statement (server/db/postgres_now.py)
            return await self._pg_now.create_match(fields, fence)
        return await self._write_now(partial(_create_match, fields, fence))

    async def finish_hand(
        self,
        match_id: int,
        hand_no: int,
        record: Mapping[str, Any],
        deltas: Sequence[int],
        *,
        now: datetime | None = None,
    ) -> bool:
        """Store a finished hand (``record``: ``HandRecord.to_dict()``); True if stored now.

        Storing a hand again with the same record and deltas does nothing and returns False
        (crash recovery may replay a hand whose record was already stored). ``Conflict`` if
        the hand is stored with another record, or the match does not exist.
        """
        stored_form = json.loads(json.dumps(record))  # as the JSON column gives it back
        deltas = [int(d) for d in deltas]
        finished_at = now or utcnow()
        try:
            if self._pg_now is not None:  # one statement (server/db/postgres_now.py)
                return await self._finish_hand_now(
                    match_id, hand_no, stored_form, deltas, finished_at
                )
            return await self._write_now(
                partial(_finish_hand, match_id, hand_no, stored_form, deltas, finished_at),
                timed="hand",
            )
        except IntegrityError:
            raise Conflict(
                f"cannot store hand {hand_no} of match {match_id}: the match is unknown"
            ) from None

    async def _finish_hand_now(
        self,
        match_id: int,
        hand_no: int,
        record: dict[str, Any],
        deltas: list[int],
        finished_at: datetime,
    ) -> bool:
        """``finish_hand``'s write on PostgreSQL (``PostgresNow.insert_hand``), timed as
        ``hand`` as the other path is."""
        assert self._pg_now is not None
        started = time.perf_counter()
        hand = {
            "match_id": match_id,
            "hand_no": hand_no,
            "record": record,
            "deltas": deltas,
            "finished_at": finished_at,
        }
        stored = await self._pg_now.insert_hand(hand)
        self._committed("hand", started)
        if stored is None:
            return True
        same = json.loads(stored[0]) == record and json.loads(stored[1]) == deltas
        return _stored_again(match_id, hand_no, same)

    async def finish_match(
        self,
        match_id: int,
        final_scores: Sequence[int],
        ended_at: datetime,
        addresses: Sequence[str | None] | None = None,
    ) -> FinishedMatch:
        """End a match, in one transaction with its consequences:

        - ``match_players``: per player index, the final score and the hands won, lost and
          drawn (counted from the stored hand records, see ``server.grades``);
        - each human player's cached counts: ``score`` += final score, hands, ``matches``
          += 1, and the grade recomputed. Bots (``"bot:..."`` seats) have no player row.
          Not for a match whose outcome is held (``server.tournaments.held``: a
          duplicate session in play): its session's end counts it;
        - a rated match: the four ratings (``server.ladder.rated_match.rate_match``).

        ``addresses``: where each player index was connected from (kept for operators).

        Returns what it did (``FinishedMatch``): whether it ended the match now (not if it
        was finished already: then it changes nothing, so a retry is harmless), and the
        rating changes of a rated match (those it made, or those made when it was
        finished). ``NoSuchMatch`` if the match does not exist.
        """
        if len(final_scores) != 4:
            raise ValueError(f"a match has 4 final scores, got {final_scores!r}")
        async with self._write(timed="match") as session:
            match = await session.get(Match, match_id, with_for_update=True)
            if match is None:
                raise NoSuchMatch(f"no match {match_id}")
            if match.ended_at is not None:
                made = await match_changes(session, match_id) if match.rated else []
                return FinishedMatch(False, tuple(made))
            records = await session.scalars(
                select(Hand.record).where(Hand.match_id == match_id).order_by(Hand.hand_no)
            )
            counts = match_counts(list(records))
            hidden = await session.scalar(select(held()).where(Match.id == match_id))
            keys = {s.lower() for s in match.seats if s is not None and not is_bot(s)}
            players = {
                p.username_key: p
                for p in await session.scalars(
                    select(Player)
                    .where(Player.username_key.in_(sorted(keys)))
                    .order_by(Player.id)
                    .with_for_update()
                )
            }
            for index, (seat, score, c) in enumerate(
                zip(match.seats, final_scores, counts, strict=True)
            ):
                player = None if seat is None or is_bot(seat) else players.get(seat.lower())
                session.add(
                    MatchPlayer(
                        match_id=match_id,
                        player=index,
                        player_id=player.id if player is not None else None,
                        score=score,
                        won=c.won,
                        lost=c.lost,
                        drawn=c.drawn,
                        address=addresses[index] if addresses else None,
                    )
                )
                if player is not None and not hidden:
                    _add_match(player, score, c.won, c.lost, c.drawn)
            match.ended_at = ended_at
            match.final_scores = [int(s) for s in final_scores]
            changes: list[dict[str, Any]] = []
            if match.rated:
                seated = [players.get(s.lower()) if s else None for s in match.seats]
                accounts = [p for p in seated if p is not None and not p.guest]
                if len(accounts) == len(seated):
                    changes = await rate_match(
                        session,
                        match,
                        players=accounts,
                        scores=match.final_scores,
                        now=ended_at,
                        policy=self.policy,
                    )
                else:  # (create_match checked them: an account deleted since)
                    log.warning("match %s: not rated, not every seat is an account", match_id)
            return FinishedMatch(True, tuple(changes))

    async def rating_changes(self, match_id: int) -> list[dict[str, Any]]:
        """The rating changes a finished rated match made, by player index (the match
        page; ``finish_match`` returns them to the table that finishes it)."""
        async with self._read() as session:
            return await match_changes(session, match_id)

    async def get_match(self, match_id: int) -> MatchRow | None:
        async with self._read() as session:
            match = await session.get(Match, match_id)
            return MatchRow.of(match) if match is not None else None

    async def table_matches(self, table_id: str) -> list[MatchRow]:
        """The matches played at a table, oldest first."""
        async with self._read() as session:
            matches = await session.scalars(
                select(Match).where(Match.table_id == table_id).order_by(Match.id)
            )
            return [MatchRow.of(m) for m in matches]

    async def unfinished_matches(self) -> list[MatchRow]:
        """The matches not yet finished (to resume after a restart), oldest first."""
        async with self._read() as session:
            matches = await session.scalars(
                select(Match).where(Match.ended_at.is_(None)).order_by(Match.id)
            )
            return [MatchRow.of(m) for m in matches]

    async def finished_matches(self) -> list[MatchRow]:
        """The finished matches, oldest first (``guobiao db check --all``)."""
        async with self._read() as session:
            matches = await session.scalars(
                select(Match).where(Match.ended_at.is_not(None)).order_by(Match.id)
            )
            return [MatchRow.of(m) for m in matches]

    async def match_hands(self, match_id: int) -> list[dict[str, Any]]:
        """The stored hand records of a match, in hand order."""
        async with self._read() as session:
            records = await session.scalars(
                select(Hand.record).where(Hand.match_id == match_id).order_by(Hand.hand_no)
            )
            return list(records)


def _add_match(player: Player, score: int, won: int, lost: int, drawn: int) -> None:
    player.score += score
    player.hands_won += won
    player.hands_lost += lost
    player.hands_drawn += drawn
    player.matches += 1
    player.grade = grade(player.score, player.hands_won, player.hands_lost, player.hands_drawn)
