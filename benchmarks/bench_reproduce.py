"""`make reproduce` benchmark: the workflow in a fresh clone with the venv present, in calibration units (goal 300).

Run by ``make bench`` after ``bench_arena.py``. It clones this repository's committed ``HEAD`` into a
temporary folder, links the clone's ``.venv`` to this checkout's (the goal's "venv present"), and
times what ``make reproduce`` runs there, ``snakemake --cores 2``, with the clone's own code first
on ``PYTHONPATH`` and the published traces from ``$ZEUS_TRACE_DIR`` (default
``../shared/traces/zeus-nsdi23``; a machine that can download them may pass ``--download``). It
prints the wall and CPU time of the whole process tree, its peak RSS, the calibration
(``../shared/bench/calib.py``, before and after), their ratio against the goal, the longest time
the console showed nothing (the workflow runs on a terminal of its own, as under ``make reproduce``;
goal at most 15 s) and whether the outputs are byte for byte the committed ones (``git status`` in
the clone).

``--rev REV`` times another commit the same way (a before/after comparison: run both, alternated).
``--timeline`` also records every Python process of the run (its start, wall and CPU time and
command, ``timeline.py``) and prints the CPU by step and the processes of most CPU. ``--venv PATH``
links another venv: this checkout's usually holds the test extras too, which import more (a venv
of the core install alone is what ``make reproduce`` makes in a fresh clone).

    python benchmarks/bench_reproduce.py [--cores 2] [--download] [--keep] [--rev REV] [--timeline] [--venv PATH]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import timeline
from bench_arena import Timed, _report
from bench_arena import _calibration as calibration
from measure import Silence, run_measured

REPO = Path(__file__).resolve().parents[1]
GOAL_UNITS = 300.0  # issue 34: `make reproduce` in a fresh clone, venv present
GOAL_SILENCE_S = 15.0  # issue 34: no step of make reproduce silent longer on the console
TRACES = REPO.parent / "shared" / "traces" / "zeus-nsdi23"


def silence_line(silence: Silence) -> str:
    """The report's line on the console's longest silence, against issue 34's bound (:data:`GOAL_SILENCE_S`)."""
    verdict = "within" if silence.seconds <= GOAL_SILENCE_S else "above"
    before = f"after {silence.before[:70]!r}" if silence.before else "from the start"
    after = f"until {silence.after[:70]!r}" if silence.after else "to the end"
    return (
        f"  longest console silence {silence.seconds:.1f} s ({verdict} {GOAL_SILENCE_S:.0f} s): "
        f"{before}, {after}"
    )


def _changed(clone: Path) -> list[str]:
    """The clone's files the run changed or added (``git status --porcelain``), the venv link left out."""
    out = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    ).stdout
    return [line for line in out.splitlines() if line[3:].rstrip("/") != ".venv"]


def _commit(rev: str) -> str | None:
    """The full hash of commit ``rev`` of this checkout (None: no such commit)."""
    out = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    return out.stdout.strip() or None


def _clone_at(rev: str, clone: Path) -> bool:
    """Clone this checkout into ``clone`` at commit ``rev``; False if the clone lacks it (no branch or tag reaches it)."""
    subprocess.run(["git", "clone", "--quiet", str(REPO), str(clone)], check=True)
    checkout = subprocess.run(["git", "checkout", "--quiet", rev], cwd=clone, capture_output=True, text=True)
    return checkout.returncode == 0


def main(argv: list[str] | None = None) -> int:
    """Time the workflow in a fresh clone and say whether its outputs are the committed ones."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cores", type=int, default=2, help="snakemake --cores (make reproduce's default: 2)")
    ap.add_argument("--download", action="store_true", help="let the workflow download the traces")
    ap.add_argument("--keep", action="store_true", help="keep the clone (its path is printed)")
    ap.add_argument("--rev", default="HEAD", help="the commit to time (default HEAD)")
    ap.add_argument("--timeline", action="store_true", help="also print the CPU of every step (timeline.py)")
    ap.add_argument(
        "--venv",
        type=Path,
        default=REPO / ".venv",
        help="the venv linked into the clone (default: this checkout's .venv; one of the core install "
        "alone, as `make reproduce` makes it, imports less than a venv with the test extras: "
        "jsonschema's format checkers alone add about 1 s to Snakemake's start-up)",
    )
    args = ap.parse_args(argv)
    venv = args.venv.resolve()
    if not (venv / "bin" / "snakemake").is_file():
        print(
            f"bench_reproduce: {venv}/bin/snakemake not found: run `make reproduce` once first",
            file=sys.stderr,
        )
        return 2
    env = dict(os.environ)
    if not args.download:
        traces = Path(env.get("ZEUS_TRACE_DIR", TRACES))
        if not (traces / "summary_train.csv").is_file():
            print(
                f"bench_reproduce: no Zeus traces in {traces} (ZEUS_TRACE_DIR, or --download)",
                file=sys.stderr,
            )
            return 2
        env["ZEUS_TRACE_DIR"] = str(traces)
    rev = _commit(args.rev)
    if rev is None:
        print(f"bench_reproduce: --rev {args.rev}: no such commit in {REPO}", file=sys.stderr)
        return 2
    tmp = tempfile.mkdtemp(prefix="zb-reproduce-")
    clone = Path(tmp) / "zeus-bench"
    if not _clone_at(rev, clone):
        shutil.rmtree(tmp)
        print(
            f"bench_reproduce: --rev {args.rev}: not in a clone of {REPO} (no branch or tag reaches it)",
            file=sys.stderr,
        )
        return 2
    (clone / ".venv").symlink_to(venv)
    if args.timeline:
        env |= timeline.install(Path(tmp) / "timeline")
    env["PYTHONPATH"] = os.pathsep.join([str(clone), *filter(None, [env.get("PYTHONPATH")])])
    cmd = [str(venv / "bin" / "snakemake"), "--cores", str(args.cores)]
    before = calibration()
    m = run_measured(cmd, check=False, cwd=clone, env=env, console=True)
    after = calibration()
    timed: Timed = (m.wall_s, m.cpu_s, before, after, m.peak_mib)
    name = "HEAD" if args.rev == "HEAD" else f"{args.rev} ({rev[:12]})"
    _report(
        f"make reproduce: snakemake --cores {args.cores} in a fresh clone of {name}, venv present",
        timed,
        GOAL_UNITS,
    )
    if m.silence is not None:
        print(silence_line(m.silence))
    if args.timeline:
        print(timeline.report(timeline.read(Path(tmp) / "timeline" / "timeline.jsonl"), m.cpu_s))
    if m.returncode != 0:
        print(f"  the workflow failed (exit status {m.returncode}); run it in {clone} to see why")
        return 1
    changed = _changed(clone)
    if changed:
        print(f"  outputs NOT the committed ones: {len(changed)} path(s), e.g. {changed[:3]}")
    else:
        print("  outputs byte for byte the committed ones (git status clean)")
    if args.keep or changed:
        print(f"  clone kept: {clone}")
    else:
        shutil.rmtree(tmp)  # (the folder this run made, nothing else)
    return 0 if not changed else 1


if __name__ == "__main__":
    raise SystemExit(main())
