"""Whether the GPUs have warmed up: their SM clock and temperature, read and judged steady.

NVML reads only (nothing is ever set); a GPU object that cannot report a quantity leaves it out.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class GPUState:
    """SM clock and temperature of the GPUs at one moment (means over the GPUs; None: not read)."""

    sm_clock_mhz: float | None
    temperature_c: float | None


def read_gpu_state(gpus: Sequence[Any]) -> GPUState:
    """Mean SM clock and temperature of ``gpus`` (GPU objects of :mod:`zeus_bench.device`).

    A GPU that cannot report one (no such method, or it returns None) leaves it out.
    """
    clocks: list[float] = []
    temps: list[float] = []
    for gpu in gpus:
        for method, into in (("sm_clock_mhz", clocks), ("temperature_c", temps)):
            read = getattr(gpu, method, None)
            value = read() if read is not None else None
            if value is not None:
                into.append(float(value))
    return GPUState(statistics.fmean(clocks) if clocks else None, statistics.fmean(temps) if temps else None)


def is_steady(
    samples: Sequence[tuple[float, GPUState]],
    span_s: float = 2.0,
    max_temp_rise_c: float = 1.0,
    max_clock_spread: float = 0.02,
) -> bool:
    """Whether the GPU state sampled over the last ``span_s`` seconds is steady.

    Steady: the temperature rose by at most ``max_temp_rise_c`` over that span and the SM
    clock's range is at most ``max_clock_spread`` of its mean. A quantity never read counts as
    steady (fake GPUs, or drivers that do not report it); fewer samples than the span: not yet.
    """
    if not samples:
        return False
    now = samples[-1][0]
    recent = [st for t, st in samples if now - t <= span_s]
    if now - samples[0][0] < span_s or len(recent) < 2:
        return False
    temps = [st.temperature_c for st in recent if st.temperature_c is not None]
    clocks = [st.sm_clock_mhz for st in recent if st.sm_clock_mhz is not None]
    if temps and temps[-1] - temps[0] > max_temp_rise_c:
        return False
    return not (clocks and (max(clocks) - min(clocks)) > max_clock_spread * statistics.fmean(clocks))
