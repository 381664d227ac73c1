"""The measuring loop: every (batch size, power limit) point of a sweep, in order.

Shared by the single-process and the DDP driver. Each process builds the model once; each batch
size gets a fresh optimiser (some scale with the batch size) and its own synthetic batches; each
limit of that batch size is set (unless observing), then measured by
:func:`~zeus_bench.sweep.measure.measure_steps`. Only the leader (rank 0) reads energy, sets
limits and emits rows; ``agree`` and ``barrier`` keep the other ranks in step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from zeus_bench.sweep.measure import measure_steps
from zeus_bench.sweep.plan import SweepPlan
from zeus_bench.sweep.writer import Emit

if TYPE_CHECKING:
    import torch

    from zeus_bench.device.fake_load import FakeLoad
    from zeus_bench.sweep.workload import TrainingWorkload


def pending_points(
    batch_sizes: Sequence[int], limits: Sequence[float], done: set[tuple[int, float]]
) -> list[tuple[int, list[float]]]:
    """Batch sizes (ascending) with the limits still to measure; those with none are left out."""
    todo = [(b, [p for p in limits if (b, float(p)) not in done]) for b in batch_sizes]
    return [(b, ps) for b, ps in todo if ps]


@dataclass
class PointLoop:
    """The state every process of a sweep shares while it walks the points.

    ``agree`` and ``barrier`` are identities for one process and collectives under DDP; only
    the leader (rank 0) owns the monitor and the power-limit session and writes the table.
    ``fake`` paces the steps on fake GPUs (each rank its own GPU's).
    """

    workload: TrainingWorkload
    model: torch.nn.Module
    device: torch.device
    plan: SweepPlan
    monitor: Any
    set_limit: Callable[[float], None] | None
    agree: Callable[[bool], bool]
    barrier: Callable[[], None]
    world_size: int = 1
    leader: bool = True
    fake: FakeLoad | None = None
    #: Clock of the measurement's bounds (the fake GPUs' simulated one when they have a speed model).
    clock: Callable[[], float] = time.monotonic

    def batches(self, batch_size: int) -> Iterator[Any]:
        """Endless synthetic batches of this process's share of ``batch_size``."""
        local = batch_size // self.world_size
        return iter(self.workload.synthetic_batches(local, self.device, seed=self.plan.seed))

    def run_batch_size(self, batch_size: int, limits: Sequence[float], emit: Emit) -> None:
        """Measure every limit of one batch size; ``emit`` receives each measurement (leader)."""
        # Held in a dict so that the optimiser state and batches can be dropped before an
        # out-of-memory error propagates (the smaller batch sizes that follow need the memory).
        state: dict[str, Any] = {
            "opt": self.workload.build_optimizer(self.model, batch_size),
            "it": self.batches(batch_size),
        }

        def step() -> object:
            # May return before the device has finished: the host does not wait after each step.
            return self.workload.train_step_async(self.model, state["opt"], next(state["it"]))

        def synced_step() -> object:
            # Fake GPUs stretch a step by the time it took, so it must have finished.
            return self.workload.train_step(self.model, state["opt"], next(state["it"]))

        try:
            for limit in limits:
                if self.set_limit is not None:
                    self.set_limit(limit)
                paced = (
                    step
                    if self.fake is None
                    # Simulated time on a model clock; else the host's time stretched by the cap.
                    else self.fake.paced(
                        synced_step, batch_size // self.world_size if self.fake.clock else None
                    )
                )
                self.barrier()
                m = measure_steps(
                    paced,
                    self.monitor,
                    self.plan.settings,
                    f"bs{batch_size}-pl{limit:g}",
                    self.agree,
                    clock=self.clock,
                )
                if self.leader:
                    emit(batch_size, limit, m)
        finally:
            state.clear()
            self.model.zero_grad(set_to_none=True)
