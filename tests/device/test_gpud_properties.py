"""``zeus-bench gpud``: any request up to the size limit is answered in one line and the daemon keeps serving.

Property-based (Hypothesis) over the protocol: arbitrary bytes, arbitrary JSON, and well-formed
commands with arbitrary field values, first through :meth:`GPUDaemon._answer` (fast, thousands
of cases, with backends that fail), then through a live daemon's socket. And the start-up rules:
a second daemon on a running one's socket or state folder stops with one line and touches
neither the GPUs nor the journal; a socket that cannot be made gives one line and leaves nothing.
"""

from __future__ import annotations

import grp
import json
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.helpers.gpud_helpers import ZB, Daemon, RawClient, fake_limits, group_name, wait_for_limits
from zeus_bench.device.errors import DeviceError
from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.gpud import GPUDaemon
from zeus_bench.device.gpud_client import COMMANDS, MAX_LINE_BYTES, GPUDClient
from zeus_bench.device.gpud_protocol import FIELDS, Connection, RequestError, parse_request

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)
#: Field values meant to break a handler: huge, negative, non-finite, wrong types, deep nests.
WILD = (
    st.integers(min_value=-(10**30), max_value=10**30)
    | st.sampled_from([0, 1, -1, 2**63, 10**300, 1e308, -0.0, 150.0, 700.0, 1000.0])
    | st.floats()
    | st.lists(st.integers(min_value=-3, max_value=10**20), max_size=70)
    | JSON
)


@st.composite
def commands(draw: st.DrawFn) -> dict[str, Any]:
    """A request with a known command and each of its fields (sometimes one more, sometimes one fewer)."""
    cmd = draw(st.sampled_from(COMMANDS))
    req: dict[str, Any] = {"cmd": cmd, **{name: draw(WILD) for name in FIELDS[cmd]}}
    if draw(st.booleans()) and req.keys() - {"cmd"}:
        req.pop(draw(st.sampled_from(sorted(req.keys() - {"cmd"}))))
    if draw(st.integers(0, 9)) == 0:
        req[draw(st.text(max_size=5))] = draw(WILD)
    return req


