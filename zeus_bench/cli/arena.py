"""``zeus-bench arena``: every policy under one protocol, with intervals and paired tests."""

from __future__ import annotations

import argparse
from typing import Any

from zeus_bench.cli.common import add_workloads_arg, beta_arg, bounded_int_arg, eta_arg, int_range_arg
from zeus_bench.core.entry import add_output_dir_arg

#: Bound of --jobs (worker processes).
MAX_JOBS = 1024
#: The two tables the arena writes into --out.
TABLES = ("arena_jobs", "arena_summary")


def register(sub: Any) -> None:
    """Add ``arena``."""
    from zeus_bench.cli.sim import _list_of, add_protocol_args

    p = sub.add_parser(
        "arena",
        help="compare policies under one protocol: bootstrap intervals, paired differences vs Zeus",
        description="Replay policies on the judged half of the training paths (docs/policies.md, "
        "'The arena protocol') and write DIR/arena_jobs.parquet and DIR/arena_summary.parquet.",
    )
    p.add_argument(
        "--traces",
        action="append",
        required=True,
        metavar="[GPU=]DIR",
        help="folder of imported traces; repeatable (GPU=DIR: that folder for that GPU only)",
    )
    p.add_argument("--gpu", type=_list_of(str), required=True, metavar="GPU[,GPU...]", help="GPU kind(s)")
    add_workloads_arg(p)
    p.add_argument(
        "--policies",
        default="all",
        help="'all' (default: every registered policy but baseline, max-batch and oracle) or a "
        "comma-separated list; zeus is always added (the pairing)",
    )
    p.add_argument(
        "--policy-module", action="append", default=[], metavar="MODULE", help="import a module of policies"
    )
    p.add_argument("--seeds", type=int_range_arg, default=list(range(1, 51)), help="seeds (default 1-50)")
    p.add_argument(
        "--eta", type=eta_arg, default=None, help="energy weight (default: zeus_bench.core.cost's, 0.5)"
    )
    p.add_argument("--beta", type=beta_arg, default=None, help="early-stop threshold (default 2)")
    p.add_argument(
        "--fold",
        choices=("1", "2", "both"),
        default="1",
        help="cross-fitting fold(s) (default 1): 1 judges the judge half with the defaults (chosen on "
        "the tune half), 2 the tune half with the constants chosen on the judge half, both: the two "
        "stacked (column fold)",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="POLICY.CONSTANT=VALUE",
        help="override a policy's constant (class attribute) in every fold, e.g. zeus-plus.horizon=20; "
        "repeatable (a what-if: constants chosen on the judged half are not cross-fitted)",
    )
    add_protocol_args(p)
    p.add_argument(
        "--jobs", type=bounded_int_arg(1, MAX_JOBS, "--jobs"), default=1, metavar="N", help="worker processes"
    )
    add_output_dir_arg(p, "--out", "folder of the two tables (absent or empty, unless --force)")
    p.set_defaults(func=_arena)


def _trace_sets(specs: list[str], gpus: list[str]) -> dict[str, Any]:
    """Each GPU's TraceSet: its ``GPU=DIR`` folder, else the first plain folder that has it."""
    from zeus_bench.traces.jobs import TraceSet

    named: dict[str, TraceSet] = {}
    plain: list[TraceSet] = []
    for spec in specs:
        gpu, sep, folder = spec.partition("=")
        if sep and gpu and "/" not in gpu:
            named[gpu] = TraceSet(folder)
        else:
            plain.append(TraceSet(spec))
    out = {}
    for gpu in gpus:
        if gpu in named:
            out[gpu] = named[gpu]
            continue
        for ts in plain:
            if gpu in ts.gpus:
                out[gpu] = ts
                break
        else:
            first = named.get(gpu) or (plain[0] if plain else next(iter(named.values())))
            raise first.unknown_gpu(gpu)
    return out


