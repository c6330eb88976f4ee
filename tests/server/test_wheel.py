"""The wheel works on its own: built, installed into a fresh venv, migrated and served.

``pip install .`` must give a working ``guobiao serve`` without the repository around it: the
default configuration, the rule presets and the migrations ship inside the wheel (see
``[tool.setuptools.package-dir]`` in pyproject.toml). The test copies the source tree (so no
stale ``build/`` folder of the checkout gets into the wheel), builds the wheel with the
setuptools of the test venv (no build isolation: nothing to download for the build), installs
it into a new venv (its dependencies come from pip's cache or the package index), then, from a
working directory outside the checkout, runs ``guobiao db upgrade`` and ``guobiao serve
--port 0`` on a temporary SQLite file, reads ``/healthz`` and stops the server with SIGTERM.
A user's own ``--config`` file with a ``[rules] file`` of its own is used on the way.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from serverkit import served_port

REPO = Path(__file__).resolve().parent.parent.parent

# What never goes into the build: caches anywhere; at the top, the checkout's environment,
# build output and the server's data folder.
CACHES = shutil.ignore_patterns("__pycache__", "*.egg-info", ".*_cache", ".hypothesis")
TOP_ONLY = {".git", ".venv", "build", "dist", "data"}


def not_source(folder: str, names: list[str]) -> set[str]:
    ignored = set(CACHES(folder, names))
    if Path(folder) == REPO:
        ignored |= TOP_ONLY.intersection(names)
    return ignored


pytestmark = pytest.mark.slow


def run(command: list[str | Path], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    """Run ``command``; its stdout. A failure shows the command and everything it printed."""
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(
            f"{' '.join(map(str, command))} exited with {done.returncode}:\n"
            f"{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
        )
    return done.stdout


@pytest.fixture
def clean_env() -> dict[str, str]:
    """The environment without the server's variables or anything pointing at the checkout."""
    drop = ("GUOBIAO_", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)} | {
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONUNBUFFERED": "1",
    }


@pytest.fixture
def served(tmp_path: Path) -> Iterator[list[subprocess.Popen[str]]]:
    """Server processes started by the test; killed at the end if still running."""
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        if process.poll() is None:
            process.kill()
        process.wait(10)
        if process.stdout is not None:
            process.stdout.close()


def test_the_installed_wheel_migrates_and_serves(
    tmp_path: Path, clean_env: dict[str, str], served: list[subprocess.Popen[str]]
) -> None:
    started = time.monotonic()
    timings: list[str] = []

    def lap(what: str) -> None:
        timings.append(f"{what} {time.monotonic() - started:.1f} s")

    source = tmp_path / "source"
    shutil.copytree(REPO, source, ignore=not_source)
    dist = tmp_path / "dist"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]
    run([*build, "--wheel-dir", dist, source], cwd=tmp_path, env=clean_env)
    (wheel,) = dist.glob("guobiao-*.whl")
    lap("wheel built")

    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", venv], cwd=tmp_path, env=clean_env)
    python, guobiao = venv / "bin" / "python", venv / "bin" / "guobiao"
    run([python, "-m", "pip", "install", "--quiet", wheel], cwd=tmp_path, env=clean_env)
    lap("installed")

    # Somewhere that is not the checkout: nothing can be found there by accident.
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = run(
        [python, "-c", "import server, engine; print(server.__file__); print(engine.__file__)"],
        cwd=work,
        env=clean_env,
    )
    site = venv.resolve()
    for module_file in where.split():
        assert Path(module_file).resolve().is_relative_to(site), where

    # A site configuration of the user's own, with rule presets of its own.
    (work / "house-rules.toml").write_text('[house]\nvariant = "mcr"\n', encoding="utf-8")
    database = work / "guobiao.db"
    (work / "site.toml").write_text(
        "[server]\n"
        'host = "127.0.0.1"\n'
        "port = 0\n"
        'log_format = "text"\n'
        "[database]\n"
        f"url = {json.dumps(f'sqlite+aiosqlite:///{database}')}\n"
        "[rules]\n"
        'preset = "house"\n'
        'file = "house-rules.toml"\n',
        encoding="utf-8",
    )
    upgraded = run([guobiao, "db", "upgrade", "--config", "site.toml"], cwd=work, env=clean_env)
    current = run([guobiao, "db", "current", "--config", "site.toml"], cwd=work, env=clean_env)
    assert database.exists(), upgraded
    assert "head" in current, current
    lap("migrated")

    log_path = tmp_path / "serve.log"
    with open(log_path, "w", encoding="utf-8") as log:
        server = subprocess.Popen(
            [str(guobiao), "serve", "--config", "site.toml", "--port", "0"],
            cwd=work,
            env=clean_env,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    served.append(server)
    assert server.stdout is not None
    ready, _, _ = select.select([server.stdout], [], [], 60)
    line = server.stdout.readline() if ready else ""  # "" also when it died
    port = served_port(line)
    if port is None:
        server.kill()
        server.wait(10)
        pytest.fail(f"no URL line from guobiao serve ({line!r}); log:\n{log_path.read_text()}")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
        status, health = response.status, json.loads(response.read())
    assert status == 200, health
    assert health["status"] == "ok", health
    assert health["database"] == "ok", health
    lap("served /healthz")
    # The web client ships in the wheel: its page and the modules it loads.
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10) as response:
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        page = response.read().decode()
    assert '<script type="module" src="/js/main.js">' in page, page
    for asset in ("/js/main.js", "/js/vendor/lit-html.js", "/app.css"):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{asset}", timeout=10) as response:
            assert response.status == 200 and response.read(), asset
    lap("served the web client")

    server.send_signal(signal.SIGTERM)
    assert server.wait(30) == 0, log_path.read_text()
    lap("stopped")
    print(f"\nwheel test: {', '.join(timings)}")
