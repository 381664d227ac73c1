"""Progress lines: at most one per interval, the last always, with the time left estimated."""

from __future__ import annotations

import logging

import pytest

from zeus_bench.core.progress import Progress


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_lines_are_throttled_and_estimate_the_time_left(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    p = Progress("replays", 10, every_s=5.0, clock=clock)
    assert p.left_s() == float("inf")
    with caplog.at_level(logging.INFO, logger="zeus_bench.core.progress"):
        clock.now += 2.0
        p.done(1, "v100 zeus")  # the first: logged
        clock.now += 2.0
        p.done(1)  # 2 s after the last line: quiet
        clock.now += 4.0
        p.done(2)  # 6 s after: logged, 8 s for 4 units -> 12 s for the 6 left
        clock.now += 1.0
        p.done(6, "a40 bo-ei")  # the last: always logged
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "replays: 1/10 done (v100 zeus), 2 s so far, about 18 s left",
        "replays: 4/10 done, 8 s so far, about 12 s left",
        "replays: 10/10 done (a40 bo-ei), 9 s so far, about 0 s left",
    ]
    assert p.left_s() == 0.0
