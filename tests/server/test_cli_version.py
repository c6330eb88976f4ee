"""``guobiao --version`` says the installed version, at once (no command's module loaded),
and ``guobiao --help`` lists it."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]


def test_version_is_the_projects_and_loads_no_command() -> None:
    probe = (
        "import sys; from server.cli import main; status = main(['--version']); "
        "print(sorted(m for m in sys.modules if m.startswith('server.cli.'))); "
        "sys.exit(status)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=False, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    said, loaded = done.stdout.splitlines()
    assert said == f"guobiao {VERSION}"
    assert loaded == "[]"  # neither serve's database and web stack nor any other command


def test_help_lists_version() -> None:
    command = [sys.executable, "-m", "server", "--help"]
    done = subprocess.run(command, capture_output=True, text=True, check=False, cwd=REPO)
    assert done.returncode == 0 and "--version" in done.stdout
