"""Run ``zeus-bench`` or a Python script with every NVML setter trapped (observe mode only).

On a lent GPU nothing may change its settings: this wrapper replaces every NVML function that
could (``nvmlDeviceSet*``, ``*Reset*``, ``*Clear*``, MIG creation and destruction, ...) with one
that raises, on top of ``zeus_bench.device.nvml.forbid_power_limit_writes``, before anything
else runs. The trap sits at module level, so processes spawned by DistributedDataParallel
sweeps (which re-import the main module as ``__mp_main__``) are trapped too.

Usage::

    python3 benchmarks/h200/observe_only.py zeus-bench sweep --observe ...
    python3 benchmarks/h200/observe_only.py script benchmarks/h200/counter_probe.py --gpu 0
"""

from __future__ import annotations

import re
import runpy
import sys
from typing import Any

import pynvml

from zeus_bench.device.nvml import forbid_power_limit_writes

SETTER = re.compile(r"^nvml\w*?(Set|Reset|Clear|Create|Destroy|Modify|Enable|Disable)[A-Z_]")
READ_ONLY = {"nvmlEventSetCreate", "nvmlEventSetFree", "nvmlEventSetWait", "nvmlEventSetWait_v2"}


def trap_nvml_setters() -> list[str]:
    """Make every NVML setter raise; return the names trapped."""
    forbid_power_limit_writes(pynvml)
    trapped = []
    for name in dir(pynvml):
        if SETTER.match(name) and name not in READ_ONLY and callable(getattr(pynvml, name)):

            def refuse(*_args: Any, _name: str = name, **_kwargs: Any) -> None:
                raise RuntimeError(f"{_name} called under observe_only.py: GPU settings are never written")

            setattr(pynvml, name, refuse)
            trapped.append(name)
    return trapped


TRAPPED = trap_nvml_setters()

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in ("zeus-bench", "script"):
        print("usage: observe_only.py zeus-bench ARGS... | script FILE.py ARGS...", file=sys.stderr)
        sys.exit(2)
    if sys.argv[1] == "zeus-bench":
        from zeus_bench.cli.main import run

        sys.argv = ["zeus-bench", *sys.argv[2:]]
        run()
    else:
        sys.argv = sys.argv[2:]
        runpy.run_path(sys.argv[0], run_name="__main__")
