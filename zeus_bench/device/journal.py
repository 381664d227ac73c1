"""The power-limit journal and the per-GPU lock files (see :mod:`zeus_bench.device.control`).

Before a session first changes a GPU's limit it writes the *previous* limit to
``<state dir>/journal/<backend>-<uuid>.json``; the entry goes only once that limit is back.
:func:`restore_from_journal` (``zeus-bench gpu restore``) puts back what a hard-killed run left.
:class:`GPULock` is the ``flock`` that keeps two runs off one GPU.
"""

from __future__ import annotations

import fcntl
import json
import logging
import math
import os
import socket
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from zeus_bench.core.errors import ConfigError
from zeus_bench.device.base import GPU, GPUBackend
from zeus_bench.device.errors import DeviceError, GPUBusyError, PowerLimitOutOfRangeError

log = logging.getLogger(__name__)

STATE_DIR_ENV = "ZEUS_BENCH_STATE_DIR"
#: Two limits closer than this are the same limit (NVML works in mW; users in W).
SAME_LIMIT_TOLERANCE_W = 0.5


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


def journal_dir(state_dir: Path) -> Path:
    """The journal folder of a state directory."""
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
    check_journal_entry(path, entry)
    return entry


def check_journal_entry(path: Path, entry: JournalEntry) -> None:
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
    folder = journal_dir(state_dir or default_state_dir())
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


def raise_first(errors: list[ConfigError]) -> None:
    """Raise the first of ``errors`` (counting the rest), if any."""
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


def restore_entry(gpu: GPU, path: Path, entry: JournalEntry) -> None:
    """Put one journalled limit back on ``gpu`` (if it differs) and delete its entry.

    Raises:
        DeviceError: another GPU, or a journalled limit outside the GPU's range (the message names
            the journal file, which is kept).
    """
    if gpu.uuid() != entry.gpu_uuid:
        raise DeviceError(f"{path}: GPU {gpu.index} is {gpu.uuid()}, not {entry.gpu_uuid}; not restoring")
    lo, hi = gpu.power_limit_range_w()
    if not lo - SAME_LIMIT_TOLERANCE_W <= entry.previous_power_limit_w <= hi + SAME_LIMIT_TOLERANCE_W:
        raise PowerLimitOutOfRangeError(
            f"{path}: journalled limit {entry.previous_power_limit_w:g} W is outside GPU {gpu.index}'s range "
            f"{lo:g}-{hi:g} W; not restoring (inspect the entry, then delete it)"
        )
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
                restore_entry(backend.gpu(index), path, entry)
            done.append(entry)
        finally:
            lock.release()
    raise_first(errors)
    return done
