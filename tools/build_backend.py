"""guobiao's build backend: setuptools', compiling the engine's hot modules with mypyc.

``GUOBIAO_COMPILE=1 pip install .`` (a wheel) compiles the modules listed in ``setup.py``
with mypyc, which turns the strictly typed engine into C extensions (docs/performance.md says
what that buys: the bots about 1.4 times as fast, the calculator about 3 times) and takes two
to three minutes. It needs a C compiler and the Python headers; without them, the same wheel
carries the pure-Python engine, which plays and scores exactly alike. A plain ``pip install .``
does not compile (``GUOBIAO_COMPILE`` unset or ``0``): a newcomer's first install takes
seconds, not minutes behind pip's silent "Building wheel". mypy (mypyc is part of it) is
asked for only when a wheel is to be compiled, so no other build downloads it.

``pip install -e .`` (the developers' install, ``make venv``) is never compiled: a compiled
module would shadow its ``.py`` file, and an edit would not take effect until a rebuild.

The decision reaches ``setup.py`` through the environment (``GUOBIAO_BUILD``), set by the
hooks below around setuptools' own.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from setuptools import build_meta as _setuptools
from setuptools.build_meta import (  # noqa: F401 (the hooks this backend leaves as they are)
    build_sdist,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

# The compiler: mypy's release line the engine is checked with (pyproject's dev extra).
MYPY = "mypy>=1.13"


def _compiling() -> bool:
    return os.environ.get("GUOBIAO_COMPILE", "0").strip().lower() in {"1", "yes", "true"}


@contextmanager
def _building(kind: str) -> Iterator[None]:
    before = os.environ.get("GUOBIAO_BUILD")
    os.environ["GUOBIAO_BUILD"] = kind
    try:
        yield
    finally:
        if before is None:
            del os.environ["GUOBIAO_BUILD"]
        else:
            os.environ["GUOBIAO_BUILD"] = before


def get_requires_for_build_wheel(config_settings: dict[str, Any] | None = None) -> list[str]:
    needs = list(_setuptools.get_requires_for_build_wheel(config_settings))
    return [*needs, MYPY] if _compiling() else needs


def build_wheel(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    with _building("wheel" if _compiling() else "pure"):
        return _setuptools.build_wheel(wheel_directory, config_settings, metadata_directory)


def build_editable(
    wheel_directory: str,
    config_settings: dict[str, Any] | None = None,
    metadata_directory: str | None = None,
) -> str:
    with _building("pure"):
        return _setuptools.build_editable(wheel_directory, config_settings, metadata_directory)
