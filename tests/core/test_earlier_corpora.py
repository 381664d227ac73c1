"""The earlier bad-input corpora's remaining cases (issue 36, class 9), each refused in one line naming the key or file."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml

from zeus_bench.cli.configcheck import check_sweep_config
from zeus_bench.cli.main import main
from zeus_bench.core.errors import ConfigError
from zeus_bench.traces.workloads import load_workloads

REPO = Path(__file__).resolve().parents[2]
SQUAD = {
    "dataset": "squad",
    "network": "bert_base_uncased",
    "optimizer": "adamw",
    "target_metric": 84.0,
    "metric": "F1",
    "metric_direction": "max",
    "default_batch_size": 32,
    "max_epochs": 7,
}


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("max_epochs", float("inf"), "max_epochs: must be an integer, got inf"),
        ("max_epochs", 2.5, "max_epochs: must be an integer, got 2.5"),
        ("max_epochs", True, "max_epochs: must be an integer, got True"),
        ("max_epochs", "7", "max_epochs: must be an integer, got '7'"),
        ("default_batch_size", 32.0, "default_batch_size: must be an integer"),
        ("target_metric", float("nan"), "target_metric: must be a finite number"),
        ("target_metric", "84", "target_metric: must be a finite number"),
        ("dataset", 7, "dataset: must be a non-empty text"),
        ("network", " ", "network: must be a non-empty text"),
    ],
)
def test_a_workloads_file_value_of_the_wrong_type_names_its_key(
    tmp_path: Path, key: str, value: object, expected: str
) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump({"workloads": {"squad": {**SQUAD, key: value}}}))
    with pytest.raises(ConfigError, match=r"w\.yaml: workload 'squad': ") as exc:
        load_workloads(path)
    assert expected in str(exc.value)


def test_a_well_typed_workloads_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    path.write_text(yaml.safe_dump({"workloads": {"squad": {**SQUAD, "target_metric": 84}}}))
    spec = load_workloads(path)["squad"]
    assert spec.max_epochs == 7 and spec.target_metric == 84.0 and isinstance(spec.target_metric, float)


def test_validate_names_an_unknown_table_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.parquet"
    table = pa.table({"a": [1]}).replace_schema_metadata(
        {b"zeus_bench": json.dumps({"kind": "nope", "schema_version": 1}).encode()}
    )
    pq.write_table(table, path)
    assert main(["traces", "validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"{path}: its metadata names table kind 'nope'" in err, err
    assert "arena_jobs" in err  # every package's kinds are known, not only the store's own


@pytest.mark.parametrize(
    ("measure", "expected"),
    [
        ({"max_measure_s": 5}, "--max-measure-s (5) must be >= --measure-s (10)"),
        ({"warmup_max_s": 1}, "--warmup-max-s (1) must be >= --warmup-s (2)"),
        ({"rel_ci": 1.5}, "--rel-ci must lie in (0, 1)"),
    ],
)
def test_sweep_measure_settings_are_checked_at_start(measure: dict[str, float], expected: str) -> None:
    cfg = yaml.safe_load((REPO / "config" / "sweep.yaml").read_text())["sweep"]
    cfg["measure"].update(measure)
    with pytest.raises(ConfigError, match=r"^config/sweep\.yaml: sweep\.measure: ") as exc:
        check_sweep_config(cfg, "config/sweep.yaml")
    assert expected in str(exc.value)
