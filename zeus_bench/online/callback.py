"""Training-loop integration: one object a PyTorch script adopts in a few lines.

Example::

    zeus = ZeusCallback(job="cifar100-resnet", batch_sizes=[32, 64, 128, 256],
                        default_batch_size=128, target_metric=0.6, max_epochs=50,
                        state_dir="~/.zeus-jobs", observe=False)
    loader = make_loader(zeus.batch_size)
    with zeus:                                # power-limit session, monitor, profiler
        for epoch in zeus.epochs():           # stops at the target, max_epochs or early stop
            for x, y in loader:
                zeus.on_step_begin()
                train_step(x, y)
                zeus.on_step_end(samples=len(x))
            zeus.on_epoch_end(metric=evaluate())
    # on exit the run's cost is reported to the persisted batch-size optimizer

Each recurrence of the job constructs a new ``ZeusCallback`` with the same ``state_dir``: the
optimizer resumes from its JSON state and the power profiles from their cache. The cost is
:meth:`zeus_bench.core.cost.Cost.zeus_cost` over the energy and time of the whole run (profiling included).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from zeus_bench.core.cost import max_power_w
from zeus_bench.core.errors import ConfigError
from zeus_bench.device import get_backend
from zeus_bench.device.base import GPUBackend
from zeus_bench.device.control import PowerLimitSession
from zeus_bench.device.monitor import EnergyMonitor, Measurement
from zeus_bench.online.callback_settings import DeviceSettings, callback_settings
from zeus_bench.online.optimizer import BatchSizeOptimizer, OptimizerSettings, RunRecord
from zeus_bench.online.profiler import JITPowerLimitProfiler, ProfileCache, ProfilerConfig

log = logging.getLogger(__name__)

_RUN_WINDOW = "zeus_bench.run"


class ZeusCallback:
    """Batch-size optimizer + JIT power-limit profiler + energy accounting for one training run.

    The settings come in three groups (:class:`JobSettings`, :class:`OptimizerSettings`,
    :class:`DeviceSettings`), or by name as keywords, the job's first six also in order:
    ``ZeusCallback(JobSettings("toy", [16, 32], 32, 0.9, 10, "state"), device=DeviceSettings(observe=True))``
    is ``ZeusCallback("toy", [16, 32], 32, 0.9, 10, "state", observe=True)``.

    The settings, by name (each group's dataclass documents its own):

        job: Job name (state file names and the profile cache key).
        batch_sizes: Feasible batch sizes.
        default_batch_size: The job's default batch size.
        target_metric: Validation metric that ends the run successfully.
        max_epochs: Epochs after which a run that has not reached the target stops.
        state_dir: Folder of the job's state (``<job>.optimizer.json``, ``power_profiles.json``).
        cost: The cost each run is charged (:class:`~zeus_bench.core.cost.Cost`; default the paper's).
        beta: Early-stop threshold (``inf``: never stop early).
        higher_is_better: Whether a larger metric is better.
        gpu_indices: GPUs the job uses (NVML indices; default 0).
        backend: GPU backend or its name (``nvml``, ``fake``; default from the environment).
        observe: Never set power limits (measure at the current limit).
        profiler: Profiler settings (default: :class:`ProfilerConfig` with this ``cost``).
        seed: Seed of the optimizer when its state is created.
        journal_dir: State directory of the power-limit journal and locks.
        sample_interval_s: Background power sampling interval (None: off).
        policy: Batch-size policy, ``zeus`` or ``zeus-plus`` (see :class:`BatchSizeOptimizer`).
        window: Thompson-sampling window, observations per arm (0: all; the paper's Capriccio: 10).
        recurrences: How many times the job will run, when known (``zeus-plus`` spreads its 2 %
            allowance over them); 0, unknown: its anytime budget.
        prune_rounds: Pruning rounds of the ``zeus`` policy (default the paper's 2).
    """

    def __init__(
        self,
        *job: Any,
        optimizer: OptimizerSettings | None = None,
        device: DeviceSettings | None = None,
        **keywords: Any,
    ) -> None:
        """Load (or create) the job's optimizer and choose this run's batch size.

        ``job``: a :class:`JobSettings`, or its fields in order; any setting of the three groups
        may also be passed by name (see the class's Args).
        """
        spec, opt, dev = callback_settings(job, {**keywords, "optimizer": optimizer, "device": device})
        self.settings = spec
        self.job = spec.job
        self.state_dir = Path(spec.state_dir).expanduser()
        self.optimizer = BatchSizeOptimizer(
            self.state_dir / f"{spec.job}.optimizer.json",
            spec.batch_sizes,
            spec.default_batch_size,
            opt,
        )
        self.batch_size = self.optimizer.next_batch_size()
        #: Why the optimizer chose :attr:`batch_size` (its phase when it chose), for the summary.
        self.choice_reason = self.optimizer.choice_reason()
        self.choice_phase = self.optimizer.phase()
        self.target_metric = float(spec.target_metric)
        self.max_epochs = int(spec.max_epochs)
        self.higher_is_better = spec.higher_is_better
        backend = dev.backend
        self.backend = backend if isinstance(backend, GPUBackend) else get_backend(backend)
        self.gpus = self.backend.gpus(list(dev.gpu_indices))
        self.observe = dev.observe
        self.profiler_config = dev.profiler or ProfilerConfig(cost=opt.cost)
        if self.profiler_config.cost != opt.cost:
            raise ConfigError(
                f"profiler cost {self.profiler_config.cost} differs from the job's cost {opt.cost}"
            )
        self.journal_dir = dev.journal_dir
        self.sample_interval_s = dev.sample_interval_s
        self.max_power_w = max_power_w(max(g.power_limit_range_w()[1] for g in self.gpus), len(self.gpus))
        self.session: PowerLimitSession | None = None
        self.monitor: EnergyMonitor | None = None
        self.profiler: JITPowerLimitProfiler | None = None
        self.epoch = 0
        self.metric: float | None = None
        self.reached = False
        self.early_stopped = False
        self.energy_j = 0.0
        self.time_s = 0.0
        self.record: RunRecord | None = None
        self.epoch_measurements: list[Measurement] = []
        self._stop = False
        log.info("job %s: batch size %d this run", spec.job, self.batch_size)

    # Context --------------------------------------------------------------------------------
    def __enter__(self) -> ZeusCallback:
        self.session = PowerLimitSession(
            self.gpus, observe=self.observe, journal_dir=self.journal_dir
        ).__enter__()
        try:
            self.monitor = EnergyMonitor(self.gpus, sample_interval_s=self.sample_interval_s)
            self.profiler = JITPowerLimitProfiler(
                self.session,
                self.monitor,
                workload=self.job,
                config=self.profiler_config,
                cache=ProfileCache(self.state_dir / "power_profiles.json"),
            )
            self.monitor.begin_window(_RUN_WINDOW)
        except BaseException:
            self.session.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        assert self.session is not None and self.monitor is not None
        try:
            if _RUN_WINDOW in self.monitor.open_windows():
                m = self.monitor.end_window(_RUN_WINDOW)
                self.energy_j, self.time_s = self.energy_j + m.total_energy_j, self.time_s + m.time_s
            self.monitor.close()
            if exc_type is None:
                self.record = self.optimizer.report(
                    self.batch_size,
                    self.cost_j,
                    self.reached,
                    energy_j=self.energy_j,
                    time_s=self.time_s,
                    early_stopped=self.early_stopped,
                    epochs=self.epoch,
                )
                log.info("%s", self.summary_line())
            else:
                log.warning("run failed; not reported to the batch-size optimizer")
        finally:
            self.session.__exit__(exc_type, *rest)

    # Loop -----------------------------------------------------------------------------------
    @property
    def cost_j(self) -> float:
        """Zeus cost of the run so far, J."""
        return float(self.optimizer.cost.zeus_cost(self.energy_j, self.time_s, self.max_power_w))

    def _refresh(self) -> None:
        assert self.monitor is not None
        m = self.monitor.end_window(_RUN_WINDOW)
        self.energy_j, self.time_s = self.energy_j + m.total_energy_j, self.time_s + m.time_s
        self.epoch_measurements.append(m)
        self.monitor.begin_window(_RUN_WINDOW)

    @property
    def finished(self) -> bool:
        """Whether the run should train no further (target, ``max_epochs`` or early stop)."""
        return self._stop or self.epoch >= self.max_epochs

    def on_epoch_begin(self) -> int:
        """Start the next epoch (for loops that own their epochs; :meth:`epochs` calls it).

        Returns:
            The epoch's number (1, 2, ...).
        """
        if self.profiler is None:
            raise ConfigError("ZeusCallback epochs must run inside 'with zeus:'")
        if self.finished:
            raise ConfigError(f"job {self.job}: the run is finished; no epoch {self.epoch + 1}")
        self.epoch += 1
        self.profiler.on_epoch_begin(self.batch_size)
        return self.epoch

    def epochs(self) -> Iterator[int]:
        """Yield epoch numbers (1, 2, ...) until the target, ``max_epochs`` or an early stop."""
        if self.profiler is None:
            raise ConfigError("ZeusCallback.epochs() must run inside 'with zeus:'")
        while not self.finished:
            yield self.on_epoch_begin()

    def on_step_begin(self) -> None:
        """Call before each training step."""
        assert self.profiler is not None
        self.profiler.on_step_begin()

    def on_step_end(self, samples: int) -> None:
        """Call after each training step with the number of samples it processed."""
        assert self.profiler is not None
        self.profiler.on_step_end(samples)

    def on_epoch_end(self, metric: float) -> None:
        """Call after validation with the epoch's metric; decides whether to stop."""
        assert self.profiler is not None
        self.profiler.on_epoch_end()
        self._refresh()
        self.metric = float(metric)
        self.reached = metric >= self.target_metric if self.higher_is_better else metric <= self.target_metric
        if self.reached:
            self._stop = True
        elif self.optimizer.should_stop(self.cost_j, self.epoch):
            log.info(
                "early stop: cost %.4g J > beta %g x best %.4g J",
                self.cost_j,
                self.optimizer.beta,
                self.optimizer.best_cost_j(),
            )
            self.early_stopped = True
            self._stop = True

    def summary_line(self) -> str:
        """The recurrence in one line: energy, time, cost, outcome, and the choices and why."""
        if self.reached:
            outcome = f"reached the target in {self.epoch} epoch(s)"
        elif self.early_stopped:
            outcome = f"stopped early after {self.epoch} epoch(s) (cost above beta x the best)"
        else:
            outcome = f"missed the target in {self.epoch} epoch(s)"
        limit = self.profiler.chosen_power_limit_w if self.profiler else None
        at = f" at {limit:g} W (least-cost profiled limit)" if limit is not None else ""
        return (
            f"job {self.job} run {len(self.optimizer.runs)}: {self.energy_j:.4g} J, {self.time_s:.4g} s, "
            f"cost {self.cost_j:.4g} J; {outcome}; batch size {self.batch_size}{at} chosen by "
            f"{self.choice_reason}; best batch size so far {self.optimizer.best_batch_size()}"
        )

    def summary(self) -> dict[str, Any]:
        """The run's outcome as a flat dict."""
        profile = self.profiler.profile if self.profiler else None
        return {
            "job": self.job,
            "batch_size": self.batch_size,
            "epochs": self.epoch,
            "metric": self.metric,
            "reached": self.reached,
            "early_stopped": self.early_stopped,
            "energy_j": self.energy_j,
            "time_s": self.time_s,
            "cost_j": self.cost_j,
            "power_limit_w": self.profiler.chosen_power_limit_w if self.profiler else math.nan,
            "observe_mode": self.observe,
            "profiled_limits_w": [m.power_limit_w for m in profile.measurements] if profile else [],
            "choice": self.choice_reason,
            "phase": self.choice_phase,
        }
