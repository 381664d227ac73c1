"""Savings, cost ratios and regret of simulated policies: the one place they are computed.

Two layers:

* pure functions on totals (:func:`charged`, :func:`savings_pct`, :func:`cost_ratio`,
  :func:`regret_j`, :func:`regret_pct`, :func:`std`): plain arithmetic on numbers, NumPy arrays
  or pandas Series, so every caller (the summary table, the figures, the report) gets the same
  definition;
* :func:`recurrence_table`: a ``runs`` table to one row per recurrence of every run, with what
  the recurrence spent, whether it failed and what it is charged, plus the reference policies'
  expected figures of that recurrence; :func:`convergence` builds the per-recurrence cost and
  cumulative regret curves of the figures from it.

**Failed recurrences.** A recurrence *fails* when none of its tries reaches the target: all of
its tries failed, or none ran (their early-stop budget was zero; such a recurrence is one row
with ``ran = False`` in the runs table, and a recurrence missing from a policy's rows while other
policies have it is treated the same way). A failed recurrence is charged what its tries spent
**plus the baseline's expected energy, time and cost of that recurrence**: the user falls back to
the default configuration (b0 at the maximum limit) to get the job done. The charge enters the
policy's totals, hence its savings, cost ratios and regret alike. Where no recurrence fails the
charge is zero and every number equals the plain sum over tries.

**Dispersion.** Standard deviations over seeds are population standard deviations (``ddof = 0``,
:data:`DDOF`), defined for a single seed.
"""

from __future__ import annotations

import functools
import itertools
import logging
from typing import Any, NamedTuple, TypeVar

import numpy as np
import pandas as pd

from zeus_bench.sim.keyed import Grid, first_valid, key_codes, runs_of, sort_key

log = logging.getLogger(__name__)

DDOF = 0
"""Degrees of freedom of every standard deviation over seeds (0: population)."""

RUN = ["gpu", "workload", "policy", "eta", "beta", "window"]
"""Columns that identify a simulated setting of one policy (a row of the summary)."""
SETTING = ["gpu", "workload", "eta", "beta", "window"]
"""Columns shared by the policies compared with each other."""
REC_KEYS = [*RUN, "seed", "group", "recurrence"]
"""Columns that identify one recurrence of one run."""
MATCH = [*SETTING, "seed", "group", "recurrence"]
"""Columns on which a policy's recurrence is matched with a reference policy's."""
FALLBACK = "baseline"
"""Policy whose expected figures a failed recurrence is charged on top of what it spent."""
LAST = 10
"""Recurrences of the ``last10`` scope (the last of each run, per arrival-table group)."""

T = TypeVar("T", float, np.ndarray, pd.Series)


def charged(spent: T, failed: T, fallback: T) -> T:
    """What a recurrence is charged: its tries' ``spent`` plus ``fallback`` when it ``failed``.

    Args:
        spent: Energy (J), time (s) or cost (J) its tries spent.
        failed: Whether it failed (bool, or an array/Series of them).
        fallback: The baseline's expected energy, time or cost of that recurrence.
    """
    return spent + np.where(failed, fallback, 0.0)  # type: ignore[return-value]


def savings_pct(total: T, reference: T) -> T:
    """Savings in percent: ``100 x (1 - total / reference)`` (negative: uses more)."""
    return 100.0 * (1.0 - total / reference)  # type: ignore[return-value]


def cost_ratio(total: T, reference: T) -> T:
    """Cumulative cost relative to a reference's: ``total / reference``."""
    return total / reference  # type: ignore[return-value]


def regret_j(cost: T, oracle: T) -> T:
    """Regret in J: cumulative cost minus the oracle's expected cumulative cost."""
    return cost - oracle  # type: ignore[return-value]


def regret_pct(cost: T, oracle: T) -> T:
    """Regret in percent of the oracle's expected cumulative cost: ``100 x (cost / oracle - 1)``."""
    return 100.0 * (cost / oracle - 1.0)  # type: ignore[return-value]


def std(values: pd.Series) -> float:
    """Standard deviation over seeds with :data:`DDOF` (0 for one value)."""
    return float(values.astype(float).std(ddof=DDOF)) if len(values) else float("nan")


_SPENT = ("energy_j", "time_s", "cost")
_EXPECTED = ("expected_energy_j", "expected_time_s", "expected_cost")
REFERENCE_POLICIES = ("baseline", "max-batch", "oracle")
"""The policies whose expected figures :func:`recurrence_table` joins to every recurrence."""
_KEY = {k: i for i, k in enumerate(REC_KEYS)}  # each key's row in the codes
_ROLE = {"policy": "run", "group": "wanted", "recurrence": "wanted"}  # (the others: the setting's)


