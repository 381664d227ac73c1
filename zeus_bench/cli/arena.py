"""``zeus-bench arena``: every policy under one protocol, with intervals and paired tests."""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any

from zeus_bench.cli.common import (
    MAX_RECURRENCES,
    MAX_SEEDS,
    add_format_arg,
    add_int_option,
    add_policy_module_arg,
    add_seeds_arg,
    add_workloads_arg,
    beta_arg,
    eta_arg,
)
from zeus_bench.core.entry import add_jobs_arg, add_output_dir_arg, bounded_int_arg

#: Bound of --jobs (worker processes).
#: Bound of --splits and --replicates.
MAX_SPLITS = 100
#: The three tables the arena writes into --out.
TABLES = ("arena_jobs", "arena_summary", "arena_profile")
#: Columns of the ranked answer the command prints.
ANSWER = ("gpu", "rank", "policy", "regret_pct", "x_zeus", "p_better", "unsafe", "horizon", "label")


def register(sub: Any) -> None:
    """Add ``arena``."""
    from zeus_bench.cli.sim_args import add_protocol_args, list_of

    p = sub.add_parser(
        "arena",
        help="compare policies under one protocol: bootstrap intervals, paired differences vs Zeus",
        description="Replay policies on the judged half of the training paths (docs/policies.md, "
        "'The arena protocol'), write DIR/arena_jobs.parquet, DIR/arena_summary.parquet and "
        "DIR/arena_profile.parquet, and print the ranked answer per GPU (every split pooled when there are "
        "several: regret against the oracle [95 % interval], its ratio to Zeus's [interval], the mean "
        "probability of a cheaper replay than Zeus's, jobs over the safety goal, the horizon told).",
    )
    p.add_argument(
        "--traces",
        action="append",
        required=True,
        metavar="[GPU=]DIR",
        help="folder of imported traces; repeatable (GPU=DIR: that folder for that GPU only)",
    )
    p.add_argument("--gpu", type=list_of(str), required=True, metavar="GPU[,GPU...]", help="GPU kind(s)")
    add_workloads_arg(p)
    p.add_argument(
        "--policies",
        default="all",
        help="'all' (default: every registered policy but baseline, max-batch and oracle) or a "
        "comma-separated list; zeus is always added (the pairing)",
    )
    add_policy_module_arg(p, "import a module of policies")
    add_seeds_arg(p, 50, "seeds (default 1-50)")
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
    add_int_option(
        p,
        "--splits",
        (1, MAX_SPLITS),
        1,
        "splits of the paths (default 1: the even/odd split; 2..K shuffle each batch size's paths, "
        "seeded); K > 1 adds rows of every split's folds pooled (fold 0)",
        metavar="K",
    )
    add_int_option(
        p,
        "--replicates",
        (0, MAX_SPLITS),
        0,
        "replicate traces per split and fold (paths redrawn with replacement): the path level of the "
        "intervals (default 0: seeds alone)",
        metavar="R",
    )
    add_int_option(
        p,
        "--replicate-seeds",
        (1, MAX_SEEDS),
        1,
        "seeds replayed on each replicate trace: the first S of --seeds (default 1)",
        metavar="S",
    )
    p.add_argument(
        "--path-draw",
        type=_path_draw,
        default="pick",
        metavar="pick|normal|t",
        help="how an interval's draw shifts by the path level: one replicate's deviation (pick, the "
        "default), a Gaussian (normal) or Student-t (t) draw with the replicates' covariance "
        "(docs/policies.md, 'Coverage study')",
    )
    p.add_argument(
        "--recurrences",
        type=_lengths,
        default=None,
        metavar="N[,N...]",
        help="recurrences of every job (default: 2 x |B| x |P| of the whole job); several, comma-separated, "
        "in one run (200,100,50): a policy that reads no horizon is replayed once, the longest, and --out "
        "names each one's folder with {recurrences}",
    )
    add_protocol_args(
        p,
        "several, comma-separated, in one run (known,unknown): a policy that reads no horizon is "
        "replayed once for all, and --out names each horizon's folder with {horizon}",
    )
    p.add_argument(
        "--brief-horizon",
        default=None,
        metavar="H[,H...]",
        help="further horizons (e.g. 0.5x,2x: misspecified) judged on split 1's fold 1 alone, on its "
        "recorded paths (no replicate trace), in the same run: each horizon's tables as "
        "'--horizon H --fold 1' alone writes them, the policies that read no horizon not replayed again "
        "(--out needs {horizon})",
    )
    add_format_arg(p, out=False)
    add_jobs_arg(p)
    add_output_dir_arg(
        p,
        "--out",
        "folder of the three tables (absent or empty, unless --force); {horizon} in it stands for the "
        "horizon told (needed with several)",
    )
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


