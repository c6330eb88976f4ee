"""``guobiao serve``'s own settings of the process (server/cli/serve.py), and the command
line of its workers (``server.cli.child_command``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from serverkit import decoy_checkout

from server.cli import child_command
from server.cli.serve import GC_THRESHOLDS


def test_serving_sets_the_collectors_thresholds() -> None:
    """The thresholds are the serving ones after ``tune_collector`` (in a process of its own:
    this one's collector is left as it is), and differ from Python's default."""
    probe = "import gc; from server.cli.serve import tune_collector as t; t()\n"
    probe += "print(gc.get_threshold())"
    before = subprocess.run(
        [sys.executable, "-c", "import gc; print(gc.get_threshold())"],
        capture_output=True,
        text=True,
        check=True,
    )
    after = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert after.stdout.strip() == str(GC_THRESHOLDS)
    assert before.stdout.strip() != after.stdout.strip()


def test_a_child_process_runs_this_server_not_one_in_the_working_directory(
    tmp_path: Path,
) -> None:
    """``serve --workers``' workers (and ``loadtest --processes``' parts) are started with
    ``child_command``: from a folder holding another ``server`` package (the README's
    install is run in a source checkout) they still run this one."""
    done = subprocess.run(
        child_command("fan", "--help"),
        cwd=decoy_checkout(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "guobiao fan" in done.stdout
