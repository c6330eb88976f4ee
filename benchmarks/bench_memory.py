"""The server's memory per connection: RSS with N guests connected, logged in, on the lobby.

For each N (default 1,000 and 4,000) a fresh ``guobiao serve`` is started as a subprocess
(its own temporary SQLite file, the guest limits raised so that N guests can be made at
once, ``max_connections`` above N; compression is off, as the server always has it). The
clients run in this process (the project's ``Client``), never in the server's. The server's
``VmRSS`` (``/proc/PID/status``) is read

- after start (once a few warm-up connections have logged in, joined the lobby and left, so
  that first-use allocations are not counted against the N),
- after N connections are open and each is a guest (``hello``, ``guest``),
- after each has also subscribed to the lobby (``subscribe_lobby``),

and the growth divided by N is printed as KiB per connection, with the goal (under 30 KiB).
The soft limit of open files is raised to the hard one here and in the server (each
connection holds one descriptor on each side).

``--other TREE`` runs the same measure against a server started from another checkout (a
git worktree) in turns, for an A/B of a change in the same run: the server runs with that
tree's code as its working directory (``python -c`` puts it first on the path).
``--tracemalloc`` starts the server under ``tracemalloc`` and prints, after the lobby step,
the lines of code that hold the most of the memory allocated since the baseline (Python
objects only: the kernel's socket buffers and the allocator's slack are in the RSS but not
there). Figures only: no assertion.

    .venv/bin/python benchmarks/bench_memory.py [--counts 1000,4000] [--other TREE]
        [--tracemalloc]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import ROOT, ab_trees, announced_port, rss_kib

sys.path.insert(0, str(ROOT))

from server.client import Client, ServerError

SITE = """\
[server]
data_dir = "{data}"
log_level = "warning"
[limits]
max_connections = {max_connections}
waiting_tables_per_address = 0
connections_per_address = 0
[accounts]
guest_burst = 100000
guest_per_hour = 1000000
"""
# The server, started through this so that the benchmark can look inside it: with
# GUOBIAO_BENCH_TRACE set, SIGRTMIN starts tracemalloc (at the baseline, so only what is
# allocated after it is traced, and start-up runs at full speed) and SIGUSR2 writes the
# memory still held by what was allocated since then, by file and by line, to that file.
# (Not SIGUSR1: the server takes it, for an operator's dump of its tasks.)
BOOT = """\
import os, signal, sys, tracemalloc
trace = os.environ.get("GUOBIAO_BENCH_TRACE")
if trace:
    def mark(signum, frame):
        tracemalloc.start(1)
    def dump(signum, frame):
        now = tracemalloc.take_snapshot()
        tracemalloc.stop()
        with open(trace, "w") as out:
            for key, top in (("filename", 12), ("lineno", 25)):
                out.write(f"by {key}:\\n")
                for stat in now.statistics(key)[:top]:
                    out.write(f"{stat.size / 1024:10.0f} KiB {stat.count:8d} blocks  "
                              f"{stat.traceback[0]}\\n")
            out.write("END\\n")
    signal.signal(signal.SIGRTMIN, mark)
    signal.signal(signal.SIGUSR2, dump)
