"""Building this checkout's wheel, for the tests and the benchmarks alike
(tests/server/test_wheel.py, benchmarks/bench_compiled.py).

``copy_source(into)`` copies the checkout without what never goes into a build (so no stale
``build/`` folder of the checkout gets into the wheel); ``WHEEL`` is the command that builds a
wheel of a folder with this interpreter's setuptools (and mypy, which compiles the engine):
no build isolation, nothing to download for the build itself. Only the standard library.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# What never goes into the build: caches anywhere; at the top, the checkout's environment,
# build output and the server's data folder.
CACHES = shutil.ignore_patterns("__pycache__", "*.egg-info", ".*_cache", ".hypothesis")
TOP_ONLY = {".git", ".venv", "build", "dist", "data"}

WHEEL = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation"]


def not_source(folder: str, names: list[str]) -> set[str]:
    ignored = set(CACHES(folder, names))
    if Path(folder) == REPO:
        ignored |= TOP_ONLY.intersection(names)
    return ignored


def copy_source(into: Path) -> Path:
    """The checkout's source copied to ``into`` (which must not exist yet); ``into``."""
    shutil.copytree(REPO, into, ignore=not_source)
    return into
