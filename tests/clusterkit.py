"""Clusters of ``guobiao serve`` processes for the multi-node tests and the failover benchmark
(tests/server/test_cluster.py, benchmarks/bench_failover.py).

- ``RedisServer``: a ``redis-server`` of the test's own on a free port (nothing saved to
  disk), so that a test may kill it and start it again without touching the machine's Redis;
  ``command`` speaks RESP to it directly (``GET``, ``KEYS``, ...).
- ``fresh_database``: a uniquely named PostgreSQL database on the server of
  ``GUOBIAO_TEST_POSTGRES_URL`` (default ``postgresql+asyncpg://postgres@127.0.0.1:5432/
  test``), migrated; ``pgkit.drop_database`` drops it at the end (tests/pgkit.py makes and
  drops the scratch databases of the tests and benchmarks alike).
- ``Node``: one ``python -m server serve --port P --node NAME`` process; its config comes
  from a TOML file shared by the cluster (timers, limits) and from the environment
  (``GUOBIAO_DATABASE_URL``, ``GUOBIAO_CLUSTER_*``). Its stdout and stderr go to one log file
  per node, every start appended (``tail`` shows the end). ``start`` waits for ``/readyz``
  200; ``kill`` (SIGKILL), ``pause`` / ``resume`` (SIGSTOP / SIGCONT), ``terminate``
  (SIGTERM) and ``restart`` (on the same port).
- ``Cluster``: the nodes ``n1..nN`` on one database and one Redis; ``owner(table)`` reads the
  table's lease, ``cli(...)`` runs ``guobiao cluster ...`` against the cluster's Redis.

Nothing here depends on pytest: a missing ``redis-server`` or PostgreSQL raises
``Unavailable`` (``pgkit``'s), which the tests turn into a skip (a failure under ``CI=true``).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from httpkit import http_request
from pgkit import POSTGRES_URL, Unavailable, create_database

REPO = Path(__file__).resolve().parents[1]
REDIS_SERVER = os.environ.get("GUOBIAO_TEST_REDIS_SERVER") or shutil.which("redis-server")
READY_TIMEOUT = 60.0  # seconds for a node to answer /readyz 200 (imports, migrations, restore)
TAIL_LINES = 40


# Ports for the nodes and Redis servers this kit starts: a block for each test process
# (pytest-xdist's worker gw0, gw1...), below the kernel's ephemeral ports (32768 and up on
# Linux), which every outgoing connection's own end and every port-0 probe take from. (Nodes
# used to listen with SO_REUSEPORT, so a port that two nodes happened to pick, the kernel's
# choice for one probe given again to another process's probe before the first node bound
# it, was not refused: the kernel split the connections between two clusters' nodes, and a
# test asking n1 got n2 of another test, seen once in CI. Now only ``--workers``' workers
# share a port, and such a clash fails the second node's start instead.)
PORT_BASE, PORT_BLOCK, BLOCKS = 10_000, 1_350, 16  # (10,000 to 31,600)
_ports = itertools.count()


def free_port() -> int:
    """A TCP port free on 127.0.0.1 now, from this test process's own block (above)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    first = PORT_BASE + PORT_BLOCK * (int(worker) % BLOCKS if worker.isdigit() else 0)
    while True:
        port = first + next(_ports) % PORT_BLOCK
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue  # taken (by a node of this process still running, say)
            return port


def tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of a log file ('' when there is none)."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


