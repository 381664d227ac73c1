"""Power-limit control that never leaves a GPU capped.

:class:`PowerLimitSession` is a context manager over a set of GPUs:

* **Lock.** On entry it takes a lock file per GPU (``<state dir>/locks``): exclusive when it
  may set limits, shared in observe mode, so two runs cannot drive one GPU and no observer
  measures a GPU that another run is capping. A held lock raises :class:`GPUBusyError`.
* **Journal.** Before the first change of a GPU's limit it writes that GPU's *previous* limit
  to ``<state dir>/journal/<backend>-<uuid>.json`` (atomically). The entry is deleted only
  after the previous limit is back.
* **Restore.** On normal exit, on an exception, on SIGINT, SIGTERM and SIGHUP it sets each changed
  GPU back to its previous limit (not the maximum, not the default). After a hard kill
  (SIGKILL, power loss) the journal remains: ``zeus-bench gpu restore``
  (:func:`restore_from_journal`) puts the recorded limits back, and so does the next session
  on the same GPU on entry, before it touches anything.
* **Daemon.** When ``$ZEUS_BENCH_GPUD`` names the socket of ``zeus-bench gpud``
  (:mod:`zeus_bench.device.gpud`), the session leases its GPUs from the daemon on entry and asks
  it for every change (no root needed); the daemon journals, and restores the limits when the
  session's connection closes for any reason, SIGKILL included. An observe-mode session asks the
  daemon only whether another client holds one of its GPUs (then :class:`GPUBusyError`).
* **Observe mode** never calls a setter. :meth:`PowerLimitSession.set_power_limit_w` with the
  limit already in force (within 0.5 W) is a recorded no-op; any other limit raises
  :class:`ObserveModeError` (raising rather than silently recording, so that no result is ever
  labelled with a limit that was not in force). A stale journal found in observe mode is
  reported, not restored.

The state directory is ``$ZEUS_BENCH_STATE_DIR``, else ``$XDG_STATE_HOME/zeus-bench``, else
``~/.local/state/zeus-bench``. Journal and locks live there, so runs see each other only when
they share it: setting limits needs root, and root's runs share root's state directory; on a
machine where runs start under different accounts, point ``ZEUS_BENCH_STATE_DIR`` at one
shared folder.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import logging
import math
import os
import signal
import socket
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from types import FrameType
from typing import IO, Any

from zeus_bench.device.base import GPU, GPUBackend
from zeus_bench.device.errors import DeviceError, GPUBusyError, ObserveModeError
from zeus_bench.device.gpud_client import GPUDClient, GPUDError, gpud_socket
from zeus_bench.errors import ConfigError
from zeus_bench.fsutil import atomic_write_text

log = logging.getLogger(__name__)

STATE_DIR_ENV = "ZEUS_BENCH_STATE_DIR"
#: Two limits closer than this are the same limit (NVML works in mW; users in W).
SAME_LIMIT_TOLERANCE_W = 0.5
#: Signals on which a session restores the limits before the previous handler runs.
RESTORE_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def default_state_dir() -> Path:
    """The user's zeus-bench state directory (journal and locks)."""
    env = os.environ.get(STATE_DIR_ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_STATE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".local" / "state"
    return base / "zeus-bench"


def gpu_backend_name(gpu: GPU) -> str:
    """Backend name of a GPU object (``nvml``, ``fake``), for journal file names."""
    return str(getattr(gpu, "backend_name", type(gpu).__module__.rsplit(".", 1)[-1]))


@dataclass(frozen=True)
class JournalEntry:
    """The limit a GPU must be put back to, as recorded on disk."""

    backend: str
    gpu_index: int
    gpu_uuid: str
    previous_power_limit_w: float
    pid: int
    host: str
    started_utc: str

    @staticmethod
    def file_name(backend: str, uuid: str) -> str:
        """Journal file name of one GPU."""
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in uuid)
        return f"{backend}-{safe}.json"


