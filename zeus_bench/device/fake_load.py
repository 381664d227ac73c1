"""Fake GPUs under a training job's load: full power draw, and steps slowed by a power cap.

Real GPUs draw power and slow down under a cap by themselves; the fake backend models both
from a load the caller sets (:meth:`zeus_bench.device.fake.FakeGPU.set_load`). A job training on
fake GPUs enters :class:`FakeLoad` (load 1 for its duration, 0 after) and runs each step through
:meth:`FakeLoad.paced`, which stretches it by the fake GPUs' relative throughput at the limits in
force, so that traces measured on fake GPUs show the real trade-off.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from zeus_bench.device.base import GPU
from zeus_bench.device.fake import FakeGPU

T = TypeVar("T")


class FakeLoad:
    """Drives fake GPUs like a training job would (see the module docstring)."""

    def __init__(self, gpus: Sequence[FakeGPU]) -> None:
        """Wrap fake GPUs."""
        self.gpus = list(gpus)

    def __enter__(self) -> FakeLoad:
        for g in self.gpus:
            g.set_load(1.0)
        return self

    def __exit__(self, *exc: object) -> None:
        for g in self.gpus:
            g.set_load(0.0)

    def slowdown(self) -> float:
        """Factor by which steps are stretched at the current limits (>= 1)."""
        return 1.0 / min(float(g.relative_throughput()) for g in self.gpus)

    def paced(self, step: Callable[[], T]) -> Callable[[], T]:
        """``step`` stretched by :meth:`slowdown` at the limits in force now (itself if uncapped)."""
        factor = self.slowdown()
        if factor == 1.0:
            return step

        def slowed() -> T:
            start = time.perf_counter()
            out = step()
            time.sleep((time.perf_counter() - start) * (factor - 1.0))
            return out

        return slowed


def fake_load(gpus: Sequence[GPU]) -> FakeLoad | None:
    """A :class:`FakeLoad` over ``gpus`` when every one is a fake GPU, else None (real GPUs)."""
    fakes = [g for g in gpus if isinstance(g, FakeGPU)]
    if gpus and len(fakes) == len(gpus):
        return FakeLoad(fakes)
    return None
