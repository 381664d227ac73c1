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
import json
import logging
import os
import signal
import socket
import threading
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from types import FrameType
from typing import Any

from zeus_bench.core.errors import ConfigError
from zeus_bench.core.fsutil import atomic_write_text
from zeus_bench.device.base import GPU
from zeus_bench.device.errors import DeviceError, GPUBusyError, ObserveModeError
from zeus_bench.device.gpud_client import GPUDClient, GPUDError, gpud_socket
from zeus_bench.device.journal import (
    SAME_LIMIT_TOLERANCE_W,
    STATE_DIR_ENV,
    GPULock,
    JournalEntry,
    default_state_dir,
    gpu_backend_name,
    journal_dir,
    load_journal_entry,
    raise_first,
    read_journal,
    restore_entry,
    restore_from_journal,
)

log = logging.getLogger(__name__)

__all__ = [
    "RESTORE_SIGNALS",
    "SAME_LIMIT_TOLERANCE_W",
    "STATE_DIR_ENV",
    "GPULock",
    "JournalEntry",
    "PowerLimitSession",
    "default_state_dir",
    "gpu_backend_name",
    "load_journal_entry",
    "read_journal",
    "restore_from_journal",
]

#: Signals on which a session restores the limits before the previous handler runs.
RESTORE_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


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
            path = journal_dir(self.state_dir) / JournalEntry.file_name(backend, g.uuid())
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
            restore_entry(g, path, entry)
        raise_first(errors)

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
        path = journal_dir(self.state_dir) / JournalEntry.file_name(backend, gpu.uuid())
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
                path = journal_dir(self.state_dir) / JournalEntry.file_name(gpu_backend_name(gpu), gpu.uuid())
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
