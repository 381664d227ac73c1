"""``zeus-bench sweep``: time per epoch and average power of a workload over (batch size, limit).

The data flow, one module each:

1. :mod:`~zeus_bench.sweep.plan` -- what to measure (:class:`SweepPlan`, checked once);
2. :mod:`~zeus_bench.sweep.devices` -- which GPUs (CUDA ordinals to backend indices, limits
   checked against their ranges) and which torch device;
3. :mod:`~zeus_bench.sweep.points` -- the measuring loop over the points, each measured by
   :mod:`~zeus_bench.sweep.measure`;
4. :mod:`~zeus_bench.sweep.writer` -- the ``power`` trace, rewritten after every point (resume
   reads it back), with :mod:`~zeus_bench.sweep.provenance`;
5. a driver that runs 2-4: :mod:`~zeus_bench.sweep.single` (one GPU, this process) or
   :mod:`~zeus_bench.sweep.ddp` (several GPUs, one process each). :func:`run_sweep` picks it;
   the drivers never import each other or this module.

On fake GPUs the load and the slowdown under a cap come from
:mod:`zeus_bench.device.fake_load`, so fake traces show the real trade-off.
"""

from __future__ import annotations

from pathlib import Path

from zeus_bench.sweep.plan import SweepOutcome, SweepPlan
from zeus_bench.traces.workloads import get_workload


def run_sweep(plan: SweepPlan, out: str | Path, resume: bool = False) -> SweepOutcome:
    """Run a sweep and write its trace to ``out``: one process for one GPU, DDP for several.

    Raises:
        UnknownWorkloadError: the workload is not registered or not installed.
        ConfigError: a limit is outside a GPU's range, a batch size does not fit, ``out`` exists
            without ``resume``.
    """
    from zeus_bench.sweep.workload import load_workload

    out = Path(out)
    spec = get_workload(plan.workload, plan.workloads_file)
    workload = load_workload(plan.workload, tiny=plan.tiny)
    if plan.distributed:
        from zeus_bench.sweep.ddp import sweep_ddp

        return sweep_ddp(plan, out, resume, spec, workload)
    from zeus_bench.sweep.single import sweep_single_process

    return sweep_single_process(plan, out, resume, spec, workload)
