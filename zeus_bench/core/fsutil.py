"""Atomic file writes: outputs appear complete or not at all."""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

log = logging.getLogger(__name__)


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` if the block succeeds.

    The folder of ``path`` is created. On an exception the temporary file and the folders this
    call created are removed, and ``path`` is left as it was.
    """
    final = Path(path)
    created = missing_parents(final.absolute())
    final.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".tmp", dir=final.parent)
    except BaseException:
        remove_created_folders(created)
        raise
    os.close(fd)
    try:
        yield Path(tmp)
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; give the usual mode
        os.replace(tmp, final)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        remove_created_folders(created)
        raise


def remove_created_folders(created: list[Path]) -> None:
    """Remove the (empty) folders a failed write created, deepest first; stop at one not empty."""
    for folder in created:
        try:
            folder.rmdir()
        except OSError:
            break


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


def missing_parents(path: Path) -> list[Path]:
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


#: Prefix of the staging folders :func:`output_dir` makes (ignored when a folder is checked for emptiness).
STAGING_PREFIX = ".zeus-bench-staging-"
#: Owned names: a predicate over a folder's top-level entry names (what a command may replace).
Owned = Callable[[str], bool]


def _user_entries(folder: Path) -> list[str]:
    """Names in ``folder`` that are not a staging folder of this module."""
    return sorted(e.name for e in os.scandir(folder) if not e.name.startswith(STAGING_PREFIX))


def check_output_dir(path: str | Path, force: bool = False, what: str = "output folder") -> Path:
    """Check, before any work, that a command may write its folder at ``path``; return it.

    Refused: a file there, a folder (or nearest existing parent) that cannot be written, and an
    existing folder holding anything unless ``force`` (then the command replaces only its own
    files). Nothing is created.

    Raises:
        ConfigError: the one-line reason, naming ``what`` and the path.
    """
    from zeus_bench.core.errors import ConfigError

    final = check_writable_dir(path, what)
    if final.is_dir() and not force:
        entries = _user_entries(final)
        if entries:
            shown = ", ".join(entries[:3]) + (", ..." if len(entries) > 3 else "")
            raise ConfigError(
                f"{what} {final}: not empty ({len(entries)} entr{'y' if len(entries) == 1 else 'ies'}: "
                f"{shown}); give --force to replace the files this command writes, or another folder"
            )
    return final


@contextmanager
def output_dir(
    path: str | Path, force: bool = False, owned: Owned | None = None, what: str = "output folder"
) -> Iterator[Path]:
    """Yield an empty staging folder; commit its entries to ``path`` if the block succeeds.

    The one way a command writes a folder (:func:`check_output_dir` first, before any work):

    * ``path`` absent: the staging folder is a sibling and is renamed onto ``path`` (atomic);
    * ``path`` an existing folder (``.`` included): it must be empty unless ``force``; the staging
      folder lies inside it, and each staged entry replaces the entry of its name (files one by one,
      atomically). With ``owned``, existing entries it accepts that this run did not write are
      removed too (a previous run's files); every other entry of the folder is left untouched.

    On an exception nothing of ``path`` changes: the staging folder and every parent folder this
    call created are removed.

    Raises:
        ConfigError: as :func:`check_output_dir`.
    """
    import shutil

    final = check_output_dir(path, force, what)
    existed = final.is_dir()
    created = [] if existed else missing_parents(final.absolute())
    try:
        if existed:
            tmp = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=final))
        else:
            parent = final.absolute().parent
            parent.mkdir(parents=True, exist_ok=True)
            tmp = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{final.name}.", dir=parent))
    except BaseException:
        remove_created_folders(created)
        raise
    try:
        yield tmp
        if existed:
            _commit_into(tmp, final, owned)
        else:
            os.chmod(tmp, 0o777 & ~_umask())
            os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        remove_created_folders(created)
        raise


def _commit_into(tmp: Path, final: Path, owned: Owned | None) -> None:
    """Move ``tmp``'s entries into ``final`` (replacing same-named ones), then remove ``tmp``."""
    import shutil

    staged = sorted(p.name for p in tmp.iterdir())
    trash = tmp / STAGING_PREFIX
    trash.mkdir()
    stale = [n for n in _user_entries(final) if owned is not None and owned(n) and n not in staged]
    for name in stale:
        os.rename(final / name, trash / name)
        log.info("removed %s (written by an earlier run)", final / name)
    for name in staged:
        src, dst = tmp / name, final / name
        if os.path.lexists(dst) and (src.is_dir() or (dst.is_dir() and not dst.is_symlink())):
            os.rename(dst, trash / f"old-{name}")
        os.replace(src, dst)
    shutil.rmtree(tmp, ignore_errors=True)
