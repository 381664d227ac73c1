"""``zeus-bench study``: the zeus-plus study (:mod:`zeus_bench.studies.study`), regenerated from the arena.

``zeus-bench study --arena results/policy/arena/known --traces v100=DIR --traces a40=DIR
--traces h200=DIR --seeds 1-10 --out-dir results/policy`` writes the study's six tables. With
``--arena`` the comparison (``comparison.csv``, ``curves.csv``) takes the arena's protocol from its
tables (fold 1: the judged half; the seeds, eta, beta and horizon the arena ran) and must agree
with its ``arena_jobs`` means (else one line, exit 2); ``--seeds`` is then the drift and
warm-start experiments' seeds only. Without ``--arena`` every table replays whole jobs on
``--seeds``.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from zeus_bench.cli.common import add_seeds_arg, add_workloads_arg, beta_arg, eta_arg
from zeus_bench.core.entry import add_jobs_arg, add_output_dir_arg

#: The tables ``zeus-bench study`` writes into ``--out-dir`` (CSV).
TABLES = ("comparison", "curves", "drift", "drift_curves", "warmstart", "warmstart_jobs")


#: Defaults of --drift-gpus and --warm-pairs: every GPU kind the study knows (those without --traces are left out).
DRIFT_GPUS = "v100,a40"
WARM_PAIRS = "v100:a40,a40:v100,v100:h200,a40:h200"


def register(sub: Any) -> None:
    """Add ``study``."""
    p = sub.add_parser(
        "study",
        help="the zeus-plus study: Zeus vs zeus-plus per job (from the arena), drift recovery, warm start",
        description="Zeus against zeus-plus per job (the arena's judged half when --arena is given), drift "
        "recovery and cross-GPU warm start; six CSV tables into --out-dir (docs/policies.md).",
    )
    p.add_argument(
        "--traces", action="append", required=True, metavar="GPU=DIR", help="GPU kind and its trace folder"
    )
    p.add_argument(
        "--arena",
        type=Path,
        default=None,
        metavar="DIR",
        help="arena folder (zeus-bench arena, horizon known): the comparison's protocol and its check",
    )
    add_seeds_arg(p, 10, "seeds (default 1-10; with --arena: the drift and warm-start seeds)")
    add_workloads_arg(p)
    p.add_argument("--eta", type=eta_arg, default=None, help="energy weight (default zeus_bench.core.cost's)")
    p.add_argument(
        "--beta", type=beta_arg, default=None, help="early-stop threshold (default zeus_bench.core.cost's)"
    )
    p.add_argument(
        "--drift-gpus", default=DRIFT_GPUS, help="GPUs of the drift experiment (multi-limit traces)"
    )
    p.add_argument("--warm-pairs", default=WARM_PAIRS, help="PRIOR:TARGET pairs")
    add_jobs_arg(p, "worker processes of the drift replays (default 1; the tables do not depend on it)")
    add_output_dir_arg(p, "--out-dir", "folder of the study's CSV tables (absent or empty, unless --force)")
    p.set_defaults(func=_study)


def _gpu_traces(specs: list[str]) -> dict[str, Any]:
    """``GPU=DIR`` items as ``{gpu: TraceSet}``.

    Raises:
        ConfigError: an item without ``GPU=``.
    """
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.traces.jobs import TraceSet

    sets = {}
    for item in specs:
        gpu, sep, folder = item.partition("=")
        if not sep or not gpu or not folder:
            raise ConfigError(f"--traces: {item!r} is not GPU=DIR")
        if gpu in sets:
            raise ConfigError(f"--traces: GPU {gpu!r} given twice")
        sets[gpu] = TraceSet(folder)
        if gpu not in sets[gpu].gpus:
            raise sets[gpu].unknown_gpu(gpu)
    return sets


def _gpu_names(option: str, text: str, default: str, sets: dict[str, Any]) -> list[str]:
    """The GPU kinds named by a comma-separated option, each checked against the ``--traces`` given.

    With the option's default, kinds without ``--traces`` are left out (the default names every
    GPU the study knows); a value the user gave must name only GPUs given with ``--traces``.

    Raises:
        ConfigError: a name with no ``--traces`` (with the nearest given ones).
    """
    from zeus_bench.cli.configcheck import nearest
    from zeus_bench.core.errors import ConfigError

    names = [s.strip() for s in text.split(",") if s.strip()]
    if text == default:
        return [n for n in names if n in sets]
    for name in names:
        if name not in sets:
            raise ConfigError(
                f"{option}: GPU {name!r} has no --traces {name}=DIR{nearest(name, sorted(sets))} "
                f"(given: {', '.join(sorted(sets))})"
            )
    return names


def _warm_pairs(text: str, sets: dict[str, Any]) -> list[tuple[str, str]]:
    """``--warm-pairs`` as (prior, target) GPU pairs, each GPU checked as :func:`_gpu_names`.

    Raises:
        ConfigError: an item not ``PRIOR:TARGET``, a pair of one GPU, or a GPU without ``--traces``.
    """
    from zeus_bench.core.errors import ConfigError

    pairs = []
    for item in (s.strip() for s in text.split(",") if s.strip()):
        prior, sep, target = item.partition(":")
        if not sep or not prior or not target or prior == target:
            raise ConfigError(f"--warm-pairs: {item!r} is not PRIOR:TARGET of two GPU kinds")
        pairs.append((prior, target))
    if text == WARM_PAIRS:
        return [(a, b) for a, b in pairs if a in sets and b in sets]
    _gpu_names("--warm-pairs", ",".join(g for pair in pairs for g in pair), "", sets)
    return pairs


def _arena_protocol(folder: Path, eta: float | None, beta: float | None) -> Any:
    """The arena's fold-1 protocol (from its tables' provenance) and its ``arena_jobs`` table.

    Raises:
        ConfigError: a missing table, or an eta/beta/horizon other than the arena's.
    """
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.sim.rules import check_horizon
    from zeus_bench.store import read_metadata, read_table
    from zeus_bench.studies.arena_protocol import Protocol

    path = folder / "arena_jobs.parquet"
    if not path.is_file():
        raise ConfigError(f"--arena: {path} does not exist (run zeus-bench arena first)")
    jobs = read_table(path, "arena_jobs")
    meta = read_metadata(path)
    for name, given in (("eta", eta), ("beta", beta)):
        if given is not None and float(given) != float(meta[name]):
            raise ConfigError(f"--{name} {given} differs from the arena's ({meta[name]}, {path})")
    if 1 not in set(jobs["fold"]):
        raise ConfigError(f"--arena: {path} has no fold-1 rows")
    protocol = Protocol(
        tuple(int(s) for s in meta["seeds"]),
        float(meta["eta"]),
        float(meta["beta"]),
        check_horizon(meta["horizon"], f"--arena: {path}'s horizon:"),
    ).for_fold(1)
    if float(meta.get("noise", 0.0)) != 0.0:
        raise ConfigError(f"--arena: {path} ran with noise {meta['noise']}; the study's comparison has none")
    return protocol, jobs


def _study(args: argparse.Namespace) -> int:
    import logging

    import pandas as pd

    from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA, Cost
    from zeus_bench.core.entry import check_tries
    from zeus_bench.core.fsutil import check_output_dir, output_dir
    from zeus_bench.sim.replay import default_recurrences
    from zeus_bench.store import validate
    from zeus_bench.studies import study
    from zeus_bench.studies.arena_protocol import judged_jobs
    from zeus_bench.studies.warmjobs import WarmCosts, jobs_table, write_jobs_table

    log = logging.getLogger("zeus_bench.cli.study")
    out = check_output_dir(args.out_dir, args.force, "--out-dir")
    sets = _gpu_traces(args.traces)
    wanted = None if args.workloads == "all" else {w.strip() for w in args.workloads.split(",") if w.strip()}
    whole = {
        g: [ts.job(g, w) for w in ts.workload_ids(g) if wanted is None or w in wanted]
        for g, ts in sets.items()
    }
    n_jobs = sum(len(jobs) for jobs in whole.values())
    check_tries(
        len(args.seeds) * 2 * sum(default_recurrences(j) for jobs in whole.values() for j in jobs),
        f"{len(args.seeds)} seed(s) x 2 policies x {n_jobs} job(s) x their recurrences",
    )
    cost = Cost(DEFAULT_ETA if args.eta is None else args.eta)
    beta = DEFAULT_BETA if args.beta is None else args.beta
    tables: dict[str, pd.DataFrame] = {}
    runs: study.Runs = {}
    if args.arena is not None:
        protocol, arena_jobs = _arena_protocol(args.arena, args.eta, args.beta)
        cost, beta = Cost(protocol.eta), protocol.beta
        judged = {
            g: judged_jobs(sets, [g], None if wanted is None else sorted(wanted), protocol.half) for g in sets
        }
        tables["comparison"], tables["curves"] = study.compare(judged, protocol.seeds, protocol=protocol)
        study.check_against_arena(tables["comparison"], arena_jobs, str(args.arena))
        log.info(
            "comparison: the arena's fold 1 (%s half, %d seeds), every mean equal",
            protocol.half,
            len(protocol.seeds),
        )
    else:
        tables["comparison"], tables["curves"] = study.compare(whole, args.seeds, cost, beta, runs)
    pairs = _warm_pairs(args.warm_pairs, sets)
    drift_gpus = _gpu_names("--drift-gpus", args.drift_gpus, DRIFT_GPUS, sets)
    tables["drift"], tables["drift_curves"] = study.drift_study(
        {g: whole[g] for g in drift_gpus}, args.seeds, cost, beta, args.jobs
    )
    warm_runs: dict[tuple[str, str, str], WarmCosts] = {}
    tables["warmstart"] = study.warmstart_study(sets, pairs, args.seeds, cost, beta, wanted, runs, warm_runs)
    warm_jobs = jobs_table(warm_runs)
    for name, df in tables.items():  # each table is its kind, policy_<name> (studies/study_schema.py)
        validate(df, f"policy_{name}", str(out / f"{name}.csv"))
    with output_dir(out, args.force, {f"{t}.csv" for t in TABLES}.__contains__, "--out-dir") as tmp:
        for name, df in tables.items():
            df.to_csv(tmp / f"{name}.csv", index=False, lineterminator="\n", float_format="%.6g")
            log.info("wrote %s (%d rows)", out / f"{name}.csv", len(df))
        write_jobs_table(warm_jobs, tmp / "warmstart_jobs.csv")
        log.info("wrote %s (%d rows)", out / "warmstart_jobs.csv", len(warm_jobs))
    return 0
