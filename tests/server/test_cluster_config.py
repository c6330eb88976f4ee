"""Cluster mode's settings and the ``--workers`` command line (each worker's metrics address
too): what is refused, and how.

(The cluster itself is tested with real nodes in ``test_cluster.py``.)"""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from server.app import App
from server.cli import main
from server.cli.workers import worker_args, worker_metrics
from server.config import ConfigError, load

REPO = Path(__file__).resolve().parents[2]
PG = {"database": {"url": "postgresql+asyncpg://u@h:5432/db"}}


def test_off_by_default() -> None:
    config = load(None, environ={})
    assert not config.clustered
    assert config.cluster.lease_seconds == 3.0 and config.cluster.prefix == "guobiao"


def test_a_redis_url_on_postgresql_is_cluster_mode() -> None:
    config = load(None, environ={}, overrides={**PG, "cluster": {"redis_url": "redis://r:6379/1"}})
    assert config.clustered


def test_environment_sets_the_cluster() -> None:
    config = load(
        None,
        environ={
            "GUOBIAO_DATABASE_URL": "postgresql+asyncpg://u@h/db",
            "GUOBIAO_CLUSTER_REDIS_URL": "redis://r:6379/0",
            "GUOBIAO_CLUSTER_LEASE_SECONDS": "1.5",
            "GUOBIAO_CLUSTER_PREFIX": "club-2",
        },
    )
    assert (config.cluster.lease_seconds, config.cluster.prefix) == (1.5, "club-2")


@pytest.mark.parametrize(
    ("cluster", "database", "says"),
    [
        ({"redis_url": "http://r:6379"}, PG, "redis_url must start with redis://"),
        ({"lease_seconds": 0.1}, PG, r"lease_seconds must be between 0.3 and 600"),
        ({"prefix": "a b"}, PG, "prefix must be letters"),
        ({"prefix": ""}, PG, "prefix must be letters"),
    ],
)
def test_bad_cluster_settings_are_refused_by_name(
    cluster: dict[str, object], database: dict[str, dict[str, str]], says: str
) -> None:
    with pytest.raises(ConfigError, match=says):
        load(None, environ={}, overrides={**database, "cluster": cluster})


def test_a_cluster_node_on_sqlite_is_refused_by_serve_not_by_the_admin_commands() -> None:
    config = load(None, environ={}, overrides={"cluster": {"redis_url": "redis://r:6379"}})
    with pytest.raises(ConfigError, match="the database is SQLite"):
        config.check_cluster_database()
    done = _serve("--redis-url", "redis://127.0.0.1:1/0", "--port", "0")
    assert done.returncode == 2 and "the database is SQLite" in done.stderr


def test_cluster_mode_without_the_redis_client_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the cluster extra (no ``redis`` to import) ``serve`` and ``cluster`` say so in
    one line, not with an import's traceback."""
    monkeypatch.setitem(sys.modules, "redis", None)  # (as if it were not installed)
    redis = ("--redis-url", "redis://127.0.0.1:1/0")
    assert main(["serve", *redis, "--database-url", PG["database"]["url"], "--port", "1"]) == 2
    assert main(["cluster", "nodes", *redis]) == 2
    said = capsys.readouterr().err.splitlines()
    assert len(said) == 2, said
    for line, command in zip(said, ("serve", "cluster"), strict=True):
        said_by = f"guobiao {command}: [cluster] redis_url is set but the Redis client is not"
        assert line.startswith(said_by), line
        assert "pip install '.[cluster]'" in line, line


def test_a_cluster_node_without_a_name_needs_a_fixed_port() -> None:
    """Its default name is ``hostname:port``, wanted before it listens."""
    cluster = {**PG, "cluster": {"redis_url": "redis://r:6379"}}
    for server in ({"port": 8765}, {"port": 0, "node": "a"}):
        load(None, environ={}, overrides={**cluster, "server": server}).check_cluster_node()
    load(None, environ={}, overrides={"server": {"port": 0}}).check_cluster_node()  # alone
    unnamed = load(None, environ={}, overrides={**cluster, "server": {"port": 0}})
    with pytest.raises(ConfigError, match="needs a fixed port"):
        unnamed.check_cluster_node()
    done = _serve(
        "--redis-url",
        "redis://127.0.0.1:1/0",
        "--port",
        "0",
        env={"GUOBIAO_DATABASE_URL": "postgresql+asyncpg://u@127.0.0.1:1/db"},
    )
    assert done.returncode == 2 and "needs a fixed port" in done.stderr


def test_a_cluster_node_is_named_before_it_listens() -> None:
    """A cluster node's name is its identity from before it listens: ``[server] node``, or
    ``hostname:port`` of the port configured (any port, 0 too, with a name)."""
    cluster = {**PG, "cluster": {"redis_url": "redis://r:6379"}}
    named = App(load(None, environ={}, overrides={**cluster, "server": {"port": 0, "node": "a"}}))
    assert named.node == "a"
    unnamed = App(load(None, environ={}, overrides={**cluster, "server": {"port": 8765}}))
    assert unnamed.node == f"{socket.gethostname()}:8765"


def test_worker_args_leave_out_workers_and_the_node_name() -> None:
    argv = ["serve", "--workers", "3", "--port", "9000", "--workers=2", "--node", "a"]
    assert worker_args(argv) == ["serve", "--port", "9000"]
    assert worker_args(["serve", "--node=a", "--port", "1"]) == ["serve", "--port", "1"]


def _serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", "serve", *args],
        check=False,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(REPO), **(env or {})},
    )


def test_workers_need_cluster_mode() -> None:
    done = _serve("--workers", "2", "--port", "9999")
    assert done.returncode == 2
    assert "--workers needs cluster mode" in done.stderr


def test_workers_must_be_positive_and_need_a_port() -> None:
    assert "--workers must be 1 or more" in _serve("--workers", "0").stderr
    done = _serve(
        "--workers",
        "2",
        "--port",
        "0",
        "--redis-url",
        "redis://127.0.0.1:1/0",
        "--database-url",
        "postgresql+asyncpg://u@127.0.0.1:1/db",
    )
    assert done.returncode == 2 and "needs a fixed --port" in done.stderr


def test_each_worker_serves_its_metrics_on_a_port_of_its_own() -> None:
    assert [worker_metrics("127.0.0.1:9100", i) for i in (1, 2, 3)] == [
        "127.0.0.1:9100",
        "127.0.0.1:9101",
        "127.0.0.1:9102",
    ]
    assert worker_metrics("[::1]:9100", 2) == "[::1]:9101"
    assert worker_metrics("127.0.0.1:0", 3) == "127.0.0.1:0"  # each a free port
    assert worker_metrics("", 2) == ""
    done = _serve(
        "--workers",
        "3",
        "--port",
        "9999",
        "--redis-url",
        "redis://127.0.0.1:1/0",
        "--database-url",
        "postgresql+asyncpg://u@127.0.0.1:1/db",
        env={"GUOBIAO_METRICS_LISTEN": "127.0.0.1:65534"},
    )
    assert done.returncode == 2 and "past 65535" in done.stderr, done.stderr


def test_a_metrics_address_taken_stops_the_server_saying_which(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        listen = f"127.0.0.1:{taken.getsockname()[1]}"
        done = _serve(
            "--port",
            "0",
            env={"GUOBIAO_METRICS_LISTEN": listen, "GUOBIAO_SERVER_DATA_DIR": str(tmp_path)},
        )
    assert done.returncode == 1, done.stderr
    assert f"guobiao serve: cannot listen on {listen}: " in done.stderr, done.stderr
