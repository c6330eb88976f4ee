"""The wheel works on its own: built, installed into a fresh venv, migrated and served; its
compiled engine plays exactly as the pure-Python one, and a build that cannot compile falls
back to the pure-Python engine.

``pip install .`` must give a working ``guobiao serve`` without the repository around it: the
default configuration, the rule presets and the migrations ship inside the wheel (see
``[tool.setuptools.package-dir]`` in pyproject.toml). The test copies the source tree (so no
stale ``build/`` folder of the checkout gets into the wheel), builds the wheel with the
setuptools of the test venv (no build isolation: nothing to download for the build), installs
it into a new venv (its dependencies come from pip's cache or the package index), then, from a
working directory outside the checkout, runs ``guobiao db upgrade`` and ``guobiao serve
--port 0`` on a temporary SQLite file, reads ``/healthz`` and stops the server with SIGTERM.
A user's own ``--config`` file with a ``[rules] file`` of its own is used on the way.

The wheel compiles the engine's hot modules with mypyc (``tools/build_backend.py``,
``setup.py``) when mypy is importable here (the dev install has it): then the engine's whole
test suite runs again against the compiled modules, and a simulated match must write the very
hands and log this process's pure-Python engine writes.
"""

from __future__ import annotations

import importlib.util
import json
import os
import select
import signal
import subprocess
import sys
import time
import urllib.request
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from serverkit import served_port
from wheelkit import REPO, WHEEL, copy_source

pytestmark = pytest.mark.slow

# The wheel compiles only where mypyc can be imported by the build (no build isolation here).
COMPILES = importlib.util.find_spec("mypyc") is not None
needs_mypyc = pytest.mark.skipif(not COMPILES, reason="mypy (mypyc) is not installed here")


def run(command: list[str | Path], cwd: Path, env: dict[str, str], timeout: float = 1200) -> str:
    """Run ``command``; its stdout. A failure shows the command and everything it printed.

    The timeout only stops a hung command: compiling the engine takes about a minute alone and
    several times that while the suite's other workers share the CPU (``make test``)."""
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


def environment() -> dict[str, str]:
    """The environment without the server's variables or anything pointing at the checkout."""
    drop = ("GUOBIAO_", "PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")
    return {k: v for k, v in os.environ.items() if not k.startswith(drop)} | {
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "PYTHONUNBUFFERED": "1",
    }


@pytest.fixture
def clean_env() -> dict[str, str]:
    return environment()


def build_wheel(tmp: Path, env: dict[str, str]) -> Path:
    """The wheel of a copy of the checkout, built in ``tmp`` with this venv's setuptools."""
    source = copy_source(tmp / "source")
    dist = tmp / "dist"
    run([*WHEEL, "--wheel-dir", dist, source], cwd=tmp, env=env)
    (wheel,) = dist.glob("guobiao-*.whl")
    return wheel


# A build asked to compile the engine (a plain ``pip install .`` does not: it stays quick).
COMPILING = {"GUOBIAO_COMPILE": "1"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The compiled wheel (``GUOBIAO_COMPILE=1``), built once for the module (compiled where
    mypyc is importable)."""
    return build_wheel(tmp_path_factory.mktemp("wheel"), environment() | COMPILING)


def compiled_files(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return [name for name in archive.namelist() if name.endswith((".so", ".pyd"))]


def test_the_wheel_ships_every_module_of_the_tree(wheel: Path) -> None:
    """Every module of ``engine/`` and ``server/`` is in the wheel, as source or compiled: a
    folder without an ``__init__.py`` is left out by the package search (``server/cluster``
    was, and ``guobiao serve`` in cluster mode failed on an installed wheel)."""
    with zipfile.ZipFile(wheel) as archive:
        shipped = {
            name.split(".", 1)[0]
            for name in archive.namelist()
            if name.endswith((".py", ".so", ".pyd"))
        }
    modules = [
        path.relative_to(REPO).with_suffix("").as_posix()
        for top in ("engine", "server")
        for path in (REPO / top).rglob("*.py")
        if "__pycache__" not in path.parts
    ]
    assert modules
    assert [module for module in modules if module not in shipped] == []


def test_the_wheel_ships_the_web_client_without_its_in_page_tests(wheel: Path) -> None:
    """The client's page and modules are in the wheel; its in-page tests (``web/test/``,
    served by a checkout with ``[server] test_pages``) are not: an installed server has no
    use for them."""
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {"server/web/index.html", "server/web/js/main.js"} <= names
    assert [name for name in names if name.startswith("server/web/test/")] == []


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
    tmp_path: Path, wheel: Path, clean_env: dict[str, str], served: list[subprocess.Popen[str]]
) -> None:
    started = time.monotonic()
    timings: list[str] = []

    def lap(what: str) -> None:
        timings.append(f"{what} {time.monotonic() - started:.1f} s")

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
    assert health["engine"] == ("compiled" if COMPILES else "python"), health
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


def engine_of(wheel: Path, into: Path, *, whole: bool = False) -> dict[str, str]:
    """The wheel's ``engine`` (and mypyc's shared library) unpacked into ``into``: the
    environment that imports it instead of the checkout's. ``whole``: the wheel's ``server``
    too (a test run from the repository's ``tests`` would otherwise find ``tests/server``, a
    folder without an ``__init__.py``, before the editable install's ``server``)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        wanted = ("engine/", "server/") if whole else ("engine/",)
        archive.extractall(into, [n for n in names if n.startswith(wanted) or "__mypyc" in n])
    return environment() | {"PYTHONPATH": str(into)}


# ``guobiao`` in the process's own interpreter (the environment picks the engine).
GUOBIAO = [sys.executable, "-c", "import sys; from server.cli import main; sys.exit(main())"]
PROBE = "import engine, engine.scoring.regular as m; print(engine.compiled(), m.__file__)"


# The compiled engine's tests in two processes where pytest-xdist is installed (the dev
# install has it): about 65 s instead of 115 s on two quiet cores. They are the longest test
# of the suite, whose other workers mostly wait on sockets and browsers.
SIDE_BY_SIDE = ["-n", "2"] if importlib.util.find_spec("xdist") else []


@needs_mypyc
def test_the_compiled_engine_passes_every_engine_test(tmp_path: Path, wheel: Path) -> None:
    compiled = {name.split(".", 1)[0] for name in compiled_files(wheel)}
    # The calculator, and the hand and the match every table of the server plays.
    assert {"engine/scoring/regular", "engine/table", "engine/match"} <= compiled, compiled
    env = engine_of(wheel, tmp_path / "site")
    is_compiled, where = run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env).split()
    assert is_compiled == "True", where
    assert Path(where).is_relative_to(tmp_path / "site"), where
    tests = REPO / "tests" / "engine"
    run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SIDE_BY_SIDE, tests],
        cwd=tmp_path,
        env=env,
        timeout=1800,
    )