class _Recurrences(NamedTuple):
    """The recurrences that have rows, in the keys' order: what their tries add up to, per recurrence.

    ``first`` is a row of the runs table of each (its first try), ``codes`` their keys' codes
    (:data:`REC_KEYS` x recurrences); ``has``: whether a try ran (``batch``, ``limit``: the last
    one's configuration; ``uniform``: every try that ran used it).
    """

    first: np.ndarray
    codes: np.ndarray
    spent: list[np.ndarray]
    tries: np.ndarray
    reached: np.ndarray
    expected: list[np.ndarray]
    has: np.ndarray
    batch: np.ndarray
    limit: np.ndarray
    uniform: np.ndarray


def _recurrences(runs: pd.DataFrame, group: pd.Series) -> _Recurrences:
    """The runs table's tries in the order of a stable sort by :data:`REC_KEYS` and the attempt, summed per recurrence.

    The sums are pandas' own grouped sum of the tries in that order, a column at a time (what a
    groupby of the keys gives: pandas sums a column by NumPy's pairwise reduction, or compensated
    where it has a missing value); the rest is exact on arrays (pandas' ``first`` and ``last`` skip
    missing values, as :func:`~zeus_bench.sim.keyed.first_valid` does).
    """
    n = len(runs)
    columns = [group if k == "group" else runs[k] for k in REC_KEYS]
    codes = np.stack([key_codes(c) for c in columns])
    key = sort_key(list(codes))
    order = np.argsort(sort_key([key, key_codes(runs["attempt"])]), kind="stable")
    starts = runs_of(key[order])
    ends = np.append(starts[1:], n)
    ids = np.repeat(np.arange(len(starts)), ends - starts)
    spent = [
        pd.Series(runs[c].to_numpy(dtype=float)[order]).groupby(ids, sort=False).sum().to_numpy()
        for c in _SPENT
    ]
    ran = (runs["ran"].to_numpy(dtype=bool) if "ran" in runs.columns else np.ones(n, dtype=bool))[order]
    reached = np.logical_or.reduceat(runs["reached"].to_numpy(dtype=bool)[order], starts)
    expected = [first_valid(runs[c].to_numpy(dtype=float)[order], starts, ends) for c in _EXPECTED]
    m = len(starts)
    has, uniform = np.zeros(m, dtype=bool), np.zeros(m, dtype=bool)
    batch, limit = np.full(m, np.nan), np.full(m, np.nan)
    done = np.flatnonzero(ran)
    if len(done):
        lo = runs_of(ids[done])
        hi = np.append(lo[1:], len(done))
        at = ids[done][lo]
        bs, pl = (runs[c].to_numpy(dtype=float)[order][done] for c in ("batch_size", "power_limit_w"))
        has[at] = True
        batch[at], limit[at] = first_valid(bs, lo, hi, last=True), first_valid(pl, lo, hi, last=True)
        same_bs = np.fmin.reduceat(bs, lo) == np.fmax.reduceat(bs, lo)
        uniform[at] = same_bs & (np.fmin.reduceat(pl, lo) == np.fmax.reduceat(pl, lo))
    tries = np.add.reduceat(ran.astype(np.int64), starts)
    return _Recurrences(
        order[starts], codes[:, order[starts]], spent, tries, reached, expected, has, batch, limit, uniform
    )


