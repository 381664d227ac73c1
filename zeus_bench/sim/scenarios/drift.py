"""Drift: how a recurring job's epochs to the target change over its recurrences.

A drift table (``.csv`` or ``.parquet``) has one row per point and the columns of the ``drift``
table kind (``zeus_bench/sim/scenarios/drift_schema.py``, documented in ``results/README.md``): ``workload``,
``batch_size``, ``recurrence`` (from 1) and ``epoch_factor`` (> 0, finite), exactly these names.

Per (workload, batch size) the factor of a recurrence is interpolated linearly between the
listed recurrences and held constant before the first and after the last; batch sizes not listed
keep factor 1. A **step change** at recurrence k is two points, ``(k - 1, 1)`` and ``(k, f)``; a
**slow morph** from one train curve to another over recurrences k..m is ``(k, 1)`` and
``(m, f_b)`` per batch size, with ``f_b`` the ratio of the new curve's epochs to the old. A path
whose scaled target epoch passes the workload's maximum epochs no longer reaches the target.

:func:`scenario` builds the experiment's scenarios from a job's own trace (:data:`SCENARIOS`):

* ``step`` and ``morph`` (:func:`optimum_shift`): the epochs of the oracle's batch size grow by a
  factor, at once at k or linearly over a ramp, so that the optimum moves to another batch size.
  Only the old optimum changes, so the cheapest batch size after the change is the old
  runner-up: a policy that restarts from its runner-up when its incumbent gets dearer is favoured.
* ``tilt`` (:func:`curve_tilt`), the neutral gradual drift: the whole convergence curve tilts over
  the ramp, every batch size's epochs scaled by ``factor ** clip(1/2 - u, -1, 1)`` with ``u`` its
  distance from the oracle's batch size in doublings towards larger batch sizes (towards smaller
  ones when the oracle's is the largest). The old optimum's epochs grow by ``sqrt(factor)``, its
  neighbour one doubling on (whether or not it was the runner-up) shrinks by as much, those
  beyond shrink by up to ``factor``, those behind grow by up to ``factor``: the change is split
  evenly between the incumbent getting dearer and others getting cheaper, and where the optimum
  lands is decided by the curve, not by which batch size was second.

``python -m zeus_bench.sim.scenarios.drift`` writes a scenario's drift table for ``zeus-bench simulate
--drift``. :func:`oracle_cost_by_recurrence` gives the drifted oracle's expected cost per
recurrence, against which recovery is measured.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError, TraceFormatError, UnknownWorkloadError
from zeus_bench.sim.scenarios import drift_schema  # noqa: F401  (registers the drift kind validated below)
from zeus_bench.store import validate
from zeus_bench.store.frames import read_user_file
from zeus_bench.traces.jobs import JobTrace
from zeus_bench.traces.workloads import load_workloads

if TYPE_CHECKING:  # pandas is imported where tables are read or built
    import pandas as pd

SCENARIOS = ("step", "morph", "tilt")
MAX_ROWS = 1_000_000

EpochFactor = Callable[[int, int], float]


def read_drift(path: str | Path, workloads_file: str | Path | None = None) -> pd.DataFrame:
    """Read and validate a drift table.

    Raises:
        TraceFormatError: unreadable file, missing columns or bad values.
        UnknownWorkloadError: a workload id that is not in the registry.
    """
    df = read_user_file(path, "drift table")
    return validate_drift(df, str(path), workloads_file)


def validate_drift(
    df: pd.DataFrame, where: str = "drift table", workloads_file: str | Path | None = None
) -> pd.DataFrame:
    """Check a drift table; return it typed and sorted.

    The ``drift`` kind (``sim/scenarios/drift_schema.py``) checks the columns, types and values and that a
    (workload, batch_size, recurrence) appears once; here are the rules across rows: a size bound,
    and workloads built in or of ``workloads_file`` (batch sizes the job has: :func:`drift_of`).

    Raises:
        TraceFormatError: no rows, too many rows, or a row that breaks the kind (one line).
        UnknownWorkloadError: a workload id that is not in the registry.
    """
    if df.empty:
        raise TraceFormatError(f"{where}: no rows")
    if len(df) > MAX_ROWS:
        raise TraceFormatError(f"{where}: {len(df)} rows, more than the {MAX_ROWS} allowed")
    out = validate(df, "drift", where)
    known = load_workloads(workloads_file)  # the built-in ones and those of --workloads-file
    unknown = sorted(set(out["workload"]) - set(known))
    if unknown:
        raise UnknownWorkloadError(f"{where}: unknown workload {unknown[0]!r}; known: {', '.join(known)}")
    return out.sort_values(["workload", "batch_size", "recurrence"], kind="stable").reset_index(drop=True)


def drift_of(table: pd.DataFrame, job: JobTrace, where: str = "drift table") -> pd.DataFrame | None:
    """The rows of ``table`` for ``job`` (None if it has none).

    Raises:
        ConfigError: the job's rows name no batch size of the job's trace (no overlap).
    """
    rows = table[table["workload"] == job.workload.id]
    if rows.empty:
        return None
    known = {int(b) for b in job.batch_sizes}
    foreign = sorted(set(rows["batch_size"]) - known)
    if foreign:
        raise ConfigError(
            f"{where}: batch size {foreign[0]} of {job.workload.id!r} is not in the {job.gpu!r} trace "
            f"(batch sizes: {', '.join(map(str, sorted(known)))})"
        )
    return rows


class Drift:
    """Epoch factors of one job per (recurrence, batch-size index), from its drift rows."""

    def __init__(self, rows: pd.DataFrame, job: JobTrace) -> None:
        """Index the rows by the job's batch sizes."""
        self.points: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        for b, g in rows.groupby("batch_size", sort=True):
            self.points[job.bs_index(int(b))] = (
                g["recurrence"].to_numpy(dtype=float),
                g["epoch_factor"].to_numpy(dtype=float),
            )

    def __call__(self, recurrence: int, bs_index: int) -> float:
        """Factor of a batch size's target epochs in a recurrence (1 when not drifting)."""
        pts = self.points.get(bs_index)
        if pts is None:
            return 1.0
        return float(np.interp(recurrence, pts[0], pts[1]))

    def table(self, recurrences: int, n_bs: int) -> np.ndarray:
        """:meth:`__call__` of recurrences 1..``recurrences`` (rows) and indices 0..``n_bs - 1`` (columns), the same floats.

        (:func:`~zeus_bench.sim.executor.drift_factors` asks for it: one interpolation per batch size.)
        """
        out = np.ones((recurrences, n_bs))
        at = np.arange(1, recurrences + 1)
        for i, (xs, ys) in self.points.items():
            if i < n_bs:
                out[:, i] = np.interp(at, xs, ys)
        return out


