"""The policy arena: every policy under one protocol, with confidence intervals and paired tests.

``zeus-bench arena --traces DIR --gpu v100,a40 --policies zeus,zeus-plus,pl-only --seeds 1-50
--out DIR`` replays each policy on each job's *judged* half of the training paths
(:mod:`zeus_bench.studies.crossfit`) and writes two tables (``DIR/arena_jobs.parquet``,
``DIR/arena_summary.parquet``; schemas in :mod:`zeus_bench.studies.arena_schema`). The protocol
(``docs/policies.md``, "The arena protocol"):

* each seed samples the same training paths under every policy (common random numbers), so the
  difference against Zeus is paired seed by seed;
* a recurrence is charged as in the summary table (:func:`zeus_bench.sim.metrics.charged`); the
  baseline and max-batch (at the maximum limit) are replayed on the same seeds: cost ratios are
  paired, a seed's cumulative cost over theirs on it (:func:`~zeus_bench.studies.arena_protocol.replayed_total`; the ratio to the
  baseline's expected cost is kept beside); regret is against the oracle's expected cost;
* intervals are 95 % percentile-bootstrap intervals over seeds
  (:func:`zeus_bench.sim.metrics.bootstrap_ci`), the same resampled seeds for every statistic of a
  job, so paired differences and ratios stay paired;
* ``--horizon`` says what a policy is told about the number of recurrences, ``--noise`` adds
  seeded per-try noise on time and power (:mod:`zeus_bench.sim.rules`).

Every policy's seeds of a job, under every split and fold and on every replicate trace, run in one
run of the executor (:func:`~zeus_bench.sim.replay.replay_lanes`: each policy through its face
over seeds, one face for all the job's sets of paths when it reads none, the executor's steps
shared); ``jobs`` worker processes spread the jobs.

The rooms: this module runs the arena over folds and splits and builds its tables; the protocol
and the replays are in :mod:`zeus_bench.studies.arena_protocol`, the two-stage bootstrap
statistics in :mod:`zeus_bench.studies.arena_stats`, the performance profile and the folds'
agreement in :mod:`zeus_bench.studies.arena_profile`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import pandas as pd

from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.rules import Horizon
from zeus_bench.studies.arena_profile import profile_table
from zeus_bench.studies.arena_protocol import ArenaJob, Protocol, judged_jobs, run_arena_parts
from zeus_bench.studies.arena_stats import Part, job_parts, jobs_frame, summary_table
from zeus_bench.traces.jobs import TraceSet


def _split_protocol(protocol: Protocol, split: int) -> Protocol:
    """The protocol on split ``split``: replicate traces on split 1 alone.

    Splits 2..K are the path level of the pooled rows themselves (other halves of the same paths),
    so they replay the recorded halves only.
    """
    return replace(protocol, split=split, replicates=protocol.replicates if split == 1 else 0)


@dataclass(frozen=True)
class ArenaTables:
    """The arena's three tables."""

    jobs: pd.DataFrame
    summary: pd.DataFrame
    profile: pd.DataFrame


@dataclass(frozen=True)
class ArenaRun:
    """What an arena replays, and how the work is spread: everything but the protocol.

    ``traces``: each GPU's trace set; ``workloads``: None for every workload of each GPU;
    ``jobs_n`` worker processes, each importing ``policy_modules`` (policies registered outside the
    package); ``progress`` is called after each job with the number of its (split, fold, policy) replays.
    """

    traces: dict[str, TraceSet]
    gpus: Sequence[str]
    policies: Sequence[str]
    workloads: Sequence[str] | None = None
    jobs_n: int = 1
    policy_modules: Sequence[str] = ()
    progress: Callable[[int], None] | None = None


def arena_parts(run: ArenaRun, protocol: Protocol) -> dict[tuple[str, str], Part]:
    """Run the arena on the protocol's (split, fold): each job's :class:`Part`."""
    return arena_protocols(run, [protocol])[0]


