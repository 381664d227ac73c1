"""The settings of :class:`~zeus_bench.online.callback.ZeusCallback`, in three frozen groups.

:class:`JobSettings` (what the job is and when a run ends),
:class:`~zeus_bench.online.optimizer.OptimizerSettings` (how the batch size is chosen and the run
charged: the optimizer's own settings) and :class:`DeviceSettings` (which GPUs, how they are
measured and limited). :func:`callback_settings` builds them from the callback's keyword
convenience (``ZeusCallback(job=..., batch_sizes=..., beta=...)``), so that scripts written
against the flat keywords keep working.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from zeus_bench.core.errors import ConfigError
from zeus_bench.device.base import GPUBackend
from zeus_bench.online.optimizer import OptimizerSettings
from zeus_bench.online.profiler import ProfilerConfig


@dataclasses.dataclass(frozen=True)
class JobSettings:
    """The job: its name, batch sizes, target and state folder (the callback's positional arguments, in order)."""

    job: str
    batch_sizes: Sequence[int]
    default_batch_size: int
    target_metric: float
    max_epochs: int
    state_dir: str | Path
    higher_is_better: bool = True

    def __post_init__(self) -> None:
        """Refuse a run that could not train an epoch."""
        if self.max_epochs < 1:
            raise ConfigError(f"max_epochs must be >= 1, got {self.max_epochs}")


@dataclasses.dataclass(frozen=True)
class DeviceSettings:
    """The GPUs: which, through which backend, whether limits are set, the profiler and sampling."""

    gpu_indices: Sequence[int] = (0,)
    backend: GPUBackend | str | None = None
    observe: bool = False
    profiler: ProfilerConfig | None = None
    journal_dir: str | Path | None = None
    sample_interval_s: float | None = None


_GROUPS = (JobSettings, OptimizerSettings, DeviceSettings)


def _fields(cls: type) -> list[str]:
    return [f.name for f in dataclasses.fields(cls)]


def callback_settings(
    args: Sequence[Any], keywords: Mapping[str, Any]
) -> tuple[JobSettings, OptimizerSettings, DeviceSettings]:
    """The three groups from the callback's arguments.

    ``args``: a :class:`JobSettings` alone, or :class:`JobSettings`' fields in order. ``keywords``:
    ``optimizer=`` and ``device=`` (settings objects) and any field of the three groups by name (a
    field named overrides the object's).

    Raises:
        TypeError: an unknown keyword, a field given twice, or too many positional arguments.
    """
    kw = dict(keywords)
    groups: list[Any] = [
        None,
        kw.pop("optimizer", None) or OptimizerSettings(),
        kw.pop("device", None) or DeviceSettings(),
    ]
    job_fields = _fields(JobSettings)
    if len(args) == 1 and isinstance(args[0], JobSettings):
        groups[0] = args[0]
    elif len(args) > len(job_fields):
        raise TypeError(
            f"ZeusCallback() takes at most {len(job_fields)} positional arguments ({len(args)} given)"
        )
    else:
        for name, value in zip(job_fields, args, strict=False):
            if name in kw:
                raise TypeError(f"ZeusCallback() got multiple values for argument {name!r}")
            kw[name] = value
    for i, cls in enumerate(_GROUPS):
        mine = {k: kw.pop(k) for k in _fields(cls) if k in kw}
        groups[i] = cls(**mine) if groups[i] is None else dataclasses.replace(groups[i], **mine)
    if kw:
        raise TypeError(f"ZeusCallback() got an unexpected keyword argument {sorted(kw)[0]!r}")
    return groups[0], groups[1], groups[2]
