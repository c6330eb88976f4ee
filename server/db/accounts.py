"""Accounts in the database: players (registered or guests), their login sessions, and
the housekeeping of guests (``Store.purge_guests``, run by ``server.accounts``).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import partial

from sqlalchemy import delete, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from server.db import postgres_now
from server.db.errors import Conflict, UsernameLookalike, UsernameTaken
from server.db.models import GameTable, Match, MatchPlayer, Player, PlayerSession
from server.db.rows import GuestPurge, PlayerRow, SessionRow, utcnow
from server.db.transactions import Transactions
from server.text import skeleton


def _new_player(username: str, password_hash: str | None, guest: bool, now: datetime) -> Player:
    """A new account's row: its name's lookup key and skeleton, no matches yet."""
    return Player(
        username=username,
        username_key=username.lower(),
        username_skeleton=skeleton(username),
        password_hash=password_hash,
        guest=guest,
        created_at=now,
        score=0,
        hands_won=0,
        hands_lost=0,
        hands_drawn=0,
        matches=0,
        grade=0.0,
    )


def _create_account(
    new: Callable[[], Player], login: tuple[str, datetime], db: Session
) -> PlayerRow:
    """``Accounts.create_account``'s transaction: the player ``new()`` makes."""
    player = new()
    db.add(player)
    db.flush()
    token_hash, expires_at = login
    db.add(
        PlayerSession(
            player_id=player.id,
            token_hash=token_hash,
            created_at=player.created_at,
            expires_at=expires_at,
        )
    )
    return PlayerRow.of(player)


