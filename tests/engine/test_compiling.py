"""``engine.compiling``: mypyc's class decorator, and a pure install that has no mypy.

The compiled engine's own behaviour (a hand deep-copied, a match derived from, a log line
shared, a replay's cause kept) is tested by every engine test run against the compiled wheel
(``tests/server/test_wheel.py``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from engine.compiling import mypyc_attr

REPO = Path(__file__).resolve().parents[2]


def test_the_decorator_leaves_a_class_as_it_is_at_run_time() -> None:
    class Plain:
        x = 1

    assert mypyc_attr(allow_interpreted_subclasses=True)(Plain) is Plain


def test_without_mypy_the_engine_still_imports_and_plays() -> None:
    # A plain ``pip install .`` has no mypy_extensions: the module gives a decorator of its own.
    script = (
        "import sys; sys.modules['mypy_extensions'] = None\n"
        "from engine.compiling import mypyc_attr\n"
        "class C: pass\n"
        "assert mypyc_attr(allow_interpreted_subclasses=True)(C) is C\n"
        "from engine.match import Match\n"
        "m = Match(5); m.start_hand(); assert m.hand is not None and m.hand.events\n"
        "print('ok')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
