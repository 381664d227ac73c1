"""Compare ``zeus-bench simulate`` outputs of two versions of the code: the same runs tables, or not.

A change meant to make the simulator faster must leave every row as it was. This script checks
out ``--ref`` (default ``main``) in a temporary git worktree, runs the same ``simulate`` commands
with that checkout and with this one, reads both outputs back with
:func:`zeus_bench.store.read_table` and compares them with pandas ``DataFrame.equals`` (values,
dtypes, column order, row order). The commands cover the 1,200-job grid of ``make bench``, other
knobs (eta 0.3, beta 3, beta 1.25, ``--window``), every policy, an arrival table and a drift table.

    python benchmarks/compare_runs.py [--ref main] [--traces DIR] [--seeds 1-200]

``--traces`` is a folder of imported Parquet traces (default: ``$ZEUS_TRACE_DIR`` imported to a
temporary folder). Prints one line per command and exits 1 if any output differs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _commands(traces: Path, extra: Path, seeds: str) -> dict[str, list[str]]:
    """Name -> ``simulate`` arguments (without ``--out``)."""
    base = ["simulate", "--traces", str(traces), "--gpu", "v100"]
    return {
        "grid (make bench)": [*base, "--workloads", "all", "--policies", "zeus", "--seeds", seeds],
        "eta 0.3": [*base, "--policies", "zeus", "--seeds", "1-40", "--eta", "0.3"],
        "beta 3": [*base, "--policies", "zeus", "--seeds", "1-40", "--beta", "3"],
        "beta 1.25, a40": [*base[:-1], "a40", "--policies", "zeus", "--seeds", "1-40", "--beta", "1.25"],
        "window 4": [*base, "--policies", "zeus", "--seeds", "1-20", "--window", "4"],
        "every policy": [*base, "--policies", "all", "--seeds", "1-5"],
        "arrivals": [
            *base,
            "--policies",
            "zeus",
            "--seeds",
            "1-3",
            "--arrivals",
            str(extra / "arrivals.csv"),
        ],
        "drift": [*base, "--policies", "zeus", "--seeds", "1-10", "--drift", str(extra / "drift.csv")],
        "csv output": [*base, "--workloads", "imagenet", "--policies", "zeus", "--seeds", "1-10"],
    }


def _run(checkout: Path, args: list[str], out: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    subprocess.run(
        [sys.executable, "-m", "zeus_bench.cli.main", "-q", *args, "--out", str(out)],
        cwd=checkout,
        env=env,
        check=True,
    )


def main() -> int:
    """Run the comparison; 0 when every output is equal, 1 otherwise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ref", default="main", help="git revision to compare with (default main)")
    parser.add_argument("--traces", type=Path, default=None, help="imported Parquet traces")
    parser.add_argument("--seeds", default="1-200", help="seeds of the grid command (default 1-200)")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    import zeus_bench.sim  # noqa: F401 - registers the runs table's schema (read_table knows it then)
    from zeus_bench.store import read_table

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        traces = args.traces
        if traces is None:
            csv_dir = Path(
                os.environ.get("ZEUS_TRACE_DIR", REPO.parent / "shared" / "traces" / "zeus-nsdi23")
            )
            if not (csv_dir / "summary_train.csv").is_file():
                print(f"no traces at {csv_dir}: pass --traces or set ZEUS_TRACE_DIR", file=sys.stderr)
                return 2
            from zeus_bench.traces.zeus_csv import import_zeus

            traces = tmp / "traces"
            import_zeus(csv_dir, traces)
        (tmp / "arrivals.csv").write_text(
            "group,start_time,end_time,workload,runtime_ratio\n"
            "g1,0,100,imagenet,1.0\ng1,50,160,imagenet,0.8\ng1,200,260,imagenet,1.2\n"
            "g2,0,80,squad,1.0\ng2,90,150,squad,1.1\n"
        )
        (tmp / "drift.csv").write_text(
            "workload,batch_size,recurrence,epoch_factor\nimagenet,256,20,1.5\nimagenet,128,30,0.7\n"
        )
        ref = tmp / "ref"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(ref), args.ref], check=True,
                       capture_output=True)  # fmt: skip
        differ = 0
        try:
            for name, cmd in _commands(traces, tmp, args.seeds).items():
                suffix = ".csv" if name == "csv output" else ".parquet"
                ours, theirs = tmp / f"ours{suffix}", tmp / f"theirs{suffix}"
                _run(REPO, cmd, ours)
                _run(ref, cmd, theirs)
                if suffix == ".csv":
                    same = ours.read_bytes() == theirs.read_bytes()
                    rows = ours.read_text().count("\n") - 1
                else:
                    a, b = read_table(ours, "runs"), read_table(theirs, "runs")
                    same, rows = a.equals(b) and list(a.dtypes) == list(b.dtypes), len(a)
                differ += not same
                print(f"{'same' if same else 'DIFFERENT'}: {name} ({rows:,} rows)")
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(ref)], check=False)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