def recurrence_table(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per recurrence of every run (policy x setting x seed x group).

    Args:
        runs: A ``runs`` table (one row per try). A ``ran`` column marks the single row of a
            recurrence in which no try ran (missing column: every row ran); a ``group`` column
            (arrival tables) is optional.

    Returns:
        :data:`REC_KEYS` and: ``tries`` (tries that ran), ``reached``, ``failed``,
        ``spent_energy_j``/``spent_time_s``/``spent_cost`` (summed over its tries),
        ``energy_j``/``time_s``/``cost`` (charged, see :func:`charged`), the last try's
        ``batch_size``/``power_limit_w`` and ``uniform`` (every try used that configuration),
        ``last10``, and per reference policy ``baseline``, ``max-batch`` and ``oracle`` its expected
        ``<ref>_energy_j``, ``<ref>_time_s`` and ``<ref>_cost`` of the same recurrence (missing if
        that policy is not in the table).

    Computed on arrays (one sort of the tries, then every run x its setting's recurrences:
    :class:`~zeus_bench.sim.keyed.Grid`): the frame that pandas' groupby and merges of the keys
    give, column for column and bit for bit, in about half their time and memory (3.1 million
    tries: 10.2 -> 5.3 s of CPU, peak 3.3 -> 2.6 GiB, 2026-12-05).
    """
    group = (runs["group"] if "group" in runs.columns else pd.Series("", index=runs.index)).astype("string")
    group = group.fillna("")
    if runs.empty:
        return _empty_recurrences(runs, group)
    rec = _recurrences(runs, group)
    grid = Grid(rec.codes, [_ROLE.get(k, "setting") for k in REC_KEYS])
    if grid.size > len(rec.first):
        log.info("%d recurrence(s) without rows: counted as failed, no try ran", grid.size - len(rec.first))
    cols: dict[str, Any] = {}
    for k in REC_KEYS:
        col = group if k == "group" else runs[k]
        cols[k] = col.iloc[rec.first[grid.source[_KEY[k]][grid.order]]].reset_index(drop=True)
    spent = [grid.spread(x, 0.0) for x in rec.spent]
    for c, x in zip(_SPENT, spent, strict=True):
        cols[f"spent_{c}"] = x
    cols["tries"] = grid.spread(rec.tries, 0)
    cols["reached"] = grid.spread(rec.reached, False)
    for c, x in zip(_EXPECTED, rec.expected, strict=True):
        cols[c] = grid.spread(x, np.nan)
    batch, bs_dtype = grid.spread(rec.batch, np.nan), runs["batch_size"].dtype
    whole = bool(grid.spread(rec.has, False).all()) and np.issubdtype(bs_dtype, np.integer)
    cols["batch_size"] = batch.astype(bs_dtype) if whole else batch  # (a join leaves a missing one float)
    cols["power_limit_w"] = grid.spread(rec.limit, np.nan)
    cols["uniform"] = grid.spread(rec.uniform, False)
    cols["failed"] = failed = ~cols["reached"]
    cols["last10"] = _last10(cols, grid)
    # Each reference policy's expected figures of the same recurrence (setting, seed, group).
    codes = dict(zip(pd.factorize(runs["policy"], sort=True)[1], itertools.count(), strict=False))
    run_policy = rec.codes[_KEY["policy"]][grid.r_rep]
    on_grid = [grid.on_grid(x, np.nan) for x in rec.expected]
    for policy in REFERENCE_POLICIES:
        row = grid.reference(run_policy, codes.get(policy))
        for c, x in zip(_SPENT, on_grid, strict=True):
            cols[f"{policy}_{c}"] = np.where(row >= 0, x[row], np.nan)
    for c, x in zip(_SPENT, spent, strict=True):
        cols[c] = charged(x, failed, cols[f"{FALLBACK}_{c}"])
    out = pd.DataFrame(cols, copy=False)  # (every column a new array)
    if failed.any() and np.isnan(cols[f"{FALLBACK}_cost"][failed]).any():
        log.warning(
            "failed recurrences but no %r runs to charge them: their runs' totals stay empty", FALLBACK
        )
    return out


def _last10(cols: dict[str, Any], grid: Grid) -> np.ndarray:
    """Whether each row (keys' order) is among the last :data:`LAST` recurrences of its run and group.

    A run whose keys miss a value has none (a groupby of the keys drops it).
    """
    rec_no = cols["recurrence"].to_numpy()
    seg = runs_of(sort_key(list(grid.codes[: _KEY["recurrence"]]))[grid.order])
    last = np.repeat(np.maximum.reduceat(rec_no, seg), np.diff(np.append(seg, len(rec_no))))
    keyed = ~np.any([cols[k].isna().to_numpy() for k in (*RUN, "seed")], axis=0)
    return (rec_no > last - LAST) & keyed  # type: ignore[no-any-return]


def _empty_recurrences(runs: pd.DataFrame, group: pd.Series) -> pd.DataFrame:
    """The table of a runs table without rows: its columns, no row."""
    cols: dict[str, Any] = {k: (group if k == "group" else runs[k]).iloc[:0] for k in REC_KEYS}
    names = [
        *(f"spent_{c}" for c in _SPENT), "tries", "reached", *_EXPECTED, "batch_size", "power_limit_w", "uniform",
        "failed", "last10", *(f"{p}_{c}" for p in REFERENCE_POLICIES for c in _SPENT), *_SPENT,
    ]  # fmt: skip
    kinds = {"tries": np.int64, "reached": bool, "uniform": bool, "failed": bool, "last10": bool}
    kinds["batch_size"] = runs["batch_size"].dtype
    for name in names:
        cols[name] = np.zeros(0, dtype=kinds.get(name, float))
    return pd.DataFrame(cols)


def convergence(
    runs: pd.DataFrame, policies: tuple[str, ...] = ("zeus", "grid-search"), oracle: str = "oracle"
) -> pd.DataFrame:
    """Cost per recurrence (charged) and cumulative regret against the oracle, over seeds.

    Regret of a recurrence is its charged cost minus the oracle's expected cost of the same
    recurrence; the cumulative regret sums it over the recurrences of a run (arrival tables:
    over the groups' recurrences of the same index).

    Returns:
        One row per (gpu, workload, eta, beta, window, policy, recurrence): ``cost_mean``,
        ``cost_lo``, ``cost_hi`` (mean, minimum and maximum over seeds), ``oracle_cost`` (mean
        over seeds), ``regret_mean``, ``regret_lo``, ``regret_hi`` (cumulative), ``n_seeds``.

    Raises:
        ValueError: the oracle is not in the table.
    """
    if oracle not in set(runs["policy"].unique()):
        raise ValueError(f"oracle policy {oracle!r} is not in the simulation rows")
    rec = recurrence_table(runs)
    rec = rec[rec["policy"].isin(policies)]
    per = rec.groupby([*RUN, "seed", "recurrence"], sort=True, dropna=False).agg(
        cost=("cost", "sum"), oracle_cost=(f"{oracle}_cost", "sum")
    )
    per["regret"] = regret_j(per["cost"], per["oracle_cost"])
    per["regret"] = per["regret"].groupby(level=[*RUN, "seed"], dropna=False).cumsum()
    per = per.reset_index()
    g = per.groupby([*SETTING, "policy", "recurrence"], sort=True, dropna=False)
    return g.agg(
        cost_mean=("cost", "mean"),
        cost_lo=("cost", "min"),
        cost_hi=("cost", "max"),
        oracle_cost=("oracle_cost", "mean"),
        regret_mean=("regret", "mean"),
        regret_lo=("regret", "min"),
        regret_hi=("regret", "max"),
        n_seeds=("seed", "nunique"),
    ).reset_index()


BOOTSTRAP_REPS = 2000
"""Resamples of every bootstrap confidence interval (percentile bootstrap over seeds)."""
BOOTSTRAP_SEED = 20230417
"""Seed of the bootstrap's resampling (fixed: the same table gives the same intervals)."""
CI_LEVEL = 0.95
"""Coverage of every confidence interval."""


def bootstrap_indices(n: int, reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """``reps`` resamples (rows) of ``n`` seed indices drawn with replacement (one fixed generator).

    Resampling the same indices for every statistic of a comparison keeps them paired: the seeds
    drawn for a policy are the seeds drawn for Zeus.
    """
    return _indices(n, reps, seed)


@functools.lru_cache(maxsize=8)
def _indices(n: int, reps: int, seed: int) -> np.ndarray:
    """:func:`bootstrap_indices`, drawn once per (n, reps, seed) and kept read-only (every table asks again)."""
    out = np.random.default_rng(seed).integers(0, n, size=(reps, n))
    out.setflags(write=False)
    return out


def percentile_ci(resampled: np.ndarray, level: float = CI_LEVEL) -> tuple[float, float]:
    """The central ``level`` interval of a statistic's bootstrap replicates (NaN-free input)."""
    lo, hi = np.quantile(resampled, _central(level))
    return float(lo), float(hi)


def percentile_cis(resampled: np.ndarray, level: float = CI_LEVEL) -> np.ndarray:
    """:func:`percentile_ci` of each row of ``resampled`` (2-D): shape ``(rows, 2)``, the same floats.

    One :func:`numpy.quantile` along the rows computes each row as a call on it alone would (the
    same partition and interpolation), without a call per row.
    """
    return np.quantile(resampled, _central(level), axis=1).T  # type: ignore[no-any-return]


def _central(level: float) -> list[float]:
    """The quantiles that bound the central ``level`` share of a distribution."""
    return [(1.0 - level) / 2.0, (1.0 + level) / 2.0]


def bootstrap_ci(
    values: np.ndarray, level: float = CI_LEVEL, reps: int = BOOTSTRAP_REPS, seed: int = BOOTSTRAP_SEED
) -> tuple[float, float, float]:
    """Mean over seeds and its percentile-bootstrap confidence interval: ``(mean, lo, hi)``.

    A paired difference is the same call on the per-seed differences (same seeds, same paths).
    One value (or all equal) gives an interval of zero width at it.
    """
    x = np.asarray(values, dtype=float)
    if x.ndim != 1 or len(x) == 0:
        raise ValueError("bootstrap_ci needs a non-empty 1-D array of per-seed values")
    means = x[bootstrap_indices(len(x), reps, seed)].mean(axis=1)
    lo, hi = percentile_ci(means, level)
    return float(x.mean()), lo, hi


def ratio_ci(
    num: np.ndarray,
    den: np.ndarray,
    level: float = CI_LEVEL,
    reps: int = BOOTSTRAP_REPS,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float, float]:
    """Ratio of means ``mean(num) / mean(den)`` and its paired bootstrap interval (same seeds resampled)."""
    a, b = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    idx = bootstrap_indices(len(a), reps, seed)
    with np.errstate(divide="ignore", invalid="ignore"):
        rs = a[idx].mean(axis=1) / b[idx].mean(axis=1)
        point = float(a.mean() / b.mean())
    rs = rs[np.isfinite(rs)]
    if len(rs) == 0:
        return point, float("nan"), float("nan")
    lo, hi = percentile_ci(rs, level)
    return point, lo, hi
