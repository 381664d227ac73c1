"""How zeus-plus's constants were chosen: a grid of (horizon, margin, order), leave-one-GPU-out.

For each candidate setting and GPU, every job is replayed (eta 0.5, beta 2, ``--seeds``) and two
figures are kept per GPU: the largest mean cumulative cost ratio to the baseline (b0 at the
maximum limit; *safe* means <= 1.02 on every job) and the mean regret against the oracle over its
jobs. For each held-out GPU the setting is chosen on the other GPUs alone: among the settings safe
on all of them, the least mean regret (summed over them); the held-out GPU's figures are then
those of that choice. Run::

    PYTHONPATH=. python benchmarks/zeus_plus_tuning.py --gpu v100=data/traces/zeus \\
        --gpu a40=data/traces/zeus --gpu h200=data/traces/own/h200 --seeds 1-20
"""

from __future__ import annotations

import argparse
import itertools
import logging

import numpy as np

from zeus_bench.cli.common import int_range_arg
from zeus_bench.jobs import TraceSet
from zeus_bench.sim.policies.base import Policy
from zeus_bench.sim.policies.builtin import max_limit_w, oracle_configuration
from zeus_bench.sim.policies.zeus_plus import ZeusPlus
from zeus_bench.sim.replay import JobModel, default_recurrences, replay

log = logging.getLogger("zeus_plus_tuning")
SAFE = 1.02
HORIZONS = (10, 20, 30, 50)
MARGINS = (0.1, 0.2, 0.4)
ORDERS = (False, True)


def variant(horizon: int, margin: float, up_first: bool) -> type[Policy]:
    """A zeus-plus class with other constants (not registered)."""
    attrs = {"name": f"zeus-plus-h{horizon}-m{margin}-{'up' if up_first else 'down'}"}
    attrs.update(horizon=horizon, margin=margin, up_first=up_first)
    return type("ZeusPlusVariant", (ZeusPlus,), attrs)


def gpu_figures(ts: TraceSet, gpu: str, cls: type[Policy], seeds: list[int]) -> tuple[float, float]:
    """(largest mean cost ratio to the baseline over jobs, mean regret % over jobs) on one GPU."""
    ratios, regrets = [], []
    for w in ts.workload_ids(gpu):
        job = ts.job(gpu, w)
        m = JobModel(job, 0.5)
        n = default_recurrences(job)
        base = m.expected_cost[m.bs_index[job.b0]][m.limit_index[max_limit_w(job, job.b0)]]
        ob, op = oracle_configuration(job, 0.5)
        orc = m.expected_cost[m.bs_index[ob]][m.limit_index[op]]
        totals = np.array([sum(r[7] for r in replay(m, cls, s, 2.0, n)) for s in seeds])
        ratios.append(float(np.mean(totals / (n * base))))
        regrets.append(float(np.mean(totals / (n * orc) - 1.0) * 100.0))
    return max(ratios), float(np.mean(regrets))


def main() -> None:
    """Print the grid and the leave-one-GPU-out choices."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--gpu", action="append", required=True, metavar="NAME=DIR", help="GPU and its trace folder"
    )
    ap.add_argument("--seeds", type=int_range_arg, default=list(range(1, 21)))
    args = ap.parse_args()
    gpus = dict(g.split("=", 1) for g in args.gpu)
    sets = {g: TraceSet(d) for g, d in gpus.items()}
    grid = {}
    for h, mgn, up in itertools.product(HORIZONS, MARGINS, ORDERS):
        cls = variant(h, mgn, up)
        grid[(h, mgn, up)] = {g: gpu_figures(sets[g], g, cls, args.seeds) for g in gpus}
        row = "  ".join(
            f"{g}: max ratio {r:.3f} regret {reg:6.2f} %" for g, (r, reg) in grid[(h, mgn, up)].items()
        )
        print(f"horizon {h:3d} margin {mgn:.1f} {'up  ' if up else 'down'} first  {row}")
    for held in gpus:
        train = [g for g in gpus if g != held]
        safe = [k for k, v in grid.items() if all(v[g][0] <= SAFE for g in train)]
        pool = safe or list(grid)
        best = min(pool, key=lambda k: sum(grid[k][g][1] for g in train))
        r, reg = grid[best][held]
        print(
            f"held out {held}: chosen on {', '.join(train)} -> horizon {best[0]}, margin {best[1]}, "
            f"{'up' if best[2] else 'down'} first{'' if safe else ' (none safe: least regret)'}; "
            f"on {held}: max ratio {r:.3f}, mean regret {reg:.2f} %"
        )


if __name__ == "__main__":
    main()