class Accounts(Transactions):
    """The ``Store``'s accounts and login sessions."""

    async def create_player(
        self,
        username: str,
        password_hash: str | None,
        guest: bool,
        *,
        now: datetime | None = None,
    ) -> int:
        """Add a player; its id. ``UsernameTaken`` if the name exists in any case,
        ``UsernameLookalike`` if an existing one looks like it."""
        try:
            async with self._write() as session:
                player = _new_player(username, password_hash, guest, now or utcnow())
                session.add(player)
                await session.flush()
                return player.id
        except IntegrityError:
            raise await self._taken(username) from None

    async def create_account(
        self,
        username: str,
        password_hash: str | None,
        guest: bool,
        session: tuple[str, datetime],
        *,
        now: datetime | None = None,
        why: bool = True,
    ) -> PlayerRow:
        """``create_player`` and its first login ``session`` (token hash, expiry) in one
        transaction: the new player. (A guest's login is this one write: three before,
        each through the driver's thread several times, made a thousand guests logging in
        at once wait tens of seconds.) ``UsernameTaken`` if the name exists in any case,
        ``UsernameLookalike`` if an existing one looks like it; with ``why=False`` always
        ``UsernameTaken``, without the read that tells which (a guest's name, to be tried
        again with another)."""
        new = partial(_new_player, username, password_hash, guest, now or utcnow())
        try:
            if self._pg_now is not None:  # one statement (server/db/postgres_now.py)
                return await self._create_account_now(new(), session)
            return await self._write_now(partial(_create_account, new, session))
        except IntegrityError:
            if not why:
                raise UsernameTaken(f"the username {username!r} is taken") from None
            raise await self._taken(username) from None

    async def _create_account_now(self, player: Player, login: tuple[str, datetime]) -> PlayerRow:
        """``create_account``'s write on PostgreSQL (``PostgresNow.create_account``)."""
        assert self._pg_now is not None
        columns = {column: getattr(player, column) for column in postgres_now.PLAYER_COLUMNS}
        token_hash, expires_at = login
        session = {
            "token_hash": token_hash,
            "created_at": player.created_at,
            "expires_at": expires_at,
        }
        player.id = await self._pg_now.create_account(columns, session)
        return PlayerRow.of(player)

    async def _taken(self, username: str) -> UsernameTaken:
        """Why ``username`` could not be added: its name is taken, or one like it (read
        after the refused insert: the unique indexes decided, this only says which)."""
        async with self._read() as session:
            existing = await session.scalar(
                select(Player.username)
                .where(Player.username_key != username.lower())
                .where(Player.username_skeleton == skeleton(username))
            )
        if existing is not None:
            return UsernameLookalike(username, existing)
        return UsernameTaken(f"the username {username!r} is taken")

    async def get_player(self, username: str) -> PlayerRow | None:
        """The player called ``username`` (in any case), or None."""
        async with self._read() as session:
            player = await session.scalar(
                select(Player).where(Player.username_key == username.lower())
            )
            return PlayerRow.of(player) if player is not None else None

    async def create_session(
        self,
        player_id: int,
        token_hash: str,
        expires_at: datetime,
        *,
        now: datetime | None = None,
    ) -> None:
        """Store a login session (the SHA-256 hex of its token, never the token)."""
        try:
            async with self._write() as session:
                session.add(
                    PlayerSession(
                        player_id=player_id,
                        token_hash=token_hash,
                        created_at=now or utcnow(),
                        expires_at=expires_at,
                    )
                )
        except IntegrityError:
            raise Conflict(
                f"cannot store the session: unknown player {player_id} or a reused token"
            ) from None

    async def find_session(self, token_hash: str, now: datetime) -> SessionRow | None:
        """The session of ``token_hash`` with its player; None if unknown, expired at
        ``now`` or revoked."""
        async with self._read() as session:
            found = (
                await session.execute(
                    select(PlayerSession, Player)
                    .join(Player, Player.id == PlayerSession.player_id)
                    .where(
                        PlayerSession.token_hash == token_hash,
                        PlayerSession.revoked_at.is_(None),
                        PlayerSession.expires_at > now,
                    )
                )
            ).first()
            if found is None:
                return None
            login, player = found
            return SessionRow(PlayerRow.of(player), login.created_at, login.expires_at)

    async def session_player(self, token_hash: str, now: datetime) -> PlayerRow | None:
        """The player of a valid session; None if unknown, expired or revoked."""
        found = await self.find_session(token_hash, now)
        return found.player if found is not None else None

    async def revoke_session(self, token_hash: str, *, now: datetime | None = None) -> bool:
        """Revoke a session; False if there was no such session not yet revoked."""
        async with self._write() as session:
            result = await session.execute(
                update(PlayerSession)
                .where(PlayerSession.token_hash == token_hash, PlayerSession.revoked_at.is_(None))
                .values(revoked_at=now or utcnow())
            )
            return bool(getattr(result, "rowcount", 0))

    async def delete_expired_sessions(self, now: datetime) -> int:
        """Housekeeping: delete the sessions expired at ``now``; how many."""
        async with self._write() as session:
            result = await session.execute(
                delete(PlayerSession).where(PlayerSession.expires_at <= now)
            )
            return int(getattr(result, "rowcount", 0))

    async def purge_guests(
        self, created_before: datetime, now: datetime, *, after_id: int = 0, limit: int = 500
    ) -> GuestPurge:
        """Remove up to ``limit`` guests (by id, after ``after_id``) created before
        ``created_before`` with no session valid at ``now``: a guest named in a match
        (finished, in play, or seated at an open table) keeps its row, so records keep
        their names, and loses its sessions; any other is deleted. Call again with
        ``after_id=result.next_after`` until that is None."""
        async with self._write() as session:
            valid = (
                select(PlayerSession.id)
                .where(
                    PlayerSession.player_id == Player.id,
                    PlayerSession.revoked_at.is_(None),
                    PlayerSession.expires_at > now,
                )
                .exists()
            )
            candidates = await session.execute(
                select(Player.id, Player.username_key)
                .where(
                    Player.guest.is_(True),
                    Player.created_at < created_before,
                    Player.id > after_id,
                    ~valid,
                )
                .order_by(Player.id)
                .limit(limit)
            )
            expired: dict[int, str] = dict(candidates.all())
            if not expired:
                return GuestPurge(0, 0, None)
            ids = sorted(expired)
            played = set(
                await session.scalars(
                    select(MatchPlayer.player_id).where(MatchPlayer.player_id.in_(ids)).distinct()
                )
            )
            # Matches in play and open tables are few (bounded by the tables): their seats
            # are read here rather than searched inside JSON, which the databases differ on.
            seated: set[str] = set()
            for seats in await session.scalars(select(Match.seats).where(Match.ended_at.is_(None))):
                seated.update(s.lower() for s in seats if isinstance(s, str))
            for seats in await session.scalars(
                select(GameTable.seats).where(GameTable.state.in_(("waiting", "playing")))
            ):
                seated.update(s.lower() for s in seats if isinstance(s, str))
            kept = sorted(i for i in ids if i in played or expired[i] in seated)
            gone = sorted(set(ids) - set(kept))
            await session.execute(delete(PlayerSession).where(PlayerSession.player_id.in_(ids)))
            if gone:
                await session.execute(delete(Player).where(Player.id.in_(gone)))
            return GuestPurge(len(gone), len(kept), ids[-1] if len(ids) == limit else None)
