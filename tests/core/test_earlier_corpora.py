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


def _fake_sweep() -> dict[str, object]:
    return yaml.safe_load((REPO / "config" / "sweep-fake.yaml").read_text())["sweep"]


def test_sweep_limits_outside_the_gpus_range_are_refused_at_start(tmp_path: Path, monkeypatch) -> None:
    """Class 7: checked when the workflow loads (before the job table), not inside a cell's job."""
    from zeus_bench.cli.configcheck import check_backends_start

    monkeypatch.setenv("ZEUS_BENCH_FAKE_STATE", str(tmp_path / "fake.json"))
    sweep = _fake_sweep()
    check_backends_start(sweep, "sweep-fake.yaml")  # 700 and 400 W: in the fake GPU's 200-700 W
    sweep["gpus"]["fake"]["power_limits"] = [700, 150]
    with pytest.raises(ConfigError, match=r"power_limits: 150 W is outside the range of GPU 0 \(200-700 W"):
        check_backends_start(sweep, "sweep-fake.yaml")


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"command": "zeus-bnech"}, "sweep.command: 'zeus-bnech' is not a program found on PATH"),
        ({"command": "/nonexistent/zeus-bench --flag"}, "sweep.command: '/nonexistent/zeus-bench'"),
        (
            {"out_dir": "A_FILE/sweep"},
            "sweep.out_dir A_FILE/sweep: A_FILE is a file, not a folder",
        ),
    ],
)
def test_sweep_command_and_output_folder_are_checked_at_start(
    changes: dict[str, str], expected: str, tmp_path: Path
) -> None:
    from zeus_bench.cli.configcheck import check_sweep_places

    check_sweep_places(_fake_sweep(), "x.yaml")  # the rehearsal's own: fine
    (tmp_path / "f").write_text("")
    changes = {k: v.replace("A_FILE", str(tmp_path / "f")) for k, v in changes.items()}
    expected = expected.replace("A_FILE", str(tmp_path / "f"))
    with pytest.raises(ConfigError) as exc:
        check_sweep_places({**_fake_sweep(), **changes}, "x.yaml")
    assert str(exc.value).startswith("x.yaml: ") and expected in str(exc.value)


def test_the_sweeps_gpu_index_bound_is_exact(tmp_path: Path, monkeypatch) -> None:
    """Index n-1 of n GPUs starts; index n is refused (the fail-fast check's bound, hit exactly)."""
    from zeus_bench.cli.configcheck import check_backends_start

    monkeypatch.setenv("ZEUS_BENCH_FAKE_STATE", str(tmp_path / "fake.json"))
    monkeypatch.setenv("ZEUS_BENCH_FAKE_GPUS", "3")
    sweep = _fake_sweep()
    sweep["gpus"]["fake"]["gpu_index"] = 2
    check_backends_start(sweep, "s.yaml")
    sweep["gpus"]["fake"]["gpu_index"] = 3
    with pytest.raises(ConfigError, match=r"gpu_index: 3, but the fake backend sees 3 GPU\(s\)"):
        check_backends_start(sweep, "s.yaml")
    del sweep["gpus"]["fake"]["gpu_index"]  # default 0
    sweep["gpus"]["fake"]["power_limits"] = [200, 700]  # both ends of the range, exactly
    check_backends_start(sweep, "s.yaml")
