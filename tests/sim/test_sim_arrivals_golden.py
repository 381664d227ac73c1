"""The arrival replay equals the original simulator's concurrent replay, try for try.

The golden files (``benchmarks/golden/original_arrivals_*``) were written by
``benchmarks/golden/run_original.py --extra arrivals`` from ``Simulator.simulate_one_alibaba_group``
of PyPI ``zeus==0.16.0`` (the optimizer built with ``concurrency=True``) on synthetic group
tables of every workload (``synth-arrivals``, seeded: groups of 1 to 200 submissions, overlap
0.5-0.95, runtime ratios over about 0.1-10) on the V100 and A40, at two (eta, beta) and two
seeds. Every try the original made, in the order it observed them (zero-budget tries included),
must be the try the ``zeus`` policy observes: batch size, limit, reached, profiled, energy, time
and cost compared with ``==``; and the rows written (the fused loop) must be the tries that ran,
with the submission and attempt, energy, time and cost scaled by the runtime ratio.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import Outcome
from zeus_bench.sim.policies.builtin import Zeus
from zeus_bench.sim.replay import RUN_FIELDS, JobModel
from zeus_bench.sim.scenarios.arrivals import replay_group, synthetic_arrivals
from zeus_bench.traces.jobs import TraceSet
from zeus_bench.traces.workloads import load_workloads

GOLDEN = Path(__file__).resolve().parents[2] / "benchmarks" / "golden"


@cache
def golden() -> tuple[pd.DataFrame, pd.DataFrame, dict]:  # type: ignore[type-arg]
    """The original's tries (every one, in observation order per run), runs and provenance."""
    tries = pd.read_parquet(GOLDEN / "original_arrivals_tries.parquet")
    runs = pd.read_csv(GOLDEN / "original_arrivals_runs.csv", keep_default_na=False, dtype={"group": str})
    meta = json.loads((GOLDEN / "metadata_arrivals.json").read_text())
    return tries, runs, meta


@cache
def tables() -> dict[str, pd.DataFrame]:
    """The synthetic tables of the grid, rebuilt from their seeds (what synth-arrivals writes)."""
    _, _, meta = golden()
    wids = list(load_workloads())
    return {
        t["name"]: synthetic_arrivals(
            wids,
            t["groups"],
            t["jobs_per_group"],
            np.random.default_rng(t["seed"]),
            overlap=t["overlap"],
            ratio_sigma=t["ratio_sigma"],
        )
        for t in meta["grid"]["tables"]
    }


class _Recording(Zeus):
    """``zeus`` through the generic loop, recording every outcome it observes."""

    log: list[Outcome]

    def observe(self, outcome: Outcome) -> None:
        type(self).log.append(outcome)
        super().observe(outcome)


