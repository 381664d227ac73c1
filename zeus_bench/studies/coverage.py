r"""The arena's intervals checked where the truth is known: a coverage study on synthetic paths.

The arena's two folds judge two disjoint halves of a handful of recorded training paths per
(workload, batch size); how often their 95 % intervals disagree (``fold_agreement``) is the check
of the intervals on the real traces, and it is the very data the arena reports. This study
chooses the intervals' settings (how many replicate traces, how a draw's path-level shift is made:
:func:`~zeus_bench.sim.two_stage.path_shifts`) *without* that data, where the answer is known:

* a **world** is a GPU's jobs with synthetic training paths: per (workload, batch size), a
  population of :data:`POPULATION` paths, each failing with the recorded share of failed paths,
  else a whole number of epochs drawn log-normally around the recorded paths' median with log
  standard deviation ``sigma`` (:data:`SIGMAS`; the recorded paths' own spread has median 0.07 and
  90th percentile 0.21 within a batch size). Batch sizes, limits, epoch times and power are the
  GPU's own. What the worlds take from the traces: those, each batch size's number of paths, the
  median of its reaching paths and its share of failed ones; never a fold's interval or its
  agreement.
* its **truth** is each policy's ratio of mean regret to Zeus's over the GPU's jobs, replayed on
  the whole population (:data:`TRUTH_SEEDS`);
* a **pair** draws as many paths per batch size as the trace records, without replacement from
  the population, splits them as the arena does (:func:`~zeus_bench.studies.crossfit.split_job`,
  split 1) and replays both halves as the workflow's arena does (seeds 1-6, replicate traces on
  seed 1), with :data:`MAX_REPLICATES` replicate traces; the intervals of every setting
  (:data:`SETTINGS`: the first R replicates, each path draw) come from the same replays.

**The rule, fixed before the study ran** (:func:`choose`): the setting with the fewest replicate
traces (then the first path draw of ``pick, normal, t``) whose 95 % intervals of
``regret_ratio_vs_zeus`` cover the truth at least :data:`RULE_COVERAGE` of the time in every world;
when none does, the one with the highest worst-world coverage (and the table says so).

    python -m zeus_bench.studies.coverage --traces DIR --gpu v100,a40 --jobs 2 \\
        --out results/policy/coverage.csv --worlds results/policy/coverage-worlds.csv

``--out``: one row per setting over every world; ``--worlds``: per world and setting
(``results/README.md`` documents their columns).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from zeus_bench.sim.metrics import ratio_ci
from zeus_bench.sim.replay import default_recurrences
from zeus_bench.sim.two_stage import PATH_DRAWS
from zeus_bench.studies.arena_protocol import COMPARATOR, ArenaJob, Protocol, default_policies, run_arena
from zeus_bench.studies.arena_stats import Pair, Part, finite_ci, job_parts, jobs_mean, resampled_means
from zeus_bench.studies.crossfit import FOLD_CONSTANTS, job_key, keep_batch_sizes, split_job, splittable
from zeus_bench.traces.jobs import JobTrace, TraceSet

log = logging.getLogger(__name__)

SIGMAS = (0.05, 0.1, 0.2)
"""Log standard deviations of a batch size's epochs to the target in the worlds."""
POPULATION = 64
"""Paths per batch size of a world's population (the truth's paths; pairs draw from them)."""
PAIRS = 24
"""Pairs of halves drawn per world."""
MAX_REPLICATES = 16
"""Replicate traces replayed per half; a setting with fewer takes the first ones."""
REPLICATES = (0, 4, 8, 16)
"""Replicate counts compared (0: seeds alone, the arena's intervals before the two-stage bootstrap)."""
SETTINGS: tuple[tuple[int, str], ...] = (
    (0, "pick"),
    *tuple((r, d) for r in REPLICATES if r for d in PATH_DRAWS),
)
"""(replicates, path draw) of every interval compared."""
SEEDS = tuple(range(1, 7))
"""Seeds of a half's replay on its recorded paths (the workflow's arena: ``arena.seeds``)."""
TRUTH_SEEDS = tuple(range(1, 201))
"""Seeds of the truth's replay on the population."""
RULE_COVERAGE = 0.90
"""Coverage a setting must reach in every world to be chosen (:func:`choose`)."""
STREAM = 0x636F76
"""Entropy of the worlds' generators besides (world, job[, pair]): "cov"."""


@dataclass(frozen=True)
class World:
    """A GPU's jobs with synthetic paths of log standard deviation ``sigma``; ``index`` seeds it."""

    gpu: str
    sigma: float
    index: int