from server.cli import main
sys.exit(main(sys.argv[1:]))
"""
WARM_UP = 8
SETTLE = 1.0  # seconds for the server to finish its work before its RSS is read


def raise_open_files() -> None:
    """The soft limit of open files up to the hard one (in this process and, run as a
    ``preexec_fn``, in the server's)."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


RETRIES: list[str] = []  # guests asked again after an internal_error (see open_guests)


async def open_guests(url: str, n: int, concurrency: int = 32) -> list[Client]:
    """N connections, each a guest. A guest refused with ``internal_error`` is asked again
    (three times at most; counted in ``RETRIES``): on SQLite, many guests made at once can
    find the database locked when the server is slowed down (under ``--tracemalloc``)."""
    gate = asyncio.Semaphore(concurrency)

    async def one() -> Client:
        async with gate:
            client = await Client.connect(url, rate=None, timeout=60)
            for attempt in range(4):
                try:
                    await client.guest()
                    break
                except ServerError as exc:
                    if exc.code != "internal_error" or attempt == 3:
                        raise
                    RETRIES.append(exc.code)
            return client

    return list(await asyncio.gather(*(one() for _ in range(n))))


async def subscribe(clients: list[Client], concurrency: int = 64) -> None:
    gate = asyncio.Semaphore(concurrency)

    async def one(client: Client) -> None:
        async with gate:
            await client.request("subscribe_lobby", {"on": True})

    await asyncio.gather(*(one(c) for c in clients))


async def measure(url: str, pid: int, n: int, trace: Path | None) -> dict[str, float]:
    warm = await open_guests(url, WARM_UP)
    await subscribe(warm)
    await asyncio.gather(*(c.close() for c in warm))
    await asyncio.sleep(SETTLE)
    base = rss_kib(pid)
    if trace is not None:
        os.kill(pid, signal.SIGRTMIN)
        await asyncio.sleep(SETTLE)
        base = rss_kib(pid)
    started = time.perf_counter()
    clients = await open_guests(url, n)
    opened = time.perf_counter() - started
    await asyncio.sleep(SETTLE)
    logged_in = rss_kib(pid)
    await subscribe(clients)
    await asyncio.sleep(SETTLE)
    lobby = rss_kib(pid)
    if trace is not None:
        os.kill(pid, signal.SIGUSR2)
        for _ in range(600):
            if trace.exists() and trace.read_text().endswith("END\n"):
                break
            await asyncio.sleep(0.1)
        print(f"  tracemalloc, held of what was allocated after the baseline ({n} connections):")
        for line in trace.read_text().splitlines()[:-1]:
            print(f"  {line}")
    await asyncio.gather(*(c.close() for c in clients), return_exceptions=True)
    return {
        "base_kib": base,
        "login_kib": logged_in,
        "lobby_kib": lobby,
        "login_per_conn": (logged_in - base) / n,
        "lobby_per_conn": (lobby - base) / n,
        "open_s": opened,
    }


def one_run(tree: Path, n: int, tracing: bool) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        site = Path(folder) / "site.toml"
        site.write_text(SITE.format(data=Path(folder) / "data", max_connections=n + 100))
        trace = Path(folder) / "trace.txt" if tracing else None
        errors = (Path(folder) / "stderr.txt").open("w")
        env = dict(os.environ)
        if trace is not None:
            env["GUOBIAO_BENCH_TRACE"] = str(trace)
        server = subprocess.Popen(
            [sys.executable, "-c", BOOT, "serve", "--config", str(site), "--port", "0"],
            cwd=tree,
            env=env,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            preexec_fn=raise_open_files,  # noqa: PLW1509 (no threads started yet)
        )
        assert server.stdout is not None
        try:
            try:
                port = announced_port(server)
            except RuntimeError as exc:
                said = (Path(folder) / "stderr.txt").read_text()
                raise RuntimeError(f"{exc} {said}") from None
            url = f"ws://127.0.0.1:{port}/ws"
            try:
                return asyncio.run(measure(url, server.pid, n, trace))
            except Exception:
                said = (Path(folder) / "stderr.txt").read_text()
                print(f"bench_memory: the server said:\n{said[-3000:]}", file=sys.stderr)
                raise
        finally:
            server.terminate()
            server.wait(60)
            server.stdout.close()
            errors.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--counts", default="1000,4000", help="connections, comma-separated")
    parser.add_argument("--other", type=Path, help="another checkout to compare (A/B)")
    parser.add_argument("--tracemalloc", action="store_true", help="profile the server")
    args = parser.parse_args()
    raise_open_files()
    counts = [int(c) for c in args.counts.split(",")]
    _, limit = resource.getrlimit(resource.RLIMIT_NOFILE)
    if 2 * max(counts) + 100 > limit:
        sys.exit(
            f"bench_memory: {max(counts)} connections need about {2 * max(counts) + 100} "
            f"open files here, the hard limit is {limit}"
        )
    trees = ab_trees(args.other)
    print(
        f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs; goal: under 30 KiB "
        "per connection (compression off)"
    )
    results: dict[tuple[str, int], dict[str, float]] = {}
    for n in counts:
        for name, tree in trees.items():
            r = one_run(tree, n, args.tracemalloc)
            results[name, n] = r
            print(
                f"{name:5} {n:5} connections: RSS {r['base_kib'] / 1024:.1f} MiB after start, "
                f"{r['login_kib'] / 1024:.1f} MiB logged in ({r['login_per_conn']:.1f} KiB per "
                f"connection), {r['lobby_kib'] / 1024:.1f} MiB on the lobby "
                f"({r['lobby_per_conn']:.1f} KiB per connection); opened in {r['open_s']:.1f} s",
                flush=True,
            )
            if RETRIES:
                print(f"      {len(RETRIES)} guest(s) asked again after an internal_error")
                RETRIES.clear()
        if "other" in trees:
            this, other = results["this", n], results["other", n]
            ratio = this["lobby_per_conn"] / other["lobby_per_conn"]
            print(f"      {n:5} connections: this/other {ratio:.2f} (KiB per connection, lobby)")


if __name__ == "__main__":
    main()
