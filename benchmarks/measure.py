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
import re
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
class Silence:
    """The longest time a command wrote nothing to its console (:func:`run_measured` with ``console=True``).

    ``seconds``: from the start, between two writes, or from the last write to the end, the
    longest; ``before``: the last line written before it (empty: it began at the start);
    ``after``: the first line written after it (empty: it lasted to the end).
    """

    seconds: float
    before: str
    after: str


@dataclass(frozen=True)
class Measured:
    """What :func:`run_measured` measured of one command (``silence``: with ``console=True``, else None)."""

    wall_s: float
    cpu_s: float
    peak_mib: float
    returncode: int
    silence: Silence | None = None


def run_measured(
    cmd: list[str],
    check: bool = True,
    quiet_stderr: bool = False,
    quiet_stdout: bool = False,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    console: bool = False,
) -> Measured:
    """Run ``cmd`` from a small launcher; its wall and CPU seconds and its own peak RSS (MiB).

    ``check``: raise :class:`subprocess.CalledProcessError` on a non-zero exit status.
    ``quiet_stderr``: discard the command's standard error (its progress lines); ``quiet_stdout``: its output.
    ``cwd``, ``env``: the command's working directory and environment (default: this process's).
    ``console``: both streams go to a terminal of their own (a pseudo-terminal: every process
    writes as it would to a user's console, line by line), whose output is timed and not shown
    (``quiet_*`` are then not read): :attr:`Measured.silence` is its longest silence.
    The CPU time is the command's and its waited-for descendants' (``wait4``).
    """
    silence = None
    with tempfile.TemporaryDirectory(prefix="zb-measure-") as tmp:
        report = Path(tmp) / "usage.json"
        launcher = [sys.executable, "-c", _LAUNCHER, str(report), *cmd]
        if console:
            silence = _run_on_a_terminal(launcher, cwd, env)
        else:
            stderr = subprocess.DEVNULL if quiet_stderr else None
            stdout = subprocess.DEVNULL if quiet_stdout else None
            subprocess.run(launcher, check=True, stdout=stdout, stderr=stderr, cwd=cwd, env=env)
        got = json.loads(report.read_text())
    measured = Measured(
        float(got["wall"]), float(got["cpu"]), got["maxrss_kib"] / 1024.0, int(got["rc"]), silence
    )
    if check and measured.returncode != 0:
        raise subprocess.CalledProcessError(measured.returncode, cmd)
    return measured


_ESCAPES = re.compile(rb"\x1b\[[0-9;?]*[A-Za-z]")
"""A terminal's control sequences (colours, cursor moves): not part of a line's text."""


def _plain(line: bytes) -> str:
    """A line written to the terminal as text: its control sequences removed, stripped."""
    return _ESCAPES.sub(b"", line).decode(errors="replace").strip()


def _run_on_a_terminal(launcher: list[str], cwd: Path | None, env: dict[str, str] | None) -> Silence:
    """Run ``launcher`` with both streams on a pseudo-terminal; the longest time it wrote nothing there."""
    import os
    import pty
    import time

    main_fd, side_fd = pty.openpty()
    last = time.monotonic()  # (the start: a silence may begin there)
    longest, before, after, previous = 0.0, "", "", ""
    tail = b""
    try:
        proc = subprocess.Popen(
            launcher, stdin=subprocess.DEVNULL, stdout=side_fd, stderr=side_fd, cwd=cwd, env=env
        )
    finally:
        os.close(side_fd)  # (the child holds its own copies: the terminal ends when they close)
    with os.fdopen(main_fd, "rb", buffering=0) as terminal:
        while True:
            try:
                chunk = terminal.read(65536)
            except OSError:  # EIO: every writer has closed the terminal (Linux)
                chunk = b""
            now = time.monotonic()
            if not chunk:
                break
            text = (tail + chunk).replace(b"\r", b"").split(b"\n")
            tail = text.pop()
            first = _plain(text[0] if text else tail)
            if now - last > longest:
                longest, before, after = now - last, previous, first
            lines = [t for t in map(_plain, text) if t]
            previous = lines[-1] if lines else previous
            last = now
    if proc.wait() != 0:
        raise subprocess.CalledProcessError(proc.returncode, launcher)
    end = time.monotonic()
    if end - last > longest:
        longest, before, after = end - last, previous, ""
    return Silence(longest, before, after)
