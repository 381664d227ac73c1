"""The batch-size optimizer's knobs (prior, pruning rounds) replay as the original's, try for try.

``benchmarks/golden/original_knobs_*`` were written by ``benchmarks/golden/run_original.py
--extra knobs``: ``Simulator.simulate_one_job`` of PyPI ``zeus==0.16.0`` with
``PruningGTSBatchSizeOptimizer(prior_mean, prior_precision)`` and the pruning manager's
``num_pruning_rounds``, at eta 0.5, beta 2, on the V100 and A40, six workloads, seeds 1-3. Every
try that ran must be equal (``==``); where the original raised, the tries before.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pandas as pd
import pytest
from test_sim_golden import COMPARED  # the columns the single-job golden test compares

from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.replay import RUN_FIELDS, BanditKnobs, JobModel, replay
from zeus_bench.traces.jobs import TraceSet

GOLDEN = Path(__file__).resolve().parents[2] / "benchmarks" / "golden"
KNOB_KEYS = ["prior_mean", "prior_precision", "prune_rounds"]


@cache
def golden() -> tuple[pd.DataFrame, pd.DataFrame]:
    tries = pd.read_parquet(GOLDEN / "original_knobs_tries.parquet")
    runs = pd.read_csv(GOLDEN / "original_knobs_runs.csv", keep_default_na=False)
    return tries, runs


def _ours(ts: TraceSet, run: pd.Series, models: dict[tuple[str, str], JobModel]) -> pd.DataFrame:
    key = (run["gpu"], run["workload"])
    if key not in models:
        models[key] = JobModel(ts.job(*key), Cost(0.5))
    knobs = BanditKnobs(float(run["prior_mean"]), float(run["prior_precision"]), int(run["prune_rounds"]))
    rows = replay(
        models[key], get_policy("zeus"), int(run["seed"]), 2.0, int(run["recurrences"]), knobs=knobs
    )
    df = pd.DataFrame(rows, columns=list(RUN_FIELDS))
    return df[df["ran"]]


def test_knob_grid_is_complete_and_the_prior_changes_tries() -> None:
    tries, runs = golden()
    meta = json.loads((GOLDEN / "metadata_knobs.json").read_text())
    assert len(runs) == 2 * 6 * len(meta["grid"]["seeds"]) * len(
        meta["grid"]["knobs_prior_mean_prior_precision_prune_rounds"]
    )
    assert (runs["prior_precision"] > 0).any() and set(runs["prune_rounds"]) >= {2, 3}
    # A nonzero prior changes some of the original's try sequences (else the golden rows test nothing).
    base = pd.read_parquet(GOLDEN / "original_tries.parquet")
    base = base[(base["eta"] == 0.5) & (base["beta"] == 2.0) & base["ran"]]
    ident = ["gpu", "workload", "seed"]
    changed = 0
    for key, t in tries[tries["ran"] & (tries["prior_precision"] > 0)].groupby([*ident, *KNOB_KEYS]):
        b = base[(base["gpu"] == key[0]) & (base["workload"] == key[1]) & (base["seed"] == key[2])]
        changed += b["batch_size"].tolist() != t["batch_size"].tolist()
    assert changed > 0


@pytest.mark.parametrize("gpu", ["v100", "a40"])
def test_knobs_equal_the_original(zeus_traces: Path, gpu: str) -> None:
    tries, runs = golden()
    ts = TraceSet(zeus_traces)
    mine = tries[tries["ran"] & (tries["gpu"] == gpu)]
    by_run = dict(iter(mine.groupby(["workload", *KNOB_KEYS, "seed"])))
    models: dict[tuple[str, str], JobModel] = {}
    bad = []
    for _, run in runs[runs["gpu"] == gpu].iterrows():
        ident = (run["workload"], *(run[k] for k in KNOB_KEYS), run["seed"])
        want = by_run[ident][COMPARED].reset_index(drop=True)
        got = _ours(ts, run, models)[COMPARED].reset_index(drop=True)
        if run["error"]:
            got = got.iloc[: len(want)]
        if len(got) != len(want) or not got.astype(want.dtypes).equals(want):
            bad.append(f"{gpu} {ident}: {len(got)} vs {len(want)} tries ({run['error'][:60]})")
    assert not bad, "\n".join(bad[:20])