async def until(check: Callable[[], Any], timeout: float, what: str, interval: float = 0.05) -> Any:
    """Await ``check()`` (a coroutine function or a plain one) until it returns something
    true; return that. ``TimeoutError`` naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if asyncio.iscoroutine(got):
            got = await got
        if got:
            return got
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not within {timeout:g} s")
        await asyncio.sleep(interval)


# ------------------------------------------------------------------- Redis ---


class RespError(Exception):
    """An error reply from Redis (``-ERR ...``)."""


async def _read_reply(reader: asyncio.StreamReader) -> Any:
    line = (await reader.readline()).rstrip(b"\r\n")
    if not line:
        raise ConnectionError("Redis closed the connection")
    kind, rest = line[:1], line[1:]
    if kind == b"+":
        return rest.decode()
    if kind == b"-":
        raise RespError(rest.decode())
    if kind == b":":
        return int(rest)
    if kind == b"$":
        size = int(rest)
        if size < 0:
            return None
        data = await reader.readexactly(size + 2)
        return data[:-2].decode()
    if kind == b"*":
        count = int(rest)
        return None if count < 0 else [await _read_reply(reader) for _ in range(count)]
    raise ConnectionError(f"unexpected reply from Redis: {line!r}")


def delete_keys(url: str, prefix: str) -> None:
    """Delete the keys under ``prefix`` (``PREFIX:*``) on the Redis at ``url`` (redis-py): a
    test's or a benchmark's own, whatever became of what wrote them."""
    import redis  # noqa: PLC0415 (the cluster extra's; only the callers of this need it)

    client = redis.Redis.from_url(url)
    try:
        keys = list(client.scan_iter(match=f"{prefix}:*"))
        if keys:
            client.delete(*keys)
    finally:
        client.close()


async def redis_command(port: int, *args: str | int | float) -> Any:
    """One command on a fresh connection to the Redis at 127.0.0.1:``port``; its reply
    (strings, ints, None, lists). ``OSError`` when nothing answers."""
    reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 2)
    try:
        parts = [str(a).encode() for a in args]
        frame = b"*%d\r\n" % len(parts) + b"".join(b"$%d\r\n%s\r\n" % (len(p), p) for p in parts)
        writer.write(frame)
        await writer.drain()
        return await asyncio.wait_for(_read_reply(reader), 5)
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


@dataclass
class RedisServer:
    """A private ``redis-server`` on 127.0.0.1:``port`` that keeps nothing on disk."""

    folder: Path
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def log_path(self) -> Path:
        return self.folder / "redis.log"

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    async def start(self) -> None:
        if REDIS_SERVER is None or not Path(REDIS_SERVER).exists():
            raise Unavailable("redis-server is not installed (GUOBIAO_TEST_REDIS_SERVER)")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.starts += 1
        with open(self.log_path, "ab") as log_file:
            log_file.write(f"=== redis start {self.starts} ===\n".encode())
            log_file.flush()
            self.process = subprocess.Popen(
                [
                    *(REDIS_SERVER, "--port", str(self.port), "--bind", "127.0.0.1"),
                    *("--save", "", "--appendonly", "no", "--dir", str(self.folder)),
                ],
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        await until(self._pong, 10, f"redis-server on port {self.port}")

    async def _pong(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise Unavailable(f"redis-server exited:\n{tail(self.log_path)}")
        try:
            return await redis_command(self.port, "PING") == "PONG"
        except (OSError, ConnectionError, RespError):
            return False

    async def kill(self) -> None:
        """SIGKILL: everything it held is gone (it saves nothing)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            await asyncio.to_thread(self.process.wait, 10)

    async def restart(self, down_seconds: float = 0.0) -> None:
        """Kill it, stay down ``down_seconds``, start it again on the same port (empty)."""
        await self.kill()
        await asyncio.sleep(down_seconds)
        await self.start()

    async def command(self, *args: str | int | float) -> Any:
        return await redis_command(self.port, *args)

    def close(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)


async def private_redis(folder: Path) -> RedisServer:
    """A ``RedisServer`` of the test's own in ``folder``, started (the caller closes it).
    Where ``redis-server`` is missing the test is skipped, and fails in CI, which has it."""
    server = RedisServer(folder)
    try:
        await server.start()
    except Unavailable as exc:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs redis-server: {exc}")
        pytest.skip(str(exc))
    return server


# -------------------------------------------------------------- PostgreSQL ---


async def fresh_database(server_url: str = POSTGRES_URL) -> str:
    """A new database on the PostgreSQL server of ``server_url`` (``pgkit.create_database``),
    migrated to the newest revision once, before any node starts (nodes starting together
    then find it migrated); its URL. ``Unavailable`` when the server is unreachable; the
    caller drops it (``pgkit.drop_database``)."""
    from server.db.store import upgrade  # noqa: PLC0415 (heavy; only when a cluster starts)

    url = await create_database("guobiao_cluster", server_url)
    await upgrade(url)
    return url


