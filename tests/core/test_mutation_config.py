"""``benchmarks/mutate/modules.toml`` names only code and tests that exist (a moved function or file
otherwise drops silently out of ``make mutate``, and a stale equivalence hides nothing)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MODULES = tomllib.loads((REPO / "benchmarks/mutate/modules.toml").read_text())["module"]


def _defined(path: Path) -> set[str]:
    """Top-level functions and classes of ``path``, and ``Class.method`` for each method."""
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        if isinstance(node, ast.ClassDef):
            names |= {
                f"{node.name}.{f.name}"
                for f in node.body
                if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
            }
    return names


@pytest.mark.parametrize("module", MODULES, ids=[m["name"] for m in MODULES])
def test_each_mutated_module_names_existing_code_and_tests(module: dict[str, object]) -> None:
    path = REPO / str(module["path"])
    assert path.is_file(), f"{module['name']}: no {module['path']}"
    defined = _defined(path)
    missing = [f for f in module.get("functions", []) if f not in defined]  # type: ignore[attr-defined]
    assert not missing, f"{module['name']}: {missing} not defined in {module['path']}"
    for test in module["tests"]:  # type: ignore[attr-defined]
        file, _, name = str(test).partition("::")
        assert (REPO / file).exists(), f"{module['name']}: no {file}"
        if name:
            assert name in _defined(REPO / file), f"{module['name']}: no test {name} in {file}"
    source = path.read_text()
    for eq in module.get("equivalent", []):  # type: ignore[attr-defined]
        assert eq["line"] in source, (
            f"{module['name']}: equivalent line {eq['line']!r} not in {module['path']}"
        )


def test_names_are_unique() -> None:
    names = [m["name"] for m in MODULES]
    assert len(names) == len(set(names))


def test_every_package_module_with_code_is_mutated() -> None:
    """``make mutate`` samples every module of the package that defines a function (a new one is caught)."""
    import re

    configured = {str(m["path"]) for m in MODULES}
    with_code = {
        str(p.relative_to(REPO))
        for p in (REPO / "zeus_bench").rglob("*.py")
        if re.search(r"^\s*def ", p.read_text(), re.M)
    }
    assert sorted(with_code - configured) == []


def test_the_recorded_results_name_files_that_exist() -> None:
    """docs/mutation-results.csv names each module by its current path (the one modules.toml mutates)."""
    import csv

    paths = {str(m["name"]): str(m["path"]) for m in MODULES}
    with (REPO / "docs" / "mutation-results.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows
    for row in rows:
        assert (REPO / row["path"]).is_file(), row["path"]
        assert paths.get(row["module"]) == row["path"], row["module"]
