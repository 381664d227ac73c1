"""benchmarks/measure.py: a child's own peak RSS, not the benchmark's (Linux keeps ru_maxrss across fork/exec)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.modules import module_at

MEASURE = Path(__file__).resolve().parents[2] / "benchmarks" / "measure.py"

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss semantics are Linux's")


def _measure_module():  # type: ignore[no-untyped-def]
    return module_at(MEASURE, "bench_measure")


def test_the_childs_own_peak_not_the_parents() -> None:
    held = np.ones(40_000_000)  # 305 MiB resident in this process while the children start
    cmd = [sys.executable, "-c", "import numpy; a = numpy.ones(8_000_000)"]  # about 61 MiB of its own
    naive = subprocess.Popen(cmd)
    _, _, usage = os.wait4(naive.pid, 0)
    assert usage.ru_maxrss / 1024 > 300  # the plain child reports at least this process's RSS
    m = _measure_module().run_measured(cmd)
    assert m.returncode == 0
    assert 61 < m.peak_mib < 200  # its own array and interpreter, not this process's 305 MiB
    assert m.wall_s > 0 and m.cpu_s > 0
    del held


def test_a_failing_command_raises_unless_asked_not_to() -> None:
    mod = _measure_module()
    cmd = [sys.executable, "-c", "raise SystemExit(3)"]
    with pytest.raises(subprocess.CalledProcessError):
        mod.run_measured(cmd, quiet_stderr=True)
    assert mod.run_measured(cmd, check=False, quiet_stderr=True).returncode == 3


def test_the_longest_console_silence_and_the_lines_around_it() -> None:
    """A command on a terminal of its own: its longest gap between writes, found between the right lines."""
    script = (
        "import sys, time\n"
        "print('one'); time.sleep(0.2)\n"
        "print('two', end=''); time.sleep(0.1); print(' halves')\n"  # a line written in two parts
        "time.sleep(2.0)\n"  # longer than a start-up on a loaded machine
        "print('\\x1b[32mthree\\x1b[0m', file=sys.stderr); time.sleep(0.3)\n"  # in colour
        "print('four')\n"
    )
    m = _measure_module().run_measured([sys.executable, "-c", script], console=True)
    assert m.silence is not None and m.returncode == 0
    assert 1.9 < m.silence.seconds < 4.5  # the 2 s sleep, not the others
    assert (m.silence.before, m.silence.after) == ("two halves", "three")
    assert _measure_module().run_measured([sys.executable, "-c", "print(1)"]).silence is None


def test_a_silence_at_the_end_and_a_failure_on_a_terminal() -> None:
    mod = _measure_module()
    m = mod.run_measured([sys.executable, "-c", "import time; print('done'); time.sleep(2.0)"], console=True)
    assert m.silence is not None and m.silence.seconds > 1.9
    assert (m.silence.before, m.silence.after) == ("done", "")
    failing = [sys.executable, "-c", "raise SystemExit(4)"]
    with pytest.raises(subprocess.CalledProcessError):
        mod.run_measured(failing, console=True)
    assert mod.run_measured(failing, check=False, console=True).returncode == 4
