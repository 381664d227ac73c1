"""``zeus-bench sweep --train-to-target``: epochs to the target metric, as a ``train`` trace.

For users who have the datasets: each (batch size, run) trains a freshly built model on the real
training split, evaluates on the validation split after every epoch, and records the first epoch
at which the workload's target metric (from the registry) is reached; missing when it is not
reached within the epoch budget. Runs differ by seed (``seed + run``). A row is written after
each run, so an interrupted sweep keeps its finished runs; ``--resume`` skips them.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from zeus_bench.core.errors import ConfigError
from zeus_bench.store import read_table, write_table
from zeus_bench.sweep.devices import resolve_torch_device
from zeus_bench.sweep.plan import SweepPlan
from zeus_bench.sweep.provenance import software_provenance, utc_now
from zeus_bench.sweep.writer import read_to_resume

if TYPE_CHECKING:
    import torch

    from zeus_bench.sweep.workload import TrainingWorkload
    from zeus_bench.traces.workloads import WorkloadSpec

log = logging.getLogger(__name__)


def check_data_root(root: Path) -> Path:
    """Return ``root`` if it is a readable folder, else raise :class:`ConfigError` (one line)."""
    if not root.is_dir():
        raise ConfigError(f"dataset root {root} is not a folder")
    if not os.access(root, os.R_OK | os.X_OK):
        raise ConfigError(f"dataset root {root} is not readable")
    return root


def reached(metric: float, target: float, direction: str) -> bool:
    """Whether ``metric`` meets ``target`` in the metric's direction (``max`` or ``min``)."""
    return metric >= target if direction == "max" else metric <= target


def _train_provenance(plan: SweepPlan, root: Path, epochs: int, device: torch.device) -> dict[str, Any]:
    """The ``train`` table's provenance (its ``finished_utc`` is added at each write)."""
    return {
        "source": "zeus-bench sweep --train-to-target",
        "workload": plan.workload,
        "tiny": plan.tiny,
        "data_root": str(root),
        "max_epochs": epochs,
        "seed": plan.seed,
        "device": str(device),
        "started_utc": utc_now(),
        **software_provenance(),
    }


def _train_run(
    plan: SweepPlan,
    workload: TrainingWorkload,
    spec: WorkloadSpec,
    root: Path,
    device: torch.device,
    batch_size: int,
    run: int,
    epochs: int,
) -> tuple[float, int | None]:
    """Train a fresh model (seed ``plan.seed + run``) at ``batch_size`` until it reaches the target.

    Returns:
        ``(learning_rate, target_epoch)``: the optimizer's learning rate and the first epoch whose
        validation metric reached the target (None: not within ``epochs``).
    """
    import torch

    torch.manual_seed(plan.seed + run)
    model = workload.build_model().to(device)
    opt = workload.build_optimizer(model, batch_size)
    lr = float(opt.param_groups[0]["lr"])
    for epoch in range(1, epochs + 1):
        model.train()
        for batch in workload.real_loader(root, "train", batch_size):
            workload.train_step(model, opt, workload.to_device(batch, device))
        model.eval()
        with torch.no_grad():
            val = (workload.to_device(b, device) for b in workload.real_loader(root, "val", batch_size))
            metric = float(workload.evaluate(model, val))
        log.info(
            "%s bs %d run %d epoch %d: %s %.4g", plan.workload, batch_size, run, epoch, spec.metric, metric
        )
        if reached(metric, spec.target_metric, spec.metric_direction):
            return lr, epoch
    return lr, None


def run_train_to_target(
    plan: SweepPlan,
    data_root: str | Path,
    out: str | Path,
    runs: int = 1,
    max_epochs: int | None = None,
    resume: bool = False,
) -> pd.DataFrame:
    """Train each batch size ``runs`` times to the target; write and return the ``train`` rows.

    Raises:
        ConfigError: options training to the target would ignore (power limits, several GPUs),
            unreadable dataset root, bad ``runs``/``max_epochs``, ``out`` exists without ``resume``; the workload's loader raises its own one-line error for a bad format.
    """
    from zeus_bench.device import backend_name
    from zeus_bench.sweep.workload import load_workload
    from zeus_bench.traces.workloads import get_workload

    plan.check_train_to_target()
    root = check_data_root(Path(data_root))
    if runs < 1:
        raise ConfigError(f"--runs must be >= 1, got {runs}")
    spec = get_workload(plan.workload, plan.workloads_file)
    epochs = spec.max_epochs if max_epochs is None else max_epochs
    if epochs < 1:
        raise ConfigError(f"--max-epochs must be >= 1, got {epochs}")
    workload = load_workload(plan.workload, tiny=plan.tiny)
    out = Path(out)
    previous = read_to_resume(out, "train", resume, "run only its missing runs")
    done = set() if previous is None else set(zip(previous["batch_size"], previous["run"], strict=True))
    device = resolve_torch_device(plan.torch_device, backend_name(plan.backend), plan.gpu_indices[0])
    prov = _train_provenance(plan, root, epochs, device)
    rows: list[dict[str, object]] = []
    for batch_size in plan.batch_sizes:
        for run in range(runs):
            if (batch_size, run) in done:
                continue
            lr, target_epoch = _train_run(plan, workload, spec, root, device, batch_size, run, epochs)
            rows.append(
                {
                    "dataset": spec.dataset,
                    "network": spec.network,
                    "optimizer": spec.optimizer,
                    "batch_size": batch_size,
                    "learning_rate": lr,
                    "run": run,
                    "target_metric": spec.target_metric,
                    "target_epoch": target_epoch,
                }
            )
            new = pd.DataFrame(rows)
            new["target_epoch"] = pd.array(new["target_epoch"].tolist(), dtype="Int64")
            df = new if previous is None else pd.concat([previous, new], ignore_index=True)
            write_table(df, out, "train", provenance={**prov, "finished_utc": utc_now()})
    if previous is not None and not rows:
        return previous
    return read_table(out, "train")
