"""``guobiao serve``'s own settings of the process (server/cli/serve.py)."""

from __future__ import annotations

import subprocess
import sys

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
