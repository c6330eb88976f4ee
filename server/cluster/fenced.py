"""A table's store in cluster mode, which is also its lease: writes carry the fencing token.

Taking a table over increments the table's fencing token in the database
(``Store.take_table``); the owner's every append to the action log, save of the table's
row and new match carries the token it took the table with, and the database refuses an
older one (``Fenced``), in the same transaction, holding the table's row. A refused write
tells the node, which drops the table: a node that was paused or cut off, and comes back
after its lease moved, cannot write one more action.
"""

from __future__ import annotations

from typing import Any, Protocol

from server.db.errors import Fenced
from server.db.store import TableRow


class Holder(Protocol):
    """The node holding a table's lease, as its fenced store asks it."""

    def lease_key(self, table_id: str) -> str: ...

    def lease_held(self, key: str) -> bool: ...

    async def until_held(self, key: str) -> bool: ...

    def fenced(self, table_id: str, token: int) -> None: ...


class FencedStore:
    """A table's store in cluster mode: the database's, with the table's fencing token on
    every write that must be the owner's (``append_action``, ``save_table``,
    ``create_match``). A refused write (``Fenced``) tells the node, which drops the table.
    It is also the table's lease (``held``, ``regained``: ``server.table.Lease``)."""

    def __init__(self, store: Any, table_id: str, token: int, node: Holder) -> None:
        self._store = store
        self.table_id = table_id
        self.token = token
        self._node = node
        self.key = node.lease_key(table_id)

    # The table's lease (``server.table.Lease``): whether this node still runs it.

    def held(self) -> bool:
        return self._node.lease_held(self.key)

    async def regained(self) -> bool:
        return await self._node.until_held(self.key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    async def append_action(self, *args: Any, **kwargs: Any) -> None:
        try:
            await self._store.append_action(*args, fence=(self.table_id, self.token), **kwargs)
        except Fenced:
            self._node.fenced(self.table_id, self.token)
            raise

    async def save_table(self, row: TableRow) -> None:
        try:
            await self._store.save_table(row, fence=self.token)
        except Fenced:
            self._node.fenced(self.table_id, self.token)
            raise

    async def create_match(self, *args: Any, **kwargs: Any) -> int:
        try:
            match_id: int = await self._store.create_match(*args, fence=self.token, **kwargs)
        except Fenced:
            self._node.fenced(self.table_id, self.token)
            raise
        return match_id
