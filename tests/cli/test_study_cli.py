"""``zeus-bench study``: the comparison regenerated from the arena's tables, and its bad input."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.tiny_traces import two_gpu_traces
from zeus_bench.cli.main import main
from zeus_bench.store import read_metadata, read_table, write_table


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    return two_gpu_traces(tmp_path / "traces")


def _arena(tiny: Path, out: Path, seeds: str = "1-3") -> None:
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100,a40", "--policies", "zeus,zeus-plus"]
    assert main([*argv, "--seeds", seeds, "--fold", "both", "--out", str(out)]) == 0


def test_study_comparison_is_the_arenas(tiny: Path, tmp_path: Path) -> None:
    arena = tmp_path / "arena"
    _arena(tiny, arena)
    out = tmp_path / "study"
    traces = ["--traces", f"v100={tiny}", "--traces", f"a40={tiny}"]
    argv = ["study", "--arena", str(arena), *traces, "--seeds", "1-2", "--warm-pairs", "v100:a40"]
    assert main([*argv, "--out-dir", str(out)]) == 0
    comparison = pd.read_csv(out / "comparison.csv")
    jobs = read_table(arena / "arena_jobs.parquet", "arena_jobs")
    one = jobs[jobs["fold"] == 1].set_index(["gpu", "workload", "policy"])
    assert len(comparison) == len(one) == 2 * 3 * 2
    assert set(comparison["seeds"]) == {len(read_metadata(arena / "arena_jobs.parquet")["seeds"])} == {3}
    for r in comparison.itertuples():
        a = one.loc[(r.gpu, r.workload, r.policy)]
        assert r.regret_vs_oracle_cum_pct_mean == pytest.approx(
            a["regret_pct_mean"], rel=1e-5
        )  # CSV: 6 digits
        assert r.cost_ratio_vs_baseline_cum_mean == pytest.approx(a["cost_ratio_vs_baseline_mean"], rel=1e-5)
    for name in ("curves", "drift", "drift_curves", "warmstart", "warmstart_jobs"):
        assert (out / f"{name}.csv").is_file()


def test_study_tables_do_not_depend_on_jobs(tiny: Path, tmp_path: Path) -> None:
    """--jobs 2 replays the drift jobs in two processes: every table byte for byte the one-process one."""
    traces = ["--traces", f"v100={tiny}", "--traces", f"a40={tiny}", "--warm-pairs", "v100:a40"]
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"study-{jobs}"
        assert main(["study", *traces, "--seeds", "1-2", "--jobs", jobs, "--out-dir", str(out)]) == 0
        outs.append(out)
    drift = pd.read_csv(outs[0] / "drift.csv")
    assert drift.groupby(["gpu", "workload"]).ngroups > 1  # several jobs: the pool has work to share
    for name in ("comparison", "curves", "drift", "drift_curves", "warmstart", "warmstart_jobs"):
        assert (outs[0] / f"{name}.csv").read_bytes() == (outs[1] / f"{name}.csv").read_bytes(), name


def test_study_refuses_an_arena_it_does_not_reproduce(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arena = tmp_path / "arena"
    _arena(tiny, arena, "1-2")
    jobs = read_table(arena / "arena_jobs.parquet", "arena_jobs")
    meta = read_metadata(arena / "arena_jobs.parquet")
    jobs.loc[(jobs["policy"] == "zeus-plus") & (jobs["fold"] == 1), "regret_pct_mean"] += 0.5
    write_table(
        jobs,
        arena / "arena_jobs.parquet",
        "arena_jobs",
        {k: meta[k] for k in ("seeds", "eta", "beta", "horizon", "noise")},
    )
    out = tmp_path / "study"
    argv = [
        "study",
        "--arena",
        str(arena),
        "--traces",
        f"v100={tiny}",
        "--traces",
        f"a40={tiny}",
        "--out-dir",
        str(out),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "regret_pct_mean" in err and "zeus-plus" in err and len(err.splitlines()) == 1
    assert not out.exists()
    assert main([*argv[:2], str(tmp_path / "none"), *argv[3:]]) == 2
    assert "does not exist" in capsys.readouterr().err
    assert main([*argv, "--beta", "3"]) == 2
    assert "--beta 3.0 differs" in capsys.readouterr().err
    # a horizon the arena's metadata cannot hold: the file and its key named, not an option
    write_table(
        jobs,
        arena / "arena_jobs.parquet",
        "arena_jobs",
        {**{k: meta[k] for k in ("seeds", "eta", "beta", "noise")}, "horizon": "soon"},
    )
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert f"--arena: {arena / 'arena_jobs.parquet'}'s horizon: must be known, unknown" in err, err
    assert len(err.splitlines()) == 1 and not out.exists()


def test_the_old_module_entry_point_says_where_the_command_went() -> None:
    """``python -m zeus_bench.studies.study`` no longer runs the study, and says so (exit 2), never silently."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "zeus_bench.studies.study"], capture_output=True, text=True)
    assert out.returncode == 2
    assert (
        out.stderr.strip() == "python -m zeus_bench.studies.study: moved to `zeus-bench study` (same options)"
    )
