"""What a sweep will cost before it runs: GPU-time and energy per cell, from the measuring settings.

A point (one batch size at one power limit) takes at least its warm-up (``warmup_s``) and its
measurement (``max(measure_s, min_windows x window_s)``), and at most the warm-up's cap
(``warmup_max_s``) plus the measurement's (``max_measure_s``). Energy is that time at the power
limit (an upper bound on the draw), or, with a power trace of the same GPU and workload, at the
trace's average power of that batch size and limit (the nearest measured limit).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from zeus_bench.sweep.measure import MeasureSettings


@dataclass(frozen=True)
class CellEstimate:
    """GPU-time and energy of one batch size's points (every limit), lower and upper bound."""

    batch_size: int
    points: int
    min_s: float
    max_s: float
    min_j: float
    max_j: float
    power_source: str


def point_seconds(settings: MeasureSettings) -> tuple[float, float]:
    """(least, most) seconds one point takes under ``settings``."""
    measure = max(settings.measure_s, settings.min_windows * settings.window_s)
    low = settings.warmup_s + measure
    high = max(settings.warmup_s, settings.warmup_max_s) + max(measure, settings.max_measure_s)
    return low, high


def _trace_power(trace: Path | None, workload_dataset: str | None) -> dict[tuple[int, float], float]:
    if trace is None:
        return {}
    from zeus_bench.store import read_table

    power = read_table(trace, "power")
    if workload_dataset is not None:
        power = power[power["dataset"] == workload_dataset]
    return {
        (int(b), float(pl)): float(w)
        for b, pl, w in zip(power["batch_size"], power["power_limit_w"], power["avg_power_w"], strict=True)
    }


def estimate_cells(
    batch_sizes: Sequence[int],
    limits_w: Sequence[float],
    settings: MeasureSettings,
    num_gpus: int = 1,
    trace: Path | None = None,
    dataset: str | None = None,
) -> list[CellEstimate]:
    """One :class:`CellEstimate` per batch size (GPU-time counts every GPU of a point)."""
    low_s, high_s = point_seconds(settings)
    measured = _trace_power(trace, dataset)
    cells = []
    for b in batch_sizes:
        watts = []
        for limit in limits_w:
            same = {pl: w for (bs, pl), w in measured.items() if bs == b}
            watts.append(same[min(same, key=lambda pl: abs(pl - limit))] if same else limit)
        source = "trace" if any(bs == b for bs, _ in measured) else "limit"
        n = len(limits_w)
        cells.append(
            CellEstimate(
                b,
                n,
                low_s * n * num_gpus,
                high_s * n * num_gpus,
                sum(low_s * w for w in watts) * num_gpus,
                sum(high_s * w for w in watts) * num_gpus,
                source,
            )
        )
    return cells


def render_estimate(workload: str, cells: Sequence[CellEstimate]) -> str:
    """The estimate as a table, one line per cell, and the total."""
    lines = [
        f"dry run: {workload}, {sum(c.points for c in cells)} point(s) in {len(cells)} cell(s); nothing measured"
    ]
    lines.append(f"{'batch_size':>10} {'points':>6} {'GPU-time s':>16} {'energy kJ':>16}  power from")
    for c in cells:
        lines.append(
            f"{c.batch_size:>10} {c.points:>6} {c.min_s:>7.0f}-{c.max_s:<8.0f} "
            f"{c.min_j / 1e3:>7.1f}-{c.max_j / 1e3:<8.1f}  {c.power_source}"
        )
    lo, hi = sum(c.min_s for c in cells), sum(c.max_s for c in cells)
    elo, ehi = sum(c.min_j for c in cells), sum(c.max_j for c in cells)
    lines.append(f"{'total':>10} {'':>6} {lo:>7.0f}-{hi:<8.0f} {elo / 1e3:>7.1f}-{ehi / 1e3:<8.1f}")
    return "\n".join(lines) + "\n"
