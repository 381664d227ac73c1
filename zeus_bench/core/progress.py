"""Progress lines for long steps: how much is done, and an estimate of the time left, through logging.

A step that runs for more than a few seconds says how far it is, so that no console (or log file
followed with ``tail -f``) stays silent for long::

    progress = Progress("arena fold 1", total=144)
    for task in tasks:
        run(task)
        progress.done(1, f"{task.gpu} {task.policy}")

A line is logged at INFO when the last unit is done, and otherwise at most once per ``every_s``
seconds (the first after the first unit done); the estimate of the time left is the elapsed time
per unit done times the units left.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

__all__ = ["EVERY_S", "Progress"]

EVERY_S = 5.0
"""Least seconds between two progress lines (the last one is always logged)."""


class Progress:
    """Counts units of work done and logs a line now and then with the time left."""

    def __init__(
        self,
        what: str,
        total: int,
        every_s: float = EVERY_S,
        logger: logging.Logger | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """Count ``total`` units of ``what`` (logged by ``logger``, default this module's)."""
        self.what = what
        self.total = max(int(total), 0)
        self.every_s = every_s
        self.log = logger or logging.getLogger(__name__)
        self.clock = clock
        self.count = 0
        self.start = clock()
        self._last: float | None = None

    def left_s(self) -> float:
        """Estimated seconds left: the elapsed time per unit done x the units left (inf before any)."""
        if self.count <= 0:
            return float("inf")
        return (self.clock() - self.start) / self.count * max(self.total - self.count, 0)

    def line(self, label: str = "") -> str:
        """The progress line now."""
        elapsed = self.clock() - self.start
        where = f" ({label})" if label else ""
        return (
            f"{self.what}: {self.count}/{self.total} done{where}, {elapsed:.0f} s so far, "
            f"about {self.left_s():.0f} s left"
        )

    def done(self, n: int = 1, label: str = "") -> None:
        """``n`` more units done (``label``: the last one's name); logs a line when one is due."""
        self.count += n
        now = self.clock()
        due = self._last is None or now - self._last >= self.every_s
        if self.count >= self.total or due:
            self._last = now
            self.log.info("%s", self.line(label))