# ------------------------------------------------------------------- nodes ---


def write_config(path: Path, sections: dict[str, dict[str, Any]]) -> Path:
    """A TOML file of ``sections`` (values: str, bool, int, float)."""
    lines: list[str] = []
    for section, values in sections.items():
        lines.append(f"[{section}]")
        for key, value in values.items():
            if isinstance(value, bool):
                lines.append(f"{key} = {'true' if value else 'false'}")
            elif isinstance(value, int | float):
                lines.append(f"{key} = {value}")
            else:
                lines.append(f"{key} = {json.dumps(str(value))}")
        lines.append("")
    path.write_text("\n".join(lines), encoding="utf-8")
    return path


@dataclass
class Node:
    """One ``guobiao serve`` process of a cluster, always on the same port."""

    cluster: Cluster
    name: str
    port: int = field(default_factory=free_port)
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0
    args: list[str] = field(default_factory=list)  # more arguments to ``serve``
    paused: bool = False  # SIGSTOPped by ``pause``

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/ws"

    @property
    def log_path(self) -> Path:
        return self.cluster.folder / f"{self.name}.log"

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def command(self) -> list[str]:
        return [
            sys.executable,
            "-m",
            "server",
            "serve",
            "--config",
            str(self.cluster.config_path),
            "--port",
            str(self.port),
            "--node",
            self.name,
            *self.args,
        ]

    def spawn(self) -> None:
        """Start the process (without waiting for it to be ready)."""
        assert not self.alive, f"{self.name} is running already"
        self.starts += 1
        self.paused = False
        data_dir = self.cluster.folder / f"{self.name}-data"
        data_dir.mkdir(exist_ok=True)
        env = self.cluster.environment()
        env["GUOBIAO_SERVER_DATA_DIR"] = str(data_dir)
        with open(self.log_path, "ab") as log_file:
            log_file.write(f"=== {self.name} start {self.starts}: port {self.port} ===\n".encode())
            log_file.flush()
            self.process = subprocess.Popen(
                self.command(),
                cwd=REPO,
                env=env,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )

    async def start(self, timeout: float = READY_TIMEOUT) -> Node:
        """Start the process and wait for ``/readyz`` 200."""
        self.spawn()
        await self.wait_ready(timeout)
        return self

    async def wait_ready(self, timeout: float = READY_TIMEOUT, path: str = "/readyz") -> None:
        """Until ``path`` answers 200; a ``RuntimeError`` with the log's tail if the process
        exits first or it does not answer 200 in time."""

        async def ready() -> bool:
            if not self.alive:
                raise RuntimeError(f"node {self.name} exited while starting:\n{self.tail()}")
            try:
                return (await http_request(self.port, path)).status == 200
            except (OSError, TimeoutError, ValueError, IndexError):
                return False

        try:
            await until(ready, timeout, f"{path} 200 from node {self.name}", interval=0.1)
        except TimeoutError as exc:
            raise RuntimeError(f"{exc}; its log:\n{self.tail()}") from None

    async def get(self, path: str) -> tuple[int, Any]:
        """``(status, JSON body)`` of a GET (the body as text when it is not JSON)."""
        answer = await http_request(self.port, path)
        text = answer.body.decode(errors="replace")
        try:
            return answer.status, json.loads(text)
        except ValueError:
            return answer.status, text

    async def healthz(self) -> dict[str, Any]:
        status, body = await self.get("/healthz")
        assert status == 200 and isinstance(body, dict), (status, body)
        return body

    async def readyz(self) -> tuple[int, dict[str, Any]]:
        status, body = await self.get("/readyz")
        return status, body if isinstance(body, dict) else {"body": body}

    def signal(self, number: int) -> None:
        assert self.process is not None and self.alive, f"{self.name} is not running"
        self.process.send_signal(number)

    async def kill(self) -> int:
        """SIGKILL, and wait for the exit."""
        self.signal(signal.SIGKILL)
        return await self.wait_exit()

    def pause(self) -> None:
        """SIGSTOP: the process sleeps, its sockets open and unanswered."""
        self.signal(signal.SIGSTOP)
        self.paused = True

    def resume(self) -> None:
        self.signal(signal.SIGCONT)
        self.paused = False

    def terminate(self) -> None:
        self.signal(signal.SIGTERM)

    async def wait_exit(self, timeout: float = 30) -> int:
        """The exit code (``-N``: killed by signal N); ``RuntimeError`` after ``timeout``."""
        assert self.process is not None
        try:
            return await asyncio.to_thread(self.process.wait, timeout)
        except subprocess.TimeoutExpired:
            raise RuntimeError(
                f"node {self.name} did not exit within {timeout:g} s:\n{self.tail()}"
            ) from None

    async def stop(self, timeout: float = 30) -> int:
        """SIGTERM (the graceful stop: its tables handed over), and wait for the exit."""
        self.terminate()
        return await self.wait_exit(timeout)

    async def restart(self, timeout: float = READY_TIMEOUT) -> Node:
        """SIGTERM if running, then start again on the same port; wait for /readyz 200."""
        if self.alive:
            await self.stop()
        return await self.start(timeout)

    def tail(self, lines: int = TAIL_LINES) -> str:
        return tail(self.log_path, lines)

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def close(self) -> None:
        """Kill the process if it runs (a stopped one too: SIGKILL needs no SIGCONT)."""
        if self.alive:
            assert self.process is not None
            self.process.kill()
            self.process.wait(10)


