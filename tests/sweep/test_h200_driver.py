"""The H200 driver (benchmarks/h200/run_queue.py): every job's command is one the sweep accepts.

A device call is scarce: a command the sweep refuses (an option it does not take on several
GPUs, a batch size that does not split over them) would spend it on nothing. Each command is
parsed by ``zeus-bench``'s own parser and turned into the sweep's plan, whose checks run before
any GPU is opened.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from zeus_bench.cli.main import build_parser
from zeus_bench.cli.sweep import plan_from_args
from zeus_bench.core.errors import ConfigError
from zeus_bench.sweep.plan import SweepPlan

DRIVER = Path(__file__).resolve().parents[2] / "benchmarks" / "h200" / "run_queue.py"


@pytest.fixture(scope="module")
def driver() -> ModuleType:
    spec = importlib.util.spec_from_file_location("run_queue", DRIVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plan(cmd: list[str]) -> SweepPlan:
    """The plan of a driver command: ``python observe_only.py zeus-bench sweep ...``."""
    assert cmd[:2] == [sys.executable, "benchmarks/h200/observe_only.py"] and cmd[2] == "zeus-bench"
    args = build_parser().parse_args(cmd[3:])
    assert args.command == "sweep"
    return plan_from_args(args)


def test_every_single_gpu_job_is_a_valid_observe_sweep(driver: ModuleType, tmp_path: Path) -> None:
    for name, (workload, sizes) in driver.SINGLE.items():
        plan = _plan(driver.sweep_cmd(workload, sizes, "0", "h200", tmp_path / f"{name}.parquet"))
        assert plan.observe and plan.stop_at_oom and not plan.distributed, name
        assert plan.gpu_kind == "h200" and plan.settings.rel_ci == 0.01
        assert list(plan.batch_sizes) == sorted(int(b) for b in sizes.split(","))


def test_every_ddp_job_is_a_valid_two_gpu_sweep(driver: ModuleType, tmp_path: Path) -> None:
    assert set(driver.DDP) == {
        f"ddp-{w}" for w in ("imagenet", "cifar100", "squad", "sentiment140", "librispeech", "movielens-1m")
    }
    for name, (workload, sizes) in driver.DDP.items():
        plan = _plan(driver.sweep_cmd(workload, sizes, "0,1", "h200x2", tmp_path / f"{name}.parquet"))
        assert plan.distributed and plan.gpu_indices == (0, 1) and not plan.stop_at_oom, name
        assert plan.observe and plan.gpu_kind == "h200x2"


def test_the_sweep_refuses_stop_at_oom_on_two_gpus(driver: ModuleType, tmp_path: Path) -> None:
    """What the DDP commands leave out: the driver of v2 passed it, and every DDP job would have failed."""
    cmd = driver.sweep_cmd("cifar100", "1024", "0,1", "h200x2", tmp_path / "x.parquet")
    with pytest.raises(ConfigError, match="stop-at-oom works with one GPU only"):
        _plan([*cmd, "--stop-at-oom"])


def test_a_resumed_job_says_so(driver: ModuleType, tmp_path: Path) -> None:
    shard = tmp_path / "squad.parquet"
    assert "--resume" not in driver.sweep_cmd("squad", "4,8", "0", "h200", shard)
    shard.write_bytes(b"")
    assert driver.sweep_cmd("squad", "4,8", "0", "h200", shard)[-1] == "--resume"
