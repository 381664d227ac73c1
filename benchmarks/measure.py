"""A child process's wall time, CPU time and peak resident memory, measured apart from the benchmark's own.

On Linux a process's peak RSS as ``wait4`` and ``RUSAGE_CHILDREN`` report it (``ru_maxrss``) is kept
across ``fork`` and ``exec``: a child forked from a benchmark that holds 400 MiB reports at least 400
MiB, whatever it used itself. :func:`run_measured` therefore starts the command from a small launcher
(a fresh interpreter running :data:`_LAUNCHER`), which times it and reads its usage with ``wait4``: the
command inherits only the launcher's few MiB.

    from measure import run_measured
    m = run_measured([sys.executable, "-m", "zeus_bench.cli.main", "simulate", ...])
    m.wall_s, m.cpu_s, m.peak_mib
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

# The launcher: run argv[2:], then write its wall, CPU seconds (user + system), peak RSS (KiB) and exit
# status to the file argv[1] (its own output streams are the command's).
_LAUNCHER = (
    "import json, os, subprocess, sys, time\n"
    "start = time.perf_counter()\n"
    "proc = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(proc.pid, 0)\n"
    "wall = time.perf_counter() - start\n"
    "out = {'wall': wall, 'cpu': usage.ru_utime + usage.ru_stime, 'maxrss_kib': usage.ru_maxrss,\n"
    "       'rc': os.waitstatus_to_exitcode(status)}\n"
    "open(sys.argv[1], 'w').write(json.dumps(out))\n"
)


@dataclass(frozen=True)
class Measured:
    """What :func:`run_measured` measured of one command."""

    wall_s: float
    cpu_s: float
    peak_mib: float
    returncode: int


def run_measured(
    cmd: list[str],
    check: bool = True,
    quiet_stderr: bool = False,
    quiet_stdout: bool = False,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> Measured:
    """Run ``cmd`` from a small launcher; its wall and CPU seconds and its own peak RSS (MiB).

    ``check``: raise :class:`subprocess.CalledProcessError` on a non-zero exit status.
    ``quiet_stderr``: discard the command's standard error (its progress lines); ``quiet_stdout``: its output.
    ``cwd``, ``env``: the command's working directory and environment (default: this process's).
    The CPU time is the command's and its waited-for descendants' (``wait4``).
    """
    with tempfile.TemporaryDirectory(prefix="zb-measure-") as tmp:
        report = Path(tmp) / "usage.json"
        stderr = subprocess.DEVNULL if quiet_stderr else None
        launcher = [sys.executable, "-c", _LAUNCHER, str(report), *cmd]
        stdout = subprocess.DEVNULL if quiet_stdout else None
        subprocess.run(launcher, check=True, stdout=stdout, stderr=stderr, cwd=cwd, env=env)
        got = json.loads(report.read_text())
    measured = Measured(float(got["wall"]), float(got["cpu"]), got["maxrss_kib"] / 1024.0, int(got["rc"]))
    if check and measured.returncode != 0:
        raise subprocess.CalledProcessError(measured.returncode, cmd)
    return measured
