"""How zeus-plus's constants were chosen: a grid of its design choices, leave-one-GPU-out.

Every setting is ``zeus-plus`` as registered (budget over the known number of recurrences) with
other values of its constants: ``margin`` (probe cap and drift threshold), ``noise_z`` (standard
deviations of the incumbent's runs a cost must pass to count as dearer), ``up_first`` (which
coarse neighbour first), ``prune`` (no probe beyond a dearer batch size) and ``loan`` (funds lent
against an epoch cost's promised saving). For each setting and GPU every job is replayed (eta 0.5,
beta 2, ``--seeds``) and two figures are kept per GPU: the largest mean cumulative cost ratio to
the baseline (b0 at the maximum limit; *safe* means <= 1.02 on every job) and the mean regret
against the oracle over its jobs divided by Zeus's on the same seeds (*better* means <= 0.6).
For each held-out GPU the setting is chosen on the other GPUs alone: among the settings safe on
all of them, the least summed regret ratio (none safe: the least largest cost ratio); the held-out
GPU's figures are then those of that choice. The default seeds (51-110) are disjoint from the
study's (1-50), so the study's numbers are out of sample in seeds as well. Run::

    PYTHONPATH=. python benchmarks/zeus_plus_tuning.py --gpu v100=data/traces/zeus \\
        --gpu a40=data/traces/zeus --gpu h200=data/traces/own/h200 --jobs 2
"""

from __future__ import annotations

import argparse
import itertools
import logging
import sys
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np

from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA, Cost
from zeus_bench.core.entry import int_range_arg
from zeus_bench.core.errors import ZeusBenchError
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.sim.policies.zeus_plus import ZeusPlus
from zeus_bench.sim.replay import JobModel, default_recurrences, replay
from zeus_bench.studies.study import references
from zeus_bench.traces.jobs import TraceSet

log = logging.getLogger("zeus_plus_tuning")
SAFE = 1.02
GRID: dict[str, tuple[Any, ...]] = {
    "margin": (0.2, 0.4),
    "noise_z": (1.0, 2.0, 3.0),
    "up_first": (True, False),
    "prune": (True, False),
    "loan": (0.0, 1.0),
}
Setting = tuple[Any, ...]


def variant(setting: Setting) -> type[Policy]:
    """A zeus-plus class with the setting's constants (not registered)."""
    attrs: dict[str, Any] = dict(zip(GRID, setting, strict=True))
    attrs["name"] = "zeus-plus-" + "-".join(f"{k}{v}" for k, v in attrs.items())
    return type("ZeusPlusVariant", (ZeusPlus,), attrs)


def gpu_figures(folder: str, gpu: str, setting: Setting | None, seeds: list[int]) -> tuple[float, float]:
    """(largest mean cost ratio to the baseline over jobs, mean regret % over jobs) on one GPU.

    ``setting`` None: Zeus.
    """
    ts = TraceSet(folder)
    cls = get_policy("zeus") if setting is None else variant(setting)
    ratios, regrets = [], []
    for w in ts.workload_ids(gpu):
        model = JobModel(ts.job(gpu, w), Cost(DEFAULT_ETA))
        n = default_recurrences(model.job)
        refs = references(model)
        totals = np.array([sum(r[7] for r in replay(model, cls, s, DEFAULT_BETA, n)) for s in seeds])
        ratios.append(float(np.mean(totals / (n * refs.baseline))))
        regrets.append(float(np.mean(totals / (n * refs.oracle) - 1.0) * 100.0))
    return max(ratios), float(np.mean(regrets))


def _task(args: tuple[str, str, Setting | None, list[int]]) -> tuple[float, float]:
    return gpu_figures(*args)


def main() -> None:
    """Print the grid and the leave-one-GPU-out choices."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--gpu", action="append", required=True, metavar="NAME=DIR", help="GPU and its trace folder"
    )
    ap.add_argument("--seeds", type=int_range_arg, default=list(range(51, 111)))
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    args = ap.parse_args()
    if any("=" not in g for g in args.gpu):
        ap.error("--gpu takes NAME=DIR")
    gpus = dict(g.split("=", 1) for g in args.gpu)
    settings: list[Setting | None] = [None, *itertools.product(*GRID.values())]
    tasks = [(gpus[g], g, s, args.seeds) for s in settings for g in gpus]
    try:
        for g, folder in gpus.items():
            TraceSet(folder).workload_ids(g)  # unknown GPU or unreadable folder: one line, exit 2
        with ProcessPoolExecutor(max(1, args.jobs)) as pool:
            figures = dict(zip(((t[2], t[1]) for t in tasks), pool.map(_task, tasks), strict=True))
    except ZeusBenchError as exc:
        print(f"zeus_plus_tuning: error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    zeus = {g: figures[(None, g)][1] for g in gpus}
    grid: dict[Setting, dict[str, tuple[float, float]]] = {}
    for setting in settings[1:]:
        assert setting is not None
        grid[setting] = {g: (figures[(setting, g)][0], figures[(setting, g)][1] / zeus[g]) for g in gpus}
        names = " ".join(f"{k} {v}" for k, v in zip(GRID, setting, strict=True))
        row = "  ".join(
            f"{g}: max ratio {r:.3f} regret {q:.2f} x Zeus" for g, (r, q) in grid[setting].items()
        )
        print(f"{names}  {row}")
    for held in gpus:
        train = [g for g in gpus if g != held]
        safe = [k for k, v in grid.items() if all(v[g][0] <= SAFE for g in train)]
        if safe:
            best = min(safe, key=lambda k: sum(grid[k][g][1] for g in train))
        else:
            best = min(grid, key=lambda k: max(grid[k][g][0] for g in train))
        r, q = grid[best][held]
        names = ", ".join(f"{k} {v}" for k, v in zip(GRID, best, strict=True))
        print(
            f"held out {held}: chosen on {', '.join(train)} -> {names}"
            f"{'' if safe else ' (none safe: least cost ratio)'}; "
            f"on {held}: max ratio {r:.3f}, regret {q:.2f} x Zeus's"
        )


if __name__ == "__main__":
    main()
