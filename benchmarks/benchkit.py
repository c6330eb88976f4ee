"""What several benchmarks do alike, written once (the PostgreSQL scratch databases are the
tests' ``tests/pgkit.py``, shared with the benchmarks that need one).

- ``ROOT``: this tree (the benchmarks run its commands from there).
- ``paused_gc()``: the garbage collector collected, then off while a timed loop runs, so
  that a collection does not land in one side's time and not in the other's.
- ``free_port()``: a TCP port free on 127.0.0.1 now, for a server started with it.
- ``announced_port(server)``: the port a ``guobiao serve --port 0`` child listens on, read
  from the line it prints once it serves.
- ``cpu_seconds(pid)``: a process's CPU time so far (Linux ``/proc``); ``rss_kib(pid)``: its
  resident memory.
- ``scrape(port)``: a server's ``/metrics`` as (name, labels, value) samples; ``total(...)``:
  the sum of one series' samples.
- ``serve(site, tree)``: ``guobiao serve --config SITE --port 0`` of ``tree``'s code (its
  working directory), quiet, its first line to be read by ``announced_port``.
- ``tree_env(tree)``: the environment of a child process that is to run ``tree``'s code, and
  whose own children (``serve --workers``' workers, ``loadtest --processes``' parts) are to
  run it too; ``own_folders(tree)``: ``tree``'s configuration, migrations and web client
  linked into its ``server``, where the install would map this tree's.
- ``ms(value)``: milliseconds as a table prints them ("-" for none, whole from 10).
- ``loadtest(url, tables, duration, ...)``: ``guobiao loadtest --json`` in a child process
  (so that its bots do not share this process's event loop with anything), its report.

Only the standard library here: ``ab.py`` imports two trees' ``engine`` one after the other
and must not have either loaded by this module.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import socket
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TICKS = os.sysconf("SC_CLK_TCK")


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """Collect, then keep the garbage collector off until the block ends."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now (the kernel's choice)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def announced_port(server: subprocess.Popen[str], timeout: float = 60.0) -> int:
    """The port of a ``guobiao serve --port 0`` started with ``stdout=PIPE, text=True``,
    from its first line (``guobiao serving on ws://127.0.0.1:PORT/ws ...``).
    ``RuntimeError`` quoting what it printed when that line does not come within
    ``timeout`` seconds or says something else."""
    assert server.stdout is not None, "start the server with stdout=subprocess.PIPE"
    ready, _, _ = select.select([server.stdout], [], [], timeout)
    line = server.stdout.readline() if ready else ""
    if "127.0.0.1:" not in line:
        raise RuntimeError(f"the server did not start within {timeout:g} s: {line!r}")
    return int(line.split("127.0.0.1:")[1].split("/")[0])


# The folders the install maps into ``server`` (pyproject.toml's package-dir). This venv's
# editable install maps them to this tree's folders, so another tree's server would read this
# tree's default configuration, migrations and web client: a link in that tree's ``server``
# finds its own first (imports look in the package's folder before the editable install's
# finder).
SHIPPED = {"config_files": "config", "migrations": "migrations", "web": "web"}


def own_folders(tree: Path) -> None:
    """Link ``tree``'s configuration, migrations and web client into its ``server``, unless
    the install maps them to ``tree`` already (the tree of this venv's editable install)."""
    from importlib import resources  # noqa: PLC0415 (imports ``server``: only when needed)

    mapped = Path(str(resources.files("server.config_files"))).resolve()
    if mapped == (tree / "config").resolve():
        return
    for name, folder in SHIPPED.items():
        link = tree / "server" / name
        if not link.exists():
            link.symlink_to(Path("..") / folder)


def ab_trees(other: Path | None) -> dict[str, Path]:
    """The trees an A/B benchmark runs: this one, and ``other`` (another checkout, a git
    worktree) when given."""
    return {"this": ROOT} | ({"other": other.resolve()} if other is not None else {})


def child_figures(code: str, tree: Path, *args: object) -> dict[str, Any]:
    """Run ``code`` (a benchmark's child script, which prints one JSON object) in a child of
    this interpreter from ``tree`` (its code first on the path), with ``tree`` and ``args``
    as its arguments; the object it printed."""
    done = subprocess.run(
        [sys.executable, "-c", code, str(tree), *map(str, args)],
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, Any] = json.loads(done.stdout)
    return figures


def tree_env(tree: Path, env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) for a child running ``tree``'s code: ``PYTHONPATH``
    ``tree``. ``python -m server`` from ``tree`` runs its code already, but the processes the
    command starts in turn (``serve --workers``' workers, ``loadtest --processes``' parts)
    leave the working directory off their path (``server.cli.child_command``) and, without
    this, ran the installed package's code: an A/B of two trees under two workers compared
    this venv's install with itself."""
    own_folders(tree)
    return {**(os.environ if env is None else env), "PYTHONPATH": str(tree)}


def serve(site: Path, tree: Path = ROOT) -> subprocess.Popen[str]:
    """``guobiao serve`` on a free port with the configuration ``site``, run from ``tree``
    (``python -m server`` puts the working directory's code first on the path)."""
    return subprocess.Popen(
        [sys.executable, "-m", "server", "serve", "--config", str(site), "--port", "0"],
        cwd=tree,
        env=tree_env(tree),
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far (``/proc/PID/stat``; ``OSError``
    where there is none)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_kib(pid: int) -> int:
    """The resident set size of a process, KiB (``VmRSS`` in ``/proc/PID/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


def scrape(port: int) -> list[tuple[str, dict[str, str], float]]:
    """The server's ``/metrics``: (series name, labels, value) for every sample."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        text = reply.read().decode()
    out = []
    for line in text.splitlines():
        if line.startswith("#") or " " not in line:
            continue
        key, value = line.rsplit(" ", 1)
        name, _, rest = key.partition("{")
        labels = {
            part.split("=", 1)[0]: part.split("=", 1)[1].strip('"')
            for part in rest.rstrip("}").split(",")
            if "=" in part
        }
        out.append((name, labels, float(value)))
    return out


def total(series: list[tuple[str, dict[str, str], float]], name: str, **match: str) -> float:
    """The sum of series ``name``'s samples whose labels include ``match``."""
    return sum(
        v
        for n, labels, v in series
        if n == name and all(labels.get(k) == x for k, x in match.items())
    )


def ms(value: float | None) -> str:
    """Milliseconds as the benchmarks' tables print them: "-" for none, whole from 10 up,
    else to a tenth."""
    return "-" if value is None else f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def loadtest(url: str, tables: int, duration: float, *options: str) -> dict[str, Any]:
    """``guobiao loadtest --url URL --tables N --duration S --json OPTIONS...``, this tree's,
    in a child process; its JSON report. ``CalledProcessError`` when it fails."""
    command = [
        *(sys.executable, "-m", "server", "loadtest", "--url", url),
        *("--tables", str(tables), "--duration", str(duration), "--json", *options),
    ]
    done = subprocess.run(
        command, cwd=ROOT, env=tree_env(ROOT), capture_output=True, text=True, check=True
    )
    report: dict[str, Any] = json.loads(done.stdout)
    return report
