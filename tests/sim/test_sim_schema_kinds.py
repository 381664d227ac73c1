"""The study's and the tuning's tables are validated against their kinds when written."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import get_schema, validate

STUDY_TABLES = ("comparison", "curves", "drift", "drift_curves", "warmstart")


def test_the_study_writes_each_table_of_its_kind(zeus_traces: Path, tmp_path: Path) -> None:
    from zeus_bench.cli.main import main

    out = tmp_path / "policy"
    args = ["--traces", f"v100={zeus_traces}", "--traces", f"a40={zeus_traces}", "--seeds", "1"]
    args += ["--workloads", "sentiment140", "--drift-gpus", "v100", "--warm-pairs", "v100:a40"]
    assert main(["study", *args, "--out-dir", str(out)]) == 0
    for name in STUDY_TABLES:
        df = pd.read_csv(out / f"{name}.csv")
        assert list(df.columns) == get_schema(f"policy_{name}").names, name
        assert len(validate(df, f"policy_{name}", name)) == len(df) > 0
    drift = pd.read_csv(out / "drift.csv")
    assert set(drift["scenario"]) == {"step", "morph", "tilt"}


def test_a_study_table_that_breaks_its_kind_is_refused() -> None:
    row = {"gpu": "v100", "workload": "squad", "scenario": "step", "epoch_factor": 1.5, "policy": "zeus"}
    good = pd.DataFrame([{**row, "since_change": -1, "cost_vs_oracle_mean": 1.0}])
    validate(good, "policy_drift_curves")
    with pytest.raises(TraceFormatError, match=r"d.csv: column 'epoch_factor' row 1: must be > 0"):
        validate(pd.concat([good, good.assign(epoch_factor=0.0)]), "policy_drift_curves", "d.csv")
    with pytest.raises(TraceFormatError, match=r"d.csv: duplicate rows for key"):
        validate(pd.concat([good, good]), "policy_drift_curves", "d.csv")


def test_the_golden_reference_writer_checks_the_reference_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    repo = Path(__file__).resolve().parents[2]
    monkeypatch.syspath_prepend(str(repo / "benchmarks" / "golden"))
    import peer
    import reference

    committed = repo / "results" / "reference" / "original_simulator.csv"
    table = pd.read_csv(committed)
    reference.check_reference(table, committed)
    table.loc[3, "beta"] = 0.0
    with pytest.raises(peer.GoldenError, match=r"original_simulator.csv: column 'beta' row 3: must be > 0"):
        reference.check_reference(table, committed)
