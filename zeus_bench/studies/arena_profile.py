"""The arena's performance profile (``arena_profile``) and the agreement of its two folds.

:func:`profile_table`: per (gpu, policy, scope), the share of jobs x replays whose paired cost
ratio to the baseline is at most each threshold; :func:`fold_agreement`: how often split 1's two
folds' intervals are disjoint (the intervals' coverage check).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from zeus_bench.studies.arena_protocol import COMPARATOR
from zeus_bench.studies.arena_stats import Part, row_scopes
from zeus_bench.studies.crossfit import FOLD_CONSTANTS

PROFILE_TAUS = np.round(np.arange(0.80, 2.0001, 0.01), 2)
"""Thresholds of the performance profile: cost ratio to the baseline on the same replay."""


def profile_table(parts: dict[tuple[int, int], dict[tuple[str, str], Part]]) -> pd.DataFrame:
    """``arena_profile``: per (gpu, policy, scope, tau), the share of jobs x replays with ratio <= tau.

    The ratio is the paired cost ratio to the baseline; every replay counts (recorded seeds and
    replicate traces), each job weighs the same.
    """
    rows: list[dict[str, object]] = []
    for fold, splits, keys in row_scopes(parts):
        first = parts[keys[0]]
        gpus = list(dict.fromkeys(g for g, _ in first))
        for gpu in gpus:
            workloads = [w for g, w in first if g == gpu]
            for p in first[(gpu, workloads[0])].values:
                shares = np.zeros(len(PROFILE_TAUS))
                for w in workloads:
                    pairs = [parts[k][(gpu, w)].values[p]["replay_ratio"] for k in keys]
                    v = np.concatenate([np.r_[a, b.ravel()] for a, b in pairs])
                    shares += (v[None, :] <= PROFILE_TAUS[:, None] + 1e-12).mean(axis=1)
                shares /= len(workloads)
                rows.extend(
                    {
                        "gpu": gpu,
                        "policy": p,
                        "fold": fold,
                        "splits": splits,
                        "tau": float(t),
                        "share": float(s),
                    }
                    for t, s in zip(PROFILE_TAUS, shares, strict=True)
                )
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class FoldAgreement:
    """How often split 1's two folds disagree: their 95 % intervals of a statistic disjoint."""

    column: str
    pairs: tuple[tuple[str, str], ...]
    """The (gpu, policy) pairs compared: not Zeus, no constant that differs by fold."""
    disjoint: tuple[tuple[str, str], ...]

    @property
    def share(self) -> float:
        """Share of the pairs whose two intervals are disjoint (NaN without pairs)."""
        return len(self.disjoint) / len(self.pairs) if self.pairs else float("nan")


def fold_agreement(summary: pd.DataFrame, column: str = "regret_ratio_vs_zeus") -> FoldAgreement:
    """Split 1's folds compared on ``column`` (its ``_ci_lo``/``_ci_hi``; ``regret_pct``: ``regret_pct_ci_*``).

    The intervals' coverage check: where nothing was tuned by fold, an interval over one half's
    paths should usually overlap the other half's. Pairs: every (gpu, policy) with a row in both
    folds but Zeus (ratio 1 by definition) and the policies with fold constants
    (:data:`~zeus_bench.studies.crossfit.FOLD_CONSTANTS`).
    """
    stem = column.removesuffix("_mean")
    lo, hi = f"{stem}_ci_lo", f"{stem}_ci_hi"
    first = summary[summary["splits"] == 1] if "splits" in summary.columns else summary
    a = first[first["fold"] == 1].set_index(["gpu", "policy"])
    b = first[first["fold"] == 2].set_index(["gpu", "policy"])
    tuned = {p for consts in FOLD_CONSTANTS.values() for p in consts}
    pairs = tuple(
        (str(g), str(p)) for g, p in a.index if (g, p) in b.index and p != COMPARATOR and p not in tuned
    )
    disjoint = tuple(k for k in pairs if a.loc[k, hi] < b.loc[k, lo] or b.loc[k, hi] < a.loc[k, lo])
    return FoldAgreement(column, pairs, disjoint)
