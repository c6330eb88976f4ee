"""``guobiao loadtest``: many tables of network bots against one server; latency and throughput.

    guobiao loadtest --url ws://127.0.0.1:8765/ws --tables 10 --duration 30 --bot fast

Runs ``--tables`` tables of four bots each; every bot has its own connection and guest
account, and one bot of each table creates it. A table whose match ends starts a new one with
the same bots, so the load stays steady. The tables are created with ``claim_window_ms`` 0:
no minimum pause after a discard (the bots' connections are people to the server, so their
claim windows are still held open until every answer is in). After ``--duration`` seconds
the bots stop sending, the connections close, and the report is printed (``--json``: one
JSON object):

- actions sent and accepted (not refused by an ``error``), accepted actions per second;
- action-to-update latency: from sending an action to the next ``update`` of that table on
  that connection (p50, p95, p99, max). When several players answer a discard, the update
  comes once the last has answered, so the latency includes the others' decisions;
- the server's latency: from the last action the table waited for to the first ``update`` of
  that table on any of its four connections (a discard is seen by the others at once; a pass
  is answered when the last player asked has answered), counted once every connection is
  seated (start-up, with its logins, left out: the connections held, not being opened). The
  others' decisions are not in it, so at human pace this is the figure of the server's own
  speed (the first is mostly the others' think times);
- error messages received, by code; dropped connections (closed before the end, not by us);
- matches started and completed.

Pacing like people (``--think 0.8-3 --seed 1``): before each decision a bot waits a think
time drawn at random from the range, in seconds, uniformly; a pass (declining a claim) draws
from the range's quickest quarter, as a person who has nothing to claim answers sooner. Each
connection draws from its own random stream, seeded by ``--seed`` and the connection's index
(``Pacer``), so the tables do not all act at the same instant and a run's think times (and
its bots' seeds) are the same for the same seed. ``--think-ms X`` is a fixed pause of X
milliseconds before every action (``--think`` with LOW = HIGH, in seconds); without either
the bots answer at once.

One Python process holding thousands of connections is itself slow to read what arrives: its
latencies then measure the client as much as the server (one process with 4,000 bots
reported a server p99 twice what two processes of 2,000 did, same server, same load).
``--processes N`` spreads the tables over N client processes (``guobiao loadtest`` run N
times, each with its share of the tables, the connections keeping the random streams they
would have in one process) and merges their reports: the percentiles are of every sample.

Start-up is staggered: at most ``--connect-concurrency`` connections are being opened at once,
table by table (a table's four in turn, then the next table's), so each table starts playing
as soon as its players are in, as people arriving do.
Outgoing messages are paced per connection (``--rate``, the server's default limit) so the
bots do not trip the server's rate limit; raise it for a server configured higher. Only the
given URL is contacted.
"""

from __future__ import annotations

from server.cli.loadtest.bots import loadtest
from server.cli.loadtest.command import add_parser, run
from server.cli.loadtest.pacing import Pacer, Think, think_ms, think_range
from server.cli.loadtest.report import Report, percentile

__all__ = [
    "Pacer",
    "Report",
    "Think",
    "add_parser",
    "loadtest",
    "percentile",
    "run",
    "think_ms",
    "think_range",
]
