"""The oracle's configuration: NumPy-only (the simulator never imports pandas), same as the table's."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies.builtin import oracle_configuration
from zeus_bench.traces.jobs import JobTrace, TraceSet


def _from_table(job: JobTrace, eta: float) -> tuple[int, float]:
    """The least-cost feasible row of ``job.configurations`` (ties: smaller batch, lower limit)."""
    cfg = job.configurations(Cost(eta))
    row = cfg[cfg["feasible"]].sort_values(["cost", "batch_size", "power_limit_w"], kind="stable").iloc[0]
    return int(row["batch_size"]), float(row["power_limit_w"])


@pytest.mark.parametrize("eta", [0.0, 0.25, 0.5, 1.0])
def test_same_choice_as_the_configurations_table_on_every_job(zeus_traces: Path, eta: float) -> None:
    traces = TraceSet(zeus_traces)
    jobs = [traces.job(g, w) for g in traces.gpus for w in traces.workload_ids(g)]
    assert len(jobs) == 12
    for job in jobs:
        assert oracle_configuration(job, Cost(eta)) == _from_table(job, eta), (job.workload.id, job.gpu)


def test_ties_go_to_the_smaller_batch_size_then_the_lower_limit() -> None:
    # Every path of each size converges in 2 epochs; with equal power and epoch time at both
    # limits, every (batch size, limit) costs the same.
    job = toy_job({16: [2.0, 2.0], 32: [2.0, 2.0], 64: [2.0, 2.0]})
    job.time_per_epoch_s[:] = 1.0
    job.avg_power_w[:] = 150.0
    assert oracle_configuration(job, Cost(0.5)) == (16, 100.0) == _from_table(job, 0.5)
    job2 = toy_job({16: [2.0, np.nan], 32: [2.0, 2.0]})  # 16 has a path that never converges
    assert oracle_configuration(job2, Cost(0.5))[0] == 32


def test_simulate_never_imports_pandas(zeus_traces: Path, tmp_path: Path) -> None:
    """The simulator's process stays light: pandas (about 0.2 s to import) is for analysis only."""
    code = (
        "import sys\n"
        "from zeus_bench.cli.main import main\n"
        f"status = main(['simulate', '--traces', {str(zeus_traces)!r}, '--gpu', 'v100', '--workloads', "
        "'all', '--policies', 'zeus,baseline,max-batch,oracle,grid-search,bs-only,pl-only', '--seeds', "
        f"'1-2', '--out', {str(tmp_path / 'runs.parquet')!r}])\n"
        "assert status == 0, status\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    assert (tmp_path / "runs.parquet").stat().st_size > 0
