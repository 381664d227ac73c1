"""``zeus-bench measure [OPTIONS] -- COMMAND [ARGS]``: a command's GPU energy, like ``perf stat``.

The command runs unchanged (its output goes where it would go); when it ends, ``measure`` prints
its GPUs' energy, time and average power, each with its uncertainty, and exits with the command's
exit status. ``--format csv|json`` gives one row per (run, GPU) with every column of the
``energy_measurement`` table; ``--out FILE.parquet`` writes that table (``--out`` with another
suffix writes the ``--format`` text there instead of stdout).
"""

from __future__ import annotations

import argparse
import logging
import shlex
from pathlib import Path
from typing import Any

from zeus_bench.cli.common import (
    FORMAT_SUFFIXES,
    add_format_arg,
    add_int_option,
    check_out,
    emit,
    gpu_indices_arg,
    render,
)
from zeus_bench.cli.gpu import add_backend_arg

log = logging.getLogger(__name__)

#: Exit status when this process was interrupted (Ctrl-C) while the command ran.
INTERRUPTED = 130


def register(sub: Any) -> None:
    """Add ``measure``."""
    p = sub.add_parser(
        "measure",
        help="run a command and report its GPUs' energy, time and average power (like perf stat)",
        description="Run COMMAND and report the energy its GPUs used, the time it took and their average "
        "power, each with its uncertainty (one energy-counter update's energy per run; with --repeat, "
        "the standard error over runs too). Exit status: the command's. Put `--` before the command.",
        epilog="example: zeus-bench measure --gpus 0 -- python train.py --epochs 1",
    )
    p.add_argument(
        "--gpus",
        type=gpu_indices_arg,
        default=None,
        metavar="I,J",
        help="GPU indices to measure (default: every GPU of the backend)",
    )
    add_backend_arg(p)
    add_int_option(
        p,
        "--repeat",
        (1, 1000),
        1,
        "run the command N times and report the mean (default 1); stops at the first failing run",
        metavar="N",
    )
    add_format_arg(p)
    p.add_argument(
        "argv", nargs=argparse.REMAINDER, metavar="-- COMMAND [ARGS]", help="the command to measure"
    )
    p.set_defaults(func=_measure)


def _table(
    summary: list[dict[str, Any]], command: str, backend: str, runs: int, status: int, high: bool
) -> str:
    """The report as ``perf stat`` would print it: one line per GPU (and a total), +- uncertainties."""
    import pandas as pd

    def pm(value: float, err: float, digits: int) -> str:
        return f"{value:,.{digits}f} ± {err:,.{digits}f}"

    shown = pd.DataFrame(
        {
            "gpu": [s["gpu"] for s in summary],
            "name": [s["name"][:24] for s in summary],
            "energy (J)": [pm(s["energy_j"], s["energy_pm_j"], 1) for s in summary],
            "time (s)": [pm(s["time_s"], s["time_pm_s"], 3) for s in summary],
            "avg power (W)": [pm(s["avg_power_w"], s["avg_power_pm_w"], 1) for s in summary],
        }
    )
    shown_cmd = command if len(command) <= 60 else command[:57] + "..."
    how = "1 run" if runs == 1 else f"mean of {runs} runs"
    head = f"GPU energy of '{shown_cmd}' (backend {backend}; {how}; exit status {status}):\n\n"
    note = (
        "\nUncertainty above 5 %: the run lasted less than about 20 energy-counter updates; measure a "
        "longer run\nor several (--repeat).\n"
        if high
        else ""
    )
    return head + shown.to_string(index=False) + "\n" + note


def _measure(args: argparse.Namespace) -> int:
    import pandas as pd

    import zeus_bench.device.schema  # noqa: F401  (registers energy_measurement)
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.device import backend_name, get_backend
    from zeus_bench.device.command import measure_command, measurement_rows, run_summary
    from zeus_bench.store import validate, write_table

    argv = list(args.argv)
    if argv and argv[0] == "--":
        argv = argv[1:]
    if not argv:
        raise ConfigError("measure: no command given (usage: zeus-bench measure [OPTIONS] -- COMMAND [ARGS])")
    parquet = args.out is not None and args.out.suffix == ".parquet"
    check_out(args.out, (".parquet", *FORMAT_SUFFIXES[args.format]))
    backend = get_backend(args.backend)
    name = backend_name(args.backend)
    gpus = backend.gpus(args.gpus)
    runs = measure_command(argv, gpus, args.repeat)
    rows = measurement_rows(runs, gpus, name, argv)
    status = runs[-1].exit_status
    df = pd.DataFrame(rows)
    high = any(r.measurement.high_uncertainty for r in runs)
    if parquet:
        write_table(df, Path(args.out), "energy_measurement")
        log.info("wrote %d rows to %s", len(df), args.out)
        text = _table(run_summary(rows), shlex.join(argv), name, len(runs), status, high)
        emit(text, None)
    elif args.format == "table":
        emit(_table(run_summary(rows), shlex.join(argv), name, len(runs), status, high), args.out)
    else:
        emit(render(validate(df, "energy_measurement", "measure"), args.format, "{:.6g}"), args.out)
    if any(r.interrupted for r in runs):
        return INTERRUPTED
    return status if status >= 0 else 128 - status