def _journal_dir(state_dir: Path) -> Path:
    return state_dir / "journal"


def load_journal_entry(path: Path) -> JournalEntry:
    """One journal file's entry.

    Raises:
        ConfigError: the file is unreadable or not a journal entry (one line naming it).
    """
    try:
        entry = JournalEntry(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError) as exc:
        reason = " ".join(str(exc).split())
        raise ConfigError(
            f"{path}: unreadable power-limit journal entry ({reason}); inspect and delete it"
        ) from None
    _check_journal_entry(path, entry)
    return entry


def _check_journal_entry(path: Path, entry: JournalEntry) -> None:
    """Refuse an entry whose fields have the wrong type or an impossible value (NaN, a string, <= 0 W).

    Restoring it would set a nonsense limit and delete the only record of the right one.
    """
    limit = entry.previous_power_limit_w
    problems = {
        "previous_power_limit_w": not isinstance(limit, int | float)
        or isinstance(limit, bool)
        or not math.isfinite(limit)
        or limit <= 0,
        "gpu_index": not isinstance(entry.gpu_index, int)
        or isinstance(entry.gpu_index, bool)
        or entry.gpu_index < 0,
        "pid": not isinstance(entry.pid, int) or isinstance(entry.pid, bool),
        **{f: not isinstance(getattr(entry, f), str) for f in ("backend", "gpu_uuid", "host", "started_utc")},
    }
    for field_name, bad in problems.items():
        if bad:
            raise ConfigError(
                f"{path}: power-limit journal entry has an invalid {field_name} "
                f"({getattr(entry, field_name)!r}); nothing restored, entry kept: inspect and delete it"
            )


def read_journal(
    state_dir: Path | None = None, backend: str | None = None, errors: list[ConfigError] | None = None
) -> list[tuple[Path, JournalEntry]]:
    """All journal entries (optionally of one backend), with their files.

    Args:
        state_dir: State directory (default :func:`default_state_dir`).
        backend: Only this backend's entries.
        errors: Collects the errors of unreadable files instead of raising the first.
    """
    folder = _journal_dir(state_dir or default_state_dir())
    out: list[tuple[Path, JournalEntry]] = []
    for path in sorted(folder.glob("*.json")) if folder.is_dir() else []:
        try:
            entry = load_journal_entry(path)
        except ConfigError as exc:
            if errors is None:
                raise
            errors.append(exc)
            continue
        if backend is None or entry.backend == backend:
            out.append((path, entry))
    return out


def _raise_first(errors: list[ConfigError]) -> None:
    if errors:
        more = f" (and {len(errors) - 1} more unreadable entries)" if len(errors) > 1 else ""
        raise ConfigError(f"{errors[0]}{more}")


