"""results/README.md is rendered from the table schemas alone, and documents every committed table."""

from __future__ import annotations

import fnmatch
import subprocess
from pathlib import Path

import pandas as pd
import pytest

import zeus_bench.catalog  # noqa: F401  (every built-in kind registered)
from analysis import readme
from zeus_bench.store import Column, TableSchema, get_schema, read_table, schemas, validate
from zeus_bench.studies.study_schema import GPU, TUNING_PER_GPU, validate_tuning
from zeus_bench.traces.potential import POTENTIAL_COLUMNS

REPO = Path(__file__).resolve().parents[2]


def _documented(text: str, name: str, description: str) -> bool:
    return f"| `{name}` | {description.replace('|', '/')}" in text


def test_every_schema_kind_and_column_is_rendered():
    text = readme.render()
    for kind, schema in schemas().items():
        assert f"### `{kind}` table (schema version {schema.version})" in text, kind
        assert schema.description in text, kind
        for col in schema.columns:
            assert _documented(text, col.name, col.description), (kind, col.name)


def test_a_kind_in_no_section_is_still_rendered(monkeypatch: pytest.MonkeyPatch):
    extra = TableSchema(
        "made_up",
        3,
        (Column("speed_w", "float", "A made-up column", "W", "1.5"),),
        "A table no section names.",
    )
    monkeypatch.setattr(readme, "schemas", lambda: {**schemas(), "made_up": extra})
    text = readme.render()
    assert "## Other tables" in text and "### `made_up` table (schema version 3)" in text
    assert "| `speed_w` | A made-up column | W | 1.5 |" in text


def test_no_other_tables_section_when_every_kind_is_placed():
    placed = {kind for _, _, kinds in readme.SECTIONS for kind in kinds}
    assert ("## Other tables" in readme.render()) == bool(set(schemas()) - placed)


def test_sections_and_committed_tables_name_registered_kinds():
    kinds = set(schemas())
    for _, _, placed in readme.SECTIONS:
        assert set(placed) <= kinds
    assert set(readme.COMMITTED.values()) <= kinds


def _committed_tables() -> list[str]:
    try:
        out = subprocess.run(
            ["git", "ls-files", "results"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    return [p for p in out.splitlines() if p.endswith((".csv", ".parquet"))]


def _read(path: Path, kind: str) -> pd.DataFrame:
    if path.suffix == ".parquet":
        return read_table(path, kind)
    df = pd.read_csv(path)
    if kind == "policy_tuning":
        validate_tuning(df, str(path))
    else:
        validate(df, kind, str(path))
    return df


def test_every_committed_table_is_of_its_kind_and_its_columns_are_documented():
    files = _committed_tables()
    assert len(files) >= 20  # potential, reference, summary, policy, arena, own traces
    text = readme.render()
    for rel in files:
        kinds = {k for glob, k in readme.COMMITTED.items() if fnmatch.fnmatch(rel, glob)}
        assert len(kinds) == 1, (rel, kinds)
        kind = kinds.pop()
        df = _read(REPO / rel, kind)
        schema = get_schema(kind)
        for name in df.columns:
            template = name
            for metric in TUNING_PER_GPU:
                if kind == "policy_tuning" and name.endswith(f"_{metric}") and name not in schema.names:
                    template = f"{GPU}_{metric}"
            assert _documented(text, template, schema.column(template).description), (rel, name)


def test_tuning_tables_are_checked_gpu_by_gpu():
    df = pd.read_csv(REPO / "results" / "policy" / "tuning-known.csv")
    validate_tuning(df, "t.csv")
    bad = df.astype({"a40_p95_max": object})
    bad.loc[0, "a40_p95_max"] = "x"
    with pytest.raises(Exception, match=r"t.csv: column 'a40_p95_max' row 0: not a number"):
        validate_tuning(bad, "t.csv")
    with pytest.raises(Exception, match=r"t.csv: missing column\(s\) h200_jobs_unsafe"):
        validate_tuning(df.drop(columns="h200_jobs_unsafe"), "t.csv")
    with pytest.raises(Exception, match=r"t.csv: unknown column\(s\) note"):
        validate_tuning(df.assign(note=1), "t.csv")
    with pytest.raises(Exception, match="'chosen' must be True on exactly one row"):
        validate_tuning(df.assign(chosen=True), "t.csv")
    with pytest.raises(Exception, match="no <gpu>_zeus_regret_pct column"):
        validate_tuning(df[["margin", "up_first", "chosen"]], "t.csv")


def test_potential_writes_a_potential_table(zeus_traces, tmp_path):
    from zeus_bench.cli.main import main

    assert get_schema("potential").names == POTENTIAL_COLUMNS
    out = tmp_path / "v100.csv"
    args = ["potential", "--traces", str(zeus_traces), "--gpu", "v100", "--format", "csv", "--out", str(out)]
    assert main(args) == 0
    df = pd.read_csv(out)
    assert list(df.columns) == POTENTIAL_COLUMNS and len(validate(df, "potential", str(out))) == 6


@pytest.mark.parametrize("extra", [["--all"], []])
def test_pareto_writes_a_configurations_table(zeus_traces, tmp_path, extra):
    from zeus_bench.cli.main import main

    out = tmp_path / "c.parquet"
    args = ["pareto", "--traces", str(zeus_traces), "--gpu", "v100", "--workload", "squad", *extra]
    assert main([*args, "--out", str(out)]) == 0
    df = pd.read_parquet(out)
    assert list(df.columns) == get_schema("configurations").names
    validate(df, "configurations", str(out))
    assert df["on_frontier"].all() == (not extra)


def test_committed_readme_is_current():
    committed = REPO / "results" / "README.md"
    assert committed.read_text() == readme.render(), (
        "results/README.md is stale: run `python -m analysis.readme --out results/README.md`"
    )
