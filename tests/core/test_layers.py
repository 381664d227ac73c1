"""The house's floors: every import of ``zeus_bench`` and ``analysis`` points down, with no cycle.

Imports are read with :mod:`ast` from the source, wherever they stand: at the top, inside
functions, and under ``if TYPE_CHECKING:`` (a type-only import is an arrow too). A string that names a
module of the house (``importlib.import_module("zeus_bench.x")``, a registry's ``"zeus_bench.x:Class"``)
is an import too. ``from pkg import
name`` counts as an import of ``pkg.name`` when that is a module. A re-export left at an old path
(a module whose docstring starts "Moved to zeus_bench.x") stands on the floor of the module it
re-exports, so code that still imports an old path is judged by where the code now lives.

Files that other work still has to change are listed in one ``PENDING`` dict per rule (file ->
reason): the lead empties them at the merge. A rule fails on any violation not listed, and on a
listed file that no longer violates (so that the lists cannot go stale). The ``*_catches_*`` tests
show each check failing on a hand-made violation.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

#: The floors, each with the floors directly beneath it: a floor may import those and, through
#: them, every floor further down. ``cli`` stands above everything; ``analysis`` (not a part of
#: the package) may import every floor of ``zeus_bench`` except ``cli``. The package root
#: (``zeus_bench/__init__.py``: the version) is beneath every floor.
FLOORS: dict[str, tuple[str, ...]] = {
    "core": (),
    "store": ("core",),
    "traces": ("store",),
    "optimizers": ("traces",),
    "sim": ("optimizers",),
    "studies": ("sim",),
    "device": ("traces",),
    "sweep": ("device",),
    "online": ("optimizers", "device"),
    "integrations": ("online",),
    "catalog": ("studies", "device"),
    "analysis": ("catalog", "sweep", "integrations"),
    "cli": ("catalog", "sweep", "integrations", "analysis"),
}
ROOT_FLOOR = "root"
#: The packages whose modules are judged (folders under the repository root).
PACKAGES = ("zeus_bench", "analysis")

#: Imports that point up or sideways today (importing file -> reason).
PENDING_UPWARD: dict[str, str] = {}
#: Modules in an import cycle today, type-only imports included (file -> reason).
PENDING_CYCLES: dict[str, str] = {}
#: Modules at the package root that are neither ``__init__`` nor a re-export (file -> reason).
PENDING_LOOSE: dict[str, str] = {}

MOVED = re.compile(r"^Moved to (zeus_bench(?:\.\w+)+)")


def below(floor: str) -> set[str]:
    """Every floor beneath ``floor`` (the ones it may import), its own excluded."""
    out: set[str] = set()
    todo = list(FLOORS[floor])
    while todo:
        f = todo.pop()
        if f not in out:
            out.add(f)
            todo.extend(FLOORS[f])
    return out


def module_name(path: Path, root: Path = REPO) -> str:
    """``zeus_bench/sim/grid.py`` -> ``zeus_bench.sim.grid``; a package's ``__init__`` is the package."""
    parts = path.relative_to(root).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(tree: ast.Module, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The modules of ``known`` that ``module`` imports anywhere in its code (type-only too)."""
    found: set[str] = set()
    for node in ast.walk(tree):
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
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # imports by string (importlib.import_module("a.b"), a registry's "a.b:Class")
            target = node.value.partition(":")[0]
            if target in known and target != module:
                found.add(target)
    # ``import a.b.c`` imports a and a.b too; keep the deepest known module of each name
    out: set[str] = set()
    for name in found:
        parts = name.split(".")
        for n in range(len(parts), 0, -1):
            candidate = ".".join(parts[:n])
            if candidate in known:
                out.add(candidate)
                break
    return out - {module}


class House:
    """The modules of ``packages`` under ``root``, their floors and their imports."""

    def __init__(self, root: Path = REPO, packages: tuple[str, ...] = PACKAGES) -> None:
        """Parse every module once."""
        paths = {module_name(p, root): p for pkg in packages for p in sorted((root / pkg).rglob("*.py"))}
        paths = {m: p for m, p in paths.items() if "notebooks" not in p.parts}
        self.root = root
        self.paths = paths
        trees = {m: ast.parse(p.read_text(), filename=str(p)) for m, p in paths.items()}
        self.moved_to = {
            m: match.group(1)
            for m, tree in trees.items()
            if (match := MOVED.match(ast.get_docstring(tree) or "")) and match.group(1) in paths
        }
        known = set(paths)
        self.graph = {m: imports(t, m, paths[m].name == "__init__.py", known) for m, t in trees.items()}

    def rel(self, module: str) -> str:
        """The module's file, relative to the root."""
        return self.paths[module].relative_to(self.root).as_posix()

    def target(self, module: str) -> str:
        """The module a re-export stands for (followed through chains), else the module itself."""
        seen = {module}
        while module in self.moved_to:
            module = self.moved_to[module]
            if module in seen:
                break
            seen.add(module)
        return module

    def floor(self, module: str) -> str:
        """The floor of a module (a re-export: its target's floor)."""
        parts = self.target(module).split(".")
        if parts[0] == "analysis":
            return "analysis"
        if len(parts) == 1:
            return ROOT_FLOOR
        if parts[1] not in FLOORS:
            return f"zeus_bench.{parts[1]}"  # a loose module: no floor may import it
        return parts[1]

    def upward(self) -> dict[str, list[str]]:
        """file -> the imports that point up, sideways or at no floor ("module (floor)")."""
        out: dict[str, list[str]] = {}
        for module, deps in sorted(self.graph.items()):
            floor = self.floor(module)
            if module in self.moved_to or floor not in FLOORS:
                continue
            allowed = below(floor) | {floor, ROOT_FLOOR}
            bad = sorted(f"{d} ({self.floor(d)})" for d in deps if self.floor(d) not in allowed)
            if bad:
                out[self.rel(module)] = bad
        return out

    def floor_edges(self, skip: set[str] = frozenset()) -> dict[str, set[str]]:  # type: ignore[assignment]
        """Floor -> floors it imports (modules of files in ``skip`` left out)."""
        edges: dict[str, set[str]] = {}
        for module, deps in self.graph.items():
            if self.rel(module) in skip:
                continue
            a = self.floor(module)
            edges.setdefault(a, set()).update(self.floor(d) for d in deps if self.floor(d) != a)
        return edges

    def loose(self) -> list[str]:
        """Modules at the package root other than ``__init__`` (and ``__main__``, ``python -m``) that are no re-export."""
        return sorted(
            self.rel(m)
            for m in self.paths
            if m.startswith("zeus_bench.")
            and m.count(".") == 1
            and m != "zeus_bench.__main__"
            and m not in self.moved_to
            and self.paths[m].parent.name == "zeus_bench"
        )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
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
    return sorted(out)


def _assert_matches_pending(found: dict[str, object], pending: dict[str, str], rule: str) -> None:
    new = {f: v for f, v in found.items() if f not in pending}
    stale = sorted(set(pending) - set(found))
    assert not new, f"{rule}: violations not in PENDING: {new}"
    assert not stale, f"{rule}: PENDING files that no longer violate (remove them): {stale}"


@pytest.fixture(scope="module")
def house() -> House:
    return House()


def test_the_floor_table_is_a_ladder() -> None:
    assert cycles({f: set(b) for f, b in FLOORS.items()}) == []
    assert below("core") == set()
    assert below("sim") == {"core", "store", "traces", "optimizers"}
    assert below("sweep") == {"core", "store", "traces", "device"}
    assert below("online") == {"core", "store", "traces", "optimizers", "device"}
    assert "cli" not in below("analysis") and "analysis" in below("cli")
    assert below("cli") == set(FLOORS) - {"cli"}


def test_the_walk_sees_every_kind_of_import(house: House) -> None:
    assert len(house.paths) > 100
    assert "zeus_bench.sweep.ddp" in house.graph["zeus_bench.sweep.runner"]  # inside a function
    assert "zeus_bench.store" in house.graph["zeus_bench.traces.jobs"]
    assert house.floor("zeus_bench.core.cost") == "core"
    assert house.floor("analysis.report") == "analysis"


def test_every_import_points_down(house: House) -> None:
    _assert_matches_pending(house.upward(), PENDING_UPWARD, "imports that point up")


def test_no_cycle_between_floors(house: House) -> None:
    assert cycles(house.floor_edges(skip=set(PENDING_UPWARD))) == []


def test_no_cycle_between_modules(house: House) -> None:
    found = {house.rel(m): component for component in cycles(house.graph) for m in component}
    _assert_matches_pending(found, PENDING_CYCLES, "import cycles (type-only imports included)")


def test_no_loose_module_at_the_package_root(house: House) -> None:
    _assert_matches_pending(dict.fromkeys(house.loose(), "loose"), PENDING_LOOSE, "loose root modules")


# The checks on a hand-made house.


def _write(root: Path, files: dict[str, str]) -> House:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return House(root, ("zeus_bench", "analysis"))


BASE = {
    "zeus_bench/__init__.py": '__version__ = "0"\n',
    "zeus_bench/core/__init__.py": "",
    "zeus_bench/core/cost.py": "from zeus_bench import __version__\n",
    "zeus_bench/sim/__init__.py": "",
    "zeus_bench/cli/__init__.py": "",
    "zeus_bench/cli/common.py": "import zeus_bench.sim.grid\n",
    "zeus_bench/cost.py": '"""Moved to zeus_bench.core.cost; re-exported."""\nfrom zeus_bench.core.cost import *\n',
    "analysis/__init__.py": "",
}


def test_a_clean_hand_made_house_passes(tmp_path: Path) -> None:
    house = _write(tmp_path, {**BASE, "zeus_bench/sim/grid.py": "from zeus_bench.cost import x\n"})
    assert house.upward() == {}
    assert cycles(house.graph) == []
    assert house.loose() == []


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("zeus_bench/core/bad.py", "from zeus_bench.sim import grid\n"),  # a plain upward import
        ("zeus_bench/core/bad.py", "def f():\n    import zeus_bench.cli.common\n"),  # inside a function
        (
            "zeus_bench/core/bad.py",
            "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from zeus_bench.sim.grid import G\n",
        ),
        ("zeus_bench/core/bad.py", "from ..sim import grid\n"),  # relative
        ("analysis/bad.py", "from zeus_bench.cli.common import exit_command\n"),  # analysis -> cli
        ("zeus_bench/sim/bad.py", "import analysis.bad2\n"),  # the package -> analysis
        (
            "zeus_bench/core/bad.py",
            "import importlib\nimportlib.import_module('zeus_bench.sim.grid')\n",
        ),  # an import by string
        ("zeus_bench/core/bad.py", "CLASSES = {'g': 'zeus_bench.sim.grid:Grid'}\n"),  # a registry's string
    ],
)
def test_the_layer_check_catches_an_upward_import(tmp_path: Path, name: str, text: str) -> None:
    files = {**BASE, "zeus_bench/sim/grid.py": "", "analysis/bad2.py": "", name: text}
    house = _write(tmp_path, files)
    assert list(house.upward()) == [name]


