"""The sweep's output: rows of the ``power`` trace, rewritten atomically after every point.

An interrupted sweep therefore leaves a valid trace of the points it finished, with
``complete: false`` in its provenance; ``--resume`` (:func:`load_previous`) reads it back and
the drivers measure only the points it lacks.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd

from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.core.fsutil import remove_partial_writes
from zeus_bench.store import read_table, write_table
from zeus_bench.sweep.point import PointMeasurement
from zeus_bench.sweep.provenance import utc_now
from zeus_bench.sweep.stats import finite_or_none
from zeus_bench.traces.workloads import WorkloadSpec

log = logging.getLogger(__name__)

#: What a driver calls with each measured point: batch size, limit (W) and the measurement.
Emit = Callable[[int, float, PointMeasurement], None]


def read_to_resume(path: Path, kind: str, resume: bool, resume_does: str) -> pd.DataFrame | None:
    """The ``kind`` table at ``path`` to continue, or None when there is none.

    Raises:
        ConfigError: ``path`` exists and ``resume`` is off (``resume_does`` says what --resume
            would do), or it is not a valid ``kind`` table.
    """
    if not path.exists():
        return None
    if not resume:
        raise ConfigError(f"{path} exists; pass --resume to {resume_does}, or remove it")
    try:
        return read_table(path, kind)
    except TraceFormatError as exc:
        raise ConfigError(f"cannot resume: {exc}") from None


def load_previous(path: Path, resume: bool, gpu_kind: str, spec: WorkloadSpec) -> pd.DataFrame | None:
    """Rows of an earlier run of this sweep to continue, or None.

    Raises:
        ConfigError: ``path`` exists and ``resume`` is off, or it holds another GPU or workload.
    """
    df = read_to_resume(path, "power", resume, "measure only its missing points")
    if df is None:
        return None
    other = df[(df["gpu"] != gpu_kind) | (df["dataset"] != spec.dataset) | (df["network"] != spec.network)]
    if not other.empty:
        row = other.iloc[0]
        raise ConfigError(
            f"cannot resume {path}: it holds {row['dataset']}/{row['network']} on {row['gpu']}, "
            f"this sweep is {spec.dataset}/{spec.network} on {gpu_kind}"
        )
    return df


#: Provenance keys that say how a point was measured (besides the measuring settings, every field
#: of :class:`~zeus_bench.sweep.measure.MeasureSettings`): a resumed run reuses points only when
#: each is the same, so one table never mixes two ways of measuring under one provenance.
MEASURED_AS = ("mode", "tiny", "amp", "num_gpus", "backend", "seed", "samples_per_epoch")


def check_same_measuring(path: Path, old: Mapping[str, Any], new: Mapping[str, Any]) -> None:
    """Refuse to resume ``path`` when its points were measured otherwise than this run would.

    Compared: :data:`MEASURED_AS` and the measuring settings; a key the older table does not
    record is not compared.

    Raises:
        ConfigError: the first key that differs, with both values.
    """
    from dataclasses import fields

    from zeus_bench.sweep.measure import MeasureSettings

    for key in (*MEASURED_AS, *(f.name for f in fields(MeasureSettings))):
        if key in old and key in new and old[key] != new[key]:
            raise ConfigError(
                f"cannot resume {path}: its points were measured with {key} {old[key]!r}, this run "
                f"would use {new[key]!r}; measure into another file, or use the same setting"
            )


class SweepWriter:
    """Collects rows and provenance and rewrites the trace atomically after each point."""

    def __init__(self, path: Path, previous: pd.DataFrame | None, provenance: dict[str, Any]) -> None:
        """Start from ``previous`` rows (resume) and the sweep's provenance.

        Raises:
            ConfigError: ``previous`` was measured with other settings (:func:`check_same_measuring`).
        """
        if previous is not None:
            check_same_measuring(path, previous.attrs.get("zeus_bench", {}), provenance)
        self.path = path
        self.rows: list[dict[str, object]] = []
        self.previous = previous
        self.provenance = provenance
        self.provenance.setdefault("points", [])
        self.provenance.setdefault("skipped", [])
        self.measuring_s = 0.0
        for stale in remove_partial_writes(path):
            log.warning("removed %s, a partial write of %s left by a killed run", stale, path.name)
        if previous is not None:
            # The records of the points a resumed run keeps (``points`` lists what this run measured).
            kept = {
                (int(b), float(p))
                for b, p in zip(previous["batch_size"], previous["power_limit_w"], strict=True)
            }
            old = previous.attrs.get("zeus_bench", {})
            self.provenance["reused_points"] = [
                pt
                for pt in [*old.get("reused_points", []), *old.get("points", [])]
                if (int(pt["batch_size"]), float(pt["power_limit_w"])) in kept
            ]

    def done(self) -> set[tuple[int, float]]:
        """(batch size, limit) pairs already in the table."""
        if self.previous is None:
            return set()
        return {
            (int(b), float(p))
            for b, p in zip(self.previous["batch_size"], self.previous["power_limit_w"], strict=True)
        }

    def frame(self) -> pd.DataFrame:
        """All rows, previous then new, sorted by batch size and limit."""
        new = pd.DataFrame(self.rows)
        parts = [df for df in (self.previous, new) if df is not None and not df.empty]
        if not parts:
            return new
        df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
        return df.sort_values(["batch_size", "power_limit_w"], kind="stable").reset_index(drop=True)

    def add(self, row: dict[str, object], point: dict[str, object], measuring_s: float) -> None:
        """Add one measured row and write the table."""
        self.rows.append(row)
        self.provenance["points"].append(point)
        self.measuring_s += measuring_s
        self.write(complete=False)

    def skip(self, batch_size: int, reason: str) -> None:
        """Record a batch size that was not measured."""
        self.provenance["skipped"].append({"batch_size": batch_size, "reason": reason})

    def write(self, complete: bool) -> pd.DataFrame:
        """Write the table (if it has rows) with up-to-date provenance; return it."""
        df = self.frame()
        self.provenance.update(
            complete=complete, finished_utc=utc_now(), measuring_s=round(self.measuring_s, 3)
        )
        if not df.empty:
            write_table(df, self.path, "power", provenance=self.provenance)
        return df


def make_emit(
    writer: SweepWriter,
    spec: WorkloadSpec,
    gpu_kind: str,
    samples_per_epoch: int,
    num_gpus: int,
    observe: bool,
) -> Emit:
    """The callback that turns a point's measurement into a row and writes it."""

    def emit(batch_size: int, limit: float, m: PointMeasurement) -> None:
        row = power_row(spec, gpu_kind, batch_size, limit, samples_per_epoch, m, num_gpus, observe)
        point = {
            "batch_size": batch_size,
            "power_limit_w": limit,
            **m.provenance(),
            "measured_utc": utc_now(),
        }
        log.info(
            "bs %d at %g W: %.1f samples/s, %.1f W, %.4g J/sample +-%.2f %% (%d iterations, %d windows, %.1f s)",
            batch_size,
            limit,
            row["samples_per_s"],
            row["avg_power_w"],
            m.avg_power_w / m.samples_per_s(batch_size),
            100 * m.energy_per_sample_rel_ci,
            m.iterations,
            m.num_windows,
            m.time_s,
        )
        writer.add(row, point, m.time_s)

    return emit


