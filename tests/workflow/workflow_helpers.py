"""Running the main workflow in a scratch folder with an override config."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import yaml

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
OWN_DIR = REPO / "results" / "traces"  # the project's committed sweeps, one folder per GPU (h200/)


@contextmanager
def script_module(path: Path) -> Iterator[ModuleType]:
    """A script of ``workflows/scripts`` imported as a module named after its file (registered while open).

    Registered in ``sys.modules``, so that its functions reach processes forked from the tests by name.
    """
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        sys.modules.pop(name, None)


@dataclass
class Workdir:
    """A folder in which the workflow runs with an override config."""

    path: Path
    overrides: Path
    env: dict[str, str]
    first_run: subprocess.CompletedProcess[str] | None = None  # what the fixture's own run printed

    def snakemake(
        self, *args: str, check: bool = True, timeout: float = 300
    ) -> subprocess.CompletedProcess[str]:
        cmd = [
            str(SNAKEMAKE),
            "--snakefile",
            str(REPO / "Snakefile"),
            "--directory",
            str(self.path),
            "--configfile",
            str(self.overrides),
            "--cores",
            "2",
            *args,
        ]
        out = subprocess.run(
            cmd, cwd=self.path, env=self.env, capture_output=True, text=True, timeout=timeout
        )
        if check and out.returncode != 0:
            raise AssertionError(
                f"snakemake {' '.join(args)} failed:\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
            )
        return out


def make_workdir(root: Path, overrides: dict, env_extra: dict[str, str] | None = None) -> Workdir:
    """Copy the config into ``root`` and write ``overrides`` beside it."""
    root.mkdir(parents=True, exist_ok=True)
    shutil.copytree(REPO / "config", root / "config", dirs_exist_ok=True)
    path = root / "overrides.yaml"
    path.write_text(yaml.safe_dump(overrides))
    env = {k: v for k, v in os.environ.items() if k != "ZEUS_TRACE_DIR"}
    env.update(env_extra or {})
    return Workdir(root, path, env)


REDUCED = {
    "gpus": ["v100", "h200"],
    "workloads": ["cifar100", "sentiment140"],
    "seeds": "1-2",
    "eta_sweep": {"values": [0.5, 1.0], "seeds": "1"},
    "beta_sweep": {"values": [2.0, "inf"], "seeds": "1"},
    "figures": {"formats": ["png"], "dpi": 50},
}
