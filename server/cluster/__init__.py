"""Cluster mode: several ``guobiao serve`` processes on one PostgreSQL and one Redis.

``node``: this process as a node (presence, the beat, the coordinator, adoption and
hand-off), made of parts on a shared ``state``: ``leases`` (which leases it holds and
trusts), ``relaying`` (connections to other nodes' tables), ``inbox`` (what the other
nodes' messages do here); ``fenced``: a table's store whose writes carry its fencing token;
``peers``: another node's connection as this node's tables see it; ``directory``: what the
nodes publish for each other in Redis; ``keeper``: the leases' own thread; ``bus``: the
messages between nodes over Redis pub/sub, each kind typed in ``messages``.
docs/deployment.md says how to run it.
"""