def power_row(
    spec: WorkloadSpec,
    gpu_kind: str,
    batch_size: int,
    power_limit_w: float,
    samples_per_epoch: int,
    measurement: PointMeasurement,
    num_gpus: int,
    observe: bool,
) -> dict[str, object]:
    """One row of the ``power`` trace from a point's measurement."""
    sps = measurement.samples_per_s(batch_size)
    return {
        "gpu": gpu_kind,
        "dataset": spec.dataset,
        "network": spec.network,
        "optimizer": spec.optimizer,
        "batch_size": int(batch_size),
        "power_limit_w": float(power_limit_w),
        "time_per_epoch_s": samples_per_epoch / sps,
        "avg_power_w": measurement.avg_power_w,
        "num_gpus": int(num_gpus),
        "samples_per_s": sps,
        "measured_s": measurement.time_s,
        "observe_mode": bool(observe),
        "num_windows": measurement.num_windows,
        "time_per_epoch_ci_s": finite_or_none(samples_per_epoch / sps * measurement.time_rel_ci),
        "avg_power_ci_w": finite_or_none(measurement.avg_power_ci_w),
        "energy_per_sample_ci_rel": finite_or_none(measurement.energy_per_sample_rel_ci),
        "ci_met": measurement.ci_met,
        "avg_power_uncertainty_w": finite_or_none(measurement.avg_power_uncertainty_w),
    }
