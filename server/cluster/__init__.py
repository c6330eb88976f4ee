"""Cluster mode: several ``guobiao serve`` processes on one PostgreSQL and one Redis
(``node``: presence, leases, failover, relaying; ``keeper``: the leases' own thread;
``bus``: the messages between nodes). docs/deployment.md says how to run it."""
