"""The daemon's restore paths on data that tell each rule from its slip (issue 36).

A restore that fails on one GPU of several (the others are still put back, the journal kept), a
journal entry of GPUs that were never changed (not touched), a GPU absent at start-up beside one
present, the "already there" tolerance hit exactly, a GPU index equal to the count, and limits
at exactly the ends of the range. In-process, on the fake backend, with failures injected per GPU.
"""

from __future__ import annotations

import grp
import json
import os
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from tests.helpers.gpud_helpers import fake_limits
from zeus_bench.device.errors import DeviceError
from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.gpud import GPUDaemon
from zeus_bench.device.gpud_protocol import Connection
from zeus_bench.device.journal import SAME_LIMIT_TOLERANCE_W


class _OneGPUFails(FakeBackend):
    """The fake backend whose limit setter fails on the GPUs in :attr:`failing` (a GPU gone)."""

    failing: frozenset[int] = frozenset()
    sets: ClassVar[list[tuple[int, float]]] = []

    def gpu(self, index: int) -> Any:
        gpu = super().gpu(index)
        real = gpu.set_power_limit_w

        def setter(watts: float) -> None:
            if index in self.failing:
                raise DeviceError(f"GPU {index}: injected")
            self.sets.append((index, watts))
            real(watts)

        gpu.set_power_limit_w = setter  # type: ignore[method-assign]
        return gpu


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[tuple[GPUDaemon, Connection, Path]]:
    state = tmp_path / "fake.json"
    backend = _OneGPUFails(state, n_gpus=3)
    _OneGPUFails.failing = frozenset()
    _OneGPUFails.sets = []
    d = GPUDaemon(backend, tmp_path / "s.sock", grp.getgrgid(os.getgid()).gr_name, tmp_path / "st")
    d.journal_dir.mkdir(parents=True)
    a, b = socket.socketpair()
    yield d, Connection(a, os.getpid(), os.getuid()), state
    _OneGPUFails.failing = frozenset()
    a.close()
    b.close()


def _ok(d: GPUDaemon, conn: Connection, request: dict[str, Any]) -> dict[str, Any]:
    answer = d._answer(conn, json.dumps(request).encode())
    assert answer["ok"], answer
    return answer


def test_a_restore_failing_on_one_gpu_still_restores_the_others(
    daemon: tuple[GPUDaemon, Connection, Path],
) -> None:
    d, conn, state = daemon
    _ok(d, conn, {"cmd": "lease", "gpus": [0, 1, 2]})
    for gpu, watts in ((0, 300), (1, 400), (2, 500)):
        _ok(d, conn, {"cmd": "set", "gpu": gpu, "watts": watts})
    journal = conn.lease.journal if conn.lease else None
    assert journal is not None
    _OneGPUFails.failing = frozenset({0})  # the first GPU restored fails
    d._end_lease(conn, "test")
    assert fake_limits(state) == [300.0, 700.0, 700.0]  # GPUs 1 and 2 put back all the same
    assert journal.is_file() and d.holders == {}  # kept for the next start; every GPU free
    _OneGPUFails.failing = frozenset()
    assert d.restore_journal() == 3 and fake_limits(state) == [700.0, 700.0, 700.0]
    assert not journal.exists()


def test_a_lease_restores_only_the_gpus_it_changed(daemon: tuple[GPUDaemon, Connection, Path]) -> None:
    d, conn, state = daemon
    _ok(d, conn, {"cmd": "lease", "gpus": [0, 1]})
    _ok(d, conn, {"cmd": "set", "gpu": 1, "watts": 250})
    FakeBackend(state).gpu(0).set_power_limit_w(450)  # someone else's change to GPU 0, after the lease
    _OneGPUFails.sets = []
    d._end_lease(conn, "test")
    assert _OneGPUFails.sets == [(1, 700.0)]  # only what the lease changed
    assert fake_limits(state) == [450.0, 700.0, 700.0]