# ----------------------------------------------------------------- cluster ---

# Timers for tests whose players are bots that answer at once: turns long enough that no
# timeout ever plays for anyone (a match is then fixed by its seed), no pause between hands.
TEST_TIMERS: dict[str, Any] = {
    "turn_seconds": 120,
    "min_turn_seconds": 1,
    "max_turn_seconds": 120,
    "disconnected_seconds": 0.2,
    "hand_pause_seconds": 0,
    "unattended_move_seconds": 0,
    "restart_grace_seconds": 0.5,
    "claim_window_ms": 0,
}
# Every node's clients come from 127.0.0.1: no limit on the tables waiting for players either.
TEST_LIMITS: dict[str, Any] = {
    "messages_per_second": 10_000,
    "message_burst": 10_000,
    "waiting_tables_per_account": 0,
    "waiting_tables_per_address": 0,
}


@dataclass
class Cluster:
    """Nodes on one PostgreSQL database and one Redis. Build it with ``Cluster.create``;
    ``close`` kills every process (the database is the caller's to drop)."""

    folder: Path
    database_url: str
    redis: RedisServer
    lease_seconds: float = 3.0
    prefix: str = "guobiao"
    timers: dict[str, Any] = field(default_factory=lambda: dict(TEST_TIMERS))
    limits: dict[str, Any] = field(default_factory=lambda: dict(TEST_LIMITS))
    sections: dict[str, dict[str, Any]] = field(default_factory=dict)  # more config
    # The folder of the nodes' hand-over sockets, as ``serve --workers`` gives its workers
    # one (server/handoff.py): "" for none. A short path of the caller's (a socket's path
    # is 107 bytes at most).
    handoff_dir: str = ""
    nodes: dict[str, Node] = field(default_factory=dict)

    @property
    def config_path(self) -> Path:
        return self.folder / "cluster.toml"

    def write_config(self) -> None:
        write_config(
            self.config_path,
            {
                "server": {"host": "127.0.0.1", "log_format": "text", "log_level": "info"},
                "timers": self.timers,
                "limits": self.limits,
                **self.sections,
            },
        )

    def environment(self) -> dict[str, str]:
        """The nodes' environment: this process's without any GUOBIAO_ variable, plus the
        database and the cluster settings."""
        env = {k: v for k, v in os.environ.items() if not k.startswith("GUOBIAO_")}
        env["PYTHONUNBUFFERED"] = "1"
        env["GUOBIAO_DATABASE_URL"] = self.database_url
        env["GUOBIAO_CLUSTER_REDIS_URL"] = self.redis.url()
        env["GUOBIAO_CLUSTER_LEASE_SECONDS"] = str(self.lease_seconds)
        env["GUOBIAO_CLUSTER_PREFIX"] = self.prefix
        if self.handoff_dir:
            env["GUOBIAO_SERVER_HANDOFF_DIR"] = self.handoff_dir
        return env

    def add(self, name: str | None = None, args: Iterable[str] = ()) -> Node:
        """A node not started yet (``n1``, ``n2``, ... by default)."""
        name = name or f"n{len(self.nodes) + 1}"
        node = Node(self, name, args=list(args))
        self.nodes[name] = node
        return node

    async def start(self, count: int, timeout: float = READY_TIMEOUT) -> list[Node]:
        """Start ``count`` more nodes together; return them once all are ready."""
        self.write_config()
        added = [self.add() for _ in range(count)]
        for node in added:
            node.spawn()
        await asyncio.gather(*(node.wait_ready(timeout) for node in added))
        return added

    def __getitem__(self, name: str) -> Node:
        return self.nodes[name]

    def alive(self) -> list[Node]:
        return [node for node in self.nodes.values() if node.alive]

    async def owner(self, table: str) -> str | None:
        """The node named by the table's lease (None: no lease)."""
        owner: str | None = await self.redis.command("GET", f"{self.prefix}:lease:{table}")
        return owner

    async def wait_owner(self, table: str, timeout: float = 30, not_in: Iterable[str] = ()) -> str:
        """The table's owner, once its lease names a node not in ``not_in``."""
        excluded = set(not_in)

        async def check() -> str | None:
            with contextlib.suppress(OSError, ConnectionError):
                name = await self.owner(table)
                if name is not None and name not in excluded:
                    return name
            return None

        owner: str = await until(check, timeout, f"an owner of table {table} not in {excluded}")
        return owner

    async def coordinator(self) -> str | None:
        name: str | None = await self.redis.command("GET", f"{self.prefix}:coordinator")
        return name

    async def node_record(self, name: str) -> dict[str, Any] | None:
        """The node's presence record in Redis (``PREFIX:node:NAME``), None when absent."""
        text = await self.redis.command("GET", f"{self.prefix}:node:{name}")
        return None if text is None else dict(json.loads(text))

    async def cli(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """``guobiao cluster ARGS --redis-url URL`` (the cluster's prefix in the
        environment), its output captured."""
        env = self.environment()
        command = [sys.executable, "-m", "server", "cluster", *args]
        command += ["--redis-url", self.redis.url()]
        return await asyncio.to_thread(
            subprocess.run,
            command,
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def tails(self, lines: int = TAIL_LINES) -> str:
        """The end of every node's log and of Redis's, for a failed test's report."""
        parts = [
            f"----- {node.name} ({'running' if node.alive else 'not running'}), "
            f"{node.log_path} -----\n{node.tail(lines)}"
            for node in self.nodes.values()
        ]
        parts.append(f"----- redis, {self.redis.log_path} -----\n{tail(self.redis.log_path, 10)}")
        return "\n".join(parts)

    def close(self) -> None:
        for node in self.nodes.values():
            node.close()
        self.redis.close()

    @classmethod
    async def create(cls, folder: Path, database_url: str | None = None, **options: Any) -> Cluster:
        """A cluster in ``folder`` with its own Redis (started) and, unless given, a fresh
        database (``fresh_database``; the caller drops it). No node is started."""
        folder.mkdir(parents=True, exist_ok=True)
        redis = RedisServer(folder / "redis")
        await redis.start()
        try:
            url = database_url or await fresh_database()
        except BaseException:
            redis.close()
            raise
        return cls(folder, url, redis, **options)


@contextlib.asynccontextmanager
async def postgres(cluster: Cluster) -> AsyncIterator[Any]:
    """An asyncpg connection to the cluster's database."""
    import asyncpg  # type: ignore[import-untyped]  # noqa: PLC0415 (PostgreSQL only)
    from sqlalchemy import make_url  # noqa: PLC0415

    url = make_url(cluster.database_url)
    connection = await asyncpg.connect(
        host=url.host,
        port=url.port,
        user=url.username,
        password=url.password,
        database=url.database,
    )
    try:
        yield connection
    finally:
        await connection.close()
