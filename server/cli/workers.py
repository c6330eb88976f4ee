"""``guobiao serve --workers N``: N worker processes of one node on one port.

Each worker is a ``guobiao serve`` of its own (the same arguments, ``--workers`` left out),
a cluster node named ``NODE/wI`` (``[server] node``, else ``hostname:port``); they listen on
the same port with ``SO_REUSEPORT`` (``[server] share_port``, set for them), so the kernel
spreads new connections among them, and share the tables as any nodes of a cluster do
(server/cluster/node.py). A connection that joins or watches a table another worker runs
(or resumes a seat at one) is handed to that worker (server/handoff.py), through a private
folder of sockets this process makes (``[server] handoff_dir``, set for them) and removes as
it ends. This process only supervises: a worker that dies is started again (after a pause
that grows if it keeps dying); SIGTERM or Ctrl-C stops them all, each handing its tables to
the others as it goes. A worker whose supervisor is gone (killed with SIGKILL, say) stops as
if told to (``SUPERVISOR_ENV``): else it would go on serving beside the workers the next
supervisor starts on the same port.

Each worker counts its own metrics (a registry per process, its ``node`` label its name):
with ``[metrics] listen`` set, worker I serves them on that port plus I - 1 (``worker_metrics``),
so that a scraper reaches each; on the shared game port a scrape would get one worker at
random.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from types import FrameType

from server.cli import child_command
from server.config import Config

RESTART_FIRST, RESTART_MAX = 1.0, 30.0  # seconds before a dead worker is started again
SUPERVISOR_ENV = "GUOBIAO_SUPERVISOR_PID"  # a worker's: its supervisor's pid, to watch
KILL_AFTER = 75.0  # seconds after SIGTERM before a worker still running is killed


def worker_args(argv: list[str]) -> list[str]:
    """``argv`` without its ``--workers N`` and ``--node NAME`` (either also as ``=``): each
    worker is given its own name."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in ("--workers", "--node"):
            skip = True
            continue
        if arg.startswith(("--workers=", "--node=")):
            continue
        out.append(arg)
    return out


def worker_metrics(listen: str, index: int) -> str:
    """Worker ``index``'s (1..N) ``[metrics] listen``: ``listen`` (``HOST:PORT``) with its port
    plus ``index - 1``; port 0 stays 0 (each worker a free port of its own); "" stays ""."""
    if not listen:
        return ""
    host, _, port = listen.rpartition(":")
    first = int(port)
    return f"{host}:{first + index - 1 if first else 0}"


def supervise(argv: list[str], count: int, config: Config) -> int:
    """Run ``count`` workers until SIGTERM/SIGINT; the exit status is 0 if all stopped
    cleanly."""
    base = config.server.node or f"{socket.gethostname()}:{config.server.port}"
    args = worker_args(argv)
    names = [f"{base}/w{i}" for i in range(1, count + 1)]
    # Mode 0700: only this user's processes reach the workers' sockets.
    handoff = config.server.handoff_dir or tempfile.mkdtemp(prefix="guobiao-handoff-")
    try:
        return _run(names, args, config, handoff)
    finally:
        if not config.server.handoff_dir:
            shutil.rmtree(handoff, ignore_errors=True)


def _run(names: list[str], args: list[str], config: Config, handoff: str) -> int:
    count = len(names)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    waits = dict.fromkeys(names, RESTART_FIRST)
    stopping = False
    killing_at = float("inf")  # when workers that ignored SIGTERM are killed

    def start(name: str) -> None:
        env = {
            **os.environ,
            "GUOBIAO_SERVER_NODE": name,
            "GUOBIAO_SERVER_SHARE_PORT": "true",
            "GUOBIAO_SERVER_HANDOFF_DIR": handoff,
            SUPERVISOR_ENV: str(os.getpid()),
        }
        if config.metrics.listen:
            env["GUOBIAO_METRICS_LISTEN"] = worker_metrics(
                config.metrics.listen, names.index(name) + 1
            )
        command = child_command(*args, "--node", name)
        procs[name] = subprocess.Popen(command, env=env)

    def stop(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping, killing_at
        if stopping:
            return
        stopping = True
        killing_at = time.monotonic() + KILL_AFTER
        for proc in procs.values():
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    metrics = ""
    address = config.metrics.address
    if address is not None and address[1]:
        metrics = f"; metrics at {worker_metrics(config.metrics.listen, 1)} to "
        metrics += worker_metrics(config.metrics.listen, count)
    elif address is not None:
        metrics = "; metrics: each worker on a free port (its first line says which)"
    print(
        f"guobiao serve: {count} workers on port {config.server.port}: {', '.join(names)}{metrics}",
        flush=True,
    )
    for name in names:
        start(name)
    status = 0
    while procs:
        time.sleep(0.2)
        if stopping and time.monotonic() > killing_at:
            for name, proc in procs.items():
                if proc.poll() is None:
                    print(f"guobiao serve: worker {name} did not stop: killed", file=sys.stderr)
                    proc.kill()
            killing_at = float("inf")
        for name, proc in list(procs.items()):
            code = proc.poll()
            if code is None:
                continue
            del procs[name]
            if stopping:
                status = status or (code if code > 0 else 0)
                continue
            print(
                f"guobiao serve: worker {name} exited ({code}); starting it again in "
                f"{waits[name]:.0f} s",
                file=sys.stderr,
                flush=True,
            )
            time.sleep(waits[name])
            waits[name] = min(waits[name] * 2, RESTART_MAX)
            if not stopping:
                start(name)
    return status
