"""A train trace at a lower target, re-derived from the per-epoch log of ``zeus-bench sweep --train-to-target``.

``sweep --train-to-target`` logs the validation metric after every epoch of every run and stops a
run at the first epoch that reaches the registry's target. For any lower target (direction
``max``), the first epoch that reaches it is in that log too: training does not depend on the
target before the run stops. This rewrites the train shards of a sweep that used a target the
smaller batch sizes never reached (issue 35, first H200 call: 0.95) at the target finally chosen
(0.935): each run's ``target_epoch`` is the first logged epoch whose metric is at least the new
target, empty when none is. The other columns are the shard's own; the provenance says what was done.

Usage::

    python3 benchmarks/h200/train_trace_at_target.py --target 0.935 --shard bs64.parquet \
        --log train-bs64.log --out bs64.parquet
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

from zeus_bench.store import read_table, write_table

LINE = re.compile(r" bs (?P<bs>\d+) run (?P<run>\d+) epoch (?P<epoch>\d+): .* (?P<metric>[-0-9.eE]+)$")


def first_epochs(log: Path, target: float) -> dict[tuple[int, int], int | None]:
    """Per (batch size, run) in the log: the first epoch whose metric is >= ``target`` (None: none)."""
    out: dict[tuple[int, int], int | None] = {}
    for line in log.read_text().splitlines():
        m = LINE.search(line)
        if not m:
            continue
        key = (int(m["bs"]), int(m["run"]))
        out.setdefault(key, None)
        if out[key] is None and float(m["metric"]) >= target:
            out[key] = int(m["epoch"])
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--target", type=float, required=True)
    p.add_argument("--shard", type=Path, required=True, help="train shard written by the sweep")
    p.add_argument("--log", type=Path, required=True, help="that sweep's log")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    df = read_table(args.shard, "train")
    old = float(df["target_metric"].iloc[0])
    if args.target > old:
        raise SystemExit(f"a target above the sweep's ({old}) cannot be read off its log")
    epochs = first_epochs(args.log, args.target)
    logged = {k for k in epochs}
    rows = [(int(b), int(r)) for b, r in zip(df["batch_size"], df["run"], strict=True)]
    missing = [k for k in rows if k not in logged]
    if missing:
        raise SystemExit(f"runs without log lines: {missing}")
    df["target_metric"] = args.target
    df["target_epoch"] = pd.array([epochs[k] for k in rows], dtype="Int64")
    # Runs the log holds but the shard does not (a run stopped at the device call's deadline
    # before its row was written) are added only when they reached the new target.
    extra = [k for k in sorted(logged) if k not in rows and epochs[k] is not None]
    if extra:
        tmpl = df.iloc[[0]]
        add = pd.concat([tmpl.assign(batch_size=b, run=r, target_epoch=epochs[(b, r)]) for b, r in extra])
        df = pd.concat([df, add], ignore_index=True)
        df["target_epoch"] = df["target_epoch"].astype("Int64")
    meta = dict(df.attrs.get("zeus_bench", {}))
    write_table(
        df,
        args.out,
        "train",
        provenance={
            "derived_by": "benchmarks/h200/train_trace_at_target.py",
            "derived_from": {"shard": args.shard.name, "log": args.log.name, "sweep_target": old},
            "target_metric": args.target,
            "sweep_provenance": meta,
        },
    )
    print(f"wrote {args.out}: {len(df)} runs, {int(df['target_epoch'].notna().sum())} reach {args.target}")


if __name__ == "__main__":
    main()
