"""Summarise a ``runs`` table: savings against two baselines, cost ratios, regret, settling.

Per (gpu, workload, policy, eta, beta, window) and per seed, from the recurrences of
:func:`zeus_bench.sim.metrics.recurrence_table` (every recurrence counts; a failed one is charged
what its tries spent plus the baseline's expected figures of that recurrence):

* **Savings** of energy and of time against ``baseline`` and against ``max-batch``:
  ``100 x (1 - policy total / reference total)`` where the reference total is the reference
  policy's *expected* energy (time) per recurrence (mean over converging training paths, the
  paper's convention), summed over the same recurrences of the same seed; cumulative (all
  recurrences) and over the last 10 recurrences (of each group, for arrival tables).
* **Cost ratios** against ``baseline`` and ``max-batch``: policy cumulative cost / the
  reference's expected cumulative cost over the same recurrences.
* **Regret** against ``oracle``: the policy's summed cost minus the oracle's expected cost over
  the same recurrences (J), and the same in percent of the oracle's
  (``100 x (cost / oracle - 1)``).
* **Failed recurrences**: how many recurrences never reached the target.
* **Settling**: the first recurrence from which every try uses the policy's final (batch size,
  power limit).

Then mean and standard deviation over seeds (population, ``ddof = 0``:
:data:`zeus_bench.sim.metrics.DDOF`). A reference policy missing from the table leaves its
columns empty (with a warning).
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from zeus_bench.core.errors import ConfigError
from zeus_bench.sim import metrics
from zeus_bench.sim.metrics import RUN
from zeus_bench.sim.schema import SUMMARY
from zeus_bench.store import validate

log = logging.getLogger(__name__)

GROUP = RUN
REFERENCES = {"baseline": "baseline", "max_batch": "max-batch"}


def _settle(rec: pd.DataFrame) -> pd.Series:
    """Per (policy setting, seed): first recurrence from which all tries use the final config.

    Averaged over groups for arrival tables. One more than the last recurrence means the policy
    had not settled (its last recurrence mixed configurations, or failed).
    """
    keys = [*RUN, "seed", "group"]
    by = rec.groupby(keys, sort=False)
    final_bs = by["batch_size"].transform("last")
    final_pl = by["power_limit_w"].transform("last")
    at = rec["uniform"] & (rec["batch_size"] == final_bs) & (rec["power_limit_w"] == final_pl)
    first = by["recurrence"].transform("min")
    off = rec["recurrence"].where(~at, first - 1)
    settle = off.groupby([rec[k] for k in keys], sort=False).max() + 1
    return settle.groupby(level=list(range(len(RUN) + 1))).mean()


def per_seed(runs: pd.DataFrame) -> pd.DataFrame:
    """Every metric of the summary per (policy setting, seed), before the statistics over seeds.

    Columns: ``energy_j``, ``time_s``, ``cost`` (charged totals), ``recurrences``,
    ``failed_recurrences``, ``<metric>_savings_vs_<ref>_<scope>_pct``,
    ``cost_ratio_vs_<ref>_cum``, ``regret`` (J), ``regret_vs_oracle_cum_pct`` and ``settle``.
    """
    rec = metrics.recurrence_table(runs)
    keys = [*RUN, "seed"]
    g = rec.groupby(keys)
    groups = _Groups(g.ngroup().to_numpy(), g.ngroups)
    out = g.agg(recurrences=("recurrence", "size"), failed_recurrences=("failed", "sum"))
    index = out.index
    for col in ("energy_j", "time_s", "cost"):
        out.insert(len(out.columns) - 2, col, groups.sums(rec[col], index))
    last10 = rec["last10"].to_numpy(dtype=bool)
    present = set(rec["policy"].unique())
    for col, policy in REFERENCES.items():
        if policy not in present:
            log.warning("no %r runs in the table: its comparison columns stay empty", policy)
        for metric, unit in (("energy", "energy_j"), ("time", "time_s")):
            for scope in ("cum", "last10"):
                rows = None if scope == "cum" else last10
                own = groups.sums(rec[unit], index, rows)
                ref = groups.sums(rec[f"{policy}_{unit}"], index, rows)
                out[f"{metric}_savings_vs_{col}_{scope}_pct"] = metrics.savings_pct(own, ref)
        own, ref = groups.sums(rec["cost"], index), groups.sums(rec[f"{policy}_cost"], index)
        out[f"cost_ratio_vs_{col}_cum"] = metrics.cost_ratio(own, ref)
    if "oracle" not in present:
        log.warning("no 'oracle' runs in the table: its comparison columns stay empty")
    own, ref = groups.sums(rec["cost"], index), groups.sums(rec["oracle_cost"], index)
    out["regret"] = metrics.regret_j(own, ref)
    out["regret_vs_oracle_cum_pct"] = metrics.regret_pct(own, ref)
    out["settle"] = _settle(rec)
    return out


class _Groups:
    """The rows of each group, contiguous after one stable sort of the group numbers.

    Sums per group over these contiguous runs equal ``Series.sum`` of each group (the same NumPy
    pairwise summation of the same values in the same order) without pandas' per-group calls.
    """

    def __init__(self, codes: np.ndarray, ngroups: int) -> None:
        self._codes = codes
        self._ngroups = ngroups
        self._order = np.argsort(codes, kind="stable")
        self._bounds = np.searchsorted(codes[self._order], np.arange(ngroups + 1))

    def sums(self, values: pd.Series, index: pd.Index, rows: np.ndarray | None = None) -> pd.Series:
        """Per group, the sum of ``values`` over ``rows`` (a mask; None: all rows).

        A group with a missing value has a missing sum (a reference without a figure for a
        recurrence: NumPy's sum does not skip it as ``Series.sum`` would); so has a group without
        rows.
        """
        a = values.to_numpy(dtype=np.float64)
        order, bounds = self._order, self._bounds
        if rows is not None:
            order = self._order[rows[self._order]]
            bounds = np.searchsorted(self._codes[order], np.arange(self._ngroups + 1))
        a = a[order]
        out = np.full(self._ngroups, np.nan)
        for i, (start, end) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True)):
            if end > start:
                out[i] = a[start:end].sum()  # NaN if any value is
        return pd.Series(out, index=index)


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Summary table (``sim_summary`` schema) of a ``runs`` frame.

    Raises:
        ConfigError: the table has no rows.
    """
    if runs.empty:
        raise ConfigError("the runs table has no rows")
    seeds = per_seed(runs)
    agg = seeds.groupby(RUN)
    out = pd.DataFrame(
        {
            "seeds": agg.size(),
            "recurrences": agg["recurrences"].max(),
            "energy_j_mean": agg["energy_j"].mean(),
            "time_s_mean": agg["time_s"].mean(),
        }
    )

    def stats(name: str, col: str) -> None:
        out[f"{name}_mean"] = agg[col].mean()
        out[f"{name}_std"] = agg[col].std(ddof=metrics.DDOF)

    for col in seeds.columns:
        if "_savings_vs_" in col:
            stats(col, col)
    stats("regret_vs_oracle_cost_j", "regret")
    stats("settle_recurrence", "settle")
    for ref in REFERENCES:
        stats(f"cost_ratio_vs_{ref}_cum", f"cost_ratio_vs_{ref}_cum")
    stats("regret_vs_oracle_cum_pct", "regret_vs_oracle_cum_pct")
    out["failed_recurrences_mean"] = agg["failed_recurrences"].mean()
    out = out.replace([np.inf, -np.inf], np.nan).reset_index()  # metrics only: beta may be inf
    validate(out, SUMMARY.kind, "summary")  # a check of the kind: the frame is returned as computed
    return out[SUMMARY.names]


def read_runs(path: str | Path) -> pd.DataFrame:
    """A runs table as ``simulate --out`` writes it: Parquet, or CSV (validated by the same schema)."""
    from zeus_bench.store import read_table
    from zeus_bench.store.frames import read_user_file

    if Path(path).suffix.lower() == ".csv":
        return validate(read_user_file(path, "runs table"), "runs", where=str(path))
    return read_table(path, "runs")


def write_summary(summary: pd.DataFrame, out: str | Path, runs: str | Path) -> None:
    """Write a summary to ``out``: the ``sim_summary`` table (``.parquet``) or CSV, atomically."""
    from zeus_bench.core.fsutil import atomic_path
    from zeus_bench.store import write_table

    out = Path(out)
    if out.suffix == ".parquet":
        write_table(summary, out, "sim_summary", provenance={"command": "summarize", "runs": str(runs)})
    else:
        with atomic_path(out) as tmp:
            summary.to_csv(tmp, index=False, lineterminator="\n")
