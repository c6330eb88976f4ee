"""Architecture rules that code review alone would let slip.

The engine is sans-I/O: it never imports an event loop, a network or database library, a
clock, the operating system or the ``server`` package. Time and randomness reach it as inputs.
"""

from __future__ import annotations

import ast
from pathlib import Path

ENGINE = Path(__file__).resolve().parent.parent / "engine"

FORBIDDEN_IN_ENGINE = frozenset(
    {
        "asyncio",
        "websockets",
        "sqlalchemy",
        "alembic",
        "time",
        "datetime",
        "socket",
        "server",
        "os",
        "subprocess",
        "threading",
    }
)


def forbidden_imports(source: str, filename: str = "<string>") -> list[str]:
    """Return one ``file:line: imports 'module'`` entry per forbidden import in ``source``.

    Covers ``import a.b``, ``from a.b import c`` and the dynamic ``__import__("a")`` and
    ``importlib.import_module("a")`` with a literal name; relative imports stay inside the
    package and are allowed.
    """
    imported: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source, filename=filename)):
        if isinstance(node, ast.Import):
            imported += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Name) and node.func.id == "__import__")
                or (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
            )
        ):
            imported.append((node.lineno, node.args[0].value))
    found = sorted(
        (line, name) for line, name in imported if name.split(".")[0] in FORBIDDEN_IN_ENGINE
    )
    return [f"{filename}:{line}: imports {name!r}" for line, name in found]


def test_engine_is_sans_io() -> None:
    root = ENGINE.parent
    problems = [
        problem
        for path in sorted(ENGINE.rglob("*.py"))
        for problem in forbidden_imports(
            path.read_text(encoding="utf-8"), str(path.relative_to(root))
        )
    ]
    assert not problems, "engine/ must stay sans-I/O:\n" + "\n".join(problems)


def test_rule_catches_forbidden_imports() -> None:
    source = "\n".join(
        [
            "import random",  # allowed: the engine seeds its own RNG from a recorded seed
            "from . import tiles",  # allowed: relative import inside the engine
            "import os.path",
            "from time import monotonic",
            "import json, asyncio as aio",
            "from server.cli import main",
            "clock = __import__('datetime')",
            "sock = importlib.import_module('socket')",
        ]
    )
    assert forbidden_imports(source, "engine/example.py") == [
        "engine/example.py:3: imports 'os.path'",
        "engine/example.py:4: imports 'time'",
        "engine/example.py:5: imports 'asyncio'",
        "engine/example.py:6: imports 'server.cli'",
        "engine/example.py:7: imports 'datetime'",
        "engine/example.py:8: imports 'socket'",
    ]


def test_rule_allows_similar_names() -> None:
    source = "import timeit\nimport servers\nfrom engine.time_control import Clock\n"
    assert forbidden_imports(source) == []
