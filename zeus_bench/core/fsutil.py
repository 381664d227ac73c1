"""Atomic file writes: outputs appear complete or not at all."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds.

    The folder of ``path`` is created. On an exception the temporary file is removed and
    ``path`` is left as it was.
    """
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def remove_partial_writes(path: str | Path) -> list[Path]:
    """Delete the temporary files :func:`atomic_path` left beside ``path`` when a writer was killed.

    Only the owner of ``path`` (the one process that writes it) may call this. Returns what it removed.
    """
    final = Path(path)
    if not final.parent.is_dir():
        return []
    stale = sorted(final.parent.glob(f".{glob_escape(final.name)}.*.tmp"))
    for tmp in stale:
        tmp.unlink(missing_ok=True)
    return stale


def glob_escape(name: str) -> str:
    """``name`` with glob metacharacters escaped."""
    return "".join(f"[{c}]" if c in "*?[" else c for c in name)


def _umask() -> int:
    """The process's umask (read by setting and restoring it)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` atomically; return the path."""
    with atomic_path(path) as tmp:
        tmp.write_text(text)
    return Path(path)


def _missing_parents(path: Path) -> list[Path]:
    """Folders above ``path`` that do not exist yet, deepest first."""
    missing = []
    for parent in path.parents:
        if parent.exists():
            break
        missing.append(parent)
    return missing


def _nearest_existing(path: Path) -> Path:
    for parent in path.parents:
        if parent.exists():
            return parent
    return Path(".")


def check_writable_file(path: str | Path, suffixes: tuple[str, ...] = (), what: str = "output") -> Path:
    """Check, before any work, that a file can be written at ``path``; return it.

    Refused: an existing folder, a parent that is a file, a folder that cannot be written (or
    created), and a suffix not in ``suffixes`` (when given). Nothing is created.

    Raises:
        ConfigError: the one-line reason.
    """
    from zeus_bench.core.errors import ConfigError

    final = Path(path)
    if final.is_dir():
        raise ConfigError(f"{what} {final}: is a folder (give a file name)")
    if suffixes and final.suffix.lower() not in suffixes:
        raise ConfigError(
            f"{what} {final}: unsupported suffix {final.suffix or '(none)'!r} (use {' or '.join(suffixes)})"
        )
    _check_folder_writable(final, what)
    return final


def check_writable_dir(path: str | Path, what: str = "output folder") -> Path:
    """Check, before any work, that ``path`` is or can become a writable folder; return it.

    Raises:
        ConfigError: ``path`` is a file, or it (or its nearest existing parent) is not writable.
    """
    from zeus_bench.core.errors import ConfigError

    final = Path(path)
    if final.exists() and not final.is_dir():
        raise ConfigError(f"{what} {final}: is a file, not a folder")
    if final.is_dir():
        if not os.access(final, os.W_OK | os.X_OK):
            raise ConfigError(f"{what} {final}: not writable (permission denied)")
        return final
    _check_folder_writable(final, what)
    return final


def _check_folder_writable(final: Path, what: str) -> None:
    from zeus_bench.core.errors import ConfigError

    base = _nearest_existing(final)
    if not base.is_dir():
        raise ConfigError(f"{what} {final}: {base} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ConfigError(f"{what} {final}: cannot write in {base} (permission denied or read-only)")


@contextmanager
def staged_dir(path: str | Path) -> Iterator[Path]:
    """Yield an empty temporary folder beside ``path``; it replaces ``path`` if the block succeeds.

    On an exception the temporary folder and any parent folder this call created are removed,
    and ``path`` is left as it was: a failed step leaves neither a half-filled nor an empty folder.
    """
    import shutil

    final = Path(path)
    created = _missing_parents(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent))
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        if final.exists():
            old = final.with_name(f".{final.name}.old-{os.getpid()}")
            os.replace(final, old)
            os.replace(tmp, final)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        for folder in created:
            try:
                folder.rmdir()
            except OSError:
                break
        raise
