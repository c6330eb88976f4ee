"""The cluster and the app import one way: the app makes the node, the node never reaches
back. Every import counts: at module level, inside a function, or for type checking only
(``if TYPE_CHECKING:``). The cluster sees the app's connections through ``server.nodes``
(``Here``), never ``server.app`` or ``server.connection``."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in (ROOT / "server").rglob("*.py")}


def imported(path: Path) -> set[str]:
    """The project's modules ``path`` imports, wherever in it the import stands."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [f"{node.module}.{alias.name}" for alias in node.names] + [node.module]
        else:
            continue
        for name in names:
            module = name
            while module and module not in MODULES:
                module = module.rpartition(".")[0]
            if module:
                found.add(module)
    return found


GRAPH = {name: imported(path) - {name} for name, path in MODULES.items()}


def reaches(start: str) -> set[str]:
    seen: set[str] = set()
    todo = list(GRAPH[start])
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo.extend(GRAPH.get(name, ()))
    return seen


CLUSTER = sorted(name for name in MODULES if name.startswith("server.cluster"))


def test_the_cluster_never_imports_the_app_or_its_connections() -> None:
    for name in CLUSTER:
        assert not {"server.app", "server.connection"} & reaches(name), name


def test_no_import_closes_a_cycle_through_the_app_or_the_cluster() -> None:
    assert "server.cluster.node" in CLUSTER and len(CLUSTER) > 5
    for name in ["server.app", "server.connection", *CLUSTER]:
        assert name not in reaches(name), f"{name} imports itself through {sorted(reaches(name))}"
