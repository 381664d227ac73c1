"""How zeus-plus's constants were chosen: a grid of (margin, loan, lookahead), leave-one-GPU-out.

Every setting uses the anytime budget (``horizon`` 0: nothing assumed about the number of
recurrences). For each candidate setting and GPU, every job is replayed (eta 0.5, beta 2,
``--seeds``) and two figures are kept per GPU: the largest mean cumulative cost ratio to the
baseline (b0 at the maximum limit; *safe* means <= 1.02 on every job) and the mean regret against
the oracle over its jobs, divided by Zeus's on the same seeds (*better* means <= 0.6). For each
held-out GPU the setting is chosen on the other GPUs alone: among the settings safe on all of
them, the least summed regret ratio (none safe: the least largest cost ratio); the held-out GPU's
figures are then those of that choice. Run::

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
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.policies.base import Policy
from zeus_bench.sim.policies.builtin import max_limit_w, oracle_configuration
from zeus_bench.sim.policies.zeus_plus import ZeusPlus
from zeus_bench.sim.replay import JobModel, default_recurrences, replay

log = logging.getLogger("zeus_plus_tuning")
SAFE = 1.02
MARGINS = (0.2, 0.4)
LOANS = (0.0, 1.0, 3.0, 10.0)
LOOKAHEADS = (0.0, 0.5, 1.0, 2.0, 4.0)
Setting = tuple[float, float, float]


def variant(margin: float, loan: float, lookahead: float) -> type[Policy]:
    """A zeus-plus class (anytime budget) with other constants (not registered)."""
    attrs = {"name": f"zeus-plus-m{margin}-l{loan}-k{lookahead}", "horizon": 0}
    attrs.update(margin=margin, loan=loan, lookahead=lookahead)
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
    zeus = {g: gpu_figures(sets[g], g, get_policy("zeus"), args.seeds)[1] for g in gpus}
    grid: dict[Setting, dict[str, tuple[float, float]]] = {}
    for setting in itertools.product(MARGINS, LOANS, LOOKAHEADS):
        figs = {g: gpu_figures(sets[g], g, variant(*setting), args.seeds) for g in gpus}
        grid[setting] = {g: (r, reg / zeus[g]) for g, (r, reg) in figs.items()}
        row = "  ".join(
            f"{g}: max ratio {r:.3f} regret {q:.2f} x Zeus" for g, (r, q) in grid[setting].items()
        )
        print(f"margin {setting[0]:.1f} loan {setting[1]:4.1f} lookahead {setting[2]:.1f}  {row}")
    for held in gpus:
        train = [g for g in gpus if g != held]
        safe = [k for k, v in grid.items() if all(v[g][0] <= SAFE for g in train)]
        if safe:
            best = min(safe, key=lambda k: sum(grid[k][g][1] for g in train))
        else:
            best = min(grid, key=lambda k: max(grid[k][g][0] for g in train))
        r, q = grid[best][held]
        print(
            f"held out {held}: chosen on {', '.join(train)} -> margin {best[0]}, loan {best[1]}, "
            f"lookahead {best[2]}{'' if safe else ' (none safe: least cost ratio)'}; "
            f"on {held}: max ratio {r:.3f}, regret {q:.2f} x Zeus's"
        )


if __name__ == "__main__":
    main()
