"""``zeus-bench sweep``, ``sweep-merge`` and ``project``: measure power traces and project them.

* ``sweep`` measures one workload over batch sizes and power limits (or at the current limit in
  observe mode) and writes a ``power`` trace; with ``--train-to-target`` it trains on the real
  dataset and writes a ``train`` trace instead.
* ``sweep-merge`` merges per-cell shards (the Snakemake workflow's outputs) into one trace.
* ``project`` joins a train trace with a power trace measured on another GPU.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from zeus_bench.cli.common import (
    FORMAT_SUFFIXES,
    add_format_arg,
    check_out,
    emit,
    eta_arg,
    gpu_indices_arg,
    render,
    require_extra,
)
from zeus_bench.cli.gpu import add_backend_arg
from zeus_bench.core.cost import DEFAULT_ETA
from zeus_bench.core.entry import add_int_option, parse_int, seed_arg

#: Bounds of the sweep's counts: iterations and windows of a point, runs per batch size, epochs,
#: batch sizes and GPU indices (far beyond any real sweep; they keep a typo from running for days).
MAX_ITERS = 10_000_000
MAX_RUNS = 1000
MAX_EPOCHS = 10_000
MAX_BATCH = 1_000_000

if TYPE_CHECKING:
    from zeus_bench.sweep.plan import SweepPlan


def _int_list(text: str) -> list[int]:
    """Argparse type: ``8,16,32`` -> [8, 16, 32] (``paper`` is handled by the handler)."""
    if text.strip().lower() == "paper":
        return []
    try:
        values = [parse_int(v.strip()) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers like 8,16,32 or 'paper', got {text!r}") from None
    if not values or any(not 1 <= v <= MAX_BATCH for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers like 8,16,32, got {text!r}")
    return values


def register(sub: Any) -> None:
    """Add ``sweep``, ``sweep-merge`` and ``project``."""
    p = sub.add_parser(
        "sweep",
        help="measure time per epoch and average power over batch sizes and power limits",
        description="Measure one workload on real (nvml) or fake GPUs: for each batch size and power "
        "limit, steady-state throughput after a warm-up and average power from the energy counter; "
        "rows in the power-trace schema, written after every point.",
    )
    p.add_argument(
        "--workload",
        "--workloads",
        dest="workload",
        required=True,
        help="workload id (cifar100, imagenet, squad, ...); one per sweep",
    )
    p.add_argument(
        "--batch-sizes",
        type=_int_list,
        required=True,
        metavar="B,B,...|paper",
        help="global batch sizes, or 'paper' for the workload's published ones",
    )
    p.add_argument(
        "--power-limits",
        default="current",
        metavar="W,W,...|current",
        help="power limits to set, W; 'current' measures at the limit in force (default)",
    )
    p.add_argument(
        "--gpus",
        type=gpu_indices_arg,
        default=[0],
        metavar="I,J",
        help="GPU indices (several: DistributedDataParallel, energy summed; default 0)",
    )
    p.add_argument(
        "--observe", action="store_true", help="never write a power limit; measure at the current one"
    )
    p.add_argument("--out", type=Path, required=True, metavar="FILE.parquet", help="output trace")
    p.add_argument("--resume", action="store_true", help="keep the points already in --out, measure the rest")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="print the cells with an estimate of GPU-time and energy from the measuring settings and "
        "a power trace of the workload (see --estimate-trace); measure nothing",
    )
    p.add_argument(
        "--estimate-trace",
        type=Path,
        default=None,
        metavar="POWER.parquet",
        help="with --dry-run: look each batch size's power and step time up in this power trace first "
        "(then in --out of an earlier run and the checkout's results/traces/); 'unknown' energy otherwise",
    )
    add_backend_arg(p)
    p.add_argument(
        "--gpu-kind", default=None, help="value of the trace's gpu column (default: from the GPU name)"
    )
    p.add_argument(
        "--torch-device",
        choices=("auto", "cpu", "cuda"),
        default="auto",
        help="where to train (auto: CUDA on real GPUs, CPU on the fake backend)",
    )
    p.add_argument("--tiny", action="store_true", help="the workload's tiny model (CPU tests)")
    p.add_argument(
        "--workloads-file",
        type=Path,
        default=None,
        metavar="FILE.yaml",
        help="YAML file of extra/overriding workloads (registry entries: dataset, network, ...)",
    )
    p.add_argument(
        "--seed",
        type=seed_arg,
        default=0,
        help="seed of the model's initial weights and synthetic batches (default 0)",
    )
    add_int_option(
        p, "--warmup-iters", (0, MAX_ITERS), 5, "warm-up iterations per point, at least (default 5)"
    )
    p.add_argument(
        "--warmup-s", type=float, default=2.0, help="warm-up seconds per point, at least (default 2)"
    )
    add_int_option(
        p, "--measure-iters", (1, MAX_ITERS), 20, "measured iterations per point, at least (default 20)"
    )
    p.add_argument(
        "--measure-s", type=float, default=10.0, help="measured seconds per point, at least (default 10)"
    )
    p.add_argument(
        "--window-s", type=float, default=2.0, help="seconds of each energy window, at least (default 2)"
    )
    add_int_option(p, "--min-windows", (1, MAX_ITERS), 3, "energy windows per point, at least (default 3)")
    p.add_argument(
        "--rel-ci",
        type=float,
        default=0.01,
        help="target relative 95%% half-width of energy per sample (default 0.01 = 1%%)",
    )
    p.add_argument(
        "--max-measure-s",
        type=float,
        default=60.0,
        help="cap on a point's measured seconds; a point still short of --rel-ci is flagged (default 60)",
    )
    p.add_argument(
        "--warmup-max-s",
        type=float,
        default=30.0,
        help="cap on the warm-up, which goes on until SM clock and temperature are steady (default 30)",
    )
    p.add_argument(
        "--steady-s",
        type=float,
        default=2.0,
        help="span over which SM clock and temperature must hold steady to end the warm-up (0: no check)",
    )
    p.add_argument(
        "--stop-at-oom",
        action="store_true",
        help="end the sweep at the first batch size that does not fit (default: exit 2)",
    )
    t = p.add_argument_group("train to target (needs the real dataset)")
    t.add_argument(
        "--train-to-target",
        action="store_true",
        help="train each batch size to the workload's target metric; write a train trace",
    )
    t.add_argument("--data-root", type=Path, default=None, help="dataset folder in its published format")
    add_int_option(t, "--runs", (1, MAX_RUNS), 1, "training runs (seeds) per batch size (default 1)")
    add_int_option(t, "--max-epochs", (1, MAX_EPOCHS), None, "epoch budget (default: the registry's)")
    p.set_defaults(func=_sweep)

    m = sub.add_parser(
        "sweep-merge",
        help="merge power-trace shards (one per sweep cell) into one trace",
        description="Merge the power-trace shards of a sweep (one Parquet file per workload, GPU kind "
        "and batch size, as the sweep workflow writes them) into one power trace, checking that "
        "they share a schema and that no point appears twice; each shard's provenance is kept.",
    )
    m.add_argument(
        "shards", type=Path, nargs="+", metavar="SHARD.parquet", help="power-trace shards to merge"
    )
    m.add_argument("--out", type=Path, required=True, metavar="FILE.parquet", help="merged power trace")
    m.set_defaults(func=_merge)

    q = sub.add_parser(
        "project",
        help="project ETA/TTA onto another GPU: a train trace joined with that GPU's power trace",
        description="Epochs to target depend on the batch size, not on the GPU (Zeus, NSDI'23): join "
        "a train trace with a power trace measured on another GPU and report, per workload, the "
        "projected energy (ETA) and time (TTA) to accuracy of each batch size.",
    )
    q.add_argument(
        "--train", type=Path, required=True, metavar="TRAIN.parquet", help="train trace (kind train)"
    )
    q.add_argument(
        "--power", type=Path, required=True, metavar="POWER.parquet", help="power trace of the target GPU"
    )
    q.add_argument("--gpu", default=None, help="GPU kind in the power trace (default: its only one)")
    q.add_argument(
        "--eta",
        type=eta_arg,
        default=DEFAULT_ETA,
        help="energy weight of the cost in [0, 1] (default %(default)s)",
    )
    q.add_argument(
        "--workloads-file", type=Path, default=None, help="YAML file of extra/overriding workloads"
    )
    q.add_argument(
        "--per-batch-size",
        action="store_true",
        help="one row per (workload, batch size) instead of the summary",
    )
    add_format_arg(q)
    q.set_defaults(func=_project)


def plan_from_args(args: argparse.Namespace) -> SweepPlan:
    """The :class:`~zeus_bench.sweep.plan.SweepPlan` of parsed ``zeus-bench sweep`` arguments.

    Raises:
        ConfigError: options the plan refuses (its checks run here, before any GPU is opened).
    """
    from zeus_bench.sweep.measure import MeasureSettings
    from zeus_bench.sweep.plan import SweepPlan, parse_power_limits

    batch_sizes = args.batch_sizes
    if not batch_sizes:
        from zeus_bench.sweep.workload import load_workload

        batch_sizes = list(load_workload(args.workload, tiny=args.tiny).paper_batch_sizes)
    return SweepPlan(
        workload=args.workload,
        batch_sizes=tuple(batch_sizes),
        power_limits_w=parse_power_limits(args.power_limits),
        gpu_indices=tuple(args.gpus),
        observe=args.observe,
        settings=MeasureSettings(
            args.warmup_iters,
            args.warmup_s,
            args.measure_iters,
            args.measure_s,
            window_s=args.window_s,
            min_windows=args.min_windows,
            rel_ci=args.rel_ci,
            max_measure_s=args.max_measure_s,
            warmup_max_s=args.warmup_max_s,
            steady_s=args.steady_s,
        ),
        tiny=args.tiny,
        seed=args.seed,
        stop_at_oom=args.stop_at_oom,
        gpu_kind=args.gpu_kind,
        backend=args.backend,
        torch_device=args.torch_device,
        workloads_file=args.workloads_file,
    )


def _dry_run(args: argparse.Namespace) -> int:
    """``--dry-run``: the cells and their estimated cost, without torch or a GPU."""
    print(estimate_text(args), end="")
    return 0


def estimate_text(args: argparse.Namespace) -> str:
    """The ``--dry-run`` table of parsed ``zeus-bench sweep`` arguments.

    The sweep workflow's dry run prints it too (workflows/rules/sweep_config.smk).

    Raises:
        ConfigError: no explicit batch sizes, an unknown workload, or options the plan refuses.
    """
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.sweep.estimate import estimate_cells, render_estimate
    from zeus_bench.traces.workloads import load_workloads

    plan = plan_from_args(args) if args.batch_sizes else None
    if plan is None:
        raise ConfigError(
            "--dry-run needs explicit --batch-sizes (the paper's come from the workload's code)"
        )
    limits = plan.power_limits_w
    if limits is None:
        limits = (700.0,)  # unknown without opening the GPU: the H200's maximum as an upper bound
    spec = load_workloads(args.workloads_file).get(args.workload)
    if spec is None:
        raise ConfigError(f"unknown workload {args.workload!r}")
    cells = estimate_cells(
        plan.batch_sizes, limits, plan.settings, len(plan.gpu_indices), known_traces(args), spec.dataset
    )
    return render_estimate(args.workload, cells)


#: The power traces this checkout commits: ``results/traces/<gpu>/power-<gpu>.parquet``.
COMMITTED_TRACES = Path(__file__).resolve().parents[2] / "results" / "traces"


def known_traces(args: argparse.Namespace) -> list[Path]:
    """The power traces a dry run looks batch sizes up in, first match first.

    ``--estimate-trace``; ``--out`` if an earlier run wrote it; then, unless ``--tiny`` (a tiny
    model is not the workload a trace measured), the checkout's committed traces, the one of
    ``--gpu-kind`` alone when given.
    """
    from zeus_bench.cli.configcheck import own_power_traces

    traces = [args.estimate_trace] if args.estimate_trace is not None else []
    if args.out is not None and Path(args.out).is_file():
        traces.append(Path(args.out))
    if not args.tiny and COMMITTED_TRACES.is_dir():
        committed = own_power_traces(COMMITTED_TRACES)
        traces += [path for gpu, path in committed.items() if args.gpu_kind in (None, gpu)]
    return traces


def _sweep(args: argparse.Namespace) -> int:
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")  # CUDA ordinals = NVML indices
    if args.dry_run:
        return _dry_run(args)
    check_out(args.out, (".parquet",))
    require_extra("torch", "workloads", "zeus-bench sweep (it trains the workloads)")
    from zeus_bench.core.errors import ConfigError

    plan = plan_from_args(args)
    if args.train_to_target:
        from zeus_bench.sweep.train import run_train_to_target

        plan.check_train_to_target()
        if args.data_root is None:
            raise ConfigError("--train-to-target needs --data-root (the dataset in its published format)")
        df = run_train_to_target(
            plan, args.data_root, args.out, runs=args.runs, max_epochs=args.max_epochs, resume=args.resume
        )
        reached = int(df["target_epoch"].notna().sum())
        print(f"wrote {args.out}: {len(df)} train rows, {reached} reached the target")
        return 0
    if args.data_root is not None:
        raise ConfigError("--data-root is used only with --train-to-target (sweeps use synthetic batches)")
    from zeus_bench.sweep.runner import run_sweep

    outcome = run_sweep(plan, args.out, resume=args.resume)
    table = outcome.table.assign(j_per_sample=outcome.table["avg_power_w"] / outcome.table["samples_per_s"])
    cols = [
        "gpu",
        "dataset",
        "batch_size",
        "power_limit_w",
        "samples_per_s",
        "avg_power_w",
        "j_per_sample",
        "time_per_epoch_s",
    ]
    print(render(table[cols], "table"), end="")
    skipped = ", ".join(f"{s['batch_size']} ({s['reason']})" for s in outcome.skipped)
    print(
        f"wrote {outcome.path}: {outcome.measured} point(s) measured, {outcome.reused} reused"
        + (f"; skipped batch sizes: {skipped}" if skipped else "")
    )
    return 0


def _merge(args: argparse.Namespace) -> int:
    from zeus_bench.sweep.merge import merge_shards

    check_out(args.out, (".parquet",))
    df = merge_shards(args.shards, args.out)
    print(f"wrote {args.out}: {len(df)} rows from {len(args.shards)} shard(s)")
    return 0


def _project(args: argparse.Namespace) -> int:
    from zeus_bench.core.cost import Cost
    from zeus_bench.sweep.projection import NOTE, project, project_per_batch_size

    check_out(args.out, FORMAT_SUFFIXES[args.format])
    if args.per_batch_size:
        df = project_per_batch_size(args.train, args.power, args.gpu, Cost(args.eta), args.workloads_file)
    else:
        df = project(args.train, args.power, args.gpu, Cost(args.eta), args.workloads_file)
    if args.format == "table":
        limit = df.attrs.get("power_limit_note", "")
        emit(f"{NOTE}{limit}\n" + render(df, "table"), args.out)
    else:
        emit(render(df, args.format), args.out)
    return 0
