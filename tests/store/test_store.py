"""The Parquet table store: schema round trip, validation, versions, atomic writes."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import zeus_bench.catalog  # noqa: F401  (every built-in kind registered)
from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import METADATA_KEY, read_metadata, read_table, schemas, write_table


def power_frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "gpu": ["h200", "h200"],
            "dataset": ["imagenet", "imagenet"],
            "network": ["resnet50", "resnet50"],
            "optimizer": ["adadelta", "adadelta"],
            "batch_size": [128, 256],
            "power_limit_w": [700.0, 700.0],
            "time_per_epoch_s": [410.5, 380.25],
            "avg_power_w": [612.0, 655.5],
            "observe_mode": [True, True],
        }
    )


def test_round_trip_keeps_values_types_and_provenance(tmp_path: Path) -> None:
    path = write_table(power_frame(), tmp_path / "p.parquet", "power", provenance={"gpu_name": "NVIDIA H200"})
    df = read_table(path, "power")
    assert list(df.columns) == schemas()["power"].names
    assert df["batch_size"].dtype == "int64"
    assert df["avg_power_w"].tolist() == [612.0, 655.5]
    assert df["num_gpus"].isna().all()
    assert df["observe_mode"].tolist() == [True, True]
    meta = df.attrs["zeus_bench"]
    assert meta["gpu_name"] == "NVIDIA H200" and meta["kind"] == "power" and meta["schema_version"] == 2


def test_train_round_trip_nullable_epochs(tmp_path: Path) -> None:
    df = pd.DataFrame(
        {
            "dataset": ["squad"] * 2,
            "network": ["bert"] * 2,
            "optimizer": ["adamw"] * 2,
            "batch_size": [32, 32],
            "learning_rate": [3e-6, 3e-6],
            "run": [0, 1],
            "target_metric": [84.0, 84.0],
            "target_epoch": pd.array([4, None], dtype="Int64"),
        }
    )
    out = read_table(write_table(df, tmp_path / "t.parquet", "train"), "train")
    assert out["target_epoch"].iloc[0] == 4 and pd.isna(out["target_epoch"].iloc[1])


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda d: d.drop(columns=["avg_power_w"]), "missing column(s) avg_power_w"),
        (lambda d: d.assign(extra=1), "unknown column(s) extra"),
        (lambda d: d.assign(avg_power_w=[-1.0, 3.0]), "must be > 0"),
        (lambda d: d.assign(batch_size=[1.5, 2.0]), "must be an integer"),
        (lambda d: d.assign(time_per_epoch_s=[float("inf"), 1.0]), "non-finite"),
        (lambda d: d.assign(batch_size=[128, 128]), "duplicate rows for key"),
        (lambda d: d.assign(power_limit_w=["a", "b"]), "not a number"),
    ],
)
def test_write_refuses_invalid_frames(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TraceFormatError, match=message.replace("(", r"\(").replace(")", r"\)")):
        write_table(mutate(power_frame()), tmp_path / "p.parquet", "power")
    assert list(tmp_path.iterdir()) == []


def test_read_refuses_wrong_kind_newer_version_and_foreign_files(tmp_path: Path) -> None:
    path = write_table(power_frame(), tmp_path / "p.parquet", "power")
    with pytest.raises(TraceFormatError, match="is a 'power' table, expected 'train'"):
        read_table(path, "train")
    table = pq.read_table(path)
    meta = json.loads(table.schema.metadata[METADATA_KEY])
    meta["schema_version"] = 99
    newer = tmp_path / "newer.parquet"
    pq.write_table(table.replace_schema_metadata({METADATA_KEY: json.dumps(meta).encode()}), newer)
    with pytest.raises(TraceFormatError, match="newer than this zeus-bench reads"):
        read_table(newer, "power")
    foreign = tmp_path / "foreign.parquet"
    pq.write_table(pa.table({"a": [1]}), foreign)
    with pytest.raises(TraceFormatError, match="not a zeus-bench table"):
        read_metadata(foreign)


def test_power_version_1_is_upgraded_with_empty_confidence_columns(tmp_path: Path) -> None:
    v1 = [c for c in schemas()["power"].names if c not in NEW_IN_POWER_V2]
    frame = power_frame().assign(measured_s=[5.0, None], samples_per_s=[2000.0, None], num_gpus=[1, 1])
    table = pa.Table.from_pandas(frame[[c for c in v1 if c in frame.columns]], preserve_index=False)
    meta = {"kind": "power", "schema_version": 1}
    path = tmp_path / "v1.parquet"
    pq.write_table(table.replace_schema_metadata({METADATA_KEY: json.dumps(meta).encode()}), path)
    df = read_table(path, "power")
    assert df["num_windows"].tolist()[0] == 1 and df["num_windows"].isna().tolist() == [False, True]
    assert df["avg_power_ci_w"].isna().all() and df["ci_met"].isna().all()
    assert df["avg_power_w"].tolist() == [612.0, 655.5]


NEW_IN_POWER_V2 = (
    "num_windows",
    "time_per_epoch_ci_s",
    "avg_power_ci_w",
    "energy_per_sample_ci_rel",
    "ci_met",
)


def test_failed_write_leaves_existing_file(tmp_path: Path) -> None:
    path = write_table(power_frame(), tmp_path / "p.parquet", "power")
    before = path.read_bytes()
    with pytest.raises(TraceFormatError):
        write_table(power_frame().assign(avg_power_w=[0.0, 1.0]), path, "power")
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["p.parquet"]
