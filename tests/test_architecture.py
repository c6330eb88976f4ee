"""Architecture rules that code review alone would let slip.

The engine is sans-I/O: it never imports an event loop, a network or database library, a
clock, the operating system or the ``server`` package. Time and randomness reach it as inputs.

No import cycles among the project's modules (``engine/``, ``server/``), counting every
import, and the server's layers: the live table below the lobby below the app.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections.abc import Collection, Mapping
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


# ----------------------------------------------------------------- import graph ---
#
# Every import counts: at module level, inside a function, and under ``if TYPE_CHECKING:``.
# A cycle closed only by a function-level or type-only import still ties the modules
# together (neither can be read, tested or moved without the other), so none is exempt.

ROOT = ENGINE.parent
PROJECT_PACKAGES = ("engine", "server")

# The server's layers, bottom up: the table (the package ``server.table``) below the
# lobby below the app. Each entry: a module (or package, with its modules) and what it must
# never import.
TABLE_MUST_NOT_IMPORT = (
    "server.metrics",
    "server.lobby",
    "server.tournaments",
    "server.ladder",
    "server.cluster",
    "server.app",
)
LAYERING: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("server.table", TABLE_MUST_NOT_IMPORT),
    ("server.lobby", ("server.app",)),
)


def project_modules(root: Path, packages: tuple[str, ...] = PROJECT_PACKAGES) -> dict[str, Path]:
    """Every module of ``packages`` under ``root`` by dotted name; a package is its
    ``__init__.py``."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _within(name: str, modules: Collection[str]) -> str | None:
    """The project module ``name`` refers to: itself, else its longest known prefix (an
    attribute of a module or a missing submodule is the module that was imported)."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def imports_of(
    source: str, module: str, is_package: bool, modules: Collection[str], filename: str = ""
) -> set[str]:
    """The project modules ``module`` imports anywhere in ``source``.

    ``from p import x`` is the module ``p.x`` when there is one, else ``p`` (a package's
    ``__init__``); relative imports are resolved against ``module``'s package; a literal
    ``importlib.import_module("p")`` counts too. The parent packages Python also runs are
    not counted: every module of a package would otherwise import its own ``__init__``.
    """
    package = module if is_package else module.rpartition(".")[0]
    named: list[str] = []
    for node in ast.walk(ast.parse(source, filename=filename or module)):
        if isinstance(node, ast.Import):
            named += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, *([base] if base else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                named.append(submodule if submodule in modules else base)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                (isinstance(node.func, ast.Attribute) and node.func.attr == "import_module")
                or (isinstance(node.func, ast.Name) and node.func.id == "import_module")
            )
        ):
            named.append(node.args[0].value)
    found = {_within(name, modules) for name in named}
    return {name for name in found if name is not None and name != module}


def import_graph(root: Path, packages: tuple[str, ...] = PROJECT_PACKAGES) -> dict[str, set[str]]:
    """Each project module and the project modules it imports."""
    modules = project_modules(root, packages)
    return {
        module: imports_of(
            path.read_text(encoding="utf-8"),
            module,
            path.name == "__init__.py",
            modules,
            str(path.relative_to(root)),
        )
        for module, path in modules.items()
    }


def cycles(graph: Mapping[str, Collection[str]]) -> set[tuple[str, ...]]:
    """Every elementary cycle of ``graph``, as its chain of modules from its least one
    (``("a", "b")``: a imports b, b imports a).

    From each module in order, a depth-first walk through the modules after it finds the
    cycles that start there, each once (the graph of a project's imports is sparse: the
    walks are short).
    """
    order = sorted(graph)
    found: set[tuple[str, ...]] = set()
    for start in order:
        stack: list[tuple[str, list[str]]] = [(start, [start])]
        while stack:
            node, path = stack.pop()
            for nxt in sorted(graph.get(node, ())):
                if nxt == start:
                    found.add(tuple(path))
                elif nxt > start and nxt not in path:
                    stack.append((nxt, [*path, nxt]))
    return found


def chain(cycle: tuple[str, ...]) -> str:
    return " -> ".join([*cycle, cycle[0]])


def layering_violations(
    graph: Mapping[str, Collection[str]],
    rules: tuple[tuple[str, tuple[str, ...]], ...] = LAYERING,
) -> set[tuple[str, str]]:
    """``(importer, imported)`` for each import a layering rule forbids: a rule's module
    (and its submodules, once it is a package) imports a forbidden module or one of its
    submodules."""

    def under(name: str, top: str) -> bool:
        return name == top or name.startswith(top + ".")

    return {
        (module, imported)
        for lower, forbidden in rules
        for module, targets in graph.items()
        if under(module, lower)
        for imported in targets
        if any(under(imported, upper) for upper in forbidden)
    }


def test_no_import_cycle() -> None:
    """No cycle among engine/ and server/ modules, counting every import (module level,
    in a function, under ``TYPE_CHECKING``): a cycle closed by a deferred import is still
    two modules that cannot be understood, tested or moved apart."""
    found = sorted(cycles(import_graph(ROOT)))
    assert not found, "import cycles (break them; every import counts):\n" + "\n".join(
        map(chain, found)
    )


def test_server_layering() -> None:
    found = sorted(layering_violations(import_graph(ROOT)))
    assert not found, "the table is below the lobby below the app:\n" + "\n".join(
        f"{a} imports {b}" for a, b in found
    )


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_checker_counts_function_level_type_only_and_package_imports(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "pkg/__init__.py": "",
            # closed only by an import inside a function
            "pkg/a.py": "from pkg import b\n",
            "pkg/b.py": "def f():\n    from . import a\n    return a\n",
            # closed only under TYPE_CHECKING
            "pkg/c.py": "from pkg.d import D\n",
            "pkg/d.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from .c import C\n"
                "class D: ...\n"
            ),
            # importing a package is importing its __init__
            "pkg/sub/__init__.py": "from ..e import E\n",
            "pkg/e.py": "import pkg.sub\nclass E: ...\n",
            # no cycle: a name imported from a module, a module outside the project
            "pkg/f.py": "from pkg.e import E\nimport json\n",
            "other/__init__.py": "",
            "other/g.py": "import pkg.f\nfrom importlib import import_module\n"
            "h = import_module('other.h')\n",
            "other/h.py": "from other import g\n",
        },
    )
    graph = import_graph(tmp_path, ("pkg", "other"))
    assert graph["pkg.sub"] == {"pkg.e"}
    assert graph["pkg.f"] == {"pkg.e"}
    assert cycles(graph) == {
        ("pkg.a", "pkg.b"),
        ("pkg.c", "pkg.d"),
        ("pkg.e", "pkg.sub"),
        ("other.g", "other.h"),
    }
    assert chain(("pkg.a", "pkg.b")) == "pkg.a -> pkg.b -> pkg.a"


def test_cycles_are_listed_each_once_from_their_least_module() -> None:
    graph = {"a": {"b"}, "b": {"c", "a"}, "c": {"a"}, "d": {"d2"}, "d2": set()}
    assert cycles(graph) == {("a", "b"), ("a", "b", "c")}


def test_layering_checks_the_table_package_and_the_lobby() -> None:
    graph = {
        "server.table.core": {"server.table.clock", "server.metrics"},
        "server.table.task": {"server.cluster.node"},
        "server.lobby": {"server.table", "server.app"},
        "server.app": {"server.lobby", "server.table"},
        "server.tablets": {"server.app"},  # a similar name is not the table
    }
    assert layering_violations(graph) == {
        ("server.table.core", "server.metrics"),
        ("server.table.task", "server.cluster.node"),
        ("server.lobby", "server.app"),
    }


# The server's database, network and metrics stack: what the engine-only commands never load
# (a ``guobiao simulate`` of a few matches spent most of its time importing them).
SERVER_STACK = ("sqlalchemy", "alembic", "aiosqlite", "asyncpg", "websockets", "prometheus_client")
ENGINE_COMMANDS = ("simulate", "duel", "fan", "replay", "verify")


def test_the_engine_only_commands_start_without_the_servers_stack() -> None:
    """Imported as ``guobiao`` imports a command (``server.cli.COMMAND_MODULES``), in a fresh
    interpreter: none of the engine-only commands brings the database or the websockets."""
    script = (
        "import importlib, json, sys\n"
        "from server.cli import COMMAND_MODULES\n"
        f"for name in {ENGINE_COMMANDS!r}:\n"
        "    importlib.import_module(COMMAND_MODULES[name])\n"
        "loaded = {m.split('.')[0] for m in sys.modules}\n"
        f"print(json.dumps(sorted(loaded & set({SERVER_STACK!r}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], check=True, capture_output=True, text=True
    ).stdout
    assert json.loads(out) == [], f"the engine-only commands import {out.strip()}"
