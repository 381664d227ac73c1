"""``zeus-bench gpud``: a small privileged daemon that sets power limits for unprivileged clients.

Run by root (or the systemd unit in ``deploy/``) on a Unix socket. A client (normally
:class:`~zeus_bench.device.control.PowerLimitSession` with ``$ZEUS_BENCH_GPUD`` set) connects,
leases a group of GPUs and asks for limits; the lease lasts as long as the connection:

* **Restore on death.** When the connection closes for any reason (exit, exception, SIGKILL, OOM
  kill, a SLURM step killed), the kernel closes the socket and the daemon, which waits on every
  connection at once, puts every limit the lease changed back to its value before the lease, at
  once (milliseconds), and logs it.
* **Access** by Unix group: the peer's uid is read with ``SO_PEERCRED``; root and members of
  ``--group`` (primary or supplementary) are served, anyone else gets one refusal line.
* **One lease per GPU**: a second client is refused with the holder's pid.
* **Checked requests**: JSON lines of at most :data:`~zeus_bench.device.gpud_client.MAX_LINE_BYTES`
  bytes (longer: refused and hung up), objects with a command of
  :data:`~zeus_bench.device.gpud_client.COMMANDS` and exactly its fields, of their types; limits
  within the GPU's own range; GPUs that exist.
* **Journal**: each lease's pre-lease limits are written to ``<state dir>/leases/`` (atomically,
  before the first change); a daemon killed while leases held restores them when it starts again.
* **Stale socket**: a socket file nobody listens on is removed at start-up; a live one (another
  daemon) or a path that is not a socket is an error.

Protocol (one JSON object per line; every answer has ``ok``, and ``error`` when false): on connect
the daemon sends ``{"ok": true, "server": "zeus-bench gpud", "version": 1}`` (or the refusal);
then ``{"cmd": "lease", "gpus": [0, 1]}`` -> ``{"ok": true, "gpus": [{"index", "uuid",
"min_power_limit_w", "max_power_limit_w", "power_limit_w"}]}``; ``{"cmd": "set", "gpu": 0,
"watts": 300}``; ``{"cmd": "release"}`` (restore and end the lease, keep the connection);
``{"cmd": "status"}`` -> ``{"ok": true, "leases": [{"pid", "uid", "gpus"}]}``.
"""

from __future__ import annotations

import contextlib
import fcntl
import grp
import json
import logging
import os
import selectors
import signal
import socket
import stat
import time
from pathlib import Path
from types import FrameType
from typing import IO, Any

from zeus_bench.core.errors import ConfigError
from zeus_bench.core.fsutil import atomic_write_text, missing_parents, remove_created_folders
from zeus_bench.device.base import GPUBackend
from zeus_bench.device.errors import DeviceError
from zeus_bench.device.gpud_client import MAX_LINE_BYTES
from zeus_bench.device.gpud_protocol import (
    MAX_LEASE_GPUS,
    PROTOCOL_VERSION,
    Connection,
    Lease,
    RequestError,
    in_group,
    parse_request,
    peer_credentials,
    typed,
)
from zeus_bench.device.journal import SAME_LIMIT_TOLERANCE_W

log = logging.getLogger(__name__)


