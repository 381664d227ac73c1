"""Packaging: environment.yml mirrors pyproject, the core imports without torch, CLI basics."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]


def _norm(req: str) -> str:
    return req.replace(" ", "").lower()


def test_environment_yml_mirrors_pyproject() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    wanted = {_norm(r) for r in project["dependencies"]}
    for extra in project["optional-dependencies"].values():
        wanted |= {_norm(r) for r in extra}
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    pip_section = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict) and "pip" in d)
    listed = {_norm(r) for r in pip_section if not r.startswith("-e")}
    assert listed == wanted, (
        f"only in pyproject: {wanted - listed}; only in environment.yml: {listed - wanted}"
    )
    python = next(d for d in env["dependencies"] if isinstance(d, str) and d.startswith("python="))
    assert python == "python=3.11"


def test_torch_pins_are_exact() -> None:
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert "torch==2.14.1" in extras["workloads"] and "torchvision==0.29.1" in extras["workloads"]


CORE_MODULES = [
    "zeus_bench",
    "zeus_bench.store",
    "zeus_bench.traces.zeus_csv",
    "zeus_bench.traces.jobs",
    "zeus_bench.traces.potential",
    "zeus_bench.traces.pareto",
    "zeus_bench.core.cost",
    "zeus_bench.cli.main",
    "zeus_bench.sweep.workload",
    "zeus_bench.traces.workloads",
    "zeus_bench.core.cost",
    "zeus_bench.core.entry",
    "zeus_bench.store.columns",
    "zeus_bench.traces.jobs",
    "zeus_bench.traces.workloads",
    "zeus_bench.sweep.workload",
]


def test_every_package_folder_is_a_regular_package() -> None:
    """setuptools' find (pyproject ``packages.find``) ships only folders with an ``__init__.py``."""
    folders = {p.parent for p in (REPO / "zeus_bench").rglob("*.py")}
    assert sorted(f.relative_to(REPO).as_posix() for f in folders if not (f / "__init__.py").is_file()) == []


def test_the_workload_registry_is_package_data() -> None:
    """``traces/workloads.py`` reads ``zeus_bench/data/workloads.yaml`` through importlib.resources."""
    from importlib import resources

    from zeus_bench.traces.workloads import load_workloads

    data = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "data/*.yaml" in data["zeus_bench"]
    assert resources.files("zeus_bench").joinpath("data/workloads.yaml").is_file()
    assert "imagenet" in load_workloads()


def test_core_imports_without_torch() -> None:
    """Block torch at import time and import the core and build the whole CLI parser."""
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'torch' or name.startswith('torch.') or name.startswith('torchvision'):\n"
        "            raise ImportError('torch blocked')\n"
        "sys.meta_path.insert(0, Block())\n"
        f"for m in {CORE_MODULES!r}: __import__(m)\n"
        "from zeus_bench.cli.main import build_parser; build_parser()\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=False)
    assert proc.returncode == 0, proc.stderr


def test_cli_version_and_unknown_command(capsys) -> None:  # type: ignore[no-untyped-def]
    from zeus_bench import __version__
    from zeus_bench.cli.main import main

    assert main(["--version"]) == 0
    assert __version__ in capsys.readouterr().out
    assert main(["frobnicate"]) == 2
    err = capsys.readouterr().err
    assert "invalid choice" in err and len(err.strip().splitlines()) == 1


def test_source_date_epoch_makes_the_provenance_reproducible(monkeypatch) -> None:
    from zeus_bench.core.provenance import base_provenance

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    p = base_provenance()
    assert p["created_utc"] == "1970-01-01T00:00:00+00:00" and p["git_commit"] is None
    monkeypatch.delenv("SOURCE_DATE_EPOCH")
    assert base_provenance()["created_utc"] != "1970-01-01T00:00:00+00:00"
