"""Workload registry: built-in jobs and user files."""

from __future__ import annotations

from pathlib import Path

import pytest

from zeus_bench.core.errors import ConfigError, UnknownWorkloadError
from zeus_bench.traces.workloads import get_workload, load_workloads


def test_builtin_jobs_of_the_paper() -> None:
    reg = load_workloads()
    # The paper's six jobs, in its order, then the download-free job of the validation (#35).
    assert list(reg) == [
        "cifar100",
        "imagenet",
        "squad",
        "librispeech",
        "movielens-1m",
        "sentiment140",
        "teacher-student",
    ]
    assert reg["teacher-student"].target_metric == 0.935 and reg["teacher-student"].max_epochs == 40
    lib = reg["librispeech"]
    assert (lib.network, lib.optimizer, lib.target_metric, lib.max_epochs, lib.default_batch_size) == (
        "deepspeech2",
        "adamw",
        40.0,
        16,
        256,
    )
    assert lib.metric_direction == "min"
    assert reg["squad"].max_epochs == 6 and reg["movielens-1m"].optimizer == "adam"


def test_user_file_adds_and_overrides(tmp_path: Path) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(
        "workloads:\n  mnist:\n    dataset: mnist\n    network: lenet\n    optimizer: SGD\n    target_metric: 0.99\n"
        "    metric: accuracy\n    metric_direction: max\n    max_epochs: 20\n    default_batch_size: 64\n"
    )
    reg = load_workloads(f)
    assert reg["mnist"].optimizer == "sgd" and "imagenet" in reg


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("workloads: [1, 2]", "expected a mapping"),
        ("workloads:\n  x:\n    dataset: x\n", "missing keys"),
        (
            "workloads:\n  x: {dataset: x, network: n, optimizer: o, target_metric: 1, metric: m, metric_direction: up, max_epochs: 1, default_batch_size: 1}",
            "metric_direction",
        ),
        (
            "workloads:\n  x: {dataset: x, network: n, optimizer: o, target_metric: high, metric: m, metric_direction: max, max_epochs: 1, default_batch_size: 1}",
            "workload 'x'",
        ),
        (":\n  - [", "not valid YAML"),
    ],
)
def test_bad_user_files(tmp_path: Path, text: str, message: str) -> None:
    f = tmp_path / "w.yaml"
    f.write_text(text)
    with pytest.raises(ConfigError, match=message):
        load_workloads(f)


def test_unknown_workload() -> None:
    with pytest.raises(UnknownWorkloadError, match="unknown workload 'mnist'; known: cifar100"):
        get_workload("mnist")


def test_the_builtin_registry_reads_the_same_with_either_loader() -> None:
    """libyaml's loader (used for the built-in file when PyYAML has it) gives the pure-Python one's data."""
    from importlib import resources

    import yaml

    from zeus_bench.traces import workloads

    text = resources.files("zeus_bench").joinpath("data/workloads.yaml").read_text()
    fast = yaml.load(text, Loader=workloads.BUILTIN_LOADER)
    assert fast == yaml.safe_load(text) and len(fast["workloads"]) >= 6
    assert workloads.BUILTIN_LOADER.__name__ in ("CSafeLoader", "SafeLoader")
