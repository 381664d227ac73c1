"""busy_heap: fewer collections while a long command runs, the collector as it was afterwards."""

from __future__ import annotations

import gc

import pytest

from zeus_bench.core.entry import BUSY_THRESHOLD, busy_heap


def test_frozen_and_slower_inside_restored_after() -> None:
    before = gc.get_threshold()
    kept = [object() for _ in range(10)]  # made before: frozen inside
    with busy_heap():
        assert gc.get_freeze_count() >= len(kept)
        assert gc.get_threshold() == (max(BUSY_THRESHOLD, before[0]), *before[1:])
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


def test_restored_when_the_command_fails() -> None:
    before = gc.get_threshold()
    with pytest.raises(RuntimeError), busy_heap():
        raise RuntimeError("boom")
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