@needs_mypyc
def test_the_servers_tables_pass_their_tests_on_the_compiled_engine(
    tmp_path: Path, wheel: Path
) -> None:
    """The hand and the match a table plays are compiled: the table's own tests (its core,
    its task, its commitments) run against them, as a compiled server runs them."""
    env = engine_of(wheel, tmp_path / "site", whole=True)
    assert run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env).split()[0] == "True"
    server_tests = REPO / "tests" / "server"
    tests = [server_tests / "table", *sorted(server_tests.glob("test_table_*.py"))]
    run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SIDE_BY_SIDE, *tests],
        cwd=tmp_path,
        env=env,
        timeout=1800,
    )


@needs_mypyc
@pytest.mark.parametrize("rules", ["mcr", "custom"])
def test_the_compiled_and_the_pure_engine_play_the_same_matches(
    tmp_path: Path, wheel: Path, rules: str
) -> None:
    """Same seed, same bots: the same hands and the same action log, byte for byte."""
    compiled_env = engine_of(wheel, tmp_path / "site")
    written = {}
    for name, env in (("compiled", compiled_env), ("pure", environment())):
        out, log = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.log"
        simulate = [*GUOBIAO, "simulate", "--matches", "2"]
        printed = run(
            [*simulate, "--seed", "7", "--rules", rules, "--out", out, "--log", log, "--quiet"],
            cwd=tmp_path,
            env=env,
        )
        assert f"engine {'compiled' if name == 'compiled' else 'pure Python'}" in printed, printed
        written[name] = (out.read_bytes(), log.read_bytes())
    assert written["compiled"][0] and written["compiled"][1]
    assert written["compiled"] == written["pure"]


def test_a_build_that_cannot_compile_ships_the_pure_engine(tmp_path: Path) -> None:
    """No C compiler (``CC=false``): the build says so and the wheel has no compiled module;
    ``GUOBIAO_COMPILE=0``, or no ``GUOBIAO_COMPILE`` at all (a plain ``pip install .``): not
    even tried, and the wheel is pure Python (``py3-none-any``)."""
    no_compiler = build_wheel(tmp_path / "cc", environment() | COMPILING | {"CC": "false"})
    assert not compiled_files(no_compiler)
    env = engine_of(no_compiler, tmp_path / "site")
    is_compiled, where = run([sys.executable, "-c", PROBE], cwd=tmp_path, env=env).split()
    assert (is_compiled, Path(where).suffix) == ("False", ".py")
    scored = run(
        [*GUOBIAO, "fan", "123m456m789m123p55p"],
        cwd=tmp_path,
        env=env,
    )
    assert "Pure Straight" in scored, scored
    off = build_wheel(tmp_path / "off", environment() | {"GUOBIAO_COMPILE": "0"})
    assert off.name.endswith("-py3-none-any.whl"), off.name
    plain = build_wheel(tmp_path / "plain", environment())  # ``pip install .`` as it is
    assert plain.name.endswith("-py3-none-any.whl"), plain.name
