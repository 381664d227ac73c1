"""A hand-made job whose replay can be worked out by hand (see test_sim_replay_rules.py)."""

from __future__ import annotations

import numpy as np

from zeus_bench.traces.jobs import JobTrace
from zeus_bench.traces.workloads import WorkloadSpec

# Batch sizes 8, 16, 32 (b0), 64; limits 100 W and 200 W. At 200 W an epoch takes 1 s at 200 W
# (200 J); at 100 W it takes 1.5 s at 100 W (150 J). With eta = 1 the cost is the energy, the JIT
# profile picks 100 W, and a profiling first epoch costs mean(150, 200) = 175 J.
# One training path per batch size: 8 never converges, 16 needs 4 epochs, 32 needs 5, 64 needs 3.
TARGETS = {8: [np.nan], 16: [4.0], 32: [5.0], 64: [3.0]}


def toy_job(targets: dict[int, list[float]] | None = None, b0: int = 32, max_epochs: int = 10) -> JobTrace:
    targets = TARGETS if targets is None else targets
    bs = np.array(sorted(targets), dtype=np.int64)
    limits = np.array([100.0, 200.0])
    tpe = np.tile([1.5, 1.0], (len(bs), 1))
    pw = np.tile([100.0, 200.0], (len(bs), 1))
    spec = WorkloadSpec(
        id="toy", dataset="toy", network="net", optimizer="sgd", target_metric=0.5, metric="accuracy",
        metric_direction="max", max_epochs=max_epochs, default_batch_size=b0,
    )  # fmt: skip
    return JobTrace(
        workload=spec,
        gpu="toygpu",
        b0=b0,
        batch_sizes=bs,
        power_limits=limits,
        time_per_epoch_s=tpe,
        avg_power_w=pw,
        target_epochs=tuple(np.array(targets[int(b)], dtype=float) for b in bs),
        max_power_w=200.0,
        max_power_by_bs_w=np.full(len(bs), 200.0),
    )
