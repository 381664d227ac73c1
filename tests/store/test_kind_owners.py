"""Every package module that reads or writes a table by a literal kind registers that kind itself.

The store never imports upward (:mod:`zeus_bench.catalog` registers every kind for readers of any kind),
so a module that names a kind must import, directly or through its package, the schema module that
owns it. Each such module is imported alone in a fresh interpreter, and the kinds it names must be
registered then. The commands (``zeus_bench.cli``) import what they use inside each command, for their
start-up time, and are left to their own tests.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CALLS = {
    "read_table",
    "read_columns",
    "write_table",
    "read_user_table",
    "validate",
    "TableWriter",
    "get_schema",
}


def named_kinds(path: Path) -> set[str]:
    """The literal kinds a module passes as the second argument of a store call."""
    kinds: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
        if name not in CALLS:
            continue
        args = [*node.args, *(k.value for k in node.keywords if k.arg == "kind")]
        for arg in args[1:2] if name != "get_schema" else args[:1]:
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                kinds.add(arg.value)
    return kinds


def modules_naming_kinds() -> list[tuple[str, list[str]]]:
    out = []
    for path in sorted((REPO / "zeus_bench").rglob("*.py")):
        if {"store", "cli"} & set(path.relative_to(REPO).parts):
            continue  # the store names no owner; the commands import what they use inside each command
        kinds = named_kinds(path)
        if kinds:
            parts = path.relative_to(REPO).with_suffix("").parts
            out.append((".".join(parts[:-1] if parts[-1] == "__init__" else parts), sorted(kinds)))
    return out


def test_the_scan_finds_the_modules_that_name_kinds() -> None:
    found = dict(modules_naming_kinds())
    assert found["zeus_bench.sweep.train"] == ["train"]
    assert "runs" in found["zeus_bench.sim.summarize"]


@pytest.mark.parametrize(("module", "kinds"), modules_naming_kinds(), ids=lambda v: str(v))
def test_a_module_registers_the_kinds_it_names(module: str, kinds: list[str]) -> None:
    code = (
        f"import importlib, json\nimportlib.import_module({module!r})\n"
        "from zeus_bench.store import schemas\n"
        f"print(json.dumps(sorted(set({kinds!r}) - set(schemas()))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        pytest.skip(f"{module} does not import here: {out.stderr.strip().splitlines()[-1]}")
    assert out.stdout.strip() == "[]", f"{module} names kinds it does not register: {out.stdout.strip()}"