def _path_draw(text: str) -> str:
    """Parse ``--path-draw`` (an argparse type): :func:`~zeus_bench.sim.two_stage.check_path_draw`."""
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.sim.two_stage import check_path_draw

    try:
        return check_path_draw(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _horizons(text: str, option: str = "--horizon") -> list[Any]:
    """``--horizon``'s horizons (comma-separated; ``option``: the option they came from), each checked, none twice.

    Raises:
        ConfigError: an unknown horizon, none, or one given twice.
    """
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.sim.rules import check_horizon

    horizons = [check_horizon(h.strip(), option) for h in str(text).split(",") if h.strip()]
    if not horizons:
        raise ConfigError(f"{option}: no horizon in {text!r}")
    if len(set(horizons)) < len(horizons):
        raise ConfigError(f"{option} {text}: a horizon given twice")
    return horizons


def _lengths(text: str) -> list[int]:
    """``--recurrences``' numbers (comma-separated), each in [1, MAX_RECURRENCES], none twice."""
    kind = bounded_int_arg(1, MAX_RECURRENCES, "--recurrences")
    ns = [kind(t.strip()) for t in str(text).split(",") if t.strip()]
    if not ns:
        raise argparse.ArgumentTypeError(f"no number in {text!r}")
    if len(set(ns)) < len(ns):
        raise argparse.ArgumentTypeError(f"a number given twice in {text!r}")
    return [int(n) for n in ns if n is not None]


def _outs(out: Any, horizons: list[Any], lengths: list[int | None] | None = None) -> list[Any]:
    """Each (horizon, length)'s folder: ``--out`` with ``{horizon}`` and ``{recurrences}`` replaced.

    Per horizon, then per length (``lengths``: the numbers of recurrences; None: one, the default).

    Raises:
        ConfigError: several horizons and no ``{horizon}`` in ``--out``, or several lengths and no
            ``{recurrences}``.
    """
    from pathlib import Path

    from zeus_bench.core.errors import ConfigError

    text, ns = str(out), [None] if lengths is None else lengths
    for many, name, example in (
        (horizons, "horizon", "results/arena/{horizon}"), (ns, "recurrences", "results/arena/n{recurrences}")
    ):  # fmt: skip
        if len(many) > 1 and f"{{{name}}}" not in text:
            what = "horizons" if name == "horizon" else "numbers of recurrences"
            raise ConfigError(
                f"--out {text}: with several {what} ({', '.join(map(str, many))}) it must hold "
                f"{{{name}}}, e.g. {example}"
            )
    return [
        Path(text.replace("{horizon}", str(h)).replace("{recurrences}", "default" if n is None else str(n)))
        for h in horizons
        for n in ns
    ]


def _overrides(items: list[str], horizon: Any = "known") -> dict[str, dict[str, Any]]:
    """``POLICY.CONSTANT=VALUE`` items as ``{policy: {constant: value}}`` (values as JSON, else text).

    ``horizon``: the horizon told, or several (comma-separated).

    Raises:
        ConfigError: an item not of that form, an unknown policy, a constant it does not have, a
            value not of the constant's type, a constant given twice, or one the policy does not
            read under any ``--horizon`` given (:meth:`~zeus_bench.sim.policies.Policy.inert_constants`).
    """
    from zeus_bench.sim.rules import UNKNOWN

    knowns = {h != UNKNOWN for h in _horizons(horizon)}
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
        if all(name in cls.inert_constants(known) for known in knowns):
            raise ConfigError(
                f"--set {item}: {policy} does not read {name} under --horizon {horizon} (it would change nothing)"
            )
    return out


def _policies(args: argparse.Namespace) -> list[str]:
    """The policies asked for (``--policy-module`` imported first), each checked to be registered."""
    from zeus_bench.sim.policies.base import get_policy, load_policy_module
    from zeus_bench.studies.arena_protocol import default_policies

    for module in args.policy_module:
        load_policy_module(module)
    policies = (
        default_policies()
        if args.policies == "all"
        else list(dict.fromkeys(s.strip() for s in args.policies.split(",") if s.strip()))
    )
    for name in policies:
        get_policy(name)
    return policies


def _protocol(args: argparse.Namespace, traces: dict[str, Any]) -> Any:
    """The arena's :class:`~zeus_bench.studies.arena_protocol.Protocol` from the options."""
    from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.sim.noise import resolve_noise
    from zeus_bench.studies.arena_protocol import Protocol, frozen_constants

    if args.replicate_seeds > len(args.seeds):
        raise ConfigError(
            f"--replicate-seeds {args.replicate_seeds} exceeds the {len(args.seeds)} seeds given"
        )
    return Protocol(
        tuple(args.seeds),
        DEFAULT_ETA if args.eta is None else args.eta,
        DEFAULT_BETA if args.beta is None else args.beta,
        _horizons(args.horizon)[0],
        resolve_noise(args.noise, [traces[g].power(g) for g in args.gpu] if args.noise == "trace" else []),
        constants=frozen_constants(
            _overrides(args.set, ",".join(filter(None, (args.horizon, args.brief_horizon))))
        ),
        replicates=args.replicates,
        replicate_seeds=args.replicate_seeds,
        recurrences=None if args.recurrences is None else args.recurrences[0],
        path_draw=args.path_draw,
    )


def _progress(stack: Any, run: Any, tasks: int, log: Any) -> Any:
    """A bar on a terminal, else a line now and then with the time left (a log file or a pipe).

    ``tasks``: the (horizon, length, split, fold) replays of every job.
    """
    import sys

    from zeus_bench.studies.arena_protocol import COMPARATOR, PAIRED

    if sys.stderr.isatty():
        from tqdm import tqdm

        return stack.enter_context(tqdm(unit="task", desc="arena", leave=False)).update
    from zeus_bench.core.progress import Progress

    per_fold = sum(
        len(run.traces[g].workload_ids(g) if run.workloads is None else run.workloads) for g in run.gpus
    ) * len({COMPARATOR, *run.policies, *PAIRED})
    return Progress("arena (GPU, workload, policy) replays", tasks * per_fold, logger=log).done


def _provenance(
    args: argparse.Namespace, protocol: Any, run: Any, tables: Any, folds: list[int], splits: int
) -> dict[str, Any]:
    """The provenance stored with the three tables (``folds`` and ``splits``: those they judge)."""
    from zeus_bench.sim.two_stage import two_stage_method

    return {
        "command": "arena",
        "traces": args.traces,
        "gpus": args.gpu,
        "policies": sorted(set(tables.jobs["policy"])),
        "seeds": list(protocol.seeds),
        "eta": protocol.eta,
        "beta": protocol.beta,
        "horizon": str(protocol.horizon),
        "noise": protocol.noise,
        "folds": folds,
        "splits": splits,
        "replicates": protocol.replicates,
        "replicate_seeds": list(protocol.seeds[: protocol.replicate_seeds]),
        "recurrences": protocol.recurrences,
        "interval_method": two_stage_method(protocol.path_draw)
        if protocol.replicates >= 2
        else "percentile bootstrap over seeds",
        "labels": {g: _label(run.traces[g], g) for g in args.gpu},
        "set": args.set,
        "fold_constants": {f: protocol.for_fold(f).constants for f in folds},
    }


def _arena(args: argparse.Namespace) -> int:
    import contextlib
    import logging
    import time

    import pandas as pd

    from zeus_bench.cli.common import emit, render
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.core.fsutil import check_output_dir, output_dir
    from zeus_bench.store import write_table
    from zeus_bench.studies.arena import ArenaRun, arena_horizons
    from zeus_bench.studies.arena_profile import fold_agreement

    log = logging.getLogger("zeus_bench.cli.arena")
    horizons = _horizons(args.horizon)
    brief = [] if args.brief_horizon is None else _horizons(args.brief_horizon, "--brief-horizon")
    if set(brief) & set(horizons):
        twice = ", ".join(str(h) for h in brief if h in horizons)
        raise ConfigError(f"--brief-horizon {args.brief_horizon}: {twice} also in --horizon {args.horizon}")
    lengths: list[int | None] = [None] if args.recurrences is None else list(args.recurrences)
    outs = [check_output_dir(o, args.force, "--out") for o in _outs(args.out, [*horizons, *brief], lengths)]
    if len(set(outs)) < len(outs):
        raise ConfigError(f"--out {args.out}: the runs' folders coincide ({', '.join(map(str, outs))})")
    policies = _policies(args)
    traces = _trace_sets(args.traces, args.gpu)
    workloads = (
        None if args.workloads == "all" else [s.strip() for s in args.workloads.split(",") if s.strip()]
    )
    protocol = _protocol(args, traces)
    folds = [1, 2] if args.fold == "both" else [int(args.fold)]
    run = ArenaRun(traces, args.gpu, policies, workloads, args.jobs, args.policy_module)
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        tasks = len(lengths) * (len(horizons) * len(folds) * args.splits + len(brief))
        run = replace(run, progress=_progress(stack, run, tasks, log))
        all_tables = arena_horizons(run, protocol, horizons, folds, args.splits, lengths, brief)
    elapsed = time.perf_counter() - start
    answers = []
    # (horizon, length, its protocol, folds, splits): the horizons in full, then the brief ones
    runs = [(h, n, protocol, folds, args.splits) for h in horizons for n in lengths]
    runs += [(h, n, protocol.recorded_only(), [1], 1) for h in brief for n in lengths]
    for (horizon, length, base, its_folds, splits), out, tables in zip(runs, outs, all_tables, strict=True):
        told = replace(base, horizon=horizon, recurrences=length)
        jobs_df, summary = tables.jobs, tables.summary
        provenance = _provenance(args, told, run, tables, its_folds, splits)
        with output_dir(out, args.force, {f"{t}.parquet" for t in TABLES}.__contains__, "--out") as tmp:
            write_table(jobs_df, tmp / "arena_jobs.parquet", "arena_jobs", provenance)
            write_table(summary, tmp / "arena_summary.parquet", "arena_summary", provenance)
            write_table(tables.profile, tmp / "arena_profile.parquet", "arena_profile", provenance)
        log.info(
            "arena: %d policies x %d jobs x %d seeds (+ %d replicate traces) x %d fold(s) x %d split(s)%s in %.2f s -> %s",
            summary["policy"].nunique(), len(jobs_df[["gpu", "workload"]].drop_duplicates()), len(protocol.seeds),
            told.replicates, len(its_folds), splits,
            _which(horizon, length, len(horizons) + len(brief), len(lengths)), elapsed, out,
        )  # fmt: skip
        if {1, 2} <= set(its_folds):
            for column in ("regret_ratio_vs_zeus", "regret_pct"):
                agree = fold_agreement(summary, column)
                log.info(
                    "folds 1 and 2: 95 %% intervals of %s disjoint on %d of %d (gpu, policy) pairs without fold "
                    "constants", column, len(agree.disjoint), len(agree.pairs),
                )  # fmt: skip
        answers.append(answer(summary, provenance["labels"]))
    emit(render(pd.concat(answers, ignore_index=True), args.format), None)
    return 0


def _which(horizon: Any, length: int | None, horizons: int, lengths: int) -> str:
    """``, horizon H, recurrences N (one of K in one run)``: what tells one of several runs apart (empty: one run)."""
    told = [f"horizon {horizon}"] * (horizons > 1) + [f"recurrences {length}"] * (lengths > 1)
    return f", {', '.join(told)} (one of {horizons * lengths} in one run)" if told else ""


def _label(ts: Any, gpu: str) -> str:
    """``projected`` for a GPU whose power trace the project measured, else ``simulated``.

    A power trace written by ``zeus-bench sweep`` pairs the Zeus training paths with the project's
    own epoch times (a projection); any other is a replay of the published traces.
    """
    from zeus_bench.store import read_metadata

    try:
        source = str(read_metadata(ts._power_path(gpu)).get("source", ""))
    except Exception:
        return "simulated"
    return "projected" if source.startswith("zeus-bench sweep") else "simulated"


def answer(summary: Any, labels: dict[str, str] | None = None) -> Any:
    """The ranked answer per GPU: every split pooled when present (fold 0), else each fold's rows.

    Columns :data:`ANSWER`: regret against the oracle and its ratio to Zeus's, each ``mean [lo, hi]``,
    the mean probability of a replay cheaper than Zeus's, the jobs whose p95 cost ratio exceeds 1.02 (unsafe),
    the horizon told, and the label (simulated; projected for a GPU measured by the project).
    """
    import pandas as pd

    pooled = summary[summary["fold"] == 0]
    rows = pooled if len(pooled) else summary
    rows = rows.sort_values(["gpu", "fold", "rank", "policy"], kind="stable")
    labels = labels or {}

    def interval(r: Any, name: str, lo: str, hi: str, big: float) -> str:
        """``mean [lo, hi]``, one decimal fewer from ``big`` on (the table stays within 100 columns)."""
        digits = 1 if abs(r[name]) < big else 0
        if big < 100:  # the ratio: two decimals below 10
            digits += 1
        fmt = f"{{:.{digits}f}}"
        if pd.isna(r[lo]):
            return fmt.format(r[name])
        return f"{fmt.format(r[name])} [{fmt.format(r[lo])}, {fmt.format(r[hi])}]"

    out = pd.DataFrame(
        {
            "gpu": rows["gpu"] + rows["fold"].map(lambda f: "" if f == 0 else f" f{f}"),
            "rank": rows["rank"],
            "policy": rows["policy"],
            "regret_pct": [interval(r, "regret_pct_mean", "regret_pct_ci_lo", "regret_pct_ci_hi", 100.0)
                           for _, r in rows.iterrows()],
            "x_zeus": [interval(r, "regret_ratio_vs_zeus", "regret_ratio_vs_zeus_ci_lo", "regret_ratio_vs_zeus_ci_hi",
                                10.0) for _, r in rows.iterrows()],
            "p_better": rows["prob_better_than_zeus_mean"].round(2),
            "unsafe": rows["jobs_p95_over_safe"],
            "horizon": rows["horizon"],
            "label": rows["gpu"].map(lambda g: labels.get(g, "simulated")),
        }
    )  # fmt: skip
    return out[list(ANSWER)].reset_index(drop=True)
