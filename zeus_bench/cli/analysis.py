"""``zeus-bench potential`` and ``zeus-bench pareto``: analysis of the traces."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas is imported by the handlers, not at start-up
    import pandas as pd

from zeus_bench.cli.common import FORMAT_SUFFIXES, add_format_arg, check_out, emit, eta_arg, render
from zeus_bench.core.cost import DEFAULT_ETA, Cost


def _traces_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--traces",
        type=Path,
        required=True,
        metavar="DIR",
        help="folder of imported traces (train.parquet, power-<gpu>.parquet)",
    )
    p.add_argument("--gpu", required=True, help="GPU kind (a power-<gpu>.parquet in DIR)")
    p.add_argument(
        "--workloads-file", type=Path, default=None, help="YAML file of extra/overriding workloads"
    )


def register(sub: Any) -> None:
    """Add ``potential`` and ``pareto``."""
    p = sub.add_parser(
        "potential", help="potential energy/time savings of the best configurations vs both baselines"
    )
    _traces_args(p)
    p.add_argument(
        "--eta",
        type=eta_arg,
        default=DEFAULT_ETA,
        help="energy weight of the cost in [0, 1] (default %(default)s)",
    )
    add_format_arg(p)
    p.set_defaults(func=_potential)

    q = sub.add_parser("pareto", help="ETA-vs-TTA Pareto frontier of a workload's feasible configurations")
    _traces_args(q)
    q.add_argument(
        "--workloads",
        "--workload",
        dest="workloads",
        required=True,
        help="comma-separated workload ids in the traces (cifar100, imagenet, ...)",
    )
    q.add_argument(
        "--eta", type=eta_arg, default=DEFAULT_ETA, help="eta for the cost column (default %(default)s)"
    )
    q.add_argument("--all", action="store_true", help="write every configuration with an on_frontier column")
    q.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="output format on stdout or in --out (default: %(default)s; every column in csv and json)",
    )
    q.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write here instead of stdout: .parquet (the configurations table), .csv, .json, or .txt (--format)",
    )
    q.set_defaults(func=_pareto)


def _potential(args: argparse.Namespace) -> int:
    from zeus_bench.store import validate
    from zeus_bench.traces.jobs import TraceSet
    from zeus_bench.traces.potential import potential_table

    check_out(args.out, FORMAT_SUFFIXES[args.format])
    ts = TraceSet(args.traces, args.workloads_file)
    ts.power(args.gpu)  # unknown GPU -> clear error
    ids = ts.workload_ids(args.gpu)
    if not ids:
        from zeus_bench.core.errors import TraceFormatError

        raise TraceFormatError(
            f"{Path(args.traces) / f'power-{args.gpu}.parquet'}: no rows of a registered workload with a "
            f"train trace for GPU {args.gpu} (an empty power trace?): nothing to analyse"
        )
    df = potential_table([ts.job(args.gpu, w) for w in ids], Cost(args.eta))
    validate(df, "potential", str(args.out or "potential table"))
    if args.format == "table":
        emit(_potential_table(df, args.gpu), args.out)
    else:
        emit(render(df, args.format), args.out)
    return 0


def _potential_table(df: pd.DataFrame, gpu: str) -> str:
    """The potential as a table that fits ~100 columns: the key numbers, configurations as bs@W.

    Every column is in ``--format csv`` / ``json``; this view keeps the savings of the least-energy
    and least-cost configurations against both baselines.
    """
    import pandas as pd

    def config(prefix: str) -> pd.Series:
        return df[f"{prefix}_bs"].astype(int).astype(str) + "@" + df[f"{prefix}_pl_w"].map("{:g}".format)

    pct = "{:.1f}".format
    shown = pd.DataFrame(
        {
            "workload": df["workload"],
            "b0": df["b0"],
            "least energy": config("min_energy"),
            "E%": df["min_energy_saving_pct"].map(pct),
            "T%": df["min_energy_time_saving_pct"].map(pct),
            "E% vs mb": df["min_energy_saving_vs_maxbatch_pct"].map(pct),
            "least cost": config("min_cost"),
            "its E%": df["min_cost_energy_saving_pct"].map(pct),
            "its T%": df["min_cost_time_saving_pct"].map(pct),
            "its E% vs mb": df["min_cost_energy_saving_vs_maxbatch_pct"].map(pct),
            "max-batch": df["maxbatch_bs"],
        }
    )
    eta = ", ".join(f"{e:g}" for e in sorted(df["eta"].unique()))
    return (
        f"Potential savings on {gpu} (eta {eta}); configurations as batch size@power limit W.\n"
        "E%/T%: energy/time saved vs baseline (b0 at the maximum limit); vs mb: energy saved vs max-batch\n"
        "(largest converging batch size at the maximum limit). Every column: --format csv.\n"
        + shown.to_string(index=False)
        + "\n"
    )


def _pareto(args: argparse.Namespace) -> int:

    import pandas as pd

    from zeus_bench.core.fsutil import atomic_path
    from zeus_bench.store import validate
    from zeus_bench.traces.jobs import TraceSet
    from zeus_bench.traces.pareto import pareto_mask

    check_out(args.out, (".csv", ".parquet", ".json", ".txt", ".md"))
    ts = TraceSet(args.traces, args.workloads_file)
    frames = []
    for workload in [w.strip() for w in args.workloads.split(",") if w.strip()]:
        job = ts.job(args.gpu, workload)
        configs = job.configurations(Cost(args.eta))
        feasible = configs["feasible"].to_numpy()
        on = pareto_mask(
            configs["tta_s"].where(feasible).to_numpy(), configs["eta_j"].where(feasible).to_numpy()
        )
        configs.insert(0, "workload", job.workload.id)
        configs.insert(0, "gpu", job.gpu)
        configs["on_frontier"] = on
        frames.append(configs if args.all else configs[on].sort_values("tta_s").reset_index(drop=True))
    df: pd.DataFrame = pd.concat(frames, ignore_index=True)
    validate(df, "configurations", str(args.out or "configurations"))
    suffix = args.out.suffix if args.out is not None else ""
    if suffix == ".parquet":
        with atomic_path(args.out) as tmp:
            df.to_parquet(tmp, index=False)
        return 0
    fmt = {".csv": "csv", ".json": "json"}.get(suffix, args.format)
    if fmt == "table":
        emit(_pareto_table(df), args.out)
    else:
        emit(render(df, fmt), args.out)
    return 0


#: The columns of ``pareto``'s table view (every column: ``--format csv`` or ``json``).
PARETO_TABLE_COLUMNS = (
    "workload",
    "batch_size",
    "power_limit_w",
    "tta_s",
    "eta_j",
    "cost",
    "feasible",
    "on_frontier",
)


def _pareto_table(df: pd.DataFrame) -> str:
    """The frontier (or every configuration) as a table that fits 100 columns."""
    gpu = ", ".join(sorted(df["gpu"].unique()))
    return (
        f"Configurations on {gpu}: tta_s time and eta_j energy to accuracy; all columns: --format csv\n"
        + render(df[list(PARETO_TABLE_COLUMNS)], "table")
    )
