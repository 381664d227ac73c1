"""The whole workflow on four GPUs and the Alibaba groups, downloaded from a local HTTP server.

The server holds the published train, V100 and A40 traces (copied from ZEUS_TRACE_DIR), synthetic
P100- and RTX6000-like power traces (tests/workflow/power_helpers.py: published limit ranges
only) and a synthetic ``alibaba_groups.csv.xz``; the config pins their checksums (sha256, and
git blob SHA-1 for the Alibaba file). One reduced run checks that every per-GPU figure and report
row exists for all four GPUs and that the Alibaba stage fetches, verifies, imports, replays and
draws the cluster figure; a second shows a wrong blob id stops the run in one line, leaving nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from alibaba_helpers import write_synthetic_alibaba
from power_helpers import write_power_csv
from trace_server import serve_traces
from workflow_helpers import REPO, make_workdir

from zeus_bench.traces.alibaba_fetch import git_blob_sha1_file

GPUS = ["a40", "p100", "rtx6000", "v100"]
PER_GPU = ["pareto", "policies", "ablation", "convergence", "regret", "eta", "beta", "power-profiles"]


def _served(zeus_csv_dir: Path, root: Path) -> dict[str, str]:
    """Fill ``root`` with the files to serve; return the sha256 of each trace file."""
    root.mkdir(parents=True)
    for name in ("summary_train.csv", "summary_power_v100.csv", "summary_power_a40.csv"):
        shutil.copyfile(zeus_csv_dir / name, root / name)
    for gpu in ("p100", "rtx6000"):
        write_power_csv(root / "summary_train.csv", gpu, root)
    write_synthetic_alibaba(
        root, groups_per_workload=2, jobs=(3, 8), seed=5, workloads=("cifar100", "sentiment140")
    )
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.glob("summary_*.csv"))}


def _overrides(files: dict[str, str], blob: str) -> dict:
    return {
        "traces": {"zeus": {"files": files, "timeout_s": 5}, "own_dir": "no-own-traces"},
        "gpus": GPUS,
        "workloads": ["sentiment140"],
        "seeds": "1",
        "eta_sweep": {"values": [0.5], "seeds": "1"},
        "beta_sweep": {"values": [2.0], "seeds": "1"},
        "policy_study": {"enabled": False},
        "alibaba": {"git_blob_sha1": blob, "seeds": "1"},
        "figures": {"formats": ["png"], "dpi": 50},
    }


@pytest.fixture(scope="module")
def four_gpu_run(zeus_csv_dir: Path, tmp_path_factory: pytest.TempPathFactory):
    tmp = tmp_path_factory.mktemp("four")
    files = _served(zeus_csv_dir, tmp / "srv")
    blob = git_blob_sha1_file(tmp / "srv" / "alibaba_groups.csv.xz")
    with serve_traces(tmp / "srv", lifetime_s=600) as srv:
        wd = make_workdir(tmp / "wd", _overrides(files, blob), env_extra={"ZEUS_TRACE_URL": srv.base})
        wd.snakemake(timeout=1200)
    return wd, srv


def test_every_per_gpu_figure_and_report_row_for_four_gpus(four_gpu_run):
    wd, _ = four_gpu_run
    figures = wd.path / "results" / "figures"
    for gpu in GPUS:
        for name in PER_GPU:
            assert (figures / f"{name}-{gpu}.png").is_file(), f"{name}-{gpu}"
        assert (wd.path / "results" / "summary" / f"{gpu}.csv").is_file()
    assert (figures / "potential.png").is_file()
    report = (wd.path / "results" / "report.md").read_text()
    for gpu in GPUS:
        for name in PER_GPU:
            assert f"figures/{name}-{gpu}.png" in report, f"{name}-{gpu} not linked"
        for workload in ("sentiment140",):  # the potential table and the policy table
            rows = [ln for ln in report.splitlines() if ln.startswith(f"| {gpu.upper()} | {workload} |")]
            assert len(rows) >= 2, (gpu, workload)
    manifest = json.loads((wd.path / "data" / "traces" / "zeus-csv" / "MANIFEST.json").read_text())
    assert manifest["gpus"] == GPUS and all(f["verified"] for f in manifest["files"].values())


def test_alibaba_stage_fetches_verifies_imports_and_draws(four_gpu_run):
    wd, srv = four_gpu_run
    assert "alibaba_groups.csv.xz" in srv.requests
    manifest = json.loads((wd.path / "data" / "traces" / "alibaba" / "MANIFEST.json").read_text())
    assert manifest["status"] == "ok"
    data = (wd.path / "data" / "traces" / "alibaba" / "alibaba_groups.csv.xz").read_bytes()
    assert manifest["sha256"] == hashlib.sha256(data).hexdigest()
    assert (wd.path / "results" / "figures" / "alibaba.png").is_file()
    report = (wd.path / "results" / "report.md").read_text()
    assert "## Cluster-scale replay: the Alibaba job groups" in report
    assert f"sha256 `{manifest['sha256']}`" in report
    for gpu in GPUS:
        assert (wd.path / "results" / "alibaba" / f"{gpu}.csv").is_file()
        section = report.split("## Cluster-scale replay", 1)[1]
        assert f"| {gpu.upper()} | sentiment140 |" in section
        assert f"| {gpu.upper()} | cifar100 |" not in section  # the config's workloads only
    assert "## Headline: the paper's" in report and "Alibaba arrival replay" in report
    # Capriccio has no trace here: one line in "What was skipped".
    assert "needs the dataset and a GPU" in report.split("## What was skipped", 1)[1]


def test_wrong_blob_sha1_stops_the_workflow_in_one_line(zeus_csv_dir, tmp_path):
    files = _served(zeus_csv_dir, tmp_path / "srv")
    with serve_traces(tmp_path / "srv") as srv:
        wd = make_workdir(
            tmp_path / "wd", _overrides(files, "0" * 40), env_extra={"ZEUS_TRACE_URL": srv.base}
        )
        out = wd.snakemake("data/traces/alibaba", check=False)
    assert out.returncode != 0
    log = (tmp_path / "wd" / "logs" / "alibaba" / "trace.log").read_text().splitlines()
    assert (
        len(log) == 1 and "git blob SHA-1 mismatch for alibaba_groups.csv.xz: expected " + "0" * 40 in log[0]
    )
    assert log[0] in out.stdout + out.stderr
    assert not (tmp_path / "wd" / "data" / "traces" / "alibaba").exists()


def test_without_the_file_the_report_says_what_was_skipped(tmp_path):
    from analysis.report.sections.evaluation import skipped_line

    (tmp_path / "MANIFEST.json").write_text(
        json.dumps({"status": "absent", "reason": "not found at X (HTTP 404)"})
    )
    line = skipped_line(tmp_path / "MANIFEST.json")
    assert line == (
        "Cluster-scale replay (Alibaba job groups), its figure and its report section: not found at X (HTTP 404)."
    )
    (tmp_path / "MANIFEST.json").write_text(json.dumps({"status": "ok"}))
    assert skipped_line(tmp_path / "MANIFEST.json") is None
    assert "alibaba" in (REPO / "config" / "config.yaml").read_text()