def population(whole: JobTrace, sigma: float, size: int, rng: np.random.Generator) -> JobTrace:
    """The job with ``size`` synthetic paths per batch size (the module's docstring says how).

    A batch size whose recorded paths all fail fails on every path. A path beyond the job's
    maximum epochs never reaches the target, except at the default batch size: a replay needs it
    to converge (every recorded path of it does, in every Zeus trace), so its paths are drawn from
    the log-normal below the maximum (drawn again until they are, at most 1,000 times; then set to it).
    """
    paths = []
    i0 = whole.bs_index(whole.b0)
    for i, t in enumerate(whole.target_epochs):
        reached = t[~np.isnan(t)]
        out = np.full(size, np.nan)
        if len(reached):
            ok = rng.random(size) >= 1.0 - len(reached) / len(t)
            drawn = np.maximum(np.rint(np.median(reached) * np.exp(sigma * rng.standard_normal(size))), 1.0)
            for _ in range(1000 if i == i0 else 0):
                over = drawn > whole.max_epochs
                if not over.any():
                    break
                drawn[over] = np.maximum(
                    np.rint(np.median(reached) * np.exp(sigma * rng.standard_normal(int(over.sum())))), 1.0
                )
            out[ok] = drawn[ok]
            if i == i0:  # the default's paths all converge (at the maximum, were any still beyond it)
                out[:] = np.minimum(drawn, whole.max_epochs)
        paths.append(out)
    return dataclasses.replace(whole, target_epochs=tuple(paths))


def recorded(pop: JobTrace, counts: Sequence[int], rng: np.random.Generator) -> JobTrace:
    """A job with ``counts[i]`` paths of batch size ``i`` drawn without replacement from ``pop``'s."""
    paths = tuple(
        t[rng.choice(len(t), size=c, replace=False)] for t, c in zip(pop.target_epochs, counts, strict=True)
    )
    return dataclasses.replace(pop, target_epochs=paths)


def _wholes(traces: TraceSet, gpu: str) -> list[JobTrace]:
    return [traces.job(gpu, w) for w in traces.workload_ids(gpu)]


def _populations(world: World, wholes: Sequence[JobTrace]) -> list[JobTrace]:
    return [
        population(w, world.sigma, POPULATION, np.random.default_rng([STREAM, world.index, job_key(w)]))
        for w in wholes
    ]


def _policies() -> list[str]:
    """The arena's default policies whose constants do not differ by fold (those ``fold_agreement`` compares)."""
    tuned = {p for consts in FOLD_CONSTANTS.values() for p in consts}
    return [p for p in default_policies() if p not in tuned]


def _gpu_regret(parts: dict[tuple[str, str], Part], policy: str) -> Pair:
    """A policy's per-replay regret averaged over the GPU's jobs: ``(recorded (N,), replicates (R, S))``."""
    return jobs_mean([p.values[policy]["regret_pct"] for p in parts.values()])


def truth(
    world: World, wholes: Sequence[JobTrace], policies: Sequence[str]
) -> dict[str, tuple[float, float]]:
    """Each policy's mean regret over the jobs over Zeus's on the world's populations, and its own half-width.

    The half-width is half the 95 % interval over the truth's seeds (:func:`~zeus_bench.sim.metrics.ratio_ci`):
    how far the truth itself may be from the population's (its Monte Carlo error).
    """
    jobs = [
        ArenaJob(keep_batch_sizes(p, splittable(w)), default_recurrences(w))
        for p, w in zip(_populations(world, wholes), wholes, strict=True)
    ]
    protocol = Protocol(seeds=TRUTH_SEEDS).for_fold(1)
    parts = job_parts(jobs, run_arena(jobs, policies, protocol), protocol)
    zeus = _gpu_regret(parts, COMPARATOR)[0]
    out = {}
    for p in policies:
        point, lo, hi = ratio_ci(_gpu_regret(parts, p)[0], zeus)
        out[p] = (point, (hi - lo) / 2.0)
    return out


