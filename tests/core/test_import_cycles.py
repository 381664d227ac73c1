"""No import cycle inside zeus_bench: every module's imports, lazy ones included, form a DAG.

Imports are read from the source (``import``/``from ... import`` anywhere in a module, inside
functions too), except those under ``if TYPE_CHECKING:``, which never run. ``from pkg import
name`` counts as an import of ``pkg.name`` when that is a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "zeus_bench"


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(module: str) -> set[str]:
    """zeus_bench modules that ``module`` imports (at any depth of its code)."""
    tree = ast.parse(MODULES[module].read_text())
    is_package = MODULES[module].name == "__init__.py"
    found: set[str] = set()
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".") if is_package else module.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        stack.extend(ast.iter_child_nodes(node))
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: _imports(m) for m in MODULES}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_walk_sees_the_package():
    assert len(MODULES) > 40
    assert "zeus_bench.sweep.single" in GRAPH["zeus_bench.sweep.runner"]
    assert "zeus_bench.sweep.ddp" in GRAPH["zeus_bench.sweep.runner"]  # a lazy import, inside run_sweep
    assert "zeus_bench.device.fake" in GRAPH["zeus_bench.device.fake_load"]


def test_no_import_cycle_in_zeus_bench():
    assert _cycles(GRAPH) == []


def test_the_cycle_finder_finds_a_cycle():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]


@pytest.mark.parametrize(
    ("low", "high"),
    [("zeus_bench.sim", "zeus_bench.device"), ("zeus_bench.sweep", "zeus_bench.cli")],
)
def test_layers_point_one_way(low, high):
    """The simulator never imports the device layer; library code never imports the CLI."""
    bad = sorted(
        (m, dep) for m, deps in GRAPH.items() if m.startswith(low) for dep in deps if dep.startswith(high)
    )
    assert bad == []
