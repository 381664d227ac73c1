"""Pieces shared by the workloads: dataset-root checks, the training step, batching helpers."""

from __future__ import annotations

import abc
import contextlib
import logging
import math
import os
import weakref
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import torch

from zeus_bench.core.errors import ConfigError
from zeus_bench.sweep.workload import Batch, TrainingWorkload

log = logging.getLogger(__name__)

SPLITS = ("train", "val")


class DatasetError(ConfigError):
    """A dataset root that is missing, unreadable or not in the dataset's published format."""


def find_root(workload_id: str, root: str | Path, marker: str, subdirs: Sequence[str] = ()) -> Path:
    """The directory holding ``marker``: ``root`` itself or one of ``root/<subdir>``.

    Users point at either the dataset's own folder (``cifar-100-python``) or the folder that
    holds it; both are accepted.

    Raises:
        DatasetError: no candidate directory holds ``marker``.
    """
    base = Path(root).expanduser()
    try:
        readable = base.is_dir() and os.access(base, os.R_OK | os.X_OK)
    except OSError:  # a parent folder this user may not enter
        readable = False
    if not readable:
        raise DatasetError(f"{workload_id}: dataset root {base} is not a readable directory")
    for cand in (base, *(base / s for s in subdirs)):
        try:
            if (cand / marker).exists():
                return cand
        except OSError as exc:  # e.g. a subfolder this user may not enter
            raise DatasetError(
                f"{workload_id}: dataset root {cand} is not readable ({exc.strerror})"
            ) from None
    where = " or ".join(str(Path(s) / marker) for s in ("", *subdirs))
    raise DatasetError(f"{workload_id}: dataset root {base} has no {where}")


def require_file(workload_id: str, path: Path, what: str) -> Path:
    """Return ``path`` if it is a readable file.

    Raises:
        DatasetError: it is not (the message says what the file should be).
    """
    if not path.is_file():
        raise DatasetError(f"{workload_id}: missing {path} ({what})")
    return path


def check_split(workload_id: str, split: str, allowed: Sequence[str] = SPLITS) -> None:
    """Raise :class:`DatasetError` unless ``split`` is one of ``allowed``."""
    if split not in allowed:
        raise DatasetError(f"{workload_id}: unknown split {split!r}; expected one of {', '.join(allowed)}")


def sqrt_scaled_lr(base_lr: float, base_batch_size: int, batch_size: int) -> float:
    """Learning rate scaled with the square root of the batch size, as in the Zeus traces.

    The published train trace (``summary_train.csv``) records ``lr = base_lr * sqrt(b / b_base)``
    for every workload tuned per batch size.
    """
    if batch_size < 1:
        raise ConfigError(f"batch size must be positive, got {batch_size}")
    return base_lr * math.sqrt(batch_size / base_batch_size)


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of the model's first parameter (CPU for a model without parameters)."""
    for param in model.parameters():
        return param.device
    return torch.device("cpu")


def autocast(device: torch.device, enabled: bool) -> contextlib.AbstractContextManager[Any]:
    """bf16 autocast on CUDA when ``enabled``; a no-op elsewhere (CPU tests run in fp32)."""
    if enabled and device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


def optimizer_kernels(model: torch.nn.Module, fused: bool) -> dict[str, Any]:
    """Keyword arguments that select PyTorch's fastest optimiser kernels for ``model``'s device.

    On CUDA: ``fused=True`` for optimisers that have a fused kernel (Adam, AdamW), else
    ``foreach=True`` (one multi-tensor launch per operation instead of one per parameter). On
    the CPU: nothing (PyTorch's defaults). The update rule is the same either way.
    """
    if model_device(model).type != "cuda":
        return {}
    return {"fused": True} if fused else {"foreach": True}


def repeat_forever(batch: Batch) -> Iterator[Batch]:
    """Yield the same (device-resident) batch forever: synthetic data costs nothing per step."""
    while True:
        yield batch


