"""The `zeus` replay equals the original Zeus simulator's try sequences on the golden grid.

The golden files (``benchmarks/golden/``) were written by ``benchmarks/golden/run_original.py``
from the original simulator (Zeus v0.3.0 code, PyPI ``zeus==0.16.0``): eta {0.25, 0.5, 0.75} x
beta {1.25, 1.5, 2, 3, inf} x {v100, a40} x six workloads x seeds 1-3, and eta 0.5, beta 2 for
seeds 1-10. Every try that ran must be equal: batch size, limit, attempt, reached, profiled and
energy, time and cost as floats compared with ``==`` (bit for bit), and no other try may run.
Where the original raised, the tries it made before raising must be equal.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import pandas as pd
import pytest

from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import RUN_FIELDS, JobModel, replay
from zeus_bench.traces.jobs import TraceSet

GOLDEN = Path(__file__).resolve().parents[2] / "benchmarks" / "golden"
COMPARED = [
    "recurrence",
    "attempt",
    "batch_size",
    "power_limit_w",
    "reached",
    "profiled",
    "energy_j",
    "time_s",
    "cost",
]


@cache
def golden() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The original's tries (those that ran) and runs."""
    tries = pd.read_parquet(GOLDEN / "original_tries.parquet")
    runs = pd.read_csv(GOLDEN / "original_runs.csv", keep_default_na=False)
    return tries, runs


def _ours(ts: TraceSet, run: pd.Series, models: dict[tuple[str, str, float], JobModel]) -> pd.DataFrame:
    key = (run["gpu"], run["workload"], float(run["eta"]))
    if key not in models:
        models[key] = JobModel(ts.job(run["gpu"], run["workload"]), Cost(float(run["eta"])))
    rows = replay(
        models[key], get_policy("zeus"), int(run["seed"]), float(run["beta"]), int(run["recurrences"])
    )
    df = pd.DataFrame(rows, columns=list(RUN_FIELDS))
    if "ran" in df.columns:
        df = df[df["ran"]]
    return df


def mismatches(ts: TraceSet, gpu: str) -> list[str]:
    """Runs of one GPU whose tries differ from the original's (one line each)."""
    tries, runs = golden()
    mine = tries[tries["ran"] & (tries["gpu"] == gpu)]
    by_run = dict(iter(mine.groupby(["workload", "eta", "beta", "seed"])))
    models: dict[tuple[str, str, float], JobModel] = {}
    bad = []
    for _, run in runs[runs["gpu"] == gpu].iterrows():
        ident = (run["workload"], float(run["eta"]), float(run["beta"]), int(run["seed"]))
        want = by_run[ident][COMPARED].reset_index(drop=True)
        got = _ours(ts, run, models)[COMPARED].reset_index(drop=True)
        if run["error"]:  # the original raised: compare the tries it made before
            got = got.iloc[: len(want)]
        if len(got) != len(want) or not got.astype(want.dtypes).equals(want):
            diff = (got.iloc[: len(want)] != want.iloc[: len(got)]).any(axis=1)
            first = int(diff.idxmax()) if diff.any() else min(len(got), len(want))
            bad.append(f"{gpu} {ident}: {len(got)} vs {len(want)} tries, first difference at try {first + 1}")
    return bad


def test_golden_grid_is_complete() -> None:
    tries, runs = golden()
    assert len(runs) == 2 * 6 * (3 * 5 * 3 + 7)
    assert set(runs["beta"].astype(float)) == {1.25, 1.5, 2.0, 3.0, math.inf}
    assert set(runs["eta"]) == {0.25, 0.5, 0.75}
    # Every run has tries, and each run's completed recurrences end with a try that reached.
    counts = tries.groupby(["gpu", "workload", "eta", "beta", "seed"]).size()
    assert len(counts) == len(runs) and (counts > 0).all()
    ok = runs[runs["error"] == ""]
    assert (ok["completed"] == ok["recurrences"]).all()


@pytest.mark.parametrize("gpu", ["v100", "a40"])
def test_zeus_equals_the_original_on_the_golden_grid(zeus_traces: Path, gpu: str) -> None:
    bad = mismatches(TraceSet(zeus_traces), gpu)
    assert not bad, f"{len(bad)} runs differ from the original simulator:\n" + "\n".join(bad[:20])


def test_where_the_original_raises_zeus_goes_on_and_reaches_every_recurrence(zeus_traces: Path) -> None:
    # movielens-1m at beta 1.25: pruning round 2 early-stops every try, the original raises
    # (no arm). The replay keeps the cheapest batch size found (docs/policies.md); keeping the
    # round-1 candidates instead failed all 20 tries in 164 of 182 recurrences (V100, seed 1).
    ts = TraceSet(zeus_traces)
    _, runs = golden()
    raised = runs[runs["error"] != ""]
    assert len(raised) == 12 and set(raised["workload"]) == {"movielens-1m"} and set(raised["beta"]) == {1.25}
    models: dict[tuple[str, str, float], JobModel] = {}
    for _, run in raised.iterrows():
        ours = _ours(ts, run, models)
        reached = ours.groupby("recurrence")["reached"].any()
        assert len(reached) == run["recurrences"] and reached.all(), tuple(run)
