"""The lifecycle both framework callbacks share, free of any framework.

A :class:`RecurrenceDriver` wraps one :class:`~zeus_bench.online.callback.ZeusCallback`: it enters
it when training starts, opens and closes each epoch's measurement, passes the steps through, and
leaves it (restoring power limits, reporting a clean run) exactly once. The framework callbacks
translate their hooks into these calls and the returned "stop" into their own stop flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from zeus_bench.core.errors import ConfigError
from zeus_bench.online.callback import ZeusCallback


class RecurrenceDriver:
    """Drive one recurrence's :class:`ZeusCallback` from epoch and step events.

    Args:
        zeus: The recurrence's callback (not yet entered; the driver enters and leaves it).
        metric: Name of the metric compared with ``zeus.target_metric`` at each epoch's end.
    """

    def __init__(self, zeus: ZeusCallback, metric: str) -> None:
        """Wrap ``zeus``; nothing is entered yet."""
        self.zeus = zeus
        self.metric = metric
        self._entered = False
        self._epoch_open = False

    def start(self) -> None:
        """Open the power-limit session and the energy monitor (once)."""
        if not self._entered:
            self.zeus.__enter__()
            self._entered = True

    def epoch_begin(self) -> bool:
        """Start an epoch's measurement; True when training should stop instead (already finished)."""
        if self.zeus.finished:
            return True
        self.zeus.on_epoch_begin()
        self._epoch_open = True
        return False

    def step_begin(self) -> None:
        """Before a training step of an open epoch."""
        if self._epoch_open:
            self.zeus.on_step_begin()

    def step_end(self, samples: int) -> None:
        """After a training step of an open epoch that trained on ``samples`` samples."""
        if self._epoch_open:
            self.zeus.on_step_end(samples=samples)

    def epoch_end(self, metrics: Mapping[str, Any], missing_hint: str) -> bool:
        """End the open epoch with its metric; True when training should stop (target or early stop).

        An event outside an open epoch (an evaluation outside training) is ignored.

        Raises:
            ConfigError: the metric is not in ``metrics`` (``missing_hint`` says where to log it).
        """
        if not self._epoch_open:
            return False
        if self.metric not in metrics:
            raise ConfigError(
                f"metric {self.metric!r} was not logged (logged: {', '.join(sorted(metrics)) or 'nothing'}); "
                f"{missing_hint}"
            )
        self._epoch_open = False
        self.zeus.on_epoch_end(float(metrics[self.metric]))
        return bool(self.zeus.finished)

    def close(self, exc: BaseException | None = None) -> None:
        """Leave the recurrence once: restore power limits and, after a clean run, report it."""
        if self._entered:
            self._entered = False
            self.zeus.__exit__(type(exc) if exc else None, exc, None)