def _group(run: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    g = tables()[run["table"]]
    g = g[g["group"] == run["group"]]
    return g["start_time"].to_numpy(), g["end_time"].to_numpy(), g["runtime_ratio"].to_numpy()


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def mismatches(ts: TraceSet, gpu: str) -> tuple[list[str], int]:
    """Runs of one GPU whose tries differ from the original's (one line each), and tries compared."""
    tries, runs, _ = golden()
    by_run = dict(
        iter(tries[tries["gpu"] == gpu].groupby(["workload", "table", "group", "eta", "beta", "seed"]))
    )
    models: dict[tuple[str, float], JobModel] = {}
    bad: list[str] = []
    compared = 0
    for _, run in runs[runs["gpu"] == gpu].iterrows():
        ident = (
            run["workload"],
            run["table"],
            run["group"],
            float(run["eta"]),
            float(run["beta"]),
            int(run["seed"]),
        )
        key = (run["workload"], float(run["eta"]))
        if key not in models:
            models[key] = JobModel(ts.job(gpu, run["workload"]), Cost(float(run["eta"])))
        starts, ends, ratios = _group(run)
        want = by_run.get(ident, pd.DataFrame(columns=tries.columns)).sort_values("order")
        # Every observation of the generic loop.
        _Recording.log = []
        replay_group(models[key], _Recording, ident[5], ident[4], starts, ends, ratios)
        seen = [
            (o.batch_size, o.power_limit_w, o.reached, o.profiled, o.energy_j, o.time_s, o.cost, o.epochs > 0)
            for o in _Recording.log
        ]
        exp = list(
            zip(want["batch_size"], want["power_limit_w"], want["reached"], want["profiled"], want["energy_j"],
                want["time_s"], want["cost"], want["ran"], strict=True)
        )  # fmt: skip
        if run["error"].startswith("loops forever"):  # the original never ends: compare until we give up
            exp = exp[: len(seen)]
        compared += len(exp)
        if seen != exp:
            first = next(
                (i for i, (s, e) in enumerate(zip(seen, exp, strict=False)) if s != e),
                min(len(seen), len(exp)),
            )
            bad.append(
                f"{gpu} {ident}: {len(seen)} vs {len(exp)} tries observed, first difference at {first + 1}"
            )
            continue
        # The rows of the fused loop: the tries that ran, scaled by the ratio.
        rows = pd.DataFrame(
            replay_group(models[key], Zeus, ident[5], ident[4], starts, ends, ratios),
            columns=list(RUN_FIELDS),
        )
        ran = want[want["ran"]].iloc[: int(rows["ran"].sum())] if run["error"] else want[want["ran"]]
        got = rows[rows["ran"]]
        r = ran["runtime_ratio"].to_numpy()
        same = len(got) == len(ran) and all(
            [
                got["recurrence"].tolist() == ran["submission"].tolist(),
                got["attempt"].tolist() == ran["attempt"].tolist(),
                got["batch_size"].tolist() == ran["batch_size"].tolist(),
                got["power_limit_w"].tolist() == ran["power_limit_w"].tolist(),
                got["reached"].tolist() == ran["reached"].tolist(),
                got["profiled"].tolist() == ran["profiled"].tolist(),
                got["energy_j"].tolist() == (ran["energy_j"].to_numpy() * r).tolist(),
                got["time_s"].tolist() == (ran["time_s"].to_numpy() * r).tolist(),
                got["cost"].tolist() == (ran["cost"].to_numpy() * r).tolist(),
            ]
        )
        if not same:
            bad.append(
                f"{gpu} {ident}: rows differ from the original's tries that ran ({len(got)} vs {len(ran)})"
            )
    return bad, compared


def test_golden_arrival_grid_is_complete() -> None:
    tries, runs, meta = golden()
    grid = meta["grid"]
    n_groups = sum(t["groups"] for t in grid["tables"]) * 6
    assert len(runs) == len(grid["gpus"]) * n_groups * len(grid["settings_eta_beta"]) * len(grid["seeds"])
    sizes = {t["jobs_per_group"] for t in grid["tables"]}
    assert min(sizes) == 1 and max(sizes) >= 200
    assert set(runs["workload"]) == set(load_workloads()) - {"teacher-student"} and set(runs["gpu"]) == {
        "v100",
        "a40",
    }
    ratios = pd.concat(tables().values())["runtime_ratio"]
    assert ratios.min() < 0.15 and ratios.max() > 7
    counts = tries.groupby(["gpu", "workload", "table", "group", "eta", "beta", "seed"]).size()
    assert len(counts) == len(runs) and len(tries) == meta["tries"]
    # Heavy overlap: most submissions of the large groups start while another job of theirs runs.
    big = tables()["large"]
    prev_end = big.groupby("group")["end_time"].cummax().groupby(big["group"]).shift()
    assert (big["start_time"] < prev_end).mean() > 0.5


@pytest.mark.parametrize("gpu", ["v100", "a40"])
def test_arrival_replay_equals_the_original(zeus_traces: Path, gpu: str) -> None:
    bad, compared = mismatches(TraceSet(zeus_traces), gpu)
    assert compared > 1000
    assert not bad, f"{len(bad)} groups differ from the original simulator:\n" + "\n".join(bad[:20])
