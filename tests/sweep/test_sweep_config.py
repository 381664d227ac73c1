"""config/sweep.yaml and its JSON schema (config/sweep.schema.json), and the workflow's checks."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCHEMA = json.loads((REPO / "config/sweep.schema.json").read_text())
CONFIG = yaml.safe_load((REPO / "config/sweep.yaml").read_text())


def test_the_shipped_config_is_valid():
    jsonschema.validate(CONFIG, SCHEMA)


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("sweep", "gpus", "h200", "gpu_index"), -1, "less than the minimum"),
        (("sweep", "gpus", "h200", "power_limits"), [], "should be non-empty"),
        (("sweep", "gpus", "h200", "power_limits"), "max", "'current' was expected"),
        (("sweep", "gpus", "h200", "obsrve"), True, "Additional properties are not allowed"),
        (("sweep", "measure", "measure_iters"), 0, "less than the minimum"),
        (("sweep", "workloads", "cifar100"), [8, 0], "less than the minimum"),
        (("sweep", "workloads", "cifar100"), [], "should be non-empty"),
        (("sweep", "gpus"), {"H200 SXM": {}}, "does not match"),
    ],
)
def test_bad_values_are_refused(path, value, message):
    bad = copy.deepcopy(CONFIG)
    node = bad
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    with pytest.raises(jsonschema.ValidationError, match=message):
        jsonschema.validate(bad, SCHEMA)


def _dry_run(tmp_path: Path, sweep: dict) -> subprocess.CompletedProcess[str]:
    cfg = tmp_path / "sweep.yaml"
    cfg.write_text(yaml.safe_dump({"sweep": sweep}))
    cmd = [sys.executable, "-m", "snakemake", "-s", str(REPO / "workflows/sweep.smk")]
    cmd += ["--directory", str(tmp_path), "--configfile", str(cfg), "--dry-run", "--cores", "1"]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow
def test_workflow_refuses_schema_violations_and_unknown_backends(tmp_path):
    sweep = copy.deepcopy(CONFIG["sweep"])
    sweep["measure"]["warmup_seconds"] = 2
    run = _dry_run(tmp_path, sweep)
    assert run.returncode == 2 and "unknown key sweep.measure.warmup_seconds" in run.stdout + run.stderr
    sweep = copy.deepcopy(CONFIG["sweep"])
    sweep["gpus"]["h200"]["backend"] = "rocm"
    run = _dry_run(tmp_path, sweep)
    assert run.returncode == 2
    assert "sweep.gpus.h200.backend: unknown backend 'rocm' (known: nvml, fake)" in run.stdout + run.stderr
