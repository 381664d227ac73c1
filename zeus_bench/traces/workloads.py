"""Registry of recurring training jobs (workloads), kept as data in ``data/workloads.yaml``.

A :class:`WorkloadSpec` says which trace rows form the job and what its baseline is. Users add
their own jobs with a YAML file of the same shape (``load_workloads(path)``), never with code.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from zeus_bench.core.errors import ConfigError, UnknownWorkloadError

#: Largest epoch budget of a workload (the paper's jobs train at most a few hundred epochs).
MAX_EPOCHS = 100_000

_FIELDS = {
    "dataset": str,
    "network": str,
    "optimizer": str,
    "target_metric": float,
    "metric": str,
    "metric_direction": str,
    "max_epochs": int,
    "default_batch_size": int,
}


@dataclass(frozen=True)
class WorkloadSpec:
    """One recurring training job.

    Attributes:
        id: Workload id (the trace's dataset name for the paper's jobs, e.g. ``imagenet``).
        dataset: Dataset name in the traces.
        network: Network name in the traces.
        optimizer: Optimizer name in the traces (lower case).
        target_metric: Validation metric value that counts as converged.
        metric: What the metric is, in words.
        metric_direction: ``max`` if higher is better, ``min`` if lower is better.
        max_epochs: Epoch budget of one training run.
        default_batch_size: Published default batch size b0 (before any per-GPU cap).
    """

    id: str
    dataset: str
    network: str
    optimizer: str
    target_metric: float
    metric: str
    metric_direction: str
    max_epochs: int
    default_batch_size: int


def _typed(value: Any, typ: type, where: str) -> Any:
    """``value`` if it is of the field's type (a finite ``float`` field's value as a float).

    Integers are integers (not a flag, not ``2.5`` or ``.inf``: a YAML file's ``2.5`` epochs is
    refused, not truncated to 2), numbers finite, texts non-empty.

    Raises:
        ConfigError: ``where`` (file, workload and key) and the value.
    """
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if typ is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif typ is float:
        ok = number and math.isfinite(value)
    else:
        ok = isinstance(value, str) and bool(value.strip())
    if not ok:
        kind = {int: "an integer", float: "a finite number"}.get(typ, "a non-empty text")
        raise ConfigError(f"{where}: must be {kind}, got {value!r}")
    return float(value) if typ is float else value


def _parse(data: Any, source: str) -> dict[str, WorkloadSpec]:
    if not isinstance(data, dict) or not isinstance(data.get("workloads"), dict):
        raise ConfigError(f"{source}: expected a mapping with a 'workloads' mapping")
    out: dict[str, WorkloadSpec] = {}
    for wid, entry in data["workloads"].items():
        if not isinstance(entry, dict):
            raise ConfigError(f"{source}: workload {wid!r} must be a mapping")
        unknown = set(entry) - set(_FIELDS)
        missing = set(_FIELDS) - set(entry)
        if unknown or missing:
            raise ConfigError(
                f"{source}: workload {wid!r}: "
                + "; ".join(
                    s
                    for s in (
                        f"unknown keys {sorted(unknown)}" if unknown else "",
                        f"missing keys {sorted(missing)}" if missing else "",
                    )
                    if s
                )
            )
        values = {k: _typed(entry[k], typ, f"{source}: workload {wid!r}: {k}") for k, typ in _FIELDS.items()}
        if values["metric_direction"] not in ("max", "min"):
            raise ConfigError(f"{source}: workload {wid!r}: metric_direction must be 'max' or 'min'")
        if values["max_epochs"] < 1 or values["default_batch_size"] < 1:
            raise ConfigError(f"{source}: workload {wid!r}: max_epochs and default_batch_size must be >= 1")
        if values["max_epochs"] > MAX_EPOCHS:
            raise ConfigError(
                f"{source}: workload {wid!r}: max_epochs {values['max_epochs']} is above {MAX_EPOCHS:,}"
            )
        if isinstance(values["target_metric"], float) and not math.isfinite(values["target_metric"]):
            raise ConfigError(f"{source}: workload {wid!r}: target_metric must be a finite number")
        values["optimizer"] = values["optimizer"].lower()
        out[str(wid)] = WorkloadSpec(id=str(wid), **values)
    return out


#: The loader of the built-in registry: libyaml's where PyYAML was built with it (the same safe
#: constructor, parsed in C: about 20 ms less at each start), else the pure-Python one. User files
#: keep ``yaml.safe_load`` (its error messages).
BUILTIN_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


#: The built-in registry's file, where the package lies in a folder (as installed, or a checkout).
_BUILTIN_FILE = Path(__file__).parent.parent / "data" / "workloads.yaml"


def _builtin_text() -> str:
    """The built-in registry's text: read from its file, else (a zipped package) through importlib.resources."""
    if _BUILTIN_FILE.is_file():  # no importlib.resources (and its zipfile) to import: some 2 ms a start
        return _BUILTIN_FILE.read_text()
    from importlib import resources

    return resources.files("zeus_bench").joinpath("data/workloads.yaml").read_text()


@functools.cache
def _builtin() -> dict[str, WorkloadSpec]:
    return _parse(yaml.load(_builtin_text(), Loader=BUILTIN_LOADER), "zeus_bench/data/workloads.yaml")


def load_workloads(path: str | Path | None = None) -> dict[str, WorkloadSpec]:
    """Return the workload registry: the built-in jobs, updated by a user YAML file if given."""
    registry = dict(_builtin())
    if path is not None:
        p = Path(path)
        try:
            data = yaml.safe_load(p.read_text())
        except OSError as exc:
            raise ConfigError(f"{p}: cannot read workload file ({exc.strerror})") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{p}: not a text (UTF-8 YAML) workload file; is it a binary file?") from None
        except yaml.YAMLError as exc:
            raise ConfigError(f"{p}: not valid YAML ({str(exc).splitlines()[0]})") from None
        registry.update(_parse(data, str(p)))
    return registry


def get_workload(workload_id: str, path: str | Path | None = None) -> WorkloadSpec:
    """Return one workload by id, or raise :class:`UnknownWorkloadError` listing the known ids."""
    registry = load_workloads(path)
    try:
        return registry[workload_id]
    except KeyError:
        raise UnknownWorkloadError(
            f"unknown workload {workload_id!r}; known: {', '.join(sorted(registry))}"
        ) from None
