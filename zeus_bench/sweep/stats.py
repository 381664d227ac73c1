"""Student-t confidence intervals of a point's per-window values (torch-free, no SciPy)."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

# Two-sided 95 % quantiles of Student's t for 1..30 degrees of freedom.
_T975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip
_Z975 = 1.959964


def t_quantile_975(dof: int) -> float:
    """The 0.975 quantile of Student's t with ``dof`` degrees of freedom (table, then expansion)."""
    if dof < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {dof}")
    if dof <= len(_T975):
        return _T975[dof - 1]
    z = _Z975
    return z + (z**3 + z) / (4 * dof) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * dof**2)


def ci_halfwidth(values: Sequence[float]) -> float:
    """Half-width of the 95 % Student-t confidence interval of the mean of ``values`` (inf below 2)."""
    if len(values) < 2:
        return math.inf
    return t_quantile_975(len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))


def relative_ci(values: Sequence[float]) -> float:
    """:func:`ci_halfwidth` over the mean of ``values``."""
    mean = statistics.fmean(values) if values else 0.0
    return ci_halfwidth(values) / abs(mean) if mean else math.inf


def finite_or_none(value: float) -> float | None:
    """``value`` rounded to 6 decimals, or None when it is not finite (JSON and Parquet friendly)."""
    return round(value, 6) if math.isfinite(value) else None
