"""Arena benchmark: the arena's wall time in calibration units (goals: at most 40 and 300).

Run by ``make bench`` after ``bench_simulate.py``. First the command of issue 34's goal (at most 40
units): ``zeus-bench arena --gpu v100,a40 --seeds 1-50 --fold both --jobs 1``, every default policy,
one process, whole command. Then the full default arena (at most 300 units): every registered
policy but the references (``zeus-bench arena --policies all``) x V100, A40 and H200 x their six
workloads x seeds 1-50, judged half, horizon known, as one process ``zeus-bench arena``
(start-up, traces, replays, both tables). It prints the wall and CPU time, the peak RSS, the
calibration (``../shared/bench/calib.py``, the mean of its runs before and after) and their ratio
(calibration units).

    python benchmarks/bench_arena.py [--traces DIR] [--seeds 1-50] [--jobs 2] [--fold 1|2|both] [--case goal|full|both]

``--fold both`` times what the workflow runs (both cross-fitting folds, twice the replays); the
goal is stated for the default (fold 1).

``--traces`` is a folder of imported Parquet traces with the V100 and A40 power traces; by
default the published CSV traces (``$ZEUS_TRACE_DIR`` or ``../shared/traces/zeus-nsdi23``) are
imported to a temporary folder first (not timed). The H200 trace is the committed
``results/traces/h200/power-h200.parquet`` beside a copy of the train trace.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from measure import run_measured

REPO = Path(__file__).resolve().parents[1]
GOAL_UNITS = 300.0
GOAL_ARENA_UNITS = 40.0  # issue 34: the V100/A40 arena, both folds, --jobs 1, whole command
CALIB = REPO.parent / "shared" / "bench" / "calib.py"


def _calibration() -> float | None:
    """Seconds of the shared calibration script (None when it is not available)."""
    path = Path(os.environ.get("ZEUS_CALIB", CALIB))
    if not path.is_file():
        return None
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, check=True)
    return float(out.stdout.split()[-1])


def _zeus_bench() -> list[str]:
    return [sys.executable, "-m", "zeus_bench.cli.main"]


Timed = tuple[float, float, float | None, float | None, float]
"""Wall and CPU seconds, the calibration before and after (None without the script), peak RSS (MiB)."""


def _timed(cmd: list[str]) -> Timed:
    """Wall and CPU seconds of ``cmd`` (a child process), the calibration before and after, its peak RSS."""
    before = _calibration()
    m = run_measured(cmd)  # its own peak RSS, not this process's (measure.py)
    after = _calibration()
    return m.wall_s, m.cpu_s, before, after, m.peak_mib


def _report(title: str, timed: Timed, goal: float) -> None:
    """Print one timing: wall, CPU, peak RSS, calibration and units against ``goal``."""
    wall, cpu, before, after, rss = timed
    print(title)
    print(f"  wall {wall:.2f} s, CPU {cpu:.2f} s (children), peak RSS {rss:.0f} MiB")
    if before is not None and after is not None:
        calib = (before + after) / 2
        units = wall / calib
        verdict = "within" if units <= goal else "above"
        print(
            f"  calibration {before:.3f} s before, {after:.3f} s after: {units:.0f} units ({verdict} {goal:.0f})"
        )
    else:
        print("  (no calibration script: ../shared/bench/calib.py; set ZEUS_CALIB)")


def main(argv: list[str] | None = None) -> int:
    """Time the issue's arena command and the full default arena, in calibration units."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, default=None)
    ap.add_argument("--seeds", default="1-50")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--fold", choices=("1", "2", "both"), default="1")
    ap.add_argument(
        "--case",
        choices=("goal", "full", "both"),
        default="both",
        help="goal: the V100/A40 arena, both folds, one process (goal 40 units); full: every GPU (300)",
    )
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        traces = args.traces
        if traces is None:
            src = Path(os.environ.get("ZEUS_TRACE_DIR", REPO.parent / "shared" / "traces" / "zeus-nsdi23"))
            traces = Path(tmp) / "zeus"
            cmd = [*_zeus_bench(), "-q", "traces", "import-zeus", str(src), "--out", str(traces)]
            subprocess.run(cmd, check=True)
        spec = ["--traces", f"v100={traces}", "--traces", f"a40={traces}"]
        if args.case in ("goal", "both"):
            cmd = [
                *_zeus_bench(), "-q", "arena", *spec, "--gpu", "v100,a40", "--seeds", args.seeds,
                "--fold", "both", "--jobs", "1", "--out", str(Path(tmp) / "goal"),
            ]  # fmt: skip
            title = f"arena goal: v100/a40 x all policies x seeds {args.seeds}, --fold both, --jobs 1"
            _report(title, _timed(cmd), GOAL_ARENA_UNITS)
        if args.case == "goal":
            return 0
        gpus = ["v100", "a40"]
        h200 = REPO / "results" / "traces" / "h200" / "power-h200.parquet"
        if h200.is_file():
            own = Path(tmp) / "h200"
            own.mkdir()
            shutil.copy(traces / "train.parquet", own / "train.parquet")
            shutil.copy(h200, own / h200.name)
            spec += ["--traces", f"h200={own}"]
            gpus.append("h200")
        cmd = [
            *_zeus_bench(), "-q", "arena", *spec, "--gpu", ",".join(gpus), "--policies", "all",
            "--seeds", args.seeds, "--jobs", str(args.jobs), "--fold", args.fold, "--out", str(Path(tmp) / "arena"),
        ]  # fmt: skip
        title = f"arena: {'/'.join(gpus)} x all policies x seeds {args.seeds}, --fold {args.fold}, --jobs {args.jobs}"
        _report(title, _timed(cmd), GOAL_UNITS)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