def half_intervals(
    jobs: Sequence[ArenaJob], policies: Sequence[str], protocol: Protocol
) -> list[dict[str, object]]:
    """Per policy and setting, the half's estimate and 95 % interval of ``regret_ratio_vs_zeus``."""
    parts = job_parts(jobs, run_arena(jobs, policies, protocol), protocol)
    z_rec, z_rep = _gpu_regret(parts, COMPARATOR)
    rows = []
    for p in policies:
        if p == COMPARATOR:
            continue
        p_rec, p_rep = _gpu_regret(parts, p)
        for r, draw in SETTINGS:  # the first r replicates (none: the seeds alone), as arena_summary's ratio
            means = resampled_means([(p_rec, p_rep[:r]), (z_rec, z_rep[:r])], draw)
            with np.errstate(divide="ignore", invalid="ignore"):
                lo, hi = finite_ci(means[0] / means[1])
            rows.append(
                {
                    "policy": p,
                    "replicates": r,
                    "path_draw": draw,
                    "estimate": float(p_rec.mean() / z_rec.mean()),
                    "ci_lo": lo,
                    "ci_hi": hi,
                }
            )
    return rows


def pair_rows(
    world: World, wholes: Sequence[JobTrace], pair: int, policies: Sequence[str]
) -> list[dict[str, object]]:
    """Both halves of one pair of the world: :func:`half_intervals` of each (``fold`` 1: judge, 2: tune)."""
    drawn = [
        recorded(
            p,
            [len(t) for t in w.target_epochs],
            np.random.default_rng([STREAM, world.index, job_key(w), pair]),
        )
        for p, w in zip(_populations(world, wholes), wholes, strict=True)
    ]
    rows = []
    for fold, half in ((1, "judge"), (2, "tune")):
        jobs = [
            ArenaJob(split_job(d, half), default_recurrences(w)) for d, w in zip(drawn, wholes, strict=True)
        ]
        protocol = dataclasses.replace(
            Protocol(seeds=SEEDS, replicates=MAX_REPLICATES).for_fold(1), fold=fold, half=half
        )
        for row in half_intervals(jobs, policies, protocol):
            rows.append({"gpu": world.gpu, "sigma": world.sigma, "pair": pair, "fold": fold, **row})
    return rows


@dataclass(frozen=True)
class _Task:
    traces: Path
    world: World
    pair: int  # -1: the truth
    policies: tuple[str, ...]


def _run(task: _Task) -> tuple[_Task, object]:
    wholes = _wholes(TraceSet(task.traces), task.world.gpu)
    if task.pair < 0:
        return task, truth(task.world, wholes, task.policies)
    return task, pair_rows(task.world, wholes, task.pair, task.policies)


def run_study(
    traces: dict[str, Path], gpus: Sequence[str], sigmas: Sequence[float], pairs: int, jobs_n: int = 1
) -> pd.DataFrame:
    """Every world's pairs of halves, one row per (world, pair, fold, policy, setting), with its truth and coverage."""
    worlds = [World(g, s, i) for i, (g, s) in enumerate((g, s) for g in gpus for s in sigmas)]
    policies = tuple(_policies())
    tasks = [_Task(traces[w.gpu], w, k, policies) for w in worlds for k in range(-1, pairs)]
    truths: dict[World, dict[str, tuple[float, float]]] = {}
    rows: list[dict[str, object]] = []
    start = time.monotonic()
    with ProcessPoolExecutor(max_workers=jobs_n) as pool:
        for done, (task, out) in enumerate(pool.map(_run, tasks), start=1):
            if task.pair < 0:
                truths[task.world] = out  # type: ignore[assignment]
            else:
                rows.extend(out)  # type: ignore[arg-type]
            left = (time.monotonic() - start) / done * (len(tasks) - done)
            log.info("coverage: %d of %d replays done (world %s sigma %g), about %.0f s left",
                     done, len(tasks), task.world.gpu, task.world.sigma, left)  # fmt: skip
    out = pd.DataFrame(rows)
    key = {(w.gpu, w.sigma): truths[w] for w in worlds}
    found = [key[(g, s)][p] for g, s, p in zip(out["gpu"], out["sigma"], out["policy"], strict=True)]
    out["truth"] = [t for t, _ in found]
    out["truth_halfwidth"] = [h for _, h in found]
    out["covered"] = (out["ci_lo"] <= out["truth"]) & (out["truth"] <= out["ci_hi"])
    return out


def _disjoint(rows: pd.DataFrame) -> pd.Series:
    """Per (world, pair, policy, setting): whether the two folds' intervals are disjoint."""
    keys = ["gpu", "sigma", "pair", "policy", "replicates", "path_draw"]
    a = rows[rows["fold"] == 1].set_index(keys)
    b = rows[rows["fold"] == 2].set_index(keys)
    return (a["ci_hi"] < b["ci_lo"]) | (b["ci_hi"] < a["ci_lo"])