def optimum_shift(
    job: JobTrace, cost: Cost, kind: str, at: int, factor: float, ramp: int = 20
) -> pd.DataFrame:
    """A drift scenario built from the job's trace: the oracle batch size's epochs grow by ``factor``.

    Args:
        job: The job.
        cost: The cost (which batch size is the oracle's).
        kind: ``step`` (at recurrence ``at``) or ``morph`` (linearly from ``at`` to ``at + ramp``).
        at: First recurrence of the change (>= 2).
        factor: Epoch multiplier of the oracle batch size after the change (> 1 moves the optimum).
        ramp: Recurrences of a morph.
    """
    import pandas as pd

    from zeus_bench.sim.policies.builtin import oracle_configuration

    if kind not in ("step", "morph"):
        raise ConfigError(f"drift kind must be 'step' or 'morph', got {kind!r}")
    if at < 2 or ramp < 1 or not factor > 0:
        raise ConfigError(f"drift needs at >= 2, ramp >= 1 and factor > 0 (got {at}, {ramp}, {factor})")
    b, _ = oracle_configuration(job, cost)
    end = at if kind == "step" else at + ramp
    return pd.DataFrame(
        {
            "workload": job.workload.id,
            "batch_size": [b, b],
            "recurrence": [at - 1, end],
            "epoch_factor": [1.0, factor],
        }
    )


def curve_tilt(job: JobTrace, cost: Cost, at: int, factor: float, ramp: int = 20) -> pd.DataFrame:
    """The neutral gradual drift: every batch size's epochs tilt over ``ramp`` recurrences from ``at``.

    Batch size ``b`` ends with epoch factor ``factor ** clip(1/2 - u_b, -1, 1)``, ``u_b`` its
    distance in doublings from the oracle's batch size towards larger ones (towards smaller ones
    when the oracle's is the job's largest): see the module docstring.
    """
    import pandas as pd

    from zeus_bench.sim.policies.builtin import oracle_configuration

    if at < 2 or ramp < 1 or not factor > 0:
        raise ConfigError(f"drift needs at >= 2, ramp >= 1 and factor > 0 (got {at}, {ramp}, {factor})")
    best, _ = oracle_configuration(job, cost)
    bs = job.batch_sizes.astype(float)
    direction = 1.0 if best < bs.max() else -1.0
    u = direction * np.log2(bs / best)
    f = factor ** np.clip(0.5 - u, -1.0, 1.0)
    n = len(bs)
    return pd.DataFrame(
        {
            "workload": job.workload.id,
            "batch_size": np.repeat(job.batch_sizes.astype(np.int64), 2),
            "recurrence": np.tile([at - 1, at + ramp], n),
            "epoch_factor": np.column_stack([np.ones(n), f]).ravel(),
        }
    )


def scenario(job: JobTrace, cost: Cost, kind: str, at: int, factor: float, ramp: int = 20) -> pd.DataFrame:
    """The drift table of one of :data:`SCENARIOS` for ``job`` (unknown kind: ConfigError)."""
    if kind == "tilt":
        return curve_tilt(job, cost, at, factor, ramp)
    if kind in ("step", "morph"):
        return optimum_shift(job, cost, kind, at, factor, ramp)
    raise ConfigError(f"drift scenario must be one of {', '.join(SCENARIOS)}, got {kind!r}")


