"""The SLURM prolog/epilog pair (deploy/slurm) restores a job's GPUs however the job was killed.

``make test-slurm`` (tests/slurm/cluster.sh) configures ``Prolog=`` and ``Epilog=`` with the
repository's scripts; they read the settings file named by ``$ZEUS_BENCH_SLURM_HOOK_ENV``, which
this module writes while it runs: the fake backend, on a state file that the jobs and the epilog
share, its two GPUs standing for the node's two gres GPUs. The GPUs start at 650 and 610 W (not
their 700 W maximum), so a restore to the previous limit is told apart from a reset.

* a zeus-bench sweep that set 300 W and ignores SIGTERM, cancelled by ``scancel`` (SIGTERM, then
  SIGKILL after KillWait: the sweep's own restore never runs, its journal is left behind);
* a job that sets 250 W and ignores SIGTERM, killed by its time limit (SIGTERM, then SIGKILL after
  KillWait).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from slurm_helpers import ACTIVE, squeue, wait_for

from zeus_bench.device.fake import FakeBackend

pytestmark = pytest.mark.slurm
BEFORE = [650.0, 610.0]


def limits(state: Path) -> list[float]:
    backend = FakeBackend(state_path=state, n_gpus=2)
    return [backend.gpu(i).power_limit_w() for i in range(2)]


def ended(job: str) -> str | None:
    """The job's final state once it and its epilog are done (squeue shows COMPLETING until then)."""
    return next((r[1] for r in squeue("%i|%T", "-j", job) if r[1] not in ACTIVE), None)


@pytest.fixture(scope="module")
def hooks(slurm_cluster: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The hooks' settings file, for this module's jobs only; two fake GPUs at 650 and 610 W."""
    conf = os.environ.get("ZEUS_BENCH_SLURM_HOOK_ENV")
    if not conf:
        pytest.fail(
            "ZEUS_BENCH_SLURM_HOOK_ENV is not set: run under `make test-slurm` (tests/slurm/cluster.sh)"
        )
    folder = tmp_path_factory.mktemp("epilog")
    state = folder / "fake-gpus.json"
    backend = FakeBackend(state_path=state, n_gpus=2)
    for i, watts in enumerate(BEFORE):
        backend.gpu(i).set_power_limit_w(watts)
    Path(conf).write_text(
        f"ZEUS_BENCH_PYTHON={sys.executable}\nZEUS_BENCH_BACKEND=fake\nZEUS_BENCH_FAKE_STATE={state}\n"
        f"ZEUS_BENCH_FAKE_GPUS=2\nZEUS_BENCH_SLURM_RECORD_DIR={folder / 'records'}\n"
    )
    yield folder
    Path(conf).unlink(missing_ok=True)


def sbatch(folder: Path, name: str, wrap: str, *extra: str) -> str:
    env = {
        **os.environ,
        "ZEUS_BENCH_FAKE_STATE": str(folder / "fake-gpus.json"),
        "ZEUS_BENCH_FAKE_GPUS": "2",
        "ZEUS_BENCH_STATE_DIR": str(folder / f"{name}-state"),
        "OMP_NUM_THREADS": "1",
    }
    cmd = ["sbatch", "--parsable", "--partition=gpu", "--gpus=1", "--cpus-per-task=1", *extra]
    cmd += [f"--output={folder / f'{name}.log'}", "--export=ALL", f"--wrap={wrap}"]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, check=True, timeout=60).stdout.strip()


@pytest.fixture(scope="module")
def time_limited(hooks: Path) -> str:
    """A job that sets 250 W on its GPU and ignores SIGTERM, with a 1-minute limit (submitted first)."""
    script = (
        "import os, signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "from zeus_bench.device.fake import FakeBackend; "
        "i = int(os.environ['SLURM_JOB_GPUS'].split(',')[0]); "
        "FakeBackend(n_gpus=2).gpu(i).set_power_limit_w(250); print('set', i, flush=True); time.sleep(3600)"
    )
    return sbatch(hooks, "timelimit", f"'{sys.executable}' -c \"{script}\"", "--time=1")


def test_epilog_restores_a_sweep_killed_by_scancel(hooks: Path, time_limited: str) -> None:
    state = hooks / "fake-gpus.json"
    # SIGTERM ignored (inherited through exec; the session leaves an ignored signal ignored), so
    # scancel's SIGTERM does nothing and its SIGKILL, KillWait later, ends the sweep mid-window.
    sweep = (
        f"trap '' TERM; exec '{sys.executable}' -m zeus_bench.cli.main sweep --backend fake --workload movielens-1m --tiny "
        "--batch-sizes 4 --power-limits 300 --warmup-iters 1 --warmup-s 0 --steady-s 0 --measure-iters 1 "
        f"--measure-s 3600 --max-measure-s 3600 --gpus 0 --out '{hooks / 'never.parquet'}'"
    )
    job = sbatch(hooks, "scancel", sweep)
    # The time-limited job holds one GPU at 250 W; this one sets 300 W on the other (150 s: it may
    # wait for the time-limited sweep of conftest.py to free a GPU).
    [gpu] = wait_for(lambda: [i for i, w in enumerate(limits(state)) if w == 300.0], 150, "300 W")
    assert (hooks / "records" / f"job-{job}.json").exists()  # written by the prolog
    subprocess.run(["scancel", job], check=True, timeout=30)
    assert wait_for(lambda: ended(job), 60, "the cancelled job and its epilog to end") == "CANCELLED"
    assert limits(state)[gpu] == BEFORE[gpu]
    assert not (hooks / "records" / f"job-{job}.json").exists()
    # The sweep itself restored nothing (SIGKILL): its journal is still there, naming the old limit.
    journal = list((hooks / "scancel-state" / "journal").glob("*.json"))
    assert len(journal) == 1 and f'"previous_power_limit_w": {BEFORE[gpu]}' in journal[0].read_text()


def test_epilog_restores_a_job_killed_at_its_time_limit(hooks: Path, time_limited: str) -> None:
    state = hooks / "fake-gpus.json"
    wait_for(
        lambda: (hooks / "timelimit.log").exists() and "set" in (hooks / "timelimit.log").read_text(),
        150,
        "250 W",
    )
    gpu = int((hooks / "timelimit.log").read_text().split()[1])  # it printed "set <gpu>" after setting 250 W
    final = wait_for(lambda: ended(time_limited), 150, "SLURM to end the job at its time limit", interval=2)
    assert final == "TIMEOUT"
    assert limits(state) == BEFORE
    # Set three times: to 610/650 W here, to 250 W by the job, back by the epilog.
    assert FakeBackend(state_path=state, n_gpus=2).gpu(gpu).setter_calls() == 3
    assert not list((hooks / "records").glob("*.json"))
