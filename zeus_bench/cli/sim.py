"""``zeus-bench simulate``, ``zeus-bench summarize`` and ``zeus-bench synth-arrivals``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeus_bench.cli.common import (
    MAX_RECURRENCES,
    beta_arg,
    bounded_int_arg,
    check_out,
    emit,
    eta_arg,
    int_range_arg,
    render,
)

if TYPE_CHECKING:  # pandas is imported by the handlers, not at start-up
    import pandas as pd

#: Output suffixes of the tables simulate, summarize and synth-arrivals write.
TABLE_SUFFIXES = (".parquet", ".csv")
#: Bound of --jobs (worker processes).
MAX_JOBS = 1024
#: Bound of synth-arrivals' --groups and --jobs-per-group, and of their product (rows written).
MAX_SUBMISSIONS = 1_000_000


#: Bound of --prune-rounds (each round tries every surviving batch size at least once).
MAX_PRUNE_ROUNDS = 100


def _finite_arg(what: str, minimum: float | None = None) -> Any:
    """Argparse type: a finite float (``>= minimum`` when given)."""

    def parse(text: str) -> float:
        import math

        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not math.isfinite(value) or (minimum is not None and value < minimum):
            bound = "" if minimum is None else f" >= {minimum:g}"
            raise argparse.ArgumentTypeError(f"{what} must be a finite number{bound}, got {text!r}")
        return value

    return parse


def _list_of(item: Any) -> Any:
    """Argparse type: comma-separated values, each parsed by ``item``."""

    def parse(text: str) -> list[Any]:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"empty list {text!r}")
        return [item(p) for p in parts]

    return parse


def add_protocol_args(p: argparse.ArgumentParser) -> None:
    """``--horizon`` and ``--noise`` (``simulate`` and ``arena``; checked by the grid's plan)."""
    p.add_argument(
        "--horizon",
        default="known",
        metavar="known|unknown|N",
        help="recurrences the policy is told: known (default: the replay's true number), unknown "
        "(the policy's own online default) or N",
    )
    p.add_argument(
        "--noise",
        default=0.0,
        metavar="LEVEL",
        help="seeded per-try noise on time and power: relative std in [0, 0.1] (default 0; docs/policies.md)",
    )


class _PolicyHelp(argparse.HelpFormatter):
    """Help of ``simulate``: ``--policies`` lists the registered policies (imported only for --help)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if "--policies" in action.option_strings:
            from zeus_bench.sim.policies import POLICIES

            text = f"{text}; registered: {', '.join(POLICIES)}"
        return text


def register(sub: Any) -> None:
    """Add ``simulate``, ``summarize`` and ``synth-arrivals``."""
    p = sub.add_parser(
        "simulate",
        help="replay recurring jobs on the traces under policies; one row per try",
        description="Replay recurring training jobs on recorded traces under energy-optimization "
        "policies (docs/policies.md). Writes a 'runs' Parquet table, one row per try.",
        formatter_class=_PolicyHelp,
    )
    p.add_argument("--traces", type=Path, required=True, metavar="DIR", help="folder of imported traces")
    p.add_argument(
        "--gpu",
        type=_list_of(str),
        required=True,
        metavar="GPU[,GPU...]",
        help="GPU kind(s) (power-<gpu>.parquet in DIR)",
    )
    p.add_argument("--workloads", default="all", help="'all' (default) or comma-separated workload ids")
    p.add_argument(
        "--workloads-file", type=Path, default=None, help="YAML file of extra/overriding workloads"
    )
    p.add_argument("--policies", default="all", help="'all' (default) or comma-separated policy names")
    p.add_argument(
        "--policy-module",
        action="append",
        default=[],
        metavar="MODULE",
        help="import a module (dotted name or .py file) that registers extra policies; repeatable",
    )
    p.add_argument(
        "--seeds",
        type=int_range_arg,
        default=list(range(1, 11)),
        help="seeds, e.g. 1-10 (default) or 1,4,7-9",
    )
    p.add_argument(
        "--eta",
        type=_list_of(eta_arg),
        default=[0.5],
        help="energy weight(s) in [0, 1], comma-separated (default 0.5)",
    )
    p.add_argument(
        "--beta",
        type=_list_of(beta_arg),
        default=[2.0],
        help="early-stop threshold(s) > 0, 'inf' = off (default 2.0)",
    )
    p.add_argument(
        "--recurrences",
        type=bounded_int_arg(1, MAX_RECURRENCES, "recurrences", auto=True),
        default=None,
        metavar="auto|N",
        help="recurrences per job (default auto: 2 x |B| x |P|)",
    )
    p.add_argument(
        "--window",
        type=bounded_int_arg(0, MAX_RECURRENCES, "window"),
        default=0,
        metavar="N",
        help="bandit observation window for drift (0 = unbounded, default; 1 is refused: every choice "
        "would be random)",
    )
    p.add_argument(
        "--prior-mean",
        type=_finite_arg("--prior-mean"),
        default=0.0,
        metavar="J",
        help="mean of the batch-size optimizer's Gaussian prior per arm, as a reward (-cost, J; default 0)",
    )
    p.add_argument(
        "--prior-precision",
        type=_finite_arg("--prior-precision", minimum=0.0),
        default=0.0,
        metavar="1/J^2",
        help="precision of that prior (default 0: no prior, the paper's)",
    )
    p.add_argument(
        "--prune-rounds",
        type=bounded_int_arg(0, MAX_PRUNE_ROUNDS, "--prune-rounds"),
        default=2,
        metavar="N",
        help="rounds of pruning exploration of the batch-size optimizer (default 2, the paper's)",
    )
    add_protocol_args(p)
    p.add_argument(
        "--arrivals",
        type=Path,
        default=None,
        metavar="FILE",
        help="arrival table (.csv/.parquet) of concurrent submissions",
    )
    p.add_argument(
        "--drift",
        type=Path,
        default=None,
        metavar="FILE",
        help="drift table (.csv/.parquet): epochs-to-target factors per recurrence (zeus_bench.sim.drift)",
    )
    p.add_argument(
        "--prior-traces",
        type=Path,
        default=None,
        metavar="DIR",
        help="warm start: folder of another GPU's traces (with --prior-gpu; used by zeus-plus)",
    )
    p.add_argument(
        "--prior-gpu", default=None, metavar="NAME", help="warm start: the GPU kind in --prior-traces"
    )
    p.add_argument(
        "--jobs",
        type=bounded_int_arg(1, MAX_JOBS, "--jobs"),
        default=1,
        metavar="N",
        help="worker processes (default 1)",
    )
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE.parquet|FILE.csv",
        help="runs table to write (Parquet or CSV, by the suffix)",
    )
    p.set_defaults(func=_simulate)

    q = sub.add_parser(
        "summarize",
        help="savings vs baseline and max-batch, regret vs oracle, settling of a runs table",
        description="Summarise a runs table per (gpu, workload, policy, eta, beta, window): mean and "
        "std over seeds. Prints a compact table; --out writes every column (.csv or .parquet).",
    )
    q.add_argument("runs", type=Path, metavar="FILE.parquet", help="runs table from 'zeus-bench simulate'")
    q.add_argument("--out", type=Path, default=None, help="write the full summary (.csv or .parquet)")
    q.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="printed format (default table)"
    )
    q.set_defaults(func=_summarize)

    r = sub.add_parser(
        "synth-arrivals",
        help="write a synthetic arrival table (for tests and examples)",
        description="Write a synthetic arrival table (the input of simulate --arrivals): per workload, "
        "--groups groups of --jobs-per-group submissions, a share --overlap of which start while the "
        f"previous one runs, drawn from --seed; at most {MAX_SUBMISSIONS:,} rows in all.",
    )
    r.add_argument("--workloads", type=_list_of(str), required=True, help="comma-separated workload ids")
    r.add_argument(
        "--groups",
        type=bounded_int_arg(1, MAX_SUBMISSIONS, "--groups"),
        default=2,
        help="groups PER WORKLOAD, not in all (default 2): --workloads a,b --groups 10 writes 20 groups",
    )
    r.add_argument(
        "--jobs-per-group",
        type=bounded_int_arg(1, MAX_SUBMISSIONS, "--jobs-per-group"),
        default=50,
        help="submissions per group (default 50)",
    )
    r.add_argument(
        "--overlap",
        type=float,
        default=0.3,
        help="share of jobs that start while the previous runs (default 0.3)",
    )
    r.add_argument(
        "--ratio-sigma",
        type=float,
        default=0.25,
        help="log-standard deviation of the runtimes (default 0.25; 1.0 spreads runtime_ratio over ~0.1-10)",
    )
    r.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    r.add_argument("--out", type=Path, required=True, help="output .csv or .parquet")
    r.set_defaults(func=_synth)


def _simulate(args: argparse.Namespace) -> int:
    import contextlib
    import logging
    import sys
    import time

    from zeus_bench.errors import ConfigError
    from zeus_bench.jobs import TraceSet
    from zeus_bench.sim.arrivals import read_arrivals
    from zeus_bench.sim.drift import read_drift
    from zeus_bench.sim.grid import iter_simulate_tables, plan
    from zeus_bench.sim.policies import POLICIES
    from zeus_bench.sim.policies.base import load_policy_module
    from zeus_bench.sim.replay import BanditKnobs
    from zeus_bench.store import TableWriter

    log = logging.getLogger("zeus_bench.cli.sim")
    check_out(args.out, TABLE_SUFFIXES)
    for module in args.policy_module:
        load_policy_module(module)
    traces = TraceSet(args.traces, args.workloads_file)
    policies = (
        list(POLICIES)
        if args.policies == "all"
        else [s.strip() for s in args.policies.split(",") if s.strip()]
    )
    repeated = sorted({p for p in policies if policies.count(p) > 1})
    if repeated:
        raise ConfigError(f"--policies: {', '.join(repeated)} listed twice (each policy is simulated once)")
    workloads = (
        None if args.workloads == "all" else [s.strip() for s in args.workloads.split(",") if s.strip()]
    )
    arrivals = read_arrivals(args.arrivals) if args.arrivals is not None else None
    drift = read_drift(args.drift, args.workloads_file) if args.drift is not None else None
    if (args.prior_traces is None) != (args.prior_gpu is None):
        raise ConfigError("--prior-traces and --prior-gpu go together")
    prior = None if args.prior_traces is None else (TraceSet(args.prior_traces), args.prior_gpu)
    knobs = BanditKnobs(args.prior_mean, args.prior_precision, args.prune_rounds)
    tasks = []
    for gpu in args.gpu:
        tasks += plan(
            traces,
            gpu,
            workloads,
            policies,
            args.seeds,
            args.eta,
            args.beta,
            args.recurrences,
            args.window,
            arrivals,
            args.policy_module,
            drift,
            prior,
            args.horizon,
            args.noise,
            knobs,
        )
    provenance = {
        "command": "simulate",
        "traces": str(args.traces),
        "gpus": args.gpu,
        "policies": policies,
        "seeds": args.seeds,
        "arrivals": None if args.arrivals is None else str(args.arrivals),
        "policy_modules": args.policy_module,
        "drift": None if args.drift is None else str(args.drift),
        "prior": None if prior is None else f"{args.prior_traces}:{args.prior_gpu}",
        "horizon": tasks[0].horizon if tasks else args.horizon,
        "noise": tasks[0].noise if tasks else 0.0,
        "bandit_knobs": knobs._asdict(),
    }
    # The tasks hold each workload's rows of the arrival table: the whole table can go.
    del arrivals
    replays = sum(t.units for t in tasks)
    start = time.perf_counter()
    # Rows are written as replays finish (Parquet row groups): memory holds one frame at a time.
    with TableWriter(args.out, "runs", provenance) as out, contextlib.ExitStack() as stack:
        progress = None
        if sys.stderr.isatty():  # a progress bar only for a person watching
            from tqdm import tqdm

            bar = stack.enter_context(tqdm(total=replays, unit="replay", desc="simulate", leave=False))
            progress = bar.update
        for frame in iter_simulate_tables(tasks, jobs=args.jobs, progress=progress):
            out.write(frame)
    elapsed = time.perf_counter() - start
    log.info("%d tries of %d replays in %.2f s -> %s", out.rows, replays, elapsed, args.out)
    return 0


_SHOWN = {
    "gpu": "gpu",
    "workload": "workload",
    "policy": "policy",
    "eta": "eta",
    "beta": "beta",
    "energy_savings_vs_baseline_cum_pct": "E-save vs baseline cum %",
    "energy_savings_vs_baseline_last10_pct": "E-save vs baseline last10 %",
    "energy_savings_vs_max_batch_cum_pct": "E-save vs max-batch cum %",
    "time_savings_vs_baseline_cum_pct": "T-save vs baseline cum %",
    "regret_vs_oracle_cost_j": "regret vs oracle (J)",
    "settle_recurrence": "settles at recurrence",
    "failed_recurrences_mean": "failed recurrences",
}


def read_runs(path: Path) -> pd.DataFrame:
    """A runs table as ``simulate --out`` writes it: Parquet, or CSV (validated by the same schema)."""
    from zeus_bench.store import read_table, validate
    from zeus_bench.usertables import read_user_table

    if Path(path).suffix.lower() == ".csv":
        return validate(read_user_table(path, "runs table"), "runs", where=str(path))
    return read_table(path, "runs")


def _summarize(args: argparse.Namespace) -> int:
    import pandas as pd

    from zeus_bench.fsutil import atomic_path
    from zeus_bench.sim.summarize import summarize
    from zeus_bench.store import write_table

    out = args.out
    check_out(out, TABLE_SUFFIXES)
    summary = summarize(read_runs(args.runs))
    if args.format == "table":
        shown = pd.DataFrame(index=summary.index)
        for col, label in _SHOWN.items():
            if col in ("eta", "beta"):  # settings as on the command line: 0.5, 2, inf
                shown[label] = [f"{v:g}" for v in summary[col]]
            elif col in summary.columns:
                shown[label] = summary[col]
            else:
                mean, std = summary[f"{col}_mean"], summary[f"{col}_std"]
                shown[label] = [
                    "" if pd.isna(m) else f"{m:.4g} ± {s:.2g}" for m, s in zip(mean, std, strict=True)
                ]
        settings = summary[["eta", "beta", "window"]].drop_duplicates()
        header = "; ".join(f"eta={r.eta:g} beta={r.beta:g} window={r.window}" for r in settings.itertuples())
        emit(
            f"mean ± std over seeds ({header}); savings use the references' expected values\n"
            + render(shown, "table"),
            None,
        )
    else:
        emit(render(summary, args.format), None)
    if out is not None:
        if out.suffix == ".parquet":
            write_table(
                summary, out, "sim_summary", provenance={"command": "summarize", "runs": str(args.runs)}
            )
        else:
            with atomic_path(out) as tmp:
                summary.to_csv(tmp, index=False, lineterminator="\n")
    return 0


def _synth(args: argparse.Namespace) -> int:
    import numpy as np

    from zeus_bench.errors import ConfigError
    from zeus_bench.fsutil import atomic_path
    from zeus_bench.registry import load_workloads
    from zeus_bench.sim.arrivals import synthetic_arrivals

    check_out(args.out, TABLE_SUFFIXES)
    known = load_workloads(None)
    unknown = [w for w in args.workloads if w not in known]
    if unknown:
        raise ConfigError(f"unknown workload {unknown[0]!r}; known: {', '.join(known)}")
    if not 0.0 <= args.overlap < 1.0:
        raise ConfigError(f"--overlap must lie in [0, 1), got {args.overlap}")
    rows = len(args.workloads) * args.groups * args.jobs_per_group
    if rows > MAX_SUBMISSIONS:
        raise ConfigError(
            f"--workloads x --groups x --jobs-per-group is {rows:,} submissions; at most {MAX_SUBMISSIONS:,} "
            "are allowed (an arrival table that large would take longer to replay than any study needs)"
        )
    if not 0.0 <= args.ratio_sigma <= 5.0:
        raise ConfigError(f"--ratio-sigma must lie in [0, 5], got {args.ratio_sigma}")
    df = synthetic_arrivals(
        args.workloads,
        args.groups,
        args.jobs_per_group,
        np.random.default_rng(args.seed),
        overlap=args.overlap,
        ratio_sigma=args.ratio_sigma,
    )
    with atomic_path(args.out) as tmp:
        if args.out.suffix == ".parquet":
            df.to_parquet(tmp, index=False)
        else:
            df.to_csv(tmp, index=False, lineterminator="\n")
    print(f"wrote {len(df)} submissions in {df['group'].nunique()} groups to {args.out}")
    return 0
