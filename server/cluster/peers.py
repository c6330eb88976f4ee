"""Another node's connection, as this node's tables and services see it.

What a table of ours (or the coordinator's queue and tournaments) sends a connection of
another node goes back to that node over the bus (``out``, ``prompt``, ``attach``), in
order. A table's words carry the table and the fencing token it runs with (``stamp``): a
node that has heard of a newer owner of the table drops them.
"""

from __future__ import annotations

from server.cluster.bus import Bus
from server.cluster.messages import Attach, Out, Prompt, Sender
from server.table import speaking


class RemotePeer:
    """A connection of another node, as this node's tables and services see it: what they
    send it goes back to its node, in order."""

    def __init__(
        self,
        bus: Bus,
        here: str,
        home: str,
        cid: str,
        *,
        username: str | None,
        guest: bool,
        address: str,
        version: int,
    ) -> None:
        self._bus = bus
        self._here = here  # this node's name
        self.home = home  # the node the connection is on
        self.cid = cid
        self.username = username
        self.guest = guest
        self.address = address
        self.version = version  # the protocol version it speaks
        self.tables: set[str] = set()  # this node's tables it was sent to

    @property
    def sender(self) -> Sender:
        """The connection as the sender of a message relayed for it."""
        return Sender(self.home, self.cid, self.username, self.guest, self.address, self.version)

    def send(self, text: str) -> None:
        stamped = stamp()
        if stamped is None:
            self._bus.send(self.home, Out(self.cid, text))
        else:
            self._bus.send(self.home, Out(self.cid, text, *stamped))

    def prompted(self, table: str, seq: int) -> None:
        stamped = stamp()
        if stamped is None:
            self._bus.send(self.home, Prompt(self.cid, table, seq))
        else:
            self._bus.send(self.home, Prompt(self.cid, stamped[0], seq, stamped[1]))

    def attach(self, table_id: str) -> None:
        """A table of this node took the connection in (the queue, a tournament seated it)."""
        self.tables.add(table_id)
        self._bus.send(self.home, Attach(self.cid, table_id, self._here))


def stamp() -> tuple[str, int] | None:
    """The table speaking (sending from its task, ``server.table.speaking``) and the
    fencing token it runs with, which its words carry: a node that has heard of a newer
    owner drops them. None for a word of no table's (the queue's, a tournament's)."""
    table = speaking.get()
    lease = table.lease if table is not None else None
    if table is not None and lease is not None:
        return table.id, lease.token
    return None
