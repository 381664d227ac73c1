"""The one thread that follows a GPU set's energy counters: :class:`CounterLog`.

An :class:`~zeus_bench.device.monitor.EnergyMonitor` owns one log, and the log owns the only
thread that reads the GPUs' energy counters. It does three things with the same reads:

* **Window edges.** An edge takes the caller's time and is queued (:meth:`CounterLog.submit`);
  one read of every counter then serves all the edges queued since the last read. One read
  blocks for about 4 ms on an H200 (NVML releases the GIL meanwhile), so the caller does not
  wait for it.
* **The update period.** NVML's counter moves in steps (about every 0.1 s on an H200). Until
  the period is known the thread polls every :data:`PROBE_POLL_S` and dates each change at the
  midpoint of the two reads around it; the period is the span of :data:`PROBE_UPDATES` changes
  over their number of intervals (a fixed period may be given instead).
* **Following the counters** (``follow=True``). The log keeps every (time, value) at which a
  counter was first seen to move, and :meth:`CounterLog.energy_between` interpolates linearly
  between those updates, which puts a window's edges within one read of where they are
  (an edge read lags the true energy by up to one update: 5 % of a 2 s window). Polling costs
  host time (on the H200 sweep of issue 15, continuous polling slowed host-bound steps,
  ShuffleNetV2 at batch 1024: 34,126 samples/s against 47,965 without it), so the log polls
  only near edges: from its start, or from :meth:`CounterLog.expect_edge`, until every counter
  has moved past the latest edge; then it pauses. The first read after a pause only sets the
  reference values, so no update is ever dated by a read that came after a gap.

Every read of the log, edge or poll, feeds the probe and (while following) the change log.
"""

from __future__ import annotations

import bisect
import logging
import threading
import time
from collections.abc import Callable, Sequence

from zeus_bench.device.base import GPU
from zeus_bench.device.errors import MeasurementWindowError

log = logging.getLogger(__name__)

#: Counter update period assumed where none could be measured (seen on an H200), s.
COUNTER_UPDATE_PERIOD_S = 0.1
#: Counter updates the start-up probe waits for before it computes the update period.
PROBE_UPDATES = 6
#: The probe gives up after this long (then assumes :data:`COUNTER_UPDATE_PERIOD_S`), s.
PROBE_TIMEOUT_S = 3.0
#: Pause between the probe's counter reads, s (on top of the read itself).
PROBE_POLL_S = 0.002
#: Pause between the reads that follow the counters near an edge, s.
FOLLOW_POLL_S = 0.002
#: Name of the log's thread (one per GPU set; the GPU indices follow in brackets).
THREAD_NAME = "zeus-bench-counters"


class Edge:
    """One window edge: the caller's time, and the counters once the log has read them."""

    __slots__ = ("done", "energy_j", "error", "mono_s", "power_w")

    def __init__(self, mono_s: float) -> None:
        """An edge at monitor-clock time ``mono_s``, s."""
        self.mono_s = mono_s
        self.energy_j: dict[int, float] = {}
        self.power_w: dict[int, float] = {}
        self.error: BaseException | None = None
        self.done = threading.Event()

    def wait(self) -> None:
        """Wait for the read; raise its error if it failed."""
        self.done.wait()
        if self.error is not None:
            raise self.error


def interpolate(times: Sequence[float], values: Sequence[float], t: float) -> float | None:
    """Counter value at ``t`` from the updates around it (None outside the recorded span)."""
    k = bisect.bisect_right(times, t)
    if k == 0 or k == len(times):
        return None
    t_a, t_b = times[k - 1], times[k]
    return values[k - 1] + (values[k] - values[k - 1]) * (t - t_a) / (t_b - t_a)


