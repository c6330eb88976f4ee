"""Every test has a time limit (tests/timelimits.py): one that hangs fails, saying where each of
its tasks and threads waits; one whose teardown hangs too ends its process a little later, and
one that holds the GIL (so that neither can run) later still.

Each case runs pytest on a small test file of its own in a process of its own, with this
suite's time-limit plugin (its second limit cut from a minute to 4 s: a loaded machine must still
write its report within it) and a 2-second limit.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PLUGIN = Path(__file__).with_name("timelimits.py")
AFTER = 4  # the second limit, in seconds, for these cases
INI = """\
[pytest]
asyncio_default_fixture_loop_scope = function
timeout = 2
"""


def run_pytest(folder: Path, tests: str) -> subprocess.CompletedProcess[str]:
    plugin = PLUGIN.read_text()
    shortened = plugin.replace("_AFTER_TIMEOUT = 60.0", f"_AFTER_TIMEOUT = {AFTER}.0")
    assert shortened != plugin, "the plugin's second limit is no longer _AFTER_TIMEOUT"
    (folder / "timelimits.py").write_text(shortened)
    (folder / "conftest.py").write_text('pytest_plugins = ("timelimits",)\n')
    (folder / "pytest.ini").write_text(INI)
    (folder / "test_it.py").write_text(tests)
    command = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:xdist"]
    return subprocess.run(
        [*command, "-q", "test_it.py"],
        check=False,  # (a failing run is what the cases make)
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_an_asyncio_test_that_hangs_fails_naming_what_each_task_awaits(tmp_path: Path) -> None:
    done = run_pytest(
        tmp_path,
        """\
import asyncio
import pytest

async def never_answered():
    await asyncio.Event().wait()

@pytest.mark.asyncio
async def test_hangs():
    await asyncio.gather(never_answered())

def test_after_it():
    pass
""",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed, 1 passed" in done.stdout
    assert "Timeout: over 2 s" in done.stdout
    assert "await asyncio.Event().wait()" in done.stdout  # the task it waits for, and where
    assert "in never_answered" in done.stdout


def test_a_test_whose_teardown_hangs_too_ends_its_process(tmp_path: Path) -> None:
    done = run_pytest(
        tmp_path,
        """\
import time
import pytest

@pytest.fixture
def stuck():
    yield
    while True:
        time.sleep(0.05)  # the teardown's own loop

def test_slow_then_stuck(stuck):
    time.sleep(30)
""",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        f"test_it.py::test_slow_then_stuck: still running {AFTER} s past its time limit"
        in done.stderr
    )
    assert "in stuck" in done.stderr  # every thread's stack: the main one in the teardown


def test_a_test_holding_the_gil_past_both_limits_ends_its_process(tmp_path: Path) -> None:
    done = run_pytest(
        tmp_path,
        """\
import ctypes
import signal

def test_holds_the_gil():
    signal.signal(signal.SIGALRM, signal.SIG_IGN)  # the time limit cannot interrupt it
    ctypes.PyDLL(None).sleep(30)  # libc's sleep, the GIL held: no Python thread runs
""",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"Timeout (0:00:{2 + 2 * AFTER:02d})!" in done.stderr  # faulthandler's, 2 + 2 x AFTER
    assert "in test_holds_the_gil" in done.stderr


def test_a_test_whose_time_limit_lands_in_a_spinning_task_still_fails(tmp_path: Path) -> None:
    done = run_pytest(
        tmp_path,
        """\
import asyncio
import time
import pytest

@pytest.mark.asyncio
async def test_waits_for_a_spinner():
    stop = False

    async def spin():  # always ready again: the time limit most likely lands in here
        while not stop:
            time.sleep(0.001)
            await asyncio.sleep(0)

    spinner = asyncio.create_task(spin())
    try:
        await asyncio.wait_for(asyncio.shield(spinner), 8)  # ends once the spinner does
    except BaseException:
        pass
    stop = True
""",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 failed" in done.stdout and "Timeout: over 2 s" in done.stdout, done.stdout
    assert "in spin" in done.stdout


def test_a_fixture_whose_setup_spins_past_the_limit_fails_the_test(tmp_path: Path) -> None:
    # The same, in a fixture's setup: the phase the limit fired in is the one that fails,
    # and only that one (the test after it runs as usual).
    done = run_pytest(
        tmp_path,
        """\
import asyncio
import time
import pytest
import pytest_asyncio

@pytest_asyncio.fixture
async def spun_up():
    stop = False

    async def spin():
        while not stop:
            time.sleep(0.001)
            await asyncio.sleep(0)

    spinner = asyncio.create_task(spin())
    try:
        await asyncio.wait_for(asyncio.shield(spinner), 8)
    except BaseException:
        pass
    stop = True
    yield

@pytest.mark.asyncio
async def test_uses_it(spun_up):
    pass

def test_after_it():
    pass
""",
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed, 1 error" in done.stdout, done.stdout
    assert "Timeout: over 2 s" in done.stdout and "in spin" in done.stdout