def oracle_cost_by_recurrence(
    job: JobTrace, cost: Cost, drift: EpochFactor | None, recurrences: int
) -> np.ndarray:
    """Least expected cost over feasible configurations in each recurrence under a drift (J).

    A batch size is feasible in a recurrence when none of its drifted paths is missing or beyond the
    maximum epochs; its cost is its mean drifted epochs times its least epoch cost. Every
    recurrence of a batch size at once (a mean along each row is the row's own mean, bit for bit),
    the drift's factors as one table (:func:`~zeus_bench.sim.executor.drift_factors`).
    """
    costs = cost.epoch_cost(job.time_per_epoch_s, job.avg_power_w, job.max_power_w)
    best_epoch_cost = np.nanmin(np.where(np.isnan(costs), np.inf, costs), axis=1)
    from zeus_bench.sim.executor import drift_factors

    n_bs = len(job.target_epochs)
    factors = np.ones((recurrences, n_bs)) if drift is None else drift_factors(drift, recurrences, n_bs)
    out = np.full(recurrences, np.inf)
    for i, paths in enumerate(job.target_epochs):
        # (recurrences, paths): each row the recurrence's drifted paths
        t = paths[None, :] * factors[:, i, None]
        feasible = ~(np.isnan(t).any(axis=1) | (t > job.max_epochs).any(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):  # (no path: no mean, never feasible)
            here = t.mean(axis=1) * best_epoch_cost[i] if t.shape[1] else np.full(recurrences, np.nan)
        out = np.where(feasible & (here < out), here, out)  # the least, the first batch size on a tie
    return out


def main(argv: list[str] | None = None) -> int:
    """Command line: write a scenario's drift table for every (chosen) workload of a GPU's trace."""
    import argparse
    import logging
    import sys

    import pandas as pd

    from zeus_bench.core.cost import DEFAULT_ETA
    from zeus_bench.core.entry import MAX_RECURRENCES, add_int_option, check_out, eta_arg, float_arg
    from zeus_bench.core.errors import ZeusBenchError
    from zeus_bench.core.fsutil import atomic_path
    from zeus_bench.sim.replay import default_recurrences
    from zeus_bench.traces.jobs import TraceSet

    ap = argparse.ArgumentParser(
        prog="python -m zeus_bench.sim.scenarios.drift",
        description="Write a drift scenario's table (for zeus-bench simulate --drift) from a GPU's trace.",
    )
    ap.add_argument("--traces", required=True, help="trace folder")
    ap.add_argument("--gpu", required=True, help="GPU kind of the power trace")
    ap.add_argument("--workloads", default="all", help="'all' (default) or comma-separated workload ids")
    ap.add_argument("--scenario", required=True, choices=SCENARIOS)
    ap.add_argument(
        "--factor", type=float_arg("--factor"), default=2.0, help="epoch factor of the scenario (default 2)"
    )
    add_int_option(
        ap, "--at", (0, MAX_RECURRENCES), 0, "first recurrence of the change (default: mid-horizon)"
    )
    add_int_option(ap, "--ramp", (1, MAX_RECURRENCES), 20, "recurrences of a morph or tilt (default 20)")
    ap.add_argument(
        "--eta", type=eta_arg, default=DEFAULT_ETA, help="energy weight (which batch size is the oracle's)"
    )
    ap.add_argument("--out", required=True, type=Path, help="drift table to write (.csv or .parquet)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        check_out(args.out, (".csv", ".parquet"))
        cost = Cost(args.eta)
        if not (args.factor > 0 and np.isfinite(args.factor)) or args.factor > 100:
            raise ConfigError(f"--factor must lie in (0, 100], got {args.factor}")
        traces = TraceSet(args.traces)
        known = traces.workload_ids(args.gpu)
        wanted = (
            known if args.workloads == "all" else [w.strip() for w in args.workloads.split(",") if w.strip()]
        )
        unknown = [w for w in wanted if w not in known]
        if unknown:
            raise UnknownWorkloadError(
                f"--workloads: {unknown[0]!r} has no runs on {args.gpu!r}; known: {', '.join(known)}"
            )
        tables = []
        for w in wanted:
            job = traces.job(args.gpu, w)
            at = args.at if args.at else default_recurrences(job) // 2
            tables.append(scenario(job, cost, args.scenario, at, args.factor, args.ramp))
        table = validate_drift(pd.concat(tables, ignore_index=True), str(args.out))
    except ZeusBenchError as exc:
        print(f"drift: error: {exc}", file=sys.stderr)
        return 2
    with atomic_path(args.out) as tmp:
        if args.out.suffix == ".csv":
            table.to_csv(tmp, index=False, lineterminator="\n")
        else:
            table.to_parquet(tmp, index=False)
    logging.getLogger(__name__).info("wrote %s (%d rows)", args.out, len(table))
    return 0


if __name__ == "__main__":
    from zeus_bench.core.entry import exit_command

    exit_command(main())
