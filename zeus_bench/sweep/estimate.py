"""What a sweep will cost before it runs: GPU-time and energy per cell, from what the project knows.

A point (one batch size at one power limit) takes at least its warm-up (``warmup_s``, and
``warmup_iters`` steps) and its measurement (``max(measure_s, min_windows x window_s)``, and
``measure_iters`` steps), and at most the warm-up's cap (``warmup_max_s``) plus the measurement's
(``max_measure_s``). The step time and the power come from a power trace of the same workload
(its dataset) and batch size, at the trace's nearest power limit: an explicit one
(``--estimate-trace``), the sweep's own output of an earlier run, or a trace the checkout commits
(``results/traces/<gpu>/power-<gpu>.parquet``). Without one, the time is the settings' bounds
alone and the energy is ``unknown``: the draw of an unmeasured workload is not guessed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from zeus_bench.sweep.measure import MeasureSettings


@dataclass(frozen=True)
class CellEstimate:
    """GPU-time and energy of one batch size's points (every limit), lower and upper bound.

    ``min_j`` and ``max_j`` are None when no trace knows the batch size (energy unknown).
    """

    batch_size: int
    points: int
    min_s: float
    max_s: float
    min_j: float | None
    max_j: float | None
    power_source: str


@dataclass(frozen=True)
class KnownPoint:
    """What a power trace measured at one (batch size, power limit): per-GPU power and step time."""

    watts_per_gpu: float
    step_s: float


def point_seconds(settings: MeasureSettings, step_s: float = 0.0) -> tuple[float, float]:
    """(least, most) seconds one point takes under ``settings`` with steps of ``step_s``."""
    warm = max(settings.warmup_s, settings.warmup_iters * step_s)
    measure = max(
        settings.measure_s, settings.min_windows * settings.window_s, settings.measure_iters * step_s
    )
    low = warm + measure
    high = max(warm, settings.warmup_max_s) + max(measure, settings.max_measure_s)
    return low, high


def trace_points(trace: Path, dataset: str, num_gpus: int) -> dict[tuple[int, float], KnownPoint]:
    """The points of a power trace for ``dataset``: (batch size, limit) -> :class:`KnownPoint`.

    A point measured on another number of GPUs is scaled: the same power per GPU, throughput in
    proportion to the GPUs.
    """
    from zeus_bench.store import read_table

    power = read_table(trace, "power")
    power = power[power["dataset"] == dataset]
    out: dict[tuple[int, float], KnownPoint] = {}
    for row in power.itertuples(index=False):
        gpus = int(row.num_gpus) if pd.notna(row.num_gpus) else 1
        rate = float(row.samples_per_s) * num_gpus / gpus if pd.notna(row.samples_per_s) else float("nan")
        step = int(row.batch_size) / rate if rate > 0 else 0.0
        out[(int(row.batch_size), float(row.power_limit_w))] = KnownPoint(float(row.avg_power_w) / gpus, step)
    return out


def estimate_cells(
    batch_sizes: Sequence[int],
    limits_w: Sequence[float],
    settings: MeasureSettings,
    num_gpus: int = 1,
    traces: Sequence[Path] = (),
    dataset: str | None = None,
) -> list[CellEstimate]:
    """One :class:`CellEstimate` per batch size (GPU-time counts every GPU of a point).

    Args:
        batch_sizes: The cells' batch sizes (global).
        limits_w: The power limits each cell measures.
        settings: The measuring settings (the time bounds of a point).
        num_gpus: GPUs of each point.
        traces: Power traces to look each batch size up in, first match wins.
        dataset: The workload's dataset (the traces' ``dataset`` column); None: no lookup.
    """
    known = [(t, trace_points(t, dataset, num_gpus)) for t in traces] if dataset is not None else []
    cells = []
    for b in batch_sizes:
        source, same = next(
            (
                (t, {pl: p for (bs, pl), p in points.items() if bs == b})
                for t, points in known
                if any(bs == b for bs, _ in points)
            ),
            (None, {}),
        )
        seconds = [0.0, 0.0]
        joules: list[float] | None = [0.0, 0.0] if same else None
        for limit in limits_w:
            point = same[min(same, key=lambda pl: abs(pl - limit))] if same else None
            low, high = point_seconds(settings, point.step_s if point else 0.0)
            seconds[0] += low * num_gpus
            seconds[1] += high * num_gpus
            if joules is not None and point is not None:
                joules[0] += low * point.watts_per_gpu * num_gpus
                joules[1] += high * point.watts_per_gpu * num_gpus
        cells.append(
            CellEstimate(
                b,
                len(limits_w),
                seconds[0],
                seconds[1],
                joules[0] if joules else None,
                joules[1] if joules else None,
                source.name if source is not None else "unknown (no trace of this batch size)",
            )
        )
    return cells


def render_estimate(workload: str, cells: Sequence[CellEstimate]) -> str:
    """The estimate as a table, one line per cell, and the total (of the cells whose energy is known)."""
    lines = [
        f"dry run: {workload}, {sum(c.points for c in cells)} point(s) in {len(cells)} cell(s); nothing measured"
    ]
    lines.append(f"{'batch_size':>10} {'points':>6} {'GPU-time s':>16} {'energy kJ':>16}  power from")
    for c in cells:
        energy = (
            f"{c.min_j / 1e3:>7.1f}-{c.max_j / 1e3:<8.1f}"
            if c.min_j is not None and c.max_j is not None
            else f"{'unknown':>16}"
        )
        lines.append(
            f"{c.batch_size:>10} {c.points:>6} {c.min_s:>7.0f}-{c.max_s:<8.0f} {energy}  {c.power_source}"
        )
    lo, hi = sum(c.min_s for c in cells), sum(c.max_s for c in cells)
    known = [c for c in cells if c.min_j is not None and c.max_j is not None]
    if len(known) == len(cells):
        elo, ehi = sum(c.min_j or 0.0 for c in known), sum(c.max_j or 0.0 for c in known)
        energy = f"{elo / 1e3:>7.1f}-{ehi / 1e3:<8.1f}"
    else:
        energy = f"{'unknown':>16}"
    lines.append(f"{'total':>10} {'':>6} {lo:>7.0f}-{hi:<8.0f} {energy}")
    return "\n".join(lines) + "\n"