def test_the_journal_restores_only_changed_gpus_and_keeps_an_absent_ones_entry(
    daemon: tuple[GPUDaemon, Connection, Path],
) -> None:
    d, _conn, state = daemon
    gpus = [
        {"index": 0, "uuid": "GPU-fake-0", "previous_power_limit_w": 300.0, "changed": False},
        {"index": 1, "uuid": "GPU-fake-1", "previous_power_limit_w": 250.0, "changed": True},
        {"index": 2, "uuid": "GPU-fake-2", "previous_power_limit_w": 650.0, "changed": True},
    ]
    kept = d.journal_dir / "lease-1-1-pid1.json"
    kept.write_text(json.dumps({"backend": "fake", "pid": 1, "uid": 0, "gpus": [
        *gpus[:2], {"index": 5, "uuid": "GPU-gone", "previous_power_limit_w": 300.0, "changed": True},
    ]}))  # fmt: skip
    done = d.journal_dir / "lease-1-2-pid2.json"
    done.write_text(json.dumps({"backend": "fake", "pid": 2, "uid": 0, "gpus": [gpus[2]]}))
    assert d.restore_journal() == 2  # GPUs 1 and 2; not the unchanged 0, not the absent one
    assert fake_limits(state) == [700.0, 250.0, 650.0]
    assert kept.is_file() and not done.exists()


@pytest.mark.parametrize(
    ("current", "restored"),
    [
        (300.0 + SAME_LIMIT_TOLERANCE_W, False),  # within the tolerance, exactly: left as it is
        (300.0 - SAME_LIMIT_TOLERANCE_W, False),
        (300.0 + 2 * SAME_LIMIT_TOLERANCE_W, True),
    ],
)
def test_a_limit_already_back_within_the_tolerance_is_not_set_again(
    daemon: tuple[GPUDaemon, Connection, Path], current: float, restored: bool
) -> None:
    d, conn, state = daemon
    FakeBackend(state).gpu(0).set_power_limit_w(300.0)
    _ok(d, conn, {"cmd": "lease", "gpus": [0]})
    _ok(d, conn, {"cmd": "set", "gpu": 0, "watts": current})
    _OneGPUFails.sets = []
    d._end_lease(conn, "test")
    assert _OneGPUFails.sets == ([(0, 300.0)] if restored else [])
    assert fake_limits(state)[0] == (300.0 if restored else current)


def test_a_gpu_index_equal_to_the_count_is_refused_by_name(
    daemon: tuple[GPUDaemon, Connection, Path],
) -> None:
    d, conn, _state = daemon
    answer = d._answer(conn, b'{"cmd": "lease", "gpus": [3]}')
    assert not answer["ok"] and "no GPU 3" in answer["error"] and "0-2" in answer["error"]
    answer = d._answer(conn, b'{"cmd": "lease", "gpus": [-1]}')
    assert not answer["ok"] and "no GPU -1" in answer["error"]
    assert d.holders == {} and conn.lease is None
    _ok(d, conn, {"cmd": "lease", "gpus": [2]})  # the last one exists


def test_limits_at_exactly_the_ends_of_the_range_are_taken(
    daemon: tuple[GPUDaemon, Connection, Path],
) -> None:
    d, conn, state = daemon
    _ok(d, conn, {"cmd": "lease", "gpus": [0, 1]})
    _ok(d, conn, {"cmd": "set", "gpu": 0, "watts": 200.0})
    _ok(d, conn, {"cmd": "set", "gpu": 1, "watts": 700.0})
    assert fake_limits(state)[:2] == [200.0, 700.0]
    for watts in (199.99, 700.01):
        answer = d._answer(conn, json.dumps({"cmd": "set", "gpu": 0, "watts": watts}).encode())
        assert not answer["ok"] and "outside GPU 0's range 200-700 W" in answer["error"]
    assert fake_limits(state)[0] == 200.0
