"""The cluster-scale replay's report section: a finding that flips with the data, a table, the skipped line."""

from __future__ import annotations

import json

import pandas as pd

from analysis.report.findings import cluster as alibaba
from analysis.report.sections import evaluation


def _summary(zeus_energy: float) -> pd.DataFrame:
    rows = []
    for workload, scale in (("cifar100", 1.0), ("squad", 0.5)):
        for policy, shift in (("zeus", 0.0), ("zeus-plus", 5.0)):
            row = {"gpu": "v100", "workload": workload, "policy": policy, "seeds": 2}
            for ref in ("baseline", "max_batch"):
                row[f"energy_savings_vs_{ref}_cum_pct_mean"] = zeus_energy * scale + shift
                row[f"time_savings_vs_{ref}_cum_pct_mean"] = 10.0 * scale
            rows.append(row)
    rows.append({**rows[0], "policy": "baseline"})
    return pd.DataFrame(rows)


def test_the_finding_names_jobs_worse_off_and_flips():
    good = alibaba.cluster_finding(_summary(20.0))
    assert "zeus against b0 saves 10.0 % (squad, V100) to 20.0 % (cifar100, V100) energy" in good.sentence
    assert "less energy on all 2" in good.sentence and good.numbers["zeus.b0.worse"] == 0
    bad = alibaba.cluster_finding(_summary(-20.0))
    assert "zeus against b0 saves -20.0 % (cifar100, V100) to -10.0 % (squad, V100)" in bad.sentence
    assert "more energy than b0 on 2 of 2" in bad.sentence and bad.numbers["zeus.b0.worse"] == 2
    assert "(2 seeds," in bad.sentence


def test_table_rows_per_gpu_and_workload():
    table = alibaba.savings_table(_summary(20.0))
    assert list(table["workload"]) == ["cifar100", "squad"]
    assert table.iloc[0]["zeus-plus vs max-batch: energy / time"] == "25.0 / 10.0 %"


def test_section_and_skipped_line(tmp_path):
    path = tmp_path / "MANIFEST.json"
    path.write_text(
        json.dumps(
            {"status": "ok", "file": "alibaba_groups.csv.xz", "git_blob_sha1": "c" * 40, "sha256": "d" * 64}
        )
    )
    items = evaluation.cluster_items(_summary(20.0), path)
    assert items[0] == "## Cluster-scale replay: the Alibaba job groups"
    assert f"git blob SHA-1 `{'c' * 40}` verified, sha256 `{'d' * 64}`" in items[2]
    assert evaluation.skipped_line(path) is None
    assert "no manifest" in evaluation.skipped_line(tmp_path / "none.json")
