"""Fault injection for the crash-safety tests: SIGKILL this process at a named point.

``ZEUS_BENCH_FAULT=NAME:N`` makes the N-th call of :func:`fault_point` ``(NAME)`` in a process
kill that process with SIGKILL (no handler, no ``finally``, no atexit: as the OOM killer or a
SLURM time limit would). The points: ``warmup`` (after each warm-up step), ``window`` (after each
measured step inside an energy window), ``write`` (inside every atomic table write, after the
temporary file is written and before it replaces the target), ``merge`` (``sweep-merge``, its
shards read, before its output is written). ``NAME:N:group`` kills the whole
process group instead (a workflow manager and all its jobs at once). Unset (always, outside
tests), a point costs one environment lookup.
"""

from __future__ import annotations

import os
import signal

FAULT_ENV = "ZEUS_BENCH_FAULT"
_reached: dict[str, int] = {}


def fault_point(name: str) -> None:
    """SIGKILL this process if ``$ZEUS_BENCH_FAULT`` names this point and its count is reached."""
    spec = os.environ.get(FAULT_ENV)
    if not spec:
        return
    point, _, rest = spec.partition(":")
    if point != name:
        return
    count, _, scope = rest.partition(":")
    _reached[name] = _reached.get(name, 0) + 1
    if _reached[name] == int(count or 1):
        if scope == "group":
            os.killpg(os.getpgrp(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
