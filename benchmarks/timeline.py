"""Every Python process of a run, with its start, wall and CPU time: where a workflow's time goes.

:func:`install` writes a ``sitecustomize.py`` into a folder; a Python process that has that folder
on ``PYTHONPATH`` (and ``ZB_TIMELINE_LOG`` set) appends one JSON line to the log as it exits: its
pid and parent pid, when it started and ended (from the monotonic clock at start-up, which every
process of the machine shares), its own CPU seconds (user + system, ``RUSAGE_SELF``: a child's are
its own line) and its command line. Snakemake, each ``zeus-bench`` and ``python -m ...`` step, and
the workers a step forks and exits normally each write a line; a process ended by ``os._exit`` or a
signal writes none (:func:`report` says how much CPU the run's lines leave unaccounted for).
No wrapper and no change to the workflow: the workflow's shell prefix keeps ``PYTHONPATH``.
A ``sitecustomize`` of the environment's own is shadowed while timing.

    env |= install(folder)       # then run the workflow with env
    print(report(read(log), total_cpu_s))
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

LOG_ENV = "ZB_TIMELINE_LOG"

# Imported by every Python process started with the folder on PYTHONPATH: at exit, one line.
_SITECUSTOMIZE = """\
import os as _os

if _os.environ.get("ZB_TIMELINE_LOG"):
    import atexit as _atexit
    import time as _time

    _START = _time.monotonic()

    def _zb_timeline_forked() -> None:  # a forked worker starts now
        global _START
        _START = _time.monotonic()

    _os.register_at_fork(after_in_child=_zb_timeline_forked)

    def _zb_timeline_line() -> None:
        import json
        import resource
        import sys

        use = resource.getrusage(resource.RUSAGE_SELF)
        line = json.dumps({
            "pid": _os.getpid(), "ppid": _os.getppid(), "start": _START, "end": _time.monotonic(),
            "cpu": use.ru_utime + use.ru_stime, "argv": list(getattr(sys, "orig_argv", sys.argv)),
        })
        fd = _os.open(_os.environ["ZB_TIMELINE_LOG"], _os.O_WRONLY | _os.O_APPEND | _os.O_CREAT, 0o644)
        try:
            _os.write(fd, (line + "\\n").encode())  # one write: lines of processes at once stay whole
        finally:
            _os.close(fd)

    _atexit.register(_zb_timeline_line)
"""


@dataclass(frozen=True)
class Proc:
    """One process's line: its pids, start and end (monotonic seconds), own CPU seconds and command."""

    pid: int
    ppid: int
    start: float
    end: float
    cpu: float
    argv: tuple[str, ...]

    @property
    def step(self) -> str:
        """What it ran, in short: ``zeus-bench <command>``, ``python -m <module> [<command>]``, ``snakemake`` or a script's name."""
        args = list(self.argv[1:])
        while args and args[0].startswith("-") and args[0] not in ("-m", "-c"):
            args.pop(0)  # the interpreter's options
        if not args:
            return Path(self.argv[0]).name
        if args[0] == "-c":
            return "python -c"
        if args[0] == "-m" and args[1:2] != ["zeus_bench.cli.main"]:
            module = args[1] if len(args) > 1 else ""
            if module == "snakemake":
                return "snakemake"
            return " ".join([f"python -m {module}", *[a for a in args[2:3] if not a.startswith("-")]])
        if args[0] == "-m":
            rest = args[2:]  # (python -m zeus_bench.cli.main)
        elif Path(args[0]).name == "zeus-bench":
            rest = args[1:]
        else:  # a script: its name and the first plain word it was given (a batch runner's: its lines' command)
            firsts = (a.split()[0] for a in args[1:] if a.strip())
            word = next((w for w in firsts if re.fullmatch(r"[a-z][a-z0-9-]*", w)), None)
            return " ".join([Path(args[0]).name, *([word] if word else [])])
        command = next((a for a in rest if not a.startswith("-")), None)
        return f"zeus-bench {command}" if command else "zeus-bench"


def install(folder: Path) -> dict[str, str]:
    """Write the timing ``sitecustomize.py`` into ``folder``; the environment variables that turn it on.

    The log is ``folder/timeline.jsonl`` (emptied here). Returns ``PYTHONPATH`` (``folder`` first,
    then the caller's) and :data:`LOG_ENV`.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    log = folder / "timeline.jsonl"
    log.write_text("")
    path = os.pathsep.join([str(folder), *filter(None, [os.environ.get("PYTHONPATH")])])
    return {"PYTHONPATH": path, LOG_ENV: str(log)}


def read(log: Path) -> list[Proc]:
    """The processes of a timeline log, in the order they started."""
    procs = []
    for line in log.read_text().splitlines():
        d = json.loads(line)
        procs.append(Proc(d["pid"], d["ppid"], d["start"], d["end"], d["cpu"], tuple(d["argv"])))
    return sorted(procs, key=lambda p: p.start)


def report(procs: list[Proc], total_cpu_s: float | None = None, top: int = 15) -> str:
    """The processes' CPU by step and the ``top`` processes by CPU, each with its start and wall time.

    ``total_cpu_s``: the run's whole CPU time (its process tree's), to say what the lines leave out.
    """
    if not procs:
        return "  timeline: no process wrote a line"
    t0 = min(p.start for p in procs)
    total = sum(p.cpu for p in procs)
    by_step: dict[str, list[float]] = defaultdict(lambda: [0, 0.0])
    for p in procs:
        by_step[p.step][0] += 1
        by_step[p.step][1] += p.cpu
    lines = [f"  timeline: {len(procs)} Python processes, {total:.1f} s of CPU in their own lines"]
    if total_cpu_s is not None:
        lines[0] += (
            f" of {total_cpu_s:.1f} s in all (the rest: shells, other programs, processes that wrote none)"
        )
    lines.append("  CPU by step (processes, seconds, share):")
    for step, (n, cpu) in sorted(by_step.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"    {cpu:7.2f} s {100 * cpu / total:5.1f} %  x{int(n):<3d} {step}")
    lines.append(f"  the {min(top, len(procs))} processes of most CPU (start and wall time, s):")
    for p in sorted(procs, key=lambda p: -p.cpu)[:top]:
        cmd = " ".join(Path(a).name if k < 2 and os.sep in a else a for k, a in enumerate(p.argv))
        lines.append(
            f"    start {p.start - t0:6.1f}  wall {p.end - p.start:6.2f}  CPU {p.cpu:6.2f}  {cmd[:100]}"
        )
    return "\n".join(lines)