class GPUDaemon:
    """The daemon's state and event loop (single-threaded: requests and hang-ups never race).

    Args:
        backend: GPUs whose limits the daemon sets (it must be allowed to).
        socket_path: Unix socket to listen on.
        group: Unix group whose members may use the daemon (root always may).
        state_dir: Folder of the lease journal.
    """

    def __init__(self, backend: GPUBackend, socket_path: str | Path, group: str, state_dir: Path) -> None:
        try:
            self.group_gid = grp.getgrnam(group).gr_gid
        except KeyError:
            raise ConfigError(f"--group: no Unix group named {group!r}") from None
        self.group = group
        self.backend = backend
        self.socket_path = Path(socket_path)
        self.journal_dir = state_dir / "leases"
        self.holders: dict[int, Connection] = {}
        self.connections: dict[int, Connection] = {}
        self.selector = selectors.DefaultSelector()
        self._stop = False
        self._leases = 0

    # Start-up ---------------------------------------------------------------------------
    def restore_journal(self) -> int:
        """Put back the limits of leases a previous daemon held when it died; returns how many GPUs."""
        restored = 0
        by_uuid = {self.backend.gpu(i).uuid(): i for i in range(self.backend.device_count())}
        for path in sorted(self.journal_dir.glob("lease-*.json")) if self.journal_dir.is_dir() else []:
            try:
                entry = json.loads(path.read_text())
                gpus = [g for g in entry["gpus"] if g["changed"]]
                pid = int(entry["pid"])
            except (OSError, ValueError, KeyError, TypeError) as exc:
                log.error("%s: unreadable lease journal (%s); inspect and delete it", path, exc)
                continue
            kept = False
            for g in gpus:
                index = by_uuid.get(g["uuid"])
                if index is None:
                    log.error("%s: GPU %s is not present; entry kept", path, g["uuid"])
                    kept = True
                    continue
                self._restore_gpu(index, float(g["previous_power_limit_w"]), f"journal of pid {pid}")
                restored += 1
            if not kept:
                path.unlink(missing_ok=True)
        return restored

    def bind(self) -> socket.socket:
        """Listen on the socket path, removing a stale socket file first.

        Raises:
            ConfigError: another daemon listens there, or the path is not a socket.
        """
        path = self.socket_path
        if path.is_dir():
            raise ConfigError(f"--socket: {path} is a folder; give the socket's file name")
        if path.exists() or path.is_symlink():
            if not stat.S_ISSOCK(path.lstat().st_mode):
                raise ConfigError(
                    f"--socket: {path} exists and is not a socket; remove it or pick another path"
                )
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(path))
            except (ConnectionRefusedError, FileNotFoundError):
                log.warning("removing stale socket %s (nothing listened on it)", path)
                path.unlink(missing_ok=True)
            else:
                raise ConfigError(f"--socket: another zeus-bench gpud already listens on {path}")
            finally:
                probe.close()
        created = missing_parents(path.absolute())
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        bound = False
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            server.bind(str(path))
            bound = True
            os.chmod(path, 0o666)  # access is decided per connection, by SO_PEERCRED
            server.listen(16)
        except (OSError, ValueError) as exc:  # too long a path, a read-only place, no permission
            server.close()
            if bound:
                path.unlink(missing_ok=True)
            remove_created_folders(created)
            reason = getattr(exc, "strerror", None) or str(exc)
            raise ConfigError(f"--socket: cannot listen on {path}: {reason}") from None
        server.setblocking(False)
        return server

    def lock_state_dir(self) -> IO[bytes]:
        """Create the state folder and hold its lock file for the daemon's life (one daemon per journal).

        Raises:
            ConfigError: another daemon holds the state folder, or it cannot be created.
        """
        state_dir = self.journal_dir.parent
        created = missing_parents(state_dir.absolute())
        try:
            self.journal_dir.mkdir(parents=True, exist_ok=True)
            lock = (state_dir / "gpud.lock").open("ab")
        except OSError as exc:
            remove_created_folders(created)
            raise ConfigError(f"--state-dir: cannot use {state_dir}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            raise ConfigError(
                f"--state-dir: another zeus-bench gpud uses {state_dir} (its journal); stop it or pick another folder"
            ) from None
        return lock

    # Event loop ---------------------------------------------------------------------------
    def serve(self) -> None:
        """Listen, restore the journal and serve until SIGTERM/SIGINT; then restore every lease.

        The socket is checked and bound, and the state folder locked, before any journal is read:
        a second daemon started on a running one's socket or state folder stops with one line and
        touches neither its GPUs nor its journal. Clients that connect during the restore wait.
        """
        server = self.bind()
        try:
            lock = self.lock_state_dir()
        except BaseException:
            server.close()
            self.socket_path.unlink(missing_ok=True)
            raise
        try:
            self.restore_journal()
            self._serve(server)
        finally:
            lock.close()

    def _serve(self, server: socket.socket) -> None:
        self.selector.register(server, selectors.EVENT_READ, None)
        old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        log.info(
            "zeus-bench gpud listening on %s for group %s (%s backend, %d GPU(s), journal %s)",
            self.socket_path,
            self.group,
            self.backend.name,
            self.backend.device_count(),
            self.journal_dir,
        )
        try:
            while not self._stop:
                for key, _ in self.selector.select(timeout=0.2):
                    if key.data is None:
                        self._accept(server)
                    else:
                        self._readable(key.data)
        finally:
            for conn in list(self.connections.values()):
                self._close(conn, "daemon stopping")
            self.selector.close()
            server.close()
            self.socket_path.unlink(missing_ok=True)
            for s, h in old.items():
                signal.signal(s, h)
            log.info("zeus-bench gpud stopped")

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self._stop = True

    def _accept(self, server: socket.socket) -> None:
        try:
            sock, _ = server.accept()
        except BlockingIOError:
            return
        pid, uid, gid = peer_credentials(sock)
        conn = Connection(sock, pid, uid)
        if not in_group(uid, gid, self.group_gid):
            log.warning("refused pid %d (uid %d): not in group %s", pid, uid, self.group)
            self._send(
                conn,
                {
                    "ok": False,
                    "error": f"uid {uid} is not in group {self.group}, which may set power limits through this daemon",
                },
            )
            sock.close()
            return
        sock.setblocking(False)
        self.connections[sock.fileno()] = conn
        self.selector.register(sock, selectors.EVENT_READ, conn)
        self._send(conn, {"ok": True, "server": "zeus-bench gpud", "version": PROTOCOL_VERSION})

    def _readable(self, conn: Connection) -> None:
        try:
            chunk = conn.sock.recv(MAX_LINE_BYTES + 1)
        except (ConnectionResetError, BlockingIOError):
            chunk = b""
        if not chunk:
            self._close(conn, "connection closed")
            return
        conn.buffer += chunk
        while True:
            line, newline, rest = conn.buffer.partition(b"\n")
            if len(line) > MAX_LINE_BYTES:
                log.warning("pid %d: request over %d bytes; hanging up", conn.pid, MAX_LINE_BYTES)
                self._end_lease(conn, "oversized request")  # restored before the client hears of it
                self._send(
                    conn, {"ok": False, "error": f"request over {MAX_LINE_BYTES} bytes; connection closed"}
                )
                self._drain(conn)
                self._close(conn, "oversized request")
                return
            if not newline:
                return
            conn.buffer = rest
            self._send(conn, self._answer(conn, line))

    def _answer(self, conn: Connection, line: bytes) -> dict[str, Any]:
        try:
            req = parse_request(line)
            handler = getattr(self, f"_cmd_{req['cmd']}")
            result: dict[str, Any] = handler(conn, req)
            return {"ok": True, **result}
        except (RequestError, DeviceError) as exc:
            log.info("pid %d: refused: %s", conn.pid, exc)
            return {"ok": False, "error": " ".join(str(exc).split())}
        except Exception as exc:  # a bug must not stop the daemon that guards every lease
            log.exception("pid %d: request failed", conn.pid)
            return {"ok": False, "error": f"internal error ({type(exc).__name__}); the daemon's log has it"}

    def _send(self, conn: Connection, answer: dict[str, Any]) -> None:
        try:
            conn.sock.setblocking(True)
            conn.sock.settimeout(2.0)
            conn.sock.sendall(json.dumps(answer).encode() + b"\n")
        except OSError:
            pass  # the client is gone; its hang-up is handled by the loop
        finally:
            with contextlib.suppress(OSError):
                conn.sock.setblocking(False)

    @staticmethod
    def _drain(conn: Connection) -> None:
        """Read what the client already sent (at most 1 MiB): closing on unread data resets the peer."""
        with contextlib.suppress(OSError):
            conn.sock.shutdown(socket.SHUT_WR)
            for _ in range(256):
                if not conn.sock.recv(4096, socket.MSG_DONTWAIT):
                    break

    @staticmethod
    def _hung_up(conn: Connection) -> bool:
        """Whether ``conn``'s client has closed its end (a dead holder's lease ends before refusing)."""
        try:
            return conn.sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _close(self, conn: Connection, reason: str) -> None:
        if conn.sock.fileno() in self.connections:
            del self.connections[conn.sock.fileno()]
            self.selector.unregister(conn.sock)
        self._end_lease(conn, reason)
        conn.sock.close()

    # Commands ---------------------------------------------------------------------------
    def _cmd_lease(self, conn: Connection, req: dict[str, Any]) -> dict[str, Any]:
        if conn.lease is not None:
            raise RequestError(
                f"this connection already holds a lease on GPU(s) {sorted(conn.lease.previous_w)}"
            )
        indices = req["gpus"]
        if not indices or len(indices) > MAX_LEASE_GPUS or not all(typed(i, "int") for i in indices):
            raise RequestError(f"lease: 'gpus' must list 1-{MAX_LEASE_GPUS} GPU indices (integers)")
        if len(set(indices)) != len(indices):
            raise RequestError(f"lease: GPU listed twice in {indices}")
        count = self.backend.device_count()
        missing = [i for i in indices if not 0 <= i < count]
        if missing:
            raise RequestError(
                f"lease: no GPU {missing[0]} (the {self.backend.name} backend has {count}: 0-{count - 1})"
            )
        for i in indices:
            holder = self.holders.get(i)
            if holder is not None and self._hung_up(holder):
                self._close(holder, "connection closed")  # its hang-up, not yet seen by the loop
                holder = None
            if holder is not None:
                raise RequestError(
                    f"GPU {i} is leased by pid {holder.pid} (uid {holder.uid}); wait for it to finish"
                )
        gpus = {i: self.backend.gpu(i) for i in indices}
        self._leases += 1
        lease = Lease(
            pid=conn.pid,
            uid=conn.uid,
            previous_w={i: g.power_limit_w() for i, g in gpus.items()},
            uuids={i: g.uuid() for i, g in gpus.items()},
            journal=self.journal_dir / f"lease-{os.getpid()}-{self._leases}-pid{conn.pid}.json",
        )
        atomic_write_text(lease.journal, lease.to_json(self.backend.name))
        conn.lease = lease
        for i in indices:
            self.holders[i] = conn
        log.info("pid %d (uid %d) leased GPU(s) %s at %s W", conn.pid, conn.uid, indices, lease.previous_w)
        info = []
        for i, g in gpus.items():
            lo, hi = g.power_limit_range_w()
            info.append(
                {
                    "index": i,
                    "uuid": lease.uuids[i],
                    "min_power_limit_w": lo,
                    "max_power_limit_w": hi,
                    "power_limit_w": lease.previous_w[i],
                }
            )
        return {"gpus": info}

    def _cmd_set(self, conn: Connection, req: dict[str, Any]) -> dict[str, Any]:
        index, watts = req["gpu"], float(req["watts"])
        lease = conn.lease
        if lease is None or index not in lease.previous_w:
            holder = self.holders.get(index)
            who = f"; it is leased by pid {holder.pid}" if holder is not None else ""
            raise RequestError(f"set: this connection holds no lease on GPU {index}{who}")
        gpu = self.backend.gpu(index)
        lo, hi = gpu.power_limit_range_w()
        if not lo <= watts <= hi:
            raise RequestError(f"set: power limit {watts:g} W outside GPU {index}'s range {lo:g}-{hi:g} W")
        if index not in lease.changed:
            lease.changed.add(index)
            atomic_write_text(lease.journal, lease.to_json(self.backend.name))  # before the change
        gpu.set_power_limit_w(watts)
        log.info("pid %d: GPU %d set to %g W", conn.pid, index, watts)
        return {}

    def _cmd_release(self, conn: Connection, req: dict[str, Any]) -> dict[str, Any]:
        if conn.lease is None:
            raise RequestError("release: this connection holds no lease")
        self._end_lease(conn, "released")
        return {}

    def _cmd_status(self, conn: Connection, req: dict[str, Any]) -> dict[str, Any]:
        leases = [
            {"pid": c.lease.pid, "uid": c.lease.uid, "gpus": sorted(c.lease.previous_w)}
            for c in self.connections.values()
            if c.lease is not None
        ]
        return {"leases": leases, "gpus": self.backend.device_count()}

    # Restore ----------------------------------------------------------------------------
    def _restore_gpu(self, index: int, watts: float, why: str) -> None:
        gpu = self.backend.gpu(index)
        current = gpu.power_limit_w()
        if abs(current - watts) <= SAME_LIMIT_TOLERANCE_W:  # the client put it back itself
            log.info("GPU %d: power limit already %g W (%s)", index, watts, why)
            return
        gpu.set_power_limit_w(watts)
        log.warning("GPU %d: restored power limit %g W -> %g W (%s)", index, current, watts, why)

    def _end_lease(self, conn: Connection, reason: str) -> None:
        lease, conn.lease = conn.lease, None
        if lease is None:
            return
        start = time.monotonic()
        failed = False
        for index in sorted(lease.changed):
            try:
                self._restore_gpu(index, lease.previous_w[index], f"lease of pid {lease.pid} ended: {reason}")
            except DeviceError as exc:
                failed = True
                log.error(
                    "GPU %d: could not restore its limit (%s); journal %s kept", index, exc, lease.journal
                )
        for index in lease.previous_w:
            self.holders.pop(index, None)
        if not failed:
            lease.journal.unlink(missing_ok=True)
        log.info(
            "lease of pid %d on GPU(s) %s ended (%s); %d limit(s) restored in %.1f ms",
            lease.pid,
            sorted(lease.previous_w),
            reason,
            len(lease.changed),
            1000 * (time.monotonic() - start),
        )