def world_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per world (gpu, sigma) and setting: coverage, folds' disjoint share, median interval width."""
    by = ["gpu", "sigma", "replicates", "path_draw"]
    rows = rows.assign(width=rows["ci_hi"] - rows["ci_lo"])
    out = rows.groupby(by, sort=False).agg(
        intervals=("covered", "size"),
        coverage=("covered", "mean"),
        median_width=("width", "median"),
        truth_halfwidth_median=("truth_halfwidth", "median"),
    )
    out["disjoint_share"] = _disjoint(rows).groupby(by, sort=False).mean()
    return out.reset_index()


def setting_table(worlds: pd.DataFrame) -> pd.DataFrame:
    """Per setting over every world: mean and worst-world coverage, disjoint share, width; ``chosen``."""
    out = (
        worlds.groupby(["replicates", "path_draw"], sort=False)
        .agg(
            worlds=("coverage", "size"),
            coverage_mean=("coverage", "mean"),
            coverage_min=("coverage", "min"),
            disjoint_share_mean=("disjoint_share", "mean"),
            disjoint_share_max=("disjoint_share", "max"),
            median_width=("median_width", "median"),
        )
        .reset_index()
    )
    out["chosen"] = False
    out.loc[choose(out), "chosen"] = True
    out["rule_met"] = bool((out["coverage_min"] >= RULE_COVERAGE).any())
    return out


def choose(settings: pd.DataFrame) -> int:
    """Index of the setting the rule picks (the module's docstring): fewest replicates, then pick/normal/t."""
    order = settings.assign(
        _draw=settings["path_draw"].map({d: i for i, d in enumerate(PATH_DRAWS)})
    ).sort_values(["replicates", "_draw"])
    ok = order[order["coverage_min"] >= RULE_COVERAGE]
    if len(ok):
        return int(ok.index[0])
    return int(order["coverage_min"].idxmax())


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: run the study and write its two tables."""
    from zeus_bench.core.entry import add_int_option, add_jobs_arg, check_out
    from zeus_bench.core.errors import ZeusBenchError
    from zeus_bench.core.fsutil import atomic_path
    from zeus_bench.store import validate

    ap = argparse.ArgumentParser(
        prog="python -m zeus_bench.studies.coverage", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--traces", type=Path, required=True, help="folder of imported traces (train and power)")
    ap.add_argument(
        "--gpu", default="v100,a40", help="GPU kind(s) whose jobs make the worlds (default v100,a40)"
    )
    add_int_option(ap, "--pairs", (1, 1000), PAIRS, f"pairs of halves per world (default {PAIRS})")
    add_jobs_arg(ap)
    ap.add_argument(
        "--out", type=Path, required=True, metavar="FILE.csv", help="per setting, over every world"
    )
    ap.add_argument("--worlds", type=Path, required=True, metavar="FILE.csv", help="per world and setting")
    ap.add_argument(
        "--rows", type=Path, default=None, metavar="FILE.csv", help="also every interval (one row each)"
    )
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        ts = TraceSet(args.traces)
        gpus = [g for g in args.gpu.split(",") if g]
        for g in gpus:
            if g not in ts.gpus:
                raise ts.unknown_gpu(g)
        check_out(args.out, (".csv",))
        check_out(args.worlds, (".csv",), "--worlds")
        check_out(args.rows, (".csv",), "--rows")
    except ZeusBenchError as exc:
        print(f"coverage: error: {exc}", file=sys.stderr)
        return 2
    try:
        rows = run_study({g: args.traces for g in gpus}, gpus, SIGMAS, args.pairs, args.jobs)
    except (
        ZeusBenchError
    ) as exc:  # a world the replay refuses (e.g. a default batch size that never converges)
        print(f"coverage: error: {exc}", file=sys.stderr)
        return 2
    worlds = world_table(rows)
    settings = setting_table(worlds)
    validate(worlds, "policy_coverage_worlds", str(args.worlds))
    validate(settings, "policy_coverage", str(args.out))
    for path, table in ((args.rows, rows), (args.worlds, worlds), (args.out, settings)):
        if path is None:
            continue
        with atomic_path(path) as tmp:
            table.to_csv(tmp, index=False, lineterminator="\n", float_format="%.6g")
    log.info("chosen: %s", settings[settings["chosen"]].iloc[0].to_dict())
    return 0


if __name__ == "__main__":
    from zeus_bench.core.entry import exit_command

    exit_command(main())
