"""results/README.md documents every column of every table, generated from the schemas."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from analysis import readme
from zeus_bench.potential import POTENTIAL_COLUMNS
from zeus_bench.store import schemas

REPO = Path(__file__).resolve().parents[2]


def test_every_schema_column_is_documented():
    text = readme.render()
    for kind, schema in schemas().items():
        assert f"## `{kind}` table" in text
        for col in schema.columns:
            assert f"| `{col.name}` | {col.description.replace('|', '/')}" in text, (kind, col.name)


def test_every_potential_column_is_documented():
    assert list(readme.POTENTIAL_DOC) == POTENTIAL_COLUMNS
    text = readme.render()
    for col in POTENTIAL_COLUMNS:
        assert f"| `{col}` |" in text


def test_every_configuration_column_is_documented(zeus_traces, tmp_path):
    from zeus_bench.cli.main import main

    out = tmp_path / "c.parquet"
    assert (
        main(
            [
                "pareto",
                "--traces",
                str(zeus_traces),
                "--gpu",
                "v100",
                "--workload",
                "squad",
                "--all",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    assert list(pd.read_parquet(out).columns) == list(readme.CONFIGS_DOC)


def test_committed_readme_is_current():
    committed = REPO / "results" / "README.md"
    assert committed.read_text() == readme.render(), (
        "results/README.md is stale: run `python -m analysis.readme --out results/README.md`"
    )


def test_every_committed_policy_study_column_is_documented():
    # The study's committed tables (results/policy/) have exactly the documented columns, in order.
    docs = {
        "comparison.csv": readme.POLICY_COMPARISON_DOC,
        "drift.csv": readme.POLICY_DRIFT_DOC,
        "warmstart.csv": readme.POLICY_WARMSTART_DOC,
    }
    for name, doc in docs.items():
        assert list(pd.read_csv(REPO / "results" / "policy" / name, nrows=1).columns) == list(doc), name
