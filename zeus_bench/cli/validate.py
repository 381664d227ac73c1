"""``zeus-bench validate``: the simulator against a run measured on a GPU (``workflows/validate.smk``).

* ``validate noise`` turns repeated power points into the run-to-run noise table and level;
* ``validate compare`` places the measured online run in the simulated distribution and writes
  the per-recurrence table, the findings and a short report (``results/validation/<gpu>/``).

Batch-size side only, at the GPU's current power limit (observe mode).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add ``validate noise`` and ``validate compare``."""
    p = sub.add_parser(
        "validate",
        help="compare the simulator with a run measured on a GPU (workflows/validate.smk)",
        description="Validation of the simulator against a measured online run: batch-size side only, at "
        "the GPU's current power limit (observe mode).",
    )
    vsub = p.add_subparsers(dest="validate_command", required=True, metavar="{noise,compare}")
    n = vsub.add_parser(
        "noise",
        help="run-to-run noise of time per epoch and power from repeated power points",
        description="Read power-trace shards that measure some batch sizes several times (the sweep's "
        "points and their repeats) and write the validation_noise table; print the pooled level.",
    )
    n.add_argument("shards", type=Path, nargs="+", metavar="POWER.parquet", help="power traces or shards")
    n.add_argument("--workload", required=True, help="workload id (the table's workload column)")
    n.add_argument(
        "--out", type=Path, required=True, metavar="FILE.parquet", help="validation_noise table to write"
    )
    n.set_defaults(func=_noise)
    c = vsub.add_parser(
        "compare",
        help="place the measured online run in the simulated distribution; findings and report",
        description="Write recurrences.parquet, findings.parquet and report.md into --out-dir.",
    )
    c.add_argument("--measured", type=Path, required=True, help="validation_online table of the online run")
    c.add_argument(
        "--sim", type=Path, required=True, help="runs table of `zeus-bench simulate` (policy zeus)"
    )
    c.add_argument("--sim-noise", type=Path, required=True, help="the same simulation with --noise")
    c.add_argument("--noise", type=Path, required=True, help="validation_noise table")
    c.add_argument(
        "--power",
        type=Path,
        default=None,
        metavar="POWER.parquet",
        help="the power trace the simulation replayed: the measured tries costed by it (the gap's time-and-power share)",
    )
    c.add_argument(
        "--repeats",
        type=Path,
        nargs="+",
        default=[],
        metavar="ONLINE.parquet",
        help="validation_online tables of the same online run repeated (other optimizer seeds)",
    )
    from zeus_bench.core.entry import add_output_dir_arg

    add_output_dir_arg(
        c, "--out-dir", "folder of the comparison's tables and report (absent or empty, unless --force)"
    )
    c.set_defaults(func=_compare)


def _noise(args: argparse.Namespace) -> int:
    import pandas as pd

    import zeus_bench.catalog  # noqa: F401  (the power, runs and validation kinds it reads)
    from zeus_bench.cli.common import check_out
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.store import read_table, write_table
    from zeus_bench.studies.validation import noise_table

    check_out(args.out, (".parquet",))
    frames = [read_table(s, "power") for s in args.shards]
    power = pd.concat(frames, ignore_index=True)
    gpus = sorted(power["gpu"].unique())
    if len(gpus) != 1:
        raise ConfigError(f"validate noise: the shards hold several GPU kinds: {', '.join(gpus)}")
    table = noise_table(power, gpus[0], args.workload)
    write_table(table, args.out, "validation_noise", provenance={"shards": [str(s) for s in args.shards]})
    print(f"{float(table['noise_level'].iloc[0]):.6g}")
    return 0


def _compare(args: argparse.Namespace) -> int:
    import zeus_bench.catalog  # noqa: F401  (the power, runs and validation kinds it reads)
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.core.fsutil import atomic_write_text, output_dir
    from zeus_bench.sim.summarize import read_runs
    from zeus_bench.store import read_table, write_table
    from zeus_bench.studies.validation import (
        findings,
        findings_table,
        gap_at_n,
        recurrence_table,
        render_report,
        repeat_findings,
        trace_cost_findings,
    )

    measured = read_table(args.measured, "validation_online")
    noise = read_table(args.noise, "validation_noise")
    if measured.empty:
        raise ConfigError(f"{args.measured}: no measured tries")
    gpu, workload = str(measured["gpu"].iloc[0]), str(measured["workload"].iloc[0])
    sim, sim_noise = read_runs(args.sim), read_runs(args.sim_noise)
    rec = recurrence_table(measured, sim, sim_noise, gpu, workload)
    level = float(noise["noise_level"].iloc[0])
    found = findings(rec, level, measured=measured)
    if args.power is not None:
        gap = gap_at_n(rec)
        if gap != 0.0:
            eta = float(sim["eta"].iloc[0])
            found = [*found, *trace_cost_findings(measured, read_table(args.power, "power"), eta, gap)]
    if args.repeats:
        repeats = [read_table(r, "validation_online") for r in args.repeats]
        found = [*found, *repeat_findings(repeats, measured, sim)]
    prov = {
        "measured": str(args.measured),
        "sim": str(args.sim),
        "sim_noise": str(args.sim_noise),
        "repeats": [str(r) for r in args.repeats],
        "power": None if args.power is None else str(args.power),
    }
    owned = {"recurrences.parquet", "findings.parquet", "report.md"}
    with output_dir(args.out_dir, args.force, owned.__contains__, "--out-dir") as out:
        write_table(rec, out / "recurrences.parquet", "validation_recurrences", provenance=prov)
        write_table(
            findings_table(found, gpu, workload), out / "findings.parquet", "validation_findings", prov
        )
        atomic_write_text(out / "report.md", render_report(found, rec, noise, measured))
    for f in found:
        print(f.text)
    return 0