def generator(device: torch.device, seed: int) -> torch.Generator:
    """A seeded random generator on ``device``."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed)
    return gen


class TensorBatches:
    """Re-iterable mini-batches over in-memory tensors of equal first dimension.

    Each iteration is one epoch; with ``shuffle`` the order is a fresh permutation drawn from a
    generator seeded once, so runs are reproducible.
    """

    def __init__(self, tensors: dict[str, torch.Tensor], batch_size: int, shuffle: bool, seed: int = 0):
        """Wrap ``tensors`` (name to tensor, all of the same length)."""
        lengths = {len(t) for t in tensors.values()}
        if len(lengths) != 1:
            raise ValueError(f"tensors of different lengths: {sorted(lengths)}")
        self.tensors = tensors
        self.n = lengths.pop()
        self.batch_size = batch_size
        self.shuffle = shuffle
        self._gen = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        """Batches per epoch."""
        return math.ceil(self.n / self.batch_size)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        """One epoch of batches."""
        order = torch.randperm(self.n, generator=self._gen) if self.shuffle else torch.arange(self.n)
        for start in range(0, self.n, self.batch_size):
            idx = order[start : start + self.batch_size]
            yield {k: t[idx] for k, t in self.tensors.items()}


class TorchWorkload(TrainingWorkload):
    """A workload whose training step is "loss, backward, optimizer step" under optional autocast.

    The step is written for speed on CUDA as a practitioner would write it: bf16 autocast where
    ``amp`` is set, no host synchronisation inside the step (:meth:`train_step_async` returns
    the loss as a device tensor; read it when you need it), the optimisers' fused or foreach
    kernels (:func:`optimizer_kernels`), channels-last memory for convolutional networks
    (``channels_last``), and an opt-in ``torch.compile`` of the model (``compile``; off by
    default: compilation takes tens of seconds per model and input shape).

    Attributes:
        channels_last: Convolutional network: model and images in channels-last layout.
        compile: Run the step's forward through ``torch.compile(model)`` (compiled once per model).
    """

    channels_last: bool = False
    compile: bool = False

    def __init__(self, tiny: bool = False) -> None:
        """Create the workload (see :class:`TrainingWorkload`)."""
        super().__init__(tiny)
        self._compiled: weakref.WeakKeyDictionary[torch.nn.Module, torch.nn.Module] = (
            weakref.WeakKeyDictionary()
        )

    @abc.abstractmethod
    def loss(self, model: torch.nn.Module, batch: Batch) -> torch.Tensor:
        """The scalar training loss of ``model`` on ``batch`` (called inside autocast)."""

    def memory_format(self, model: torch.nn.Module) -> torch.nn.Module:
        """``model`` in channels-last layout when ``channels_last`` is set (else unchanged)."""
        if self.channels_last:
            return model.to(memory_format=torch.channels_last)
        return model

    def network(self, model: torch.nn.Module) -> torch.nn.Module:
        """The module the step calls: ``model``, or its ``torch.compile`` wrapper when ``compile``."""
        if not self.compile:
            return model
        if model not in self._compiled:
            self._compiled[model] = torch.compile(model)  # type: ignore[assignment]
        return self._compiled[model]

    def train_step_async(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: Batch) -> Any:
        """One optimisation step without a host synchronisation; returns the detached loss tensor.

        The work may still be running on the device when this returns: call ``float()`` on the
        result (or synchronise) when you need the value.
        """
        if not model.training:
            model.train()
        optimizer.zero_grad(set_to_none=True)
        with autocast(model_device(model), self.amp):
            loss = self.loss(self.network(model), batch)
        loss.backward()
        optimizer.step()
        return loss.detach()

    def train_step(self, model: torch.nn.Module, optimizer: torch.optim.Optimizer, batch: Batch) -> float:
        """One optimisation step; returns the loss (a host synchronisation)."""
        return float(self.train_step_async(model, optimizer, batch))

    def eval_context(self, model: torch.nn.Module) -> contextlib.ExitStack:
        """Evaluation mode, no autograd, and the training step's autocast, as one context."""
        model.eval()
        stack = contextlib.ExitStack()
        stack.enter_context(torch.inference_mode())
        stack.enter_context(autocast(model_device(model), self.amp))
        return stack


class OneLineErrors:
    """Iterate a ``DataLoader`` so that a :class:`DatasetError` raised in a worker stays one line.

    PyTorch re-raises a worker's exception with the worker's traceback in its message; the
    user needs only the last line (which names the file and the problem). Other attributes are
    those of the wrapped loader.
    """

    def __init__(self, loader: Any) -> None:
        """Wrap ``loader`` (any re-iterable)."""
        self.loader = loader

    def __len__(self) -> int:
        """Batches per epoch, as the wrapped loader says."""
        return len(self.loader)

    def __getattr__(self, name: str) -> Any:
        """Delegate to the wrapped loader (``dataset``, ``batch_size``, ...)."""
        return getattr(self.__dict__["loader"], name)

    def __iter__(self) -> Iterator[Any]:
        """Batches of the wrapped loader."""
        try:
            yield from self.loader
        except DatasetError as exc:
            lines = str(exc).strip().splitlines()
            if len(lines) <= 1:
                raise
            raise DatasetError(lines[-1].split("DatasetError: ", 1)[-1]) from None