def arena_protocols(run: ArenaRun, protocols: Sequence[Protocol]) -> list[dict[tuple[str, str], Part]]:
    """:func:`arena_parts` of each protocol (its split and fold), a job's replays under all of them in one walk."""
    judged: dict[tuple[str, int, int | None], list[ArenaJob]] = {}  # (other horizons: the same halves)
    for p in protocols:
        key = (p.half, p.split, p.recurrences)
        if key not in judged:
            judged[key] = judged_jobs(run.traces, run.gpus, run.workloads, *key)
    part_jobs = [judged[(p.half, p.split, p.recurrences)] for p in protocols]
    totals = run_arena_parts(part_jobs, run.policies, protocols, run.jobs_n, run.policy_modules, run.progress)
    return [job_parts(jobs, t, p) for jobs, t, p in zip(part_jobs, totals, protocols, strict=True)]


def arena_folds(run: ArenaRun, protocol: Protocol, folds: Sequence[int], splits: int = 1) -> ArenaTables:
    """The arena on each of ``folds`` of each split 1..``splits`` (:meth:`Protocol.for_fold`).

    Rows: split 1's folds (column ``fold``), and, with more than one (split, fold), every split's
    folds pooled (``fold`` 0, ``splits`` K): the across-split spread inside the intervals.
    Replicate traces are replayed on split 1 only (:func:`_split_protocol`). A job's every (split,
    fold) is replayed in one executor walk (:func:`arena_protocols`).
    """
    return arena_horizons(run, protocol, [protocol.horizon], folds, splits)[0]


def arena_horizons(
    run: ArenaRun,
    protocol: Protocol,
    horizons: Sequence[Horizon],
    folds: Sequence[int],
    splits: int = 1,
    lengths: Sequence[int | None] | None = None,
    brief: Sequence[Horizon] = (),
) -> list[ArenaTables]:
    """:func:`arena_folds` of the protocol told each of ``horizons`` and replayed each of ``lengths`` times, in one run.

    ``lengths``: the numbers of recurrences (None: the protocol's own); the tables come per
    horizon, then per length. A job's replays under every horizon and length are one task; a
    policy that reads no horizon (:meth:`~zeus_bench.sim.policies.Policy.reads_horizon`) is
    replayed under the first horizon and the longest length alone, its draws the same under the
    other horizons and its first recurrences' under shorter lengths
    (:func:`~zeus_bench.studies.arena_protocol.parts_draws`).

    ``brief``: further horizons, judged on split 1's fold 1 alone and its recorded paths (no
    replicate trace: :meth:`Protocol.recorded_only`), their tables after the others': each the tables
    ``arena_horizons(run, protocol.recorded_only(), [h], [1], 1, lengths)`` gives, bit for bit,
    while the policies that read no horizon are not replayed again (their draws on split 1's fold
    1 are those of the first horizon, when ``folds`` holds 1).

    Raises:
        ConfigError: fewer than one split, no horizon, or a horizon or a length given twice.
    """
    if splits < 1:
        raise ConfigError(f"--splits must be at least 1, got {splits}")
    every = [*horizons, *brief]
    if not horizons or len(set(every)) < len(every):
        raise ConfigError(f"--horizon: give each horizon once, got {', '.join(map(str, every)) or 'none'}")
    ns = [protocol.recurrences] if lengths is None else list(lengths)
    if not ns or len(set(ns)) < len(ns):
        raise ConfigError(f"--recurrences: give each number once, got {', '.join(map(str, ns)) or 'none'}")
    full = [(k, f) for k in range(1, splits + 1) for f in folds]
    short = protocol.recorded_only()
    # (told protocol, its (split, fold) keys): the horizons asked for in full, then the brief ones
    runs = [(replace(protocol, horizon=h, recurrences=n), full) for h in horizons for n in ns]
    runs += [(replace(short, horizon=h, recurrences=n), [(1, 1)]) for h in brief for n in ns]
    protocols = [_split_protocol(t.for_fold(f), k) for t, keys in runs for k, f in keys]
    results = arena_protocols(run, protocols)
    out = []
    for t, keys in runs:
        parts = dict(zip(keys, results[: len(keys)], strict=True))
        del results[: len(keys)]  # (a horizon's statistics' draws go once its tables are made)
        jobs_df = jobs_frame(parts, t)
        out.append(ArenaTables(jobs_df, summary_table(jobs_df, parts), profile_table(parts)))
    return out