def _lines() -> st.SearchStrategy[bytes]:
    raw = st.binary(max_size=MAX_LINE_BYTES).map(lambda b: b.replace(b"\n", b" "))
    as_json = (JSON | commands()).map(lambda v: json.dumps(v, allow_nan=True).encode())
    deep = st.integers(1, MAX_LINE_BYTES // 2).map(lambda n: b"[" * n + b"]" * min(n, 5))
    return (raw | as_json | deep).filter(lambda b: len(b) <= MAX_LINE_BYTES)


@given(_lines())
@settings(max_examples=600, deadline=None)
def test_parse_request_refuses_in_one_line_or_returns_a_checked_request(line: bytes) -> None:
    try:
        req = parse_request(line)
    except RequestError as exc:
        assert "\n" not in str(exc) and str(exc)
        return
    assert req["cmd"] in FIELDS and set(req) == {"cmd", *FIELDS[req["cmd"]]}


class _FlakyBackend(FakeBackend):
    """The fake backend whose limit setter fails in a chosen way (a GPU gone, a bug)."""

    failure: type[Exception] | None = None

    def gpu(self, index: int) -> Any:
        gpu = super().gpu(index)
        failure = self.failure
        if failure is not None:

            def fail(watts: float) -> None:
                raise failure("injected")

            gpu.set_power_limit_w = fail  # type: ignore[method-assign]
        return gpu


@pytest.fixture
def daemon_in_process(tmp_path: Path) -> Iterator[tuple[GPUDaemon, Connection, Path]]:
    state = tmp_path / "fake.json"
    backend = _FlakyBackend(state, n_gpus=2)
    daemon = GPUDaemon(backend, tmp_path / "s.sock", grp.getgrgid(os.getgid()).gr_name, tmp_path / "st")
    daemon.journal_dir.mkdir(parents=True)
    a, b = socket.socketpair()
    yield daemon, Connection(a, os.getpid(), os.getuid()), state
    a.close()
    b.close()


@given(
    st.lists(_lines(), min_size=1, max_size=6), st.sampled_from([None, DeviceError, RuntimeError, KeyError])
)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_every_request_gets_one_answer_and_the_lease_state_stays_whole(
    daemon_in_process: tuple[GPUDaemon, Connection, Path], lines: list[bytes], failure: type[Exception] | None
) -> None:
    daemon, conn, state = daemon_in_process
    _FlakyBackend.failure = failure
    try:
        for line in [*lines, b'{"cmd": "lease", "gpus": [0]}', b'{"cmd": "set", "gpu": 0, "watts": 300}']:
            answer = daemon._answer(conn, line)
            assert isinstance(answer["ok"], bool) and json.dumps(answer).count("\n") == 0
            if not answer["ok"]:
                assert isinstance(answer["error"], str) and answer["error"]
        # The daemon's own books agree: every GPU it holds is this connection's lease.
        held = set() if conn.lease is None else set(conn.lease.previous_w)
        assert set(daemon.holders) == held
        if failure is None:
            assert fake_limits(state)[0] in (300.0, 700.0)
    finally:
        _FlakyBackend.failure = None
        daemon._end_lease(conn, "test over")
    assert daemon.holders == {}
    if failure is None:
        assert fake_limits(state) == [700.0, 700.0]  # the lease's end restored what it changed


@pytest.fixture
def live(tmp_path: Path) -> Iterator[tuple[Daemon, Path]]:
    state = tmp_path / "fake.json"
    FakeBackend(state, n_gpus=2).configure(allow_set=True)
    env = {**os.environ, "ZEUS_BENCH_FAKE_STATE": str(state)}
    env.pop("ZEUS_BENCH_GPUD", None)
    d = Daemon(tmp_path, group_name(), env).start()
    yield d, state
    d.stop(signal.SIGKILL)


def test_a_live_daemon_answers_every_line_and_keeps_serving(live: tuple[Daemon, Path]) -> None:
    daemon, state = live
    client = RawClient(daemon.socket)
    checked = 0

    @given(_lines())
    @settings(max_examples=150, deadline=None)
    def one(line: bytes) -> None:
        nonlocal checked
        answer = client.send(line + b"\n")
        assert "closed" not in answer and isinstance(answer["ok"], bool), (line[:80], answer)
        checked += 1

    one()
    client.send(b'{"cmd": "release"}\n')  # a lease a drawn line took, if any
    client.close()
    assert checked >= 100
    other = GPUDClient(str(daemon.socket))  # still serving, and nothing left changed
    assert other.status()["gpus"] == 2
    other.close()
    assert daemon.proc is not None and daemon.proc.poll() is None
    assert fake_limits(state) == [700.0, 700.0]


def _gpud(socket_path: Path, state_dir: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    cmd = [*ZB, "gpud", "--socket", str(socket_path), "--group", group_name(), "--backend", "fake"]
    return subprocess.run(
        [*cmd, "--state-dir", str(state_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_a_second_daemon_touches_neither_the_lease_nor_its_journal(
    live: tuple[Daemon, Path], tmp_path: Path
) -> None:
    daemon, state = live
    client = GPUDClient(str(daemon.socket))
    client.lease([0, 1])
    client.set_power_limit_w(1, 333)
    journal = sorted((tmp_path / "gpud-state" / "leases").glob("lease-*.json"))
    assert len(journal) == 1
    entry = journal[0].read_bytes()
    for sock, message in (
        (daemon.socket, f"--socket: another zeus-bench gpud already listens on {daemon.socket}"),
        (tmp_path / "other.sock", f"--state-dir: another zeus-bench gpud uses {tmp_path / 'gpud-state'}"),
    ):
        second = _gpud(sock, tmp_path / "gpud-state", daemon.env)
        assert second.returncode == 2, second.stderr
        assert second.stderr.strip().splitlines()[-1].startswith(f"zeus-bench: error: {message}")
        assert fake_limits(state) == [700.0, 333.0]  # the live lease is untouched
        assert journal[0].read_bytes() == entry
        assert not (tmp_path / "other.sock").exists()
    client.close()  # the first daemon restores it
    assert wait_for_limits(state, [700.0, 700.0]) == [700.0, 700.0]


@pytest.mark.parametrize(
    "where",
    [
        pytest.param(lambda t: t / ("d" * 120) / "gpud.sock", id="too-long"),
        pytest.param(lambda t: t / "a-file" / "sub" / "gpud.sock", id="under-a-file"),
        pytest.param(lambda t: Path("/proc/zeus-bench-gpud/gpud.sock"), id="read-only-place"),
        pytest.param(lambda t: t, id="a-folder"),
    ],
)
def test_an_impossible_socket_is_one_line_and_leaves_nothing(tmp_path: Path, where: Any) -> None:
    (tmp_path / "a-file").write_text("")
    before = sorted(tmp_path.rglob("*"))
    env = {**os.environ, "ZEUS_BENCH_FAKE_STATE": str(tmp_path / "fake.json")}
    out = _gpud(where(tmp_path), tmp_path / "state" / "gpud", env)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert lines[-1].startswith("zeus-bench: error: --socket:") and "Traceback" not in out.stderr, out.stderr
    assert sorted(p for p in tmp_path.rglob("*") if p.name != "fake.json" and ".lock" not in p.name) == before


def test_requests_from_many_clients_at_once_leave_the_daemon_serving(live: tuple[Daemon, Path]) -> None:
    daemon, state = live
    bad = [b"[" * 4000, b'{"cmd": "set", "gpu": 0, "watts": ' + b"9" * 400 + b"}", b"\xff\xfe", b"{}"]

    def hammer(line: bytes) -> None:
        c = RawClient(daemon.socket)
        for _ in range(20):
            assert c.send(line + b"\n")["ok"] is False
        c.close()

    threads = [threading.Thread(target=hammer, args=(line,)) for line in bad]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert GPUDClient(str(daemon.socket)).status()["leases"] == []
    assert fake_limits(state) == [700.0, 700.0]


def test_a_failed_restore_keeps_the_journal_and_frees_the_gpus(
    daemon_in_process: tuple[GPUDaemon, Connection, Path],
) -> None:
    daemon, conn, state = daemon_in_process
    assert daemon._answer(conn, b'{"cmd": "lease", "gpus": [0, 1]}')["ok"]
    assert daemon._answer(conn, b'{"cmd": "set", "gpu": 1, "watts": 333}')["ok"]
    journal = conn.lease.journal if conn.lease else None
    assert journal is not None and journal.is_file()
    _FlakyBackend.failure = DeviceError  # the restore's setter fails
    try:
        daemon._end_lease(conn, "test")
    finally:
        _FlakyBackend.failure = None
    assert journal.is_file() and daemon.holders == {}  # kept for the next start; GPUs free
    assert fake_limits(state) == [700.0, 333.0]
    assert daemon.restore_journal() == 1  # the next start puts it back and removes the entry
    assert fake_limits(state) == [700.0, 700.0] and not journal.exists()


def test_a_journal_entry_of_an_absent_gpu_is_kept(
    daemon_in_process: tuple[GPUDaemon, Connection, Path],
) -> None:
    daemon, _conn, state = daemon_in_process
    entry = {"backend": "fake", "pid": 1, "uid": 0, "gpus": [
        {"index": 0, "uuid": "GPU-gone", "previous_power_limit_w": 300.0, "changed": True},
        {"index": 1, "uuid": daemon.backend.gpu(1).uuid(), "previous_power_limit_w": 700.0, "changed": True},
    ]}  # fmt: skip
    path = daemon.journal_dir / "lease-1-1-pid1.json"
    path.write_text(json.dumps(entry))
    daemon.backend.gpu(1).set_power_limit_w(450)
    assert daemon.restore_journal() == 1  # GPU 1 restored, the absent one not
    assert fake_limits(state) == [700.0, 700.0] and path.is_file()


def test_an_unexpected_field_with_a_line_break_is_named_on_one_line() -> None:
    """Found by the property above: a field named "\\n" broke the error over two lines."""
    with pytest.raises(RequestError) as exc:
        parse_request(b'{"cmd": "release", "\\n": 0, "x": 1}')
    assert str(exc.value) == "release: unexpected field(s) '\\n', x"
