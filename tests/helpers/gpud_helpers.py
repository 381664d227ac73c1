"""Helpers of the ``zeus-bench gpud`` tests: a daemon on the fake backend, raw clients, test users."""

from __future__ import annotations

import grp
import json
import os
import pwd
import socket
import subprocess
import sys
import time
from pathlib import Path

ZB = [sys.executable, "-m", "zeus_bench.cli.main"]
#: The test users and group (created with useradd/groupadd when the tests run as root).
GROUP = "zbgpud"
MEMBER = "zbgpud-member"
OUTSIDER = "zbgpud-outsider"


def fake_limits(state: Path) -> list[float]:
    """The limits of the fake GPUs in a state file, W."""
    return [float(g["power_limit_w"]) for g in json.loads(state.read_text())["gpus"]]


def wait_for_limits(state: Path, expected: list[float], timeout: float = 15.0) -> list[float]:
    """The fake GPUs' limits once they equal ``expected`` or ``timeout`` s have passed.

    The daemon restores a closed client's GPUs on its own thread, a moment after the close: a
    loaded machine can take more than a second to get there.
    """
    deadline = time.monotonic() + timeout
    while (limits := fake_limits(state)) != expected and time.monotonic() < deadline:
        time.sleep(0.02)
    return limits


def setter_calls(state: Path) -> list[int]:
    """How many times each fake GPU's limit was set."""
    return [int(g["set_calls"]) for g in json.loads(state.read_text())["gpus"]]


def group_name() -> str:
    """The group the daemon serves: the test group as root, else this user's primary group."""
    if os.geteuid() == 0:
        ensure_users()
        return GROUP
    return grp.getgrgid(os.getgid()).gr_name


def ensure_users() -> None:
    """Create the test group, a member and an outsider (root only; idempotent)."""
    try:
        grp.getgrnam(GROUP)
    except KeyError:
        subprocess.run(["groupadd", GROUP], check=True)
    for user, extra in ((MEMBER, ["-G", GROUP]), (OUTSIDER, [])):
        try:
            pwd.getpwnam(user)
        except KeyError:
            subprocess.run(["useradd", "-M", "-N", "-s", "/bin/sh", *extra, user], check=True)


class Daemon:
    """``zeus-bench gpud`` on the fake backend in a subprocess, its log in ``folder/gpud.log``."""

    def __init__(self, folder: Path, group: str, env: dict[str, str]) -> None:
        self.folder = folder
        self.socket = folder / "gpud.sock"
        self.log = folder / "gpud.log"
        self.group = group
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self._log_start = 0

    def start(self, wait: bool = True) -> Daemon:
        cmd = [*ZB, "gpud", "--socket", str(self.socket), "--group", self.group, "--backend", "fake"]
        cmd += ["--state-dir", str(self.folder / "gpud-state")]
        self._log_start = self.log.stat().st_size if self.log.exists() else 0
        with open(self.log, "ab") as fh:
            self.proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=self.env)
        if wait:
            self.wait_listening()
        return self

    def wait_listening(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise AssertionError(f"gpud exited {self.proc.returncode}: {self.log.read_text()}")
            if b"listening on" in self.log.read_bytes()[self._log_start :]:
                return
            time.sleep(0.05)
        raise AssertionError(f"gpud did not start: {self.log.read_text()}")

    def stop(self, sig: int = 15) -> int:
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        return self.proc.wait(timeout=30)


class RawClient:
    """A bare socket to the daemon, for malformed requests; reads the greeting on connect."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(10)
        self.sock.connect(str(path))
        self.file = self.sock.makefile("rb")
        self.greeting = self.read()

    def send(self, data: bytes) -> dict[str, object]:
        self.sock.sendall(data)
        return self.read()

    def read(self) -> dict[str, object]:
        line = self.file.readline()
        if not line:
            return {"closed": True}
        answer: dict[str, object] = json.loads(line)
        return answer

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def user_dir(root: Path, name: str) -> Path:
    """A folder everyone may write (the test users' HOME, outputs and state)."""
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    path.chmod(0o777)
    return path


def as_user(
    user: str, argv: list[str], env: dict[str, str], timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``zeus-bench ARGV`` as ``user`` (from root, through run_as_user.py) with only ``env``.

    In ``/`` (every path in ``argv`` is absolute): the clone may lie where the user cannot enter
    (a parent folder of mode 0700), and a process whose working folder it cannot reach fails.
    """
    script = Path(__file__).with_name("run_as_user.py")
    return subprocess.run(
        [sys.executable, str(script), user, *argv],
        env=env,
        cwd="/",
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