def test_the_cycle_check_catches_a_type_only_cycle(tmp_path: Path) -> None:
    files = {
        **BASE,
        "zeus_bench/sim/grid.py": "from zeus_bench.sim.replay import R\n",
        "zeus_bench/sim/replay.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import zeus_bench.sim.grid\n",
    }
    house = _write(tmp_path, files)
    assert cycles(house.graph) == [["zeus_bench.sim.grid", "zeus_bench.sim.replay"]]


def test_the_floor_cycle_check_catches_floors_in_a_circle() -> None:
    assert cycles({"sim": {"device"}, "device": {"sweep"}, "sweep": {"sim"}}) == [["device", "sim", "sweep"]]


def test_the_root_check_catches_a_loose_module(tmp_path: Path) -> None:
    house = _write(tmp_path, {**BASE, "zeus_bench/sim/grid.py": "", "zeus_bench/helpers.py": "x = 1\n"})
    assert house.loose() == ["zeus_bench/helpers.py"]
    assert house.floor("zeus_bench.helpers") == "zeus_bench.helpers"


def test_pending_mismatch_fails_both_ways() -> None:
    with pytest.raises(AssertionError, match="not in PENDING"):
        _assert_matches_pending({"a.py": [1]}, {}, "rule")
    with pytest.raises(AssertionError, match="no longer violate"):
        _assert_matches_pending({}, {"a.py": "fixed elsewhere"}, "rule")
