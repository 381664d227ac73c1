"""Fake GPUs under a training job's load: full power draw, and steps slowed by a power cap.

Real GPUs draw power and slow down under a cap by themselves; the fake backend models both
from a load the caller sets (:meth:`zeus_bench.device.fake.FakeGPU.set_load`). A job training on
fake GPUs enters :class:`FakeLoad` (load 1 for its duration, 0 after) and runs each step through
:meth:`FakeLoad.paced`, which stretches it by the fake GPUs' relative throughput at the limits in
force, so that traces measured on fake GPUs show the real trade-off.

With the fake GPUs' speed model (``samples_per_s`` > 0, the default) a step of B samples lasts
exactly the model's time (:meth:`FakeLoad.step_s`), in one of two ways:

* on a :class:`ModelClock` (the sweep's): simulated seconds that advance by each step's model
  time and by nothing else. The fake GPUs' energy, the energy monitor and the measurement's
  bounds all read that clock, so a point's throughput and energy per sample are the model's
  exactly, whatever the host's load or speed, and no time is spent sleeping;
* on the host's clock (code that times steps itself, such as the online example): the pacing
  keeps a deadline on the monotonic clock and sleeps until it after the step's own computation
  (the deadline carries over from step to step, so sleep overshoot does not accumulate). A host
  too slow for the model falls back to its own time, with one warning.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from typing import TypeVar

from zeus_bench.device.base import GPU
from zeus_bench.device.fake import FakeGPU

T = TypeVar("T")
#: Update period the energy monitor assumes for fake GPUs on a :class:`ModelClock`, s: their
#: counter is exact at every read (no NVML-like steps), so one microsecond of uncertainty.
MODEL_COUNTER_PERIOD_S = 1e-6
log = logging.getLogger(__name__)
#: Set once this process has warned that the host is slower than the fake GPU's model (warned once).
SLOW_HOST_WARNED = threading.Event()


class ModelClock:
    """Simulated seconds of fake GPUs: start at the wall clock, then advance only by :meth:`advance`.

    A clock function (``clock()`` returns seconds) for :class:`~zeus_bench.device.fake.FakeBackend`,
    the energy monitor and the measurement loop; thread-safe (the monitor reads it from a thread).
    """

    def __init__(self, start_s: float | None = None) -> None:
        """Start at ``start_s`` (default: now, on ``time.monotonic``, the fake state's clock)."""
        self._now = time.monotonic() if start_s is None else float(start_s)
        self._lock = threading.Lock()

    def __call__(self) -> float:
        """Simulated now, s."""
        with self._lock:
            return self._now

    def advance(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (>= 0)."""
        if not seconds >= 0:
            raise ValueError(f"a clock only moves forward, got {seconds}")
        with self._lock:
            self._now += seconds


class FakeLoad:
    """Drives fake GPUs like a training job would (see the module docstring)."""

    def __init__(self, gpus: Sequence[FakeGPU], clock: ModelClock | None = None) -> None:
        """Wrap fake GPUs; with ``clock`` (their backend's), steps take simulated time on it."""
        self.gpus = list(gpus)
        self.clock = clock
        # The host-clock pacing's deadline, shared by every paced step of this load (a loop may
        # wrap each step anew: the deadline still carries over from one step to the next).
        self._deadline = 0.0

    def _wait_out(self, start: float, now: float, target: float) -> None:
        """Sleep until the step begun at ``start`` (monotonic s) has lasted ``target`` s of the model.

        Back to back (the step began within 50 ms of the previous deadline), the step starts at
        that deadline, so that sleep overshoot does not accumulate. A host slower than the model
        keeps its own time, with one warning per process.
        """
        begin = self._deadline if 0 < start - self._deadline < 0.05 else start
        self._deadline = begin + target
        if now > self._deadline:
            if not SLOW_HOST_WARNED.is_set():
                log.warning(
                    "the host took %.4f s for a step the fake GPU model gives %.4f s: such steps take "
                    "the host's time (a smaller model, e.g. --tiny, keeps the model's); warned once",
                    now - start,
                    target,
                )
                SLOW_HOST_WARNED.set()
            self._deadline = now
        else:
            time.sleep(self._deadline - now)

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

    def step_s(self, samples: int) -> float:
        """Seconds the model gives a step of ``samples`` at the current limits (0: no speed model)."""
        speed = min(float(g.model_samples_per_s(samples)) for g in self.gpus)
        return samples / speed * self.slowdown() if speed > 0 else 0.0

    def paced(self, step: Callable[[], T], samples: int | None = None) -> Callable[[], T]:
        """``step`` run at the fake GPUs' speed at the limits in force now.

        With ``samples`` (the step's batch) and a speed model, each call lasts the model's
        :meth:`step_s` (measured from the end of the previous call when they follow each
        other); otherwise the host's time of the step stretched by :meth:`slowdown`.
        """
        target = self.step_s(samples) if samples else 0.0
        clock = self.clock
        if target > 0 and clock is not None:

            def simulated() -> T:
                out = step()
                clock.advance(target)
                return out

            return simulated
        if target > 0:

            def modelled() -> T:
                start = time.monotonic()
                out = step()
                self._wait_out(start, time.monotonic(), target)
                return out

            return modelled
        factor = self.slowdown()
        if factor == 1.0:
            return step

        def slowed() -> T:
            start = time.perf_counter()
            out = step()
            time.sleep((time.perf_counter() - start) * (factor - 1.0))
            return out

        return slowed


def fake_load(gpus: Sequence[GPU], clock: ModelClock | None = None) -> FakeLoad | None:
    """A :class:`FakeLoad` over ``gpus`` when every one is a fake GPU, else None (real GPUs)."""
    fakes = [g for g in gpus if isinstance(g, FakeGPU)]
    if gpus and len(fakes) == len(gpus):
        return FakeLoad(fakes, clock)
    return None


def model_clock(backend: object, gpus: Sequence[GPU]) -> ModelClock | None:
    """Put a fake backend whose GPUs have a speed model on a :class:`ModelClock` (returned); else None."""
    from zeus_bench.device.fake import FakeBackend

    fakes = [g for g in gpus if isinstance(g, FakeGPU)]
    if not isinstance(backend, FakeBackend) or not gpus or len(fakes) != len(gpus):
        return None
    if min(g.model_samples_per_s() for g in fakes) <= 0:
        return None
    clock = ModelClock()
    backend.clock = clock
    return clock
