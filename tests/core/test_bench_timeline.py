"""benchmarks/timeline.py: every Python process of a run writes its own line; steps named; the report sums them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.modules import module_at

TIMELINE = Path(__file__).resolve().parents[2] / "benchmarks" / "timeline.py"

pytestmark = pytest.mark.skipif(
    sys.platform != "linux", reason="the monotonic clock shared by processes is Linux's"
)


def _timeline():  # type: ignore[no-untyped-def]
    return module_at(TIMELINE, "bench_timeline")


def test_each_process_and_its_forked_child_write_their_own_cpu(tmp_path: Path) -> None:
    tl = _timeline()
    env = dict(os.environ) | tl.install(tmp_path / "tl")
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < {}: pass\n"
    code = (
        busy.format(0.3)
        + "import os, sys, subprocess\n"
        + f"subprocess.run([sys.executable, '-c', {busy.format(0.2)!r}], check=True)\n"
        + "pid = os.fork()\n"
        + f"if pid == 0:\n    exec({busy.format(0.25)!r})\n    sys.exit(0)\n"  # a worker that exits normally
        + "os.waitpid(pid, 0)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    procs = tl.read(tmp_path / "tl" / "timeline.jsonl")
    assert len(procs) == 3
    parent = [p for p in procs if p.ppid == os.getpid()]
    assert len(parent) == 1
    children = sorted((p for p in procs if p.ppid == parent[0].pid), key=lambda p: p.cpu)
    assert len(children) == 2
    # each its own CPU (RUSAGE_SELF): the parent's 0.3 s does not include its children's 0.2 and 0.25 s
    assert 0.2 <= children[0].cpu < 0.24 and 0.25 <= children[1].cpu < 0.3
    assert 0.3 <= parent[0].cpu < 0.36
    assert all(p.start <= p.end for p in procs) and parent[0].start < min(c.start for c in children)
    forked = max(children, key=lambda p: p.cpu)  # its start is the fork's, not its parent's
    assert forked.start >= parent[0].start + 0.3 and forked.end - forked.start >= 0.25
    assert parent[0].end >= max(c.end for c in children)
    text = tl.report(procs, total_cpu_s=1.0)
    assert "3 Python processes" in text and "of 1.0 s in all" in text
    assert text.index("python -c") < text.index("the 3 processes of most CPU")


def test_no_line_without_the_log_variable(tmp_path: Path) -> None:
    tl = _timeline()
    env = dict(os.environ) | tl.install(tmp_path / "tl")
    del env[tl.LOG_ENV]
    subprocess.run([sys.executable, "-c", "pass"], check=True, env=env)
    assert (tmp_path / "tl" / "timeline.jsonl").read_text() == ""


@pytest.mark.parametrize(
    ("argv", "step"),
    [
        (["/v/bin/python3.11", "/v/bin/zeus-bench", "-q", "arena", "--gpu", "v100"], "zeus-bench arena"),
        (["/v/bin/python3.11", "-m", "zeus_bench.cli.main", "-q", "simulate"], "zeus-bench simulate"),
        (["/v/bin/python", "-m", "analysis.figures", "per-gpu", "--gpu", "a40"], "python -m analysis.figures per-gpu"),
        (["/v/bin/python", "-m", "analysis.report", "--out", "r.md"], "python -m analysis.report"),
        (["/v/bin/python3.11", "/v/bin/snakemake", "--cores", "2"], "snakemake"),
        (["/v/bin/python3.11", "-m", "snakemake", "--cores", "2"], "snakemake"),
        (["python", "/c/workflows/scripts/zeus_bench_many.py", "--jobs", "1", "--log", "l/x.log", "arena --gpu a40"],
         "zeus_bench_many.py arena"),  # (its lines are whole command lines)
        (["python", "-u", "-c", "pass"], "python -c"),
    ],
)  # fmt: skip
def test_steps_are_named_by_what_they_ran(argv: list[str], step: str) -> None:
    tl = _timeline()
    assert tl.Proc(1, 0, 0.0, 1.0, 0.5, tuple(argv)).step == step


def test_report_sums_steps_and_ranks_processes(tmp_path: Path) -> None:
    tl = _timeline()
    log = tmp_path / "timeline.jsonl"
    rows = [
        {"pid": 1, "ppid": 0, "start": 10.0, "end": 60.0, "cpu": 4.0, "argv": ["py", "/v/bin/snakemake"]},
        {"pid": 2, "ppid": 1, "start": 12.0, "end": 20.0, "cpu": 7.5, "argv": ["py", "-m", "analysis.figures", "per-gpu"]},
        {"pid": 3, "ppid": 1, "start": 21.0, "end": 26.0, "cpu": 4.5, "argv": ["py", "-m", "analysis.figures", "per-gpu"]},
        {"pid": 4, "ppid": 1, "start": 11.0, "end": 30.0, "cpu": 9.0, "argv": ["py", "/v/bin/zeus-bench", "arena"]},
    ]  # fmt: skip
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    procs = tl.read(log)
    assert [p.pid for p in procs] == [1, 4, 2, 3]  # by start
    lines = tl.report(procs, top=2).splitlines()
    assert "25.0 s of CPU" in lines[0]
    by_step = lines[2:5]
    assert "12.00 s" in by_step[0] and "x2" in by_step[0] and "per-gpu" in by_step[0]
    assert "9.00 s" in by_step[1] and "zeus-bench arena" in by_step[1]
    top = lines[6:]
    assert len(top) == 2 and "CPU   9.00" in top[0] and "start    1.0" in top[0] and "CPU   7.50" in top[1]
