"""``zeus-bench simulate``, ``zeus-bench summarize`` and ``zeus-bench synth-arrivals``.

Their options are declared in :mod:`zeus_bench.cli.sim_args`; this module adds the subcommands and
holds their handlers.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from zeus_bench.cli.common import check_out, emit, render
from zeus_bench.cli.sim_args import (
    MAX_SUBMISSIONS,
    TABLE_SUFFIXES,
    PolicyHelp,
    add_simulate_args,
    add_summarize_args,
    add_synth_args,
)

if TYPE_CHECKING:  # pandas is imported by the handlers, not at start-up
    from pathlib import Path

    from zeus_bench.core.cost import CostTerm
    from zeus_bench.sim.grid import Scenario, Task
    from zeus_bench.sim.replay import BanditKnobs


def register(sub: Any) -> None:
    """Add ``simulate``, ``summarize`` and ``synth-arrivals``."""
    p = sub.add_parser(
        "simulate",
        help="replay recurring jobs on the traces under policies; one row per try",
        description="Replay recurring training jobs on recorded traces under energy-optimization "
        "policies (docs/policies.md). Writes a 'runs' Parquet table, one row per try.",
        formatter_class=PolicyHelp,
    )
    add_simulate_args(p)
    p.set_defaults(func=_simulate)

    q = sub.add_parser(
        "summarize",
        help="savings vs baseline and max-batch, regret vs oracle, settling of a runs table",
        description="Summarise a runs table per (gpu, workload, policy, eta, beta, window): mean and "
        "std over seeds. Prints a compact table; --out writes every column (.csv or .parquet).",
    )
    add_summarize_args(q)
    q.set_defaults(func=_summarize)

    r = sub.add_parser(
        "synth-arrivals",
        help="write a synthetic arrival table (for tests and examples)",
        description="Write a synthetic arrival table (the input of simulate --arrivals): per workload, "
        "--groups groups of --jobs-per-group submissions, a share --overlap of which start while the "
        f"previous one runs, drawn from --seed; at most {MAX_SUBMISSIONS:,} rows in all.",
    )
    add_synth_args(r)
    r.set_defaults(func=_synth)


def _policy_names(spec: str) -> list[str]:
    """``--policies``: ``all`` (every registered policy) or the names listed, each once.

    Raises:
        ConfigError: a policy listed twice.
    """
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.sim.policies import POLICIES

    policies = list(POLICIES) if spec == "all" else [s.strip() for s in spec.split(",") if s.strip()]
    repeated = sorted({p for p in policies if policies.count(p) > 1})
    if repeated:
        raise ConfigError(f"--policies: {', '.join(repeated)} listed twice (each policy is simulated once)")
    return policies


def _scenario(args: argparse.Namespace) -> Scenario:
    """What the jobs live through, from the flags: arrivals, drift, warm start, the recurrences' period.

    Raises:
        ConfigError: flags that go together given apart, or a table that does not read.
    """
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.sim.grid import DEFAULT_PERIOD_S, Scenario
    from zeus_bench.traces.jobs import TraceSet

    arrivals = drift = None  # (each scenario's module is imported where its flag is given)
    if args.arrivals is not None:
        from zeus_bench.sim.scenarios.arrival_table import read_arrival_columns

        arrivals = read_arrival_columns(args.arrivals)
    if args.drift is not None:
        from zeus_bench.sim.scenarios.drift import read_drift

        drift = read_drift(args.drift, args.workloads_file)
    if (args.prior_traces is None) != (args.prior_gpu is None):
        raise ConfigError("--prior-traces and --prior-gpu go together")
    prior = None if args.prior_traces is None else (TraceSet(args.prior_traces), args.prior_gpu)
    period_s = DEFAULT_PERIOD_S if args.recurrence_period_s is None else args.recurrence_period_s
    return Scenario(arrivals, drift, prior, period_s)


def _terms(args: argparse.Namespace) -> tuple[CostTerm, ...]:
    """The cost terms the flags ask for, each from its module (:mod:`zeus_bench.sim.scenarios.terms`).

    Raises:
        ConfigError: a term's flags given apart, or ``--recurrence-period-s`` with no term placed in time.
    """
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.sim.scenarios import terms

    found = [(m.NAME, m.from_args(args)) for m in terms.TERM_MODULES]
    out = tuple(t for _, t in found if t is not None)
    if args.recurrence_period_s is not None and not any(t.in_time for t in out):
        names = ", ".join(m.NAME for m in terms.TERM_MODULES)
        raise ConfigError(
            f"--recurrence-period-s places recurrences in time for a cost term, and no term given is placed "
            f"in time (terms: {names})"
        )
    return out


def _term_provenance(
    args: argparse.Namespace, scenario: Scenario, terms: tuple[CostTerm, ...]
) -> dict[str, Any]:
    """Each term's record in the provenance, under its module's name (none without terms)."""
    from zeus_bench.sim.scenarios.terms import TERM_MODULES

    period_s = None if args.arrivals is not None else scenario.period_s
    by_column = {m.COLUMN.name: m for m in TERM_MODULES}
    return {by_column[t.column].NAME: by_column[t.column].provenance(t, period_s) for t in terms}


def _provenance(
    args: argparse.Namespace, policies: list[str], tasks: list[Task], scenario: Scenario, knobs: BanditKnobs
) -> dict[str, Any]:
    """The runs table's provenance: the command's inputs and the settings its tasks resolved."""
    provenance = {
        "command": "simulate",
        "traces": str(args.traces),
        "gpus": args.gpu,
        "policies": policies,
        "seeds": args.seeds,
        "arrivals": None if args.arrivals is None else str(args.arrivals),
        "policy_modules": args.policy_module,
        "drift": None if args.drift is None else str(args.drift),
        "prior": None if scenario.prior is None else f"{args.prior_traces}:{args.prior_gpu}",
        "horizon": tasks[0].horizon if tasks else args.horizon,
        "noise": tasks[0].noise if tasks else 0.0,
        "bandit_knobs": knobs._asdict(),
    }
    # Only with terms: a runs table without one keeps its provenance.
    provenance.update(_term_provenance(args, scenario, tasks[0].cost.terms if tasks else ()))
    return provenance


def _write_runs(out_path: Path, tasks: list[Task], provenance: dict[str, Any], jobs: int) -> int:
    """Replay ``tasks`` on ``jobs`` processes into the runs table at ``out_path``; the rows written.

    Rows are written as replays finish (Parquet row groups): memory holds one frame at a time. A
    progress bar is drawn only for a person watching (stderr a terminal).
    """
    import contextlib
    import sys

    from zeus_bench.sim.grid import iter_simulate_tables
    from zeus_bench.store import TableWriter

    with TableWriter(out_path, "runs", provenance) as out, contextlib.ExitStack() as stack:
        progress = None
        if sys.stderr.isatty():
            from tqdm import tqdm

            total = sum(t.units for t in tasks)
            bar = stack.enter_context(tqdm(total=total, unit="replay", desc="simulate", leave=False))
            progress = bar.update
        for frame in iter_simulate_tables(tasks, jobs=jobs, progress=progress):
            out.write(frame)
    return out.rows


def _simulate(args: argparse.Namespace) -> int:
    import logging
    import time

    from zeus_bench.core.cost import Cost
    from zeus_bench.core.entry import busy_heap
    from zeus_bench.sim.grid import Grid, ReplayOptions, plan
    from zeus_bench.sim.policies.base import load_policy_module
    from zeus_bench.sim.replay import BanditKnobs
    from zeus_bench.traces.jobs import TraceSet

    log = logging.getLogger("zeus_bench.cli.sim")
    check_out(args.out, TABLE_SUFFIXES)
    for module in args.policy_module:
        load_policy_module(module)
    traces = TraceSet(args.traces, args.workloads_file)
    policies = _policy_names(args.policies)
    workloads = (
        None if args.workloads == "all" else [s.strip() for s in args.workloads.split(",") if s.strip()]
    )
    scenario = _scenario(args)
    knobs = BanditKnobs(args.prior_mean, args.prior_precision, args.prune_rounds)
    cost_terms = _terms(args)
    costs = [Cost(eta, cost_terms) for eta in args.eta]
    options = ReplayOptions(
        args.recurrences, args.window, args.horizon, args.noise, knobs, args.policy_module
    )
    tasks = []
    for gpu in args.gpu:
        tasks += plan(traces, gpu, Grid(workloads, policies, args.seeds, costs, args.beta), options, scenario)
    provenance = _provenance(args, policies, tasks, scenario, knobs)
    # The tasks hold each workload's rows of the arrival table: the whole table can go.
    del scenario
    replays = sum(t.units for t in tasks)
    start = time.perf_counter()
    with busy_heap():  # (the inputs are read: what the replay makes is what the collector walks)
        rows = _write_runs(args.out, tasks, provenance, args.jobs)
    elapsed = time.perf_counter() - start
    log.info("%d tries of %d replays in %.2f s -> %s", rows, replays, elapsed, args.out)
    return 0


_SHOWN = {
    "gpu": "gpu",
    "workload": "workload",
    "policy": "policy",
    "eta": "eta",
    "beta": "beta",
    "energy_savings_vs_baseline_cum_pct": "E% all",
    "energy_savings_vs_baseline_last10_pct": "E% last10",
    "energy_savings_vs_max_batch_cum_pct": "E% vs mb",
    "time_savings_vs_baseline_cum_pct": "T% all",
    "regret_vs_oracle_cum_pct": "regret %",
    "settle_recurrence": "settles at",
    "failed_recurrences_mean": "failed",
}
#: The legend printed above ``summarize``'s table.
_LEGEND = (
    "E%/T%: energy/time saved vs baseline (b0 at the maximum limit), all recurrences or the last 10;\n"
    "vs mb: energy saved vs max-batch; regret %: cost above the oracle's expected cost, in % of it\n"
    "(the oracle's own is 0 up to its seeds' spread); settles at: recurrence; all columns: --format csv\n"
)


def _mean_std(mean: float, std: float, pct: bool) -> str:
    """``mean±std`` as the table shows it: percentages to 0.1 (no ``-0.0``), others to 3 digits."""
    import math

    if math.isnan(mean):
        return ""
    if pct:
        return f"{mean:.1f}±{std:.1f}".replace("-0.0±", "0.0±")
    return f"{mean:.3g}±{std:.2g}"


def _summarize(args: argparse.Namespace) -> int:
    import pandas as pd

    from zeus_bench.sim.summarize import read_runs, summarize, write_summary

    out = args.out
    check_out(out, TABLE_SUFFIXES)
    summary = summarize(read_runs(args.runs))
    if args.format == "table":
        settings = summary[["eta", "beta", "window"]].drop_duplicates()
        shown = pd.DataFrame(index=summary.index)
        for col, label in _SHOWN.items():
            if col in ("eta", "beta"):  # settings as on the command line: 0.5, 2, inf; once in the header
                if len(settings) > 1:
                    shown[label] = [f"{v:g}" for v in summary[col]]
            elif col in summary.columns:
                shown[label] = summary[col]
            else:
                mean, std = summary[f"{col}_mean"], summary[f"{col}_std"]
                shown[label] = [
                    _mean_std(m, sd, col.endswith("_pct")) for m, sd in zip(mean, std, strict=True)
                ]
        header = "; ".join(f"eta={r.eta:g} beta={r.beta:g} window={r.window}" for r in settings.itertuples())
        emit(
            f"mean ± std over seeds ({header}); savings vs the references' expected values\n"
            + _LEGEND
            + render(shown, "table"),
            None,
        )
    else:
        emit(render(summary, args.format), None)
    if out is not None:
        write_summary(summary, out, args.runs)
    return 0


def _synth(args: argparse.Namespace) -> int:
    import numpy as np

    from zeus_bench.core.errors import ConfigError
    from zeus_bench.core.fsutil import atomic_path
    from zeus_bench.sim.scenarios.arrivals import synthetic_arrivals
    from zeus_bench.traces.workloads import load_workloads

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
