"""The protocol of ``zeus-bench gpud``: request checks, peer credentials, leases and their journal.

See :mod:`zeus_bench.device.gpud` for the commands and their answers.
"""

from __future__ import annotations

import json
import math
import os
import pwd
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zeus_bench.device.gpud_client import COMMANDS

PROTOCOL_VERSION = 1
#: Most GPUs one lease may name.
MAX_LEASE_GPUS = 64
#: Fields of each command (besides ``cmd``), with their JSON types.
FIELDS: dict[str, dict[str, str]] = {
    "lease": {"gpus": "list"},
    "set": {"gpu": "int", "watts": "number"},
    "release": {},
    "status": {},
}
assert tuple(FIELDS) == COMMANDS


class RequestError(Exception):
    """A request the daemon refuses (its message goes back to the client)."""


@dataclass
class Lease:
    """GPUs held by one connection, their limits before the lease and which were changed."""

    pid: int
    uid: int
    previous_w: dict[int, float]
    uuids: dict[int, str]
    journal: Path
    changed: set[int] = field(default_factory=set)

    def to_json(self, backend: str) -> str:
        """The journal entry: enough to restore the changed GPUs after a daemon restart."""
        gpus = [
            {"index": i, "uuid": self.uuids[i], "previous_power_limit_w": w, "changed": i in self.changed}
            for i, w in sorted(self.previous_w.items())
        ]
        return json.dumps({"backend": backend, "pid": self.pid, "uid": self.uid, "gpus": gpus}, indent=1)


@dataclass
class Connection:
    """One client: its credentials, its input buffer and its lease, if any."""

    sock: socket.socket
    pid: int
    uid: int
    buffer: bytes = b""
    lease: Lease | None = None


def peer_credentials(sock: socket.socket) -> tuple[int, int, int]:
    """(pid, uid, gid) of the process at the other end of a Unix socket (``SO_PEERCRED``)."""
    raw = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, gid = struct.unpack("3i", raw)
    return pid, uid, gid


def in_group(uid: int, gid: int, group_gid: int) -> bool:
    """Whether ``uid`` (primary gid ``gid``) may use the daemon: root, or a member of the group."""
    if uid == 0 or gid == group_gid:
        return True
    try:
        user = pwd.getpwuid(uid)
    except KeyError:
        return False
    return group_gid in os.getgrouplist(user.pw_name, user.pw_gid)


def typed(value: Any, kind: str) -> bool:
    """Whether a JSON value has a field type: ``int`` (not bool), ``number`` (finite), ``list``."""
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        if not isinstance(value, int | float) or isinstance(value, bool):
            return False
        try:
            return math.isfinite(float(value))
        except OverflowError:  # an integer beyond any float
            return False
    return isinstance(value, list)


def parse_request(line: bytes) -> dict[str, Any]:
    """A request line as a checked object.

    Raises:
        RequestError: not JSON, not an object, unknown command, missing, extra or mistyped fields.
    """
    try:
        req = json.loads(line.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise RequestError("malformed request: not a JSON line") from None
    except RecursionError:  # arrays or objects nested thousands deep
        raise RequestError("malformed request: nested too deep") from None
    if not isinstance(req, dict):
        raise RequestError("malformed request: not a JSON object")
    cmd = req.get("cmd")
    if not isinstance(cmd, str) or cmd not in FIELDS:
        raise RequestError(f"unknown command {cmd!r}; the commands are {', '.join(COMMANDS)}")
    expected = FIELDS[cmd]
    extra = sorted(set(req) - set(expected) - {"cmd"})
    if extra:
        shown = (
            f if f.isprintable() else repr(f) for f in extra
        )  # a line break in a name: escaped, one line
        raise RequestError(f"{cmd}: unexpected field(s) {', '.join(shown)}")
    for name, kind in expected.items():
        if name not in req:
            raise RequestError(f"{cmd}: missing field {name!r}")
        if not typed(req[name], kind):
            raise RequestError(
                f"{cmd}: field {name!r} must be a {'finite number' if kind == 'number' else kind}"
            )
    return req


def default_gpud_state_dir() -> Path:
    """``/var/lib/zeus-bench/gpud`` for root, else the user's state directory's ``gpud``."""
    if os.geteuid() == 0:
        return Path("/var/lib/zeus-bench/gpud")
    from zeus_bench.device.journal import default_state_dir

    return default_state_dir() / "gpud"
