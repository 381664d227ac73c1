"""Client of ``zeus-bench gpud``, the power-limit daemon (protocol in :mod:`zeus_bench.device.gpud`).

:class:`PowerLimitSession <zeus_bench.device.control.PowerLimitSession>` uses it when the
environment variable ``ZEUS_BENCH_GPUD`` names the daemon's socket: it leases its GPUs for the
lifetime of one connection and asks the daemon for every change of limit. Limits are still *read*
through the process's own backend (reading needs no privilege).

The protocol is JSON lines over a Unix stream socket: one request object per line, one answer
object per line, ``{"ok": true, ...}`` or ``{"ok": false, "error": "..."}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from typing import Any

from zeus_bench.device.errors import DeviceError

GPUD_ENV = "ZEUS_BENCH_GPUD"
#: Largest request or answer line, bytes (the daemon refuses longer requests and hangs up).
MAX_LINE_BYTES = 4096
#: The commands of the protocol; any other is refused.
COMMANDS = ("lease", "set", "release", "status")
#: Seconds a client waits for an answer before giving up on the daemon.
ANSWER_TIMEOUT_S = 30.0


class GPUDError(DeviceError):
    """The daemon is unreachable, refused a request, or broke the protocol."""


def gpud_socket() -> str | None:
    """The daemon's socket named by ``$ZEUS_BENCH_GPUD``, or None (then NVML is used directly)."""
    path = os.environ.get(GPUD_ENV, "").strip()
    return path or None


class GPUDClient:
    """One connection to the daemon; a lease taken on it lasts until :meth:`close` (or death).

    Args:
        path: The daemon's Unix socket.

    Raises:
        GPUDError: nothing listens at ``path`` (missing or stale socket), or no permission.
    """

    def __init__(self, path: str) -> None:
        self.path = path
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(ANSWER_TIMEOUT_S)
        try:
            self._sock.connect(path)
        except FileNotFoundError:
            self._sock.close()
            raise GPUDError(
                f"zeus-bench gpud: no socket at {path} (from ${GPUD_ENV}); start the daemon or unset {GPUD_ENV}"
            ) from None
        except ConnectionRefusedError:
            self._sock.close()
            raise GPUDError(
                f"zeus-bench gpud: nothing listens at {path} (a stale socket: the daemon is not running); "
                f"start it or unset {GPUD_ENV}"
            ) from None
        except PermissionError:
            self._sock.close()
            raise GPUDError(
                f"zeus-bench gpud: permission denied connecting to {path}; ask for membership of the "
                "daemon's group"
            ) from None
        except OSError as exc:
            self._sock.close()
            raise GPUDError(f"zeus-bench gpud: cannot connect to {path}: {exc.strerror or exc}") from None
        self._buffer = b""
        try:
            hello = self._read_line()
        except (OSError, ValueError) as exc:
            self._sock.close()
            raise GPUDError(f"zeus-bench gpud at {path}: no greeting ({exc})") from None
        if not hello.get("ok"):
            self._sock.close()
            raise GPUDError(f"zeus-bench gpud at {path} refused this process: {hello.get('error')}")

    def request(self, cmd: str, **fields: Any) -> dict[str, Any]:
        """Send one request and return its answer.

        Raises:
            GPUDError: the daemon refused it (its message), hung up or answered garbage.
        """
        line = json.dumps({"cmd": cmd, **fields}).encode() + b"\n"
        try:
            self._sock.sendall(line)
            answer = self._read_line()
        except (OSError, ValueError) as exc:
            raise GPUDError(f"zeus-bench gpud at {self.path}: connection lost ({exc})") from None
        if not answer.get("ok"):
            raise GPUDError(f"zeus-bench gpud: {answer.get('error', 'request refused')}")
        return answer

    def _read_line(self) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            chunk = self._sock.recv(MAX_LINE_BYTES)
            if not chunk:
                raise ValueError("the daemon closed the connection")
            self._buffer += chunk
            if len(self._buffer) > MAX_LINE_BYTES:
                raise ValueError("answer too long")
        line, _, self._buffer = self._buffer.partition(b"\n")
        answer = json.loads(line)
        if not isinstance(answer, dict):
            raise ValueError("answer is not an object")
        return answer

    def lease(self, indices: list[int]) -> dict[str, Any]:
        """Lease GPUs ``indices`` (the daemon's backend numbering); returns their uuids and ranges."""
        return self.request("lease", gpus=list(indices))

    def set_power_limit_w(self, index: int, watts: float) -> None:
        """Ask the daemon to set a leased GPU's limit."""
        self.request("set", gpu=int(index), watts=float(watts))

    def status(self) -> dict[str, Any]:
        """The daemon's leases: ``{"leases": [{"pid", "uid", "gpus"}...]}``."""
        return self.request("status")

    def close(self) -> None:
        """Hang up; the daemon restores whatever the lease still has changed (idempotent)."""
        with contextlib.suppress(OSError):
            self._sock.close()
