"""The store's upgrade on the columns path (issue 36: a rule told from its slip).

:func:`~zeus_bench.store.read_columns` reads an older file through :func:`read_table`'s upgrades.
A kind is registered at version 1, a file written, then the kind moved to version 3 with two
upgrades that each change the values (so a skipped upgrade, one applied twice or out of order,
or a file of the current version sent through them, all show).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from zeus_bench.store import read_columns, read_table, write_table
from zeus_bench.store import schema as schema_mod
from zeus_bench.store.schema import Column, TableSchema, register_schema

KIND = "upgrade_probe"


def _schema(version: int) -> TableSchema:
    return TableSchema(
        kind=KIND,
        version=version,
        columns=(
            Column("name", "str", "a name"),
            Column("energy_j", "float", "energy", "J"),
            Column("count", "int", "a count"),
        ),
        description="a kind for the upgrade tests",
        key=("name",),
        # v1 -> v2: energy in J (was kJ); v2 -> v3: count + 1. Applied in that order: x 1000, then + 1.
        upgrades={
            1: lambda df: df.assign(energy_j=df["energy_j"] * 1000.0),
            2: lambda df: df.assign(count=df["count"] + 1),
        },
    )


@pytest.fixture
def old_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setitem(schema_mod._SCHEMAS, KIND, _schema(1))
    path = tmp_path / "old.parquet"
    write_table(pd.DataFrame({"name": ["a", "b"], "energy_j": [1.5, 2.0], "count": [3, 7]}), path, KIND)
    register_schema(_schema(3))
    return path


def test_an_older_file_read_by_columns_is_upgraded_once_each_step(old_file: Path) -> None:
    cols = read_columns(old_file, KIND, ["energy_j", "count", "name"])
    assert cols["energy_j"].tolist() == [1500.0, 2000.0]
    assert cols["count"].tolist() == [4, 8] and cols["count"].dtype == np.int64
    assert cols["name"].tolist() == ["a", "b"]
    frame = read_table(old_file, KIND)
    assert frame["energy_j"].tolist() == cols["energy_j"].tolist()
    assert frame["count"].tolist() == cols["count"].tolist()


def test_a_current_file_is_read_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(schema_mod._SCHEMAS, KIND, _schema(3))
    path = tmp_path / "new.parquet"
    write_table(pd.DataFrame({"name": ["a"], "energy_j": [1.5], "count": [3]}), path, KIND)
    cols = read_columns(path, KIND, ["energy_j", "count"])
    assert cols["energy_j"].tolist() == [1.5] and cols["count"].tolist() == [3]


def test_a_file_one_version_behind_takes_the_last_upgrade_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(schema_mod._SCHEMAS, KIND, _schema(2))
    path = tmp_path / "v2.parquet"
    write_table(pd.DataFrame({"name": ["a"], "energy_j": [1.5], "count": [3]}), path, KIND)
    register_schema(_schema(3))
    cols = read_columns(path, KIND, ["energy_j", "count"])
    assert cols["energy_j"].tolist() == [1.5] and cols["count"].tolist() == [4]
