"""Options of ``zeus-bench simulate``, ``summarize`` and ``synth-arrivals`` (handlers: :mod:`zeus_bench.cli.sim`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from zeus_bench.cli.common import (
    MAX_RECURRENCES,
    add_int_option,
    add_policy_module_arg,
    add_seeds_arg,
    add_workloads_arg,
    beta_arg,
    eta_arg,
)
from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA
from zeus_bench.core.entry import add_jobs_arg, float_arg, seed_arg

#: Output suffixes of the tables simulate, summarize and synth-arrivals write.
TABLE_SUFFIXES = (".parquet", ".csv")
#: Bound of synth-arrivals' --groups and --jobs-per-group, and of their product (rows written).
MAX_SUBMISSIONS = 5_000_000


#: Bound of --prune-rounds (each round tries every surviving batch size at least once).
MAX_PRUNE_ROUNDS = 100


def _add_finite(
    p: argparse.ArgumentParser,
    flag: str,
    default: float | None,
    metavar: str,
    help: str,
    minimum: float | None = None,
) -> None:
    """Add ``flag``: a finite number (:func:`~zeus_bench.core.entry.float_arg`, ``>= minimum`` when given)."""
    p.add_argument(flag, type=float_arg(flag, minimum=minimum), default=default, metavar=metavar, help=help)


def list_of(item: Any) -> Any:
    """Argparse type: comma-separated values, each parsed by ``item``."""

    def parse(text: str) -> list[Any]:
        parts = [p.strip() for p in text.split(",") if p.strip()]
        if not parts:
            raise argparse.ArgumentTypeError(f"empty list {text!r}")
        return [item(p) for p in parts]

    return parse


def add_protocol_args(p: argparse.ArgumentParser, several: str = "") -> None:
    """``--horizon`` and ``--noise`` (``simulate`` and ``arena``; checked by the grid's plan).

    ``several``: how a comma-separated list of horizons is taken (help text; empty: one horizon).
    """
    p.add_argument(
        "--horizon",
        default="known",
        metavar="known|unknown|N|Fx" + ("[,...]" if several else ""),
        help="recurrences the policy is told: known (default: the replay's true number), unknown "
        "(the policy's own online default), N, or a misspecified Fx (0.5x: half the true number, 2x: twice it)"
        + (f"; {several}" if several else ""),
    )
    p.add_argument(
        "--noise",
        default=0.0,
        metavar="LEVEL",
        help="seeded per-try noise on time and power: relative std in [0, 0.1] (default 0; docs/policies.md)",
    )


class PolicyHelp(argparse.HelpFormatter):
    """Help of ``simulate``: ``--policies`` lists the registered policies (imported only for --help)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = super()._get_help_string(action)
        if "--policies" in action.option_strings:
            from zeus_bench.sim.policies import POLICIES

            text = f"{text}; registered: {', '.join(POLICIES)}"
        return text


def add_simulate_args(p: argparse.ArgumentParser) -> None:
    """Add ``simulate``'s options to ``p``."""
    p.add_argument("--traces", type=Path, required=True, metavar="DIR", help="folder of imported traces")
    p.add_argument(
        "--gpu",
        type=list_of(str),
        required=True,
        metavar="GPU[,GPU...]",
        help="GPU kind(s) (power-<gpu>.parquet in DIR)",
    )
    add_workloads_arg(p)
    p.add_argument(
        "--workloads-file", type=Path, default=None, help="YAML file of extra/overriding workloads"
    )
    p.add_argument("--policies", default="all", help="'all' (default) or comma-separated policy names")
    add_policy_module_arg(
        p, "import a module (dotted name or .py file) that registers extra policies; repeatable"
    )
    add_seeds_arg(p, 10, "seeds, e.g. 1-10 (default) or 1,4,7-9")
    p.add_argument(
        "--eta",
        type=list_of(eta_arg),
        default=[DEFAULT_ETA],
        help=f"energy weight(s) in [0, 1], comma-separated (default {DEFAULT_ETA})",
    )
    p.add_argument(
        "--beta",
        type=list_of(beta_arg),
        default=[DEFAULT_BETA],
        help=f"early-stop threshold(s) > 0, 'inf' = off (default {DEFAULT_BETA})",
    )
    add_int_option(
        p,
        "--recurrences",
        (1, MAX_RECURRENCES),
        None,
        "recurrences per job (default auto: 2 x |B| x |P|)",
        metavar="auto|N",
        what="recurrences",
        auto=True,
    )
    add_int_option(
        p,
        "--window",
        (0, MAX_RECURRENCES),
        0,
        "bandit observation window for drift (0 = unbounded, default; 1 is refused: every choice "
        "would be random)",
        metavar="N",
        what="window",
    )
    _add_finite(
        p,
        "--prior-mean",
        0.0,
        "J",
        "mean of the batch-size optimizer's Gaussian prior per arm, as a reward (-cost, J; default 0)",
    )
    _add_finite(
        p,
        "--prior-precision",
        0.0,
        "1/J^2",
        "precision of that prior (default 0: no prior, the paper's)",
        minimum=0.0,
    )
    add_int_option(
        p,
        "--prune-rounds",
        (0, MAX_PRUNE_ROUNDS),
        2,
        "rounds of pruning exploration of the batch-size optimizer (default 2, the paper's)",
        metavar="N",
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
        help="drift table (.csv/.parquet): epochs-to-target factors per recurrence (zeus_bench.sim.scenarios.drift)",
    )
    from zeus_bench.sim.scenarios import terms

    for term in terms.TERM_MODULES:  # each cost term's flags (zeus_bench.sim.scenarios.terms)
        term.add_args(p)
    _add_finite(
        p,
        "--recurrence-period-s",
        None,
        "S",
        "seconds between recurrences, placing them in time for a cost term that needs it (default 86400: "
        "daily; arrival tables: their start times)",
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
    add_jobs_arg(p)
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="FILE.parquet|FILE.csv",
        help="runs table to write (Parquet or CSV, by the suffix)",
    )


def add_summarize_args(p: argparse.ArgumentParser) -> None:
    """Add ``summarize``'s options to ``p``."""
    p.add_argument("runs", type=Path, metavar="FILE.parquet", help="runs table from 'zeus-bench simulate'")
    p.add_argument("--out", type=Path, default=None, help="write the full summary (.csv or .parquet)")
    p.add_argument(
        "--format", choices=("table", "csv", "json"), default="table", help="printed format (default table)"
    )


def add_synth_args(p: argparse.ArgumentParser) -> None:
    """Add ``synth-arrivals``' options to ``p``."""
    p.add_argument(
        "--workloads",
        "--workload",
        dest="workloads",
        type=list_of(str),
        required=True,
        help="comma-separated workload ids",
    )
    add_int_option(
        p,
        "--groups",
        (1, MAX_SUBMISSIONS),
        2,
        "groups PER WORKLOAD, not in all (default 2): --workloads a,b --groups 10 writes 20 groups",
    )
    add_int_option(p, "--jobs-per-group", (1, MAX_SUBMISSIONS), 50, "submissions per group (default 50)")
    p.add_argument(
        "--overlap",
        type=float_arg("--overlap"),
        default=0.3,
        help="share of jobs that start while the previous runs (default 0.3)",
    )
    p.add_argument(
        "--ratio-sigma",
        type=float_arg("--ratio-sigma"),
        default=0.25,
        help="log-standard deviation of the runtimes (default 0.25; 1.0 spreads runtime_ratio over ~0.1-10)",
    )
    p.add_argument("--seed", type=seed_arg, default=0, help="random seed (default 0)")
    p.add_argument("--out", type=Path, required=True, help="output .csv or .parquet")
