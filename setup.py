"""The package list, which pyproject.toml cannot express (see the comment there), and the
engine modules compiled with mypyc when a wheel is built (``tools/build_backend.py``).

Every package under ``engine/`` and ``server/`` (found by their ``__init__.py``), plus the
folders mapped into ``server`` by ``[tool.setuptools.package-dir]``: ``config/``,
``migrations/`` (its ``versions/``, which has no ``__init__.py``, is listed as the namespace
package it is, so its revisions ship as modules) and the web client, ``web/``. The rest of
the build is in pyproject.toml.
"""

from __future__ import annotations

import os
import sys
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from setuptools import find_packages, setup
from setuptools.command.build_ext import build_ext

CODE = find_packages(include=["engine", "engine.*", "server", "server.*"])
SHIPPED_FOLDERS = [
    "server.config_files",
    "server.migrations",
    "server.migrations.versions",
    "server.web",
]

# The engine's modules compiled by mypyc: the calculator, shanten, the bots and what they
# call, and the hand (``table``) and match (``match``) the server's tables play, each class
# naming what it asks of mypyc (``engine.compiling.mypyc_attr``). Left as Python: the package
# files; enums (``fans``) and exceptions (``errors``, which the server subclasses; mypyc
# refuses a Python subclass of a compiled class); ``wire`` (mypyc takes a dataclass's ClassVar
# for a field, mypyc/mypyc#1122); ``matchlog``, ``simulation`` (off the server's path,
# subclassed by tests); ``view`` (split from ``table`` as it was: ``SeatView`` caches its JSON
# form on the instance); ``bots.reading`` (subclasses ``list``); ``copyable`` (called back by
# copy and pickle); ``compiling`` (mypyc's decorator where mypy is not installed).
COMPILED = [
    "engine/actions.py",
    "engine/analysis.py",
    "engine/bots/danger.py",
    "engine/bots/default.py",
    "engine/bots/easy.py",
    "engine/bots/fast.py",
    "engine/bots/judge.py",
    "engine/bots/parts.py",
    "engine/bots/plan_play.py",
    "engine/bots/plan_shanten.py",
    "engine/bots/plans.py",
    "engine/bots/safe.py",
    "engine/bots/speed_play.py",
    "engine/bots/strong.py",
    "engine/forms.py",
    "engine/hand.py",
    "engine/match.py",
    "engine/notation.py",
    "engine/payments.py",
    "engine/rules.py",
    "engine/scoring/context.py",
    "engine/scoring/exclusions.py",
    "engine/scoring/families.py",
    "engine/scoring/ids.py",
    "engine/scoring/prepare.py",
    "engine/scoring/readings.py",
    "engine/scoring/regular.py",
    "engine/scoring/result.py",
    "engine/scoring/special.py",
    "engine/scoring/substitutions.py",
    "engine/scoring/wild.py",
    "engine/shanten.py",
    "engine/table.py",
    "engine/tiles.py",
    "engine/wall.py",
    "engine/wilds.py",
]


class OptionalBuildExt(build_ext):
    """Compiling is a speed-up, never a requirement: without a C compiler or the Python
    headers the build says so and the wheel carries the pure-Python engine."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as exc:  # setuptools raises several kinds, compiler's and its own
            self._give_up(exc)

    def build_extension(self, ext: Any) -> None:
        """Build ``ext`` with its C files compiled side by side, one compiler per CPU: mypyc
        writes the engine as some thirty C files of one shared library, which setuptools
        would compile one after the other (its ``--parallel`` only builds extensions side by
        side). The compiler runs as a process of its own, so threads are enough."""
        compile_all = self.compiler.compile

        def compile_side_by_side(sources: list[str], *args: Any, **kwargs: Any) -> list[str]:
            if len(sources) < 2:
                return compile_all(sources, *args, **kwargs)
            with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
                each = pool.map(lambda source: compile_all([source], *args, **kwargs), sources)
                return [obj for objects in each for obj in objects]

        self.compiler.compile = compile_side_by_side
        try:
            super().build_extension(ext)
        finally:
            del self.compiler.compile  # the class's own again

    def _give_up(self, exc: BaseException) -> None:
        print(
            f"guobiao: compiling the engine failed ({exc}); installing the pure-Python engine "
            "(it plays and scores the same; the bots are about 1.4 times slower, the "
            "calculator about 3 times)",
            file=sys.stderr,
        )
        for ext in self.extensions:  # what was built before the failure would half-work
            path = self.get_ext_fullpath(ext.name)
            if os.path.exists(path):
                os.remove(path)
        self.extensions = []


def compiled_extensions() -> dict[str, Any]:
    """``ext_modules`` for a wheel build that compiles (``GUOBIAO_BUILD=wheel``), else none."""
    if os.environ.get("GUOBIAO_BUILD") != "wheel":
        return {}
    try:
        from mypyc.build import mypycify  # noqa: PLC0415 (only a compiling build has it)
    except ImportError:
        print("guobiao: mypy is not installed: the pure-Python engine", file=sys.stderr)
        return {}
    try:
        modules = mypycify(COMPILED, opt_level="3", multi_file=True)
    except BaseException as exc:  # mypy exits on a type error: fall back, say why
        print(f"guobiao: mypyc failed ({exc!r}): the pure-Python engine", file=sys.stderr)
        return {}
    return {"ext_modules": modules, "cmdclass": {"build_ext": OptionalBuildExt}}


setup(packages=[*CODE, *SHIPPED_FOLDERS], **compiled_extensions())
