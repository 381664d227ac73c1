"""The interface every training workload implements, and their discovery.

Workloads live in the top-level ``workloads/`` package (they depend on torch and on
``zeus_bench``, never the reverse). They are found through the entry-point group
``zeus_bench.workloads`` declared in ``pyproject.toml``, so this module never imports them
directly and the core stays importable without torch.

A workload's ``id`` is the trace's workload name (``cifar100``, ``imagenet``, ``squad``,
``sentiment140``, ``librispeech``, ``movielens-1m``) so that measured and published traces
combine.
"""

from __future__ import annotations

import abc
import functools
from collections.abc import Iterable, Iterator
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeus_bench.core.errors import UnknownWorkloadError

if TYPE_CHECKING:  # torch is an optional dependency (extra "workloads")
    import torch

ENTRY_POINT_GROUP = "zeus_bench.workloads"

Batch = Any  # a tuple/dict of tensors, as the workload's train_step expects


class TrainingWorkload(abc.ABC):
    """One training job: model, data, optimiser, one step and its validation metric.

    Attributes:
        id: Workload id, as in the traces and the registry.
        samples_per_epoch: Training samples in one epoch of the real dataset (used to
            extrapolate time per epoch from measured throughput).
        paper_batch_sizes: Batch sizes the paper traced for this workload.
        metric_name: Validation metric, in words.
        metric_direction: ``max`` or ``min``.
        amp: Whether mixed precision is used on CUDA (where the paper's setting allows); an
            instance may set it to ``False`` to measure full precision.
    """

    id: str
    samples_per_epoch: int
    paper_batch_sizes: tuple[int, ...]
    metric_name: str
    metric_direction: str
    amp: bool = False

    def __init__(self, tiny: bool = False) -> None:
        """Create the workload; ``tiny=True`` shrinks the model for CPU tests (same code path)."""
        self.tiny = tiny

    @abc.abstractmethod
    def build_model(self) -> torch.nn.Module:
        """Build the model with freshly initialised weights (no downloads)."""

    @abc.abstractmethod
    def build_optimizer(self, model: torch.nn.Module, batch_size: int) -> torch.optim.Optimizer:
        """Build the optimiser of the paper's setting for this batch size."""

    @abc.abstractmethod
    def synthetic_batches(self, batch_size: int, device: torch.device, seed: int = 0) -> Iterator[Batch]:
        """Yield endless random batches with the real data's tensor shapes and dtypes, on ``device``."""

    def synthetic_eval_batches(self, batch_size: int, device: torch.device, seed: int = 0) -> Iterator[Batch]:
        """Endless random batches in the form :meth:`evaluate` takes, on ``device``.

        The same as :meth:`synthetic_batches` unless the workload evaluates on batches of
        another form (e.g. ranked candidate lists for recommendation).
        """
        return self.synthetic_batches(batch_size, device, seed)

    @abc.abstractmethod
    def real_loader(
        self, root: str | Path, split: str, batch_size: int, *, num_workers: int = 0
    ) -> Iterable[Batch]:
        """Batches of the real dataset read from ``root`` in its published on-disk format.

        Args:
            root: Dataset root directory given by the user (nothing is downloaded).
            split: ``train`` or ``val`` (some workloads accept more; see their docs).
            batch_size: Samples per batch.
            num_workers: Data-loading worker processes (0 loads in the calling process).

        Raises:
            zeus_bench.core.errors.ConfigError: ``root`` is missing or not in the expected format.
        """

    @abc.abstractmethod
    def train_step(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: Batch) -> float:
        """Run one optimisation step on ``batch``; return the loss as a float."""

    def train_step_async(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: Batch) -> Any:
        """Run one optimisation step, possibly returning before the device has finished it.

        Returns the loss as the workload holds it (a device tensor for torch workloads; call
        ``float()`` on it to read it, which waits for the step). Sweeps call this so that the
        host does not wait for the device after every step; the default is :meth:`train_step`.
        """
        return self.train_step(model, optimizer, batch)

    @abc.abstractmethod
    def evaluate(self, model: torch.nn.Module, batches: Iterable[Batch]) -> float:
        """Return the validation metric over ``batches``."""

    def to_device(self, batch: Batch, device: torch.device) -> Batch:
        """Move a batch to ``device`` (tensors in tuples, lists and dicts)."""
        import torch

        if isinstance(batch, torch.Tensor):
            return batch.to(device, non_blocking=True)
        if isinstance(batch, dict):
            return {k: self.to_device(v, device) for k, v in batch.items()}
        if isinstance(batch, (tuple, list)):
            return type(batch)(self.to_device(v, device) for v in batch)
        return batch


@functools.cache
def _installed() -> dict[str, EntryPoint]:
    """The installed workloads' entry points, read once per process.

    Once: a process that drops its privileges after its first use (``zeus-bench`` run for an
    unprivileged user by root, as the daemon's tests do) may no longer read the environment's
    package metadata, e.g. in a clone whose parent folder only its owner may enter.
    """
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_workloads() -> list[str]:
    """Ids of the installed workloads (entry points of group ``zeus_bench.workloads``)."""
    return sorted(_installed())


def load_workload(workload_id: str, tiny: bool = False) -> TrainingWorkload:
    """Instantiate an installed workload by id.

    Raises:
        UnknownWorkloadError: no workload of that id is installed (lists the known ids).
    """
    eps = _installed()
    if workload_id not in eps:
        raise UnknownWorkloadError(
            f"unknown workload {workload_id!r}; installed: {', '.join(sorted(eps)) or 'none'}"
        )
    cls = eps[workload_id].load()
    workload = cls(tiny=tiny)
    if not isinstance(workload, TrainingWorkload):
        raise TypeError(f"entry point {workload_id!r} is not a TrainingWorkload")
    return workload