class GPULock:
    """An ``flock`` on ``<state dir>/locks/<backend>-<uuid>.lock`` (released when the process dies)."""

    def __init__(self, state_dir: Path, backend: str, uuid: str, gpu_index: int) -> None:
        self.path = state_dir / "locks" / JournalEntry.file_name(backend, uuid).replace(".json", ".lock")
        self.gpu_index = gpu_index
        self._fh: IO[str] | None = None

    def acquire(self, exclusive: bool) -> None:
        """Take the lock without waiting; raise :class:`GPUBusyError` if another run holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+")  # noqa: SIM115  (held open for the session)
        try:
            fcntl.flock(fh, (fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH) | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = fh.read().strip() or "another process"
            fh.close()
            raise GPUBusyError(
                f"GPU {self.gpu_index} is in use by another zeus-bench run ({holder}; lock {self.path}); "
                "wait for it to finish"
            ) from None
        if exclusive:
            fh.seek(0)
            fh.truncate()
            fh.write(f"pid {os.getpid()} on {socket.gethostname()}\n")
            fh.flush()
        self._fh = fh

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if self._fh is not None:
            fcntl.flock(self._fh, fcntl.LOCK_UN)
            self._fh.close()
            self._fh = None


def _restore_entry(gpu: GPU, path: Path, entry: JournalEntry) -> None:
    if gpu.uuid() != entry.gpu_uuid:
        raise DeviceError(f"{path}: GPU {gpu.index} is {gpu.uuid()}, not {entry.gpu_uuid}; not restoring")
    current = gpu.power_limit_w()
    if abs(current - entry.previous_power_limit_w) > SAME_LIMIT_TOLERANCE_W:
        gpu.set_power_limit_w(entry.previous_power_limit_w)
        log.warning(
            "GPU %d: restored power limit %g W -> %g W (journal of pid %d)",
            gpu.index,
            current,
            entry.previous_power_limit_w,
            entry.pid,
        )
    path.unlink(missing_ok=True)


def restore_from_journal(
    backend: GPUBackend, state_dir: Path | None = None, dry_run: bool = False
) -> list[JournalEntry]:
    """Put back every journalled limit of ``backend``'s GPUs that no live run holds.

    Args:
        backend: Backend whose journal entries to restore.
        state_dir: State directory (default :func:`default_state_dir`).
        dry_run: Only report what would be restored.

    Returns:
        The entries restored (or that would be).

    Raises:
        PermissionDeniedError: a limit could not be set back (the entry is kept).
        ConfigError: a journal file is unreadable (named; every readable entry is restored first).
    """
    state_dir = state_dir or default_state_dir()
    by_uuid = {backend.gpu(i).uuid(): i for i in range(backend.device_count())}
    done: list[JournalEntry] = []
    errors: list[ConfigError] = []
    for path, entry in read_journal(state_dir, backend.name, errors):
        index = by_uuid.get(entry.gpu_uuid)
        if index is None:
            log.warning("%s: GPU %s is not present; entry kept", path, entry.gpu_uuid)
            continue
        lock = GPULock(state_dir, backend.name, entry.gpu_uuid, index)
        try:
            lock.acquire(exclusive=True)
        except GPUBusyError:
            log.info("GPU %d: journal entry belongs to a live run, which restores it itself", index)
            continue
        try:
            if not dry_run:
                _restore_entry(backend.gpu(index), path, entry)
            done.append(entry)
        finally:
            lock.release()
    _raise_first(errors)
    return done


class PowerLimitSession:
    """Set power limits inside a ``with`` block; the previous limits always come back.

    Args:
        gpus: GPUs this session may touch.
        observe: Never write a GPU setting (see module notes).
        journal_dir: State directory for the journal and locks (default
            :func:`default_state_dir`).
        handle_signals: Install SIGINT/SIGTERM/SIGHUP handlers that restore the limits (only possible
            from the main thread; elsewhere the caller must ensure a clean exit).

    Example:
        >>> with PowerLimitSession(backend.gpus([0]), observe=False) as session:  # doctest: +SKIP
        ...     session.set_power_limit_w(0, 250)
        ...     train()
    """

    def __init__(
        self,
        gpus: Sequence[GPU],
        observe: bool,
        journal_dir: str | Path | None = None,
        handle_signals: bool = True,
    ) -> None:
        self.gpus = {g.index: g for g in gpus}
        if len(self.gpus) != len(gpus):
            raise ConfigError("PowerLimitSession: a GPU is listed twice")
        self.observe = observe
        self.state_dir = Path(journal_dir) if journal_dir is not None else default_state_dir()
        self.handle_signals = handle_signals
        self.previous_limits_w: dict[int, float] = {}
        self.changed: set[int] = set()
        self.requests: list[dict[str, Any]] = []
        self._locks: list[GPULock] = []
        self._old_handlers: dict[int, Any] = {}
        self._active = False
        self._mutex = threading.RLock()
        self.gpud_path = gpud_socket()
        self._gpud: GPUDClient | None = None

    # Entry and exit ---------------------------------------------------------------------
    def __enter__(self) -> PowerLimitSession:
        try:
            for g in self.gpus.values():
                lock = GPULock(self.state_dir, gpu_backend_name(g), g.uuid(), g.index)
                lock.acquire(exclusive=not self.observe)
                self._locks.append(lock)
            self._recover_stale()
            self.previous_limits_w = {i: g.power_limit_w() for i, g in self.gpus.items()}
            if self.gpud_path is not None:
                self._connect_gpud(self.gpud_path)
        except BaseException:
            self._close_gpud()
            self._release_locks()
            raise
        self._active = True
        if self.handle_signals and threading.current_thread() is threading.main_thread():
            for signum in RESTORE_SIGNALS:
                self._old_handlers[signum] = signal.signal(signum, self._on_signal)
        if self.observe:
            log.info(
                "observe mode: GPU(s) %s run at their current limits %s W; no setting is written",
                sorted(self.gpus),
                self.previous_limits_w,
            )
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.restore()
        finally:
            for signum, handler in self._old_handlers.items():
                signal.signal(signum, handler)
            self._old_handlers.clear()
            self._active = False
            self._close_gpud()
            self._release_locks()

    def _connect_gpud(self, path: str) -> None:
        """Lease this session's GPUs from the daemon (observe mode: check no one else holds them)."""
        self._gpud = client = GPUDClient(path)
        if self.observe:
            for lease in client.status()["leases"]:
                shared = sorted(set(lease["gpus"]) & set(self.gpus))
                if shared:
                    raise GPUBusyError(
                        f"GPU {shared[0]} is leased through zeus-bench gpud ({path}) by pid {lease['pid']}, "
                        "which may be capping it; wait for it to finish"
                    )
            self._close_gpud()
            return
        for info in client.lease(sorted(self.gpus))["gpus"]:
            mine = self.gpus[int(info["index"])].uuid()
            if info["uuid"] != mine:
                raise GPUDError(
                    f"zeus-bench gpud: GPU {info['index']} is {info['uuid']} to the daemon but {mine} here "
                    "(the daemon and this run use different backends)"
                )
        log.info("power limits of GPU(s) %s set through zeus-bench gpud at %s", sorted(self.gpus), path)

    def _close_gpud(self) -> None:
        if self._gpud is not None:
            self._gpud.close()
            self._gpud = None

    def _write_limit(self, gpu: GPU, watts: float) -> None:
        """Set a limit, through the daemon when the session leased from one."""
        if self._gpud is not None:
            self._gpud.set_power_limit_w(gpu.index, watts)
        else:
            gpu.set_power_limit_w(watts)

    def _release_locks(self) -> None:
        for lock in self._locks:
            lock.release()
        self._locks.clear()

    def _recover_stale(self) -> None:
        """Restore journal entries of this session's GPUs left by a killed run (we hold the locks).

        An unreadable entry is reported (one line naming the file) after the readable ones are restored.
        """
        errors: list[ConfigError] = []
        for g in self.gpus.values():
            backend = gpu_backend_name(g)
            path = _journal_dir(self.state_dir) / JournalEntry.file_name(backend, g.uuid())
            if not path.exists():
                continue
            try:
                entry = load_journal_entry(path)
            except ConfigError as exc:
                errors.append(exc)
                continue
            if self.observe:
                log.warning(
                    "GPU %d: a killed run left its limit journalled at %g W (now %g W); observe mode "
                    "does not restore it: run 'zeus-bench gpu restore'",
                    g.index,
                    entry.previous_power_limit_w,
                    g.power_limit_w(),
                )
                continue
            _restore_entry(g, path, entry)
        _raise_first(errors)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        old = self._old_handlers.get(signum, signal.SIG_DFL)
        if old == signal.SIG_IGN:
            return
        log.warning("signal %d: restoring power limits", signum)
        self.restore()
        if callable(old):
            old(signum, frame)
            return
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        raise SystemExit(128 + signum)

    def provenance(self) -> dict[str, Any]:
        """What this session did, for results: observe mode, limits before and now, requests."""
        return {
            "observe_mode": self.observe,
            "previous_power_limits_w": dict(self.previous_limits_w),
            "power_limits_w": {i: g.power_limit_w() for i, g in self.gpus.items()},
            "power_limit_requests": list(self.requests),
        }

    # Control ------------------------------------------------------------------------------
    def _gpu(self, gpu_index: int) -> GPU:
        if not self._active:
            raise ConfigError("PowerLimitSession used outside its 'with' block")
        try:
            return self.gpus[gpu_index]
        except KeyError:
            raise ConfigError(
                f"GPU {gpu_index} is not part of this session (GPUs {sorted(self.gpus)})"
            ) from None

    def power_limit_w(self, gpu_index: int) -> float:
        """The limit in force on ``gpu_index``, W."""
        return self._gpu(gpu_index).power_limit_w()

    def set_power_limit_w(self, gpu_index: int, watts: float) -> None:
        """Set ``gpu_index``'s limit (journalled first); in observe mode see module notes.

        Raises:
            ObserveModeError: observe mode and ``watts`` differs from the limit in force.
            PowerLimitOutOfRangeError: outside the GPU's range.
            PermissionDeniedError: this process may not set limits.
        """
        gpu = self._gpu(gpu_index)
        with self._mutex:
            if self.observe:
                current = gpu.power_limit_w()
                if abs(current - watts) > SAME_LIMIT_TOLERANCE_W:
                    raise ObserveModeError(
                        f"observe mode: GPU {gpu_index} runs at its current limit {current:g} W and "
                        f"cannot be set to {watts:g} W; drop observe mode to set limits (needs root or CAP_SYS_ADMIN)"
                    )
                self.requests.append({"gpu_index": gpu_index, "power_limit_w": watts, "applied": False})
                return
            journalled = self._journal(gpu) if self._gpud is None else None  # the daemon journals
            try:
                self._write_limit(gpu, watts)
            except BaseException:
                if journalled is not None and gpu_index not in self.changed:
                    journalled.unlink(missing_ok=True)  # nothing changed: no entry to restore
                raise
            self.changed.add(gpu_index)
            self.requests.append({"gpu_index": gpu_index, "power_limit_w": watts, "applied": True})

    def _journal(self, gpu: GPU) -> Path | None:
        """Write ``gpu``'s previous limit unless already journalled; returns the new file, if any."""
        backend = gpu_backend_name(gpu)
        path = _journal_dir(self.state_dir) / JournalEntry.file_name(backend, gpu.uuid())
        if path.exists():
            return None
        entry = JournalEntry(
            backend=backend,
            gpu_index=gpu.index,
            gpu_uuid=gpu.uuid(),
            previous_power_limit_w=self.previous_limits_w[gpu.index],
            pid=os.getpid(),
            host=socket.gethostname(),
            started_utc=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        )
        atomic_write_text(path, json.dumps(asdict(entry), indent=1) + "\n")
        return path

    def restore(self) -> None:
        """Set every changed GPU back to its previous limit and clear its journal (idempotent).

        Raises:
            DeviceError: some limit could not be restored (its journal entry is kept, so
                ``zeus-bench gpu restore`` can retry); the others are still restored.
        """
        with self._mutex:
            failures: list[str] = []
            for index in sorted(self.changed):
                gpu = self.gpus[index]
                path = _journal_dir(self.state_dir) / JournalEntry.file_name(
                    gpu_backend_name(gpu), gpu.uuid()
                )
                try:
                    self._write_limit(gpu, self.previous_limits_w[index])
                    path.unlink(missing_ok=True)
                    self.changed.discard(index)
                except Exception as exc:
                    log.error("GPU %d: could not restore its power limit: %s", index, exc)
                    failures.append(f"GPU {index}: {exc}")
            if failures:
                raise DeviceError(
                    "could not restore power limit(s): "
                    + "; ".join(failures)
                    + " (run 'zeus-bench gpu restore')"
                )