class CounterLog:
    """The energy counters of a GPU set, read by one thread (see the module notes).

    Args:
        gpus: GPUs with an energy counter.
        clock: Monotonic time source, s (the monitor's).
        period_s: The counters' update period, s; None measures it (the probe).
        follow: Record the counters' change times, for :meth:`energy_between`.
        poll_s: Pause between reads while following, s.
        start: Start the thread (False: the owner reads with :meth:`read` and :meth:`poll`
            on its own thread; deterministic tests).
    """

    def __init__(
        self,
        gpus: Sequence[GPU],
        clock: Callable[[], float] = time.monotonic,
        period_s: float | None = None,
        follow: bool = False,
        poll_s: float = FOLLOW_POLL_S,
        start: bool = True,
    ) -> None:
        if period_s is not None and not period_s > 0:
            raise MeasurementWindowError(f"counter_update_period_s must be > 0, got {period_s}")
        if not poll_s > 0:
            raise MeasurementWindowError(f"poll_s must be > 0, got {poll_s}")
        self.gpus = list(gpus)
        self.clock = clock
        self.poll_s = float(poll_s)
        self._cond = threading.Condition()
        self._pending: list[Edge] = []
        self._stop = False
        self._read_lock = threading.Lock()  # one NVML read at a time, whichever thread reads
        self._lock = threading.Lock()  # the probe's and the change log's data
        # Update period.
        self.period_s: dict[int, float] = {}
        self._period_ready = threading.Event()
        self._changes: dict[int, list[float]] = {g.index: [] for g in self.gpus}
        self._probe_last: dict[int, tuple[float, float]] = {}
        self._probe_errors = 0
        if period_s is not None:
            self.period_s = {g.index: float(period_s) for g in self.gpus}
            self._period_ready.set()
        self._probe_deadline = time.monotonic() + PROBE_TIMEOUT_S  # real time, whatever the clock
        # Change log (follow=True): per GPU, the times and values at which it was seen moving.
        self.follow = follow
        self._ticks: dict[int, tuple[list[float], list[float]]] = {g.index: ([], []) for g in self.gpus}
        self._last: dict[int, float | None] = dict.fromkeys(self._changes)
        self._active = follow
        self._awaiting_edge = False
        self._need_past: float | None = None
        self._thread: threading.Thread | None = None
        if start:
            name = f"{THREAD_NAME}[{','.join(str(g.index) for g in self.gpus)}]"
            self._thread = threading.Thread(target=self._run, name=name, daemon=True)
            self._thread.start()

    # Edges ------------------------------------------------------------------------------
    def submit(self, edge: Edge) -> None:
        """Queue ``edge`` for the thread's next read (and, when following, follow past it)."""
        with self._cond:
            if self._stop:
                raise MeasurementWindowError("the energy monitor is closed")
            self._pending.append(edge)
            self._note_edge(edge.mono_s)
            self._cond.notify()

    def read(self, edges: Sequence[Edge] = ()) -> dict[int, float] | None:
        """Read every counter (and instant power when there are edges) for ``edges``, now.

        The read feeds the probe and the change log. A failed read is handed to the edges
        (None is returned), or raised when there are none.
        """
        stamps: dict[int, float] = {}
        with self._read_lock:
            try:
                energy: dict[int, float] = {}
                for g in self.gpus:
                    energy[g.index] = float(g.total_energy_j())
                    stamps[g.index] = self.clock()
                power = {g.index: g.instant_power_w() for g in self.gpus} if edges else {}
            except Exception as exc:  # handed to whoever waits for these edges
                for edge in edges:
                    edge.error = exc
                    edge.done.set()
                if not edges:
                    raise
                return None
            self._record(stamps, energy)
        for edge in edges:
            edge.energy_j, edge.power_w = energy, power
            edge.done.set()
        return energy

    def flush(self) -> None:
        """Wait until every edge submitted so far has been read."""
        edge = Edge(self.clock())
        with self._cond:
            if self._stop:
                raise MeasurementWindowError("the energy monitor is closed")
            self._pending.append(edge)
            self._cond.notify()
        edge.done.wait()

    # Update period ----------------------------------------------------------------------
    def period(self) -> dict[int, float]:
        """Update period per GPU, s (waits for the probe, at most :data:`PROBE_TIMEOUT_S`)."""
        if self._thread is None:
            self._finish_probe()
        if not self._period_ready.wait(PROBE_TIMEOUT_S + 5.0):  # the thread is gone
            return {g.index: COUNTER_UPDATE_PERIOD_S for g in self.gpus}
        return self.period_s

    def _probing(self) -> bool:
        return not self._period_ready.is_set()

    def _observe(self, stamps: dict[int, float], energy: dict[int, float]) -> None:
        """Probe: date each change at the midpoint of the two reads around it (under the lock)."""
        for index, value in energy.items():
            previous = self._probe_last.get(index)
            if previous is not None and value != previous[1]:
                self._changes[index].append((previous[0] + stamps[index]) / 2.0)
            self._probe_last[index] = (stamps[index], value)
        enough = all(len(c) >= PROBE_UPDATES for c in self._changes.values())
        if enough or time.monotonic() > self._probe_deadline:
            self._finish_probe()

    def _finish_probe(self) -> None:
        if self._period_ready.is_set():
            return
        for index, changes in self._changes.items():
            if len(changes) >= 3:
                self.period_s[index] = (changes[-1] - changes[0]) / (len(changes) - 1)
            else:
                log.warning(
                    "GPU %d: energy counter seen changing %d time(s) in %.1f s; assuming it updates "
                    "every %g s",
                    index,
                    len(changes),
                    PROBE_TIMEOUT_S,
                    COUNTER_UPDATE_PERIOD_S,
                )
                self.period_s[index] = COUNTER_UPDATE_PERIOD_S
        log.debug("energy counter update period(s): %s s", self.period_s)
        self._period_ready.set()

    # Following ----------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """Whether the counters are being followed now (False while paused or not following)."""
        return self._active

    def poll(self) -> None:
        """Read every counter once, now, record those that moved, and pause if nothing is near."""
        self.read(())
        self._maybe_pause()

    def activate(self) -> None:
        """Follow again; the first read after a pause only sets the reference values."""
        if not self.follow:
            return
        with self._cond:
            if not self._active:
                with self._lock:
                    self._last = dict.fromkeys(self._last)
                self._active = True
            self._cond.notify()

    def pause(self) -> None:
        """Stop following until :meth:`activate`, :meth:`expect_edge` or the next edge."""
        with self._cond:
            self._active = False

    def expect_edge(self) -> None:
        """An edge is near: follow from now until the counters have moved past the next edge."""
        if not self.follow:
            return
        with self._cond:
            self._awaiting_edge = True
        self.activate()

    def _note_edge(self, mono_s: float) -> None:
        """An edge at ``mono_s``: follow until every counter has moved past it."""
        if not self.follow:
            return
        self._awaiting_edge = False
        self._need_past = mono_s if self._need_past is None else max(self._need_past, mono_s)
        self.activate()

    def _maybe_pause(self) -> None:
        """Pause once every counter has moved past the latest edge and none is expected."""
        with self._cond:  # against an edge or expect_edge() arriving meanwhile
            need = self._need_past
            if self._active and not self._awaiting_edge and need is not None and self.passed(need):
                self._active = False

    def _record(self, stamps: dict[int, float], energy: dict[int, float]) -> None:
        with self._lock:
            if self._probing():
                self._observe(stamps, energy)
            if not (self.follow and self._active):
                return
            for index, value in energy.items():
                last = self._last[index]
                if last is not None and value != last:
                    times, values = self._ticks[index]
                    times.append(stamps[index])
                    values.append(value)
                self._last[index] = value

    def passed(self, t: float) -> bool:
        """Whether every counter has been seen moving after time ``t`` (so ``t`` interpolates)."""
        with self._lock:
            return all(times and times[-1] > t for times, _ in self._ticks.values())

    def gpu_energy_between(self, t0: float, t1: float) -> dict[int, float] | None:
        """Energy per GPU between monitor-clock times ``t0`` and ``t1``, J; None if not bracketed."""
        out: dict[int, float] = {}
        with self._lock:
            for index, (times, values) in self._ticks.items():
                a, b = interpolate(times, values, t0), interpolate(times, values, t1)
                if a is None or b is None:
                    return None
                out[index] = b - a
        return out

    def energy_between(self, t0: float, t1: float) -> float | None:
        """Energy summed over the GPUs between ``t0`` and ``t1``, J; None if not bracketed."""
        per_gpu = self.gpu_energy_between(t0, t1)
        return None if per_gpu is None else float(sum(per_gpu.values()))

    def changes(self, gpu_index: int) -> tuple[list[float], list[float]]:
        """A copy of one GPU's change log: the times and the values it was first seen at."""
        with self._lock:
            times, values = self._ticks[gpu_index]
            return list(times), list(values)

    # Thread -----------------------------------------------------------------------------
    def _timeout(self) -> float | None:
        if self._probing():
            return PROBE_POLL_S
        return self.poll_s if self._active else None

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: bool(self._pending) or self._stop, self._timeout())
                batch, self._pending = self._pending, []
                if self._stop and not batch:
                    break
                polling = self._probing() or self._active
            if not (batch or polling):
                continue
            try:
                self.read(batch)
            except Exception as exc:  # a poll without edges failed
                self._poll_failed(exc)
                continue
            self._maybe_pause()
        self._finish_probe()

    def _poll_failed(self, exc: BaseException) -> None:
        if self._probing():
            self._probe_errors += 1
            log.debug("energy counter probe read failed: %s", exc)
            if self._probe_errors > 3:
                self._finish_probe()
        if self.follow and self._active:
            # Windows fall back to their edge reads from here on.
            log.warning("energy counter following stopped: %s", exc)
            self.follow = self._active = False

    def close(self) -> None:
        """Stop the thread after its queued reads (idempotent)."""
        with self._cond:
            self._stop = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join()
        self._finish_probe()