def _overrides(items: list[str], horizon: Any = "known") -> dict[str, dict[str, Any]]:
    """``POLICY.CONSTANT=VALUE`` items as ``{policy: {constant: value}}`` (values as JSON, else text).

    Raises:
        ConfigError: an item not of that form, an unknown policy, a constant it does not have, a
            value not of the constant's type, a constant given twice, or one the policy does not
            read under ``--horizon`` (:meth:`~zeus_bench.sim.policies.Policy.inert_constants`).
    """
    from zeus_bench.sim.rules import UNKNOWN, check_horizon

    known = check_horizon(horizon) != UNKNOWN
    import json

    from zeus_bench.core.errors import ConfigError
    from zeus_bench.studies.crossfit import variant

    out: dict[str, dict[str, Any]] = {}
    for item in items:
        key, sep, text = item.partition("=")
        policy, dot, name = key.rpartition(".")
        if not sep or not dot or not policy or not name:
            raise ConfigError(f"--set: {item!r} is not POLICY.CONSTANT=VALUE")
        try:
            value = json.loads(text)
        except ValueError:
            value = text
        if name in out.get(policy, {}):
            raise ConfigError(f"--set: {policy}.{name} given twice")
        out.setdefault(policy, {})[name] = value
        cls = variant(policy, out[policy])  # unknown policy or constant, a mistyped value: one line
        if name in cls.inert_constants(known):
            raise ConfigError(
                f"--set {item}: {policy} does not read {name} under --horizon {horizon} (it would change nothing)"
            )
    return out


def _arena(args: argparse.Namespace) -> int:
    import contextlib
    import logging
    import sys
    import time

    from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA
    from zeus_bench.core.fsutil import check_output_dir, output_dir
    from zeus_bench.sim.noise import resolve_noise
    from zeus_bench.sim.policies.base import get_policy, load_policy_module
    from zeus_bench.sim.rules import check_horizon
    from zeus_bench.store import write_table
    from zeus_bench.studies.arena import COMPARATOR, Protocol, arena_folds, default_policies, frozen_constants

    log = logging.getLogger("zeus_bench.cli.arena")
    out = check_output_dir(args.out, args.force, "--out")
    for module in args.policy_module:
        load_policy_module(module)
    policies = (
        default_policies()
        if args.policies == "all"
        else list(dict.fromkeys(s.strip() for s in args.policies.split(",") if s.strip()))
    )
    for name in policies:
        get_policy(name)
    traces = _trace_sets(args.traces, args.gpu)
    workloads = (
        None if args.workloads == "all" else [s.strip() for s in args.workloads.split(",") if s.strip()]
    )
    protocol = Protocol(
        tuple(args.seeds),
        DEFAULT_ETA if args.eta is None else args.eta,
        DEFAULT_BETA if args.beta is None else args.beta,
        check_horizon(args.horizon),
        resolve_noise(args.noise, [traces[g].power(g) for g in args.gpu] if args.noise == "trace" else []),
        constants=frozen_constants(_overrides(args.set, args.horizon)),
    )
    folds = [1, 2] if args.fold == "both" else [int(args.fold)]
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        progress = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            bar = stack.enter_context(tqdm(unit="task", desc="arena", leave=False))
            progress = bar.update
        else:  # a log file or a pipe: a line now and then, with the time left
            from zeus_bench.core.progress import Progress

            per_fold = sum(
                len(traces[g].workload_ids(g) if workloads is None else workloads) for g in args.gpu
            ) * len({COMPARATOR, *policies})
            progress = Progress(
                "arena (GPU, workload, policy) replays", len(folds) * per_fold, logger=log
            ).done
        jobs_df, summary = arena_folds(
            traces, args.gpu, policies, protocol, folds, workloads, args.jobs, args.policy_module, progress
        )
    provenance = {
        "command": "arena",
        "traces": args.traces,
        "gpus": args.gpu,
        "policies": sorted(set(jobs_df["policy"])),
        "seeds": list(protocol.seeds),
        "eta": protocol.eta,
        "beta": protocol.beta,
        "horizon": str(protocol.horizon),
        "noise": protocol.noise,
        "folds": folds,
        "set": args.set,
        "fold_constants": {f: protocol.for_fold(f).constants for f in folds},
    }
    with output_dir(out, args.force, {f"{t}.parquet" for t in TABLES}.__contains__, "--out") as tmp:
        write_table(jobs_df, tmp / "arena_jobs.parquet", "arena_jobs", provenance)
        write_table(summary, tmp / "arena_summary.parquet", "arena_summary", provenance)
    log.info(
        "arena: %d policies x %d jobs x %d seeds x %d fold(s) in %.2f s -> %s",
        summary["policy"].nunique(), len(jobs_df) // max(1, summary["policy"].nunique() * len(folds)),
        len(protocol.seeds), len(folds), time.perf_counter() - start, out,
    )  # fmt: skip
    return 0
