"""Provenance recorded in every table this project writes."""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import os
from pathlib import Path

from zeus_bench import __version__


def sha256_file(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Return the hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


_SHA_CHARS = frozenset("0123456789abcdef")
#: Variables that point git elsewhere than the checkout's own ``.git``: with any set, git itself is asked.
_GIT_VARIABLES = (
    "GIT_DIR",
    "GIT_COMMON_DIR",
    "GIT_WORK_TREE",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)


def _sha(text: str) -> str | None:
    return text if len(text) == 40 and set(text) <= _SHA_CHARS else None


def _head_from_files(here: Path) -> str | None:
    """The commit of ``HEAD`` read from the repository's files (loose or packed refs), or None.

    None where the files do not tell it plainly (no ``.git``, a symbolic ref to a symbolic ref,
    another ref storage): :func:`git_commit` then asks git. Reading saves starting a process.
    """
    if any(v in os.environ for v in _GIT_VARIABLES):
        return None
    for folder in (here, *here.parents):
        dot = folder / ".git"
        if dot.is_dir():
            git_dir = dot
            break
        if dot.is_file():  # a worktree's or submodule's pointer
            text = dot.read_text().strip()
            if not text.startswith("gitdir:"):
                return None
            git_dir = folder / text[len("gitdir:") :].strip()
            break
    else:
        return None
    head = (git_dir / "HEAD").read_text().strip()
    if not head.startswith("ref:"):
        return _sha(head)
    ref = head[len("ref:") :].strip()
    common = git_dir / "commondir"
    common_dir = git_dir / common.read_text().strip() if common.is_file() else git_dir
    for base in (git_dir, common_dir):
        loose = base / ref
        if loose.is_file():
            return _sha(loose.read_text().strip())
    packed = common_dir / "packed-refs"
    if packed.is_file():
        for line in packed.read_text().splitlines():
            sha, _, name = line.partition(" ")
            if name == ref:
                return _sha(sha)
    return None


@functools.cache
def git_commit() -> str | None:
    """Return the commit of the zeus-bench checkout this package runs from, if any."""
    here = Path(__file__).resolve().parent
    try:
        commit = _head_from_files(here)
    except (OSError, UnicodeDecodeError):
        commit = None
    if commit is not None:
        return commit
    import subprocess  # (only where the files do not tell: start-up pays no process)

    try:
        out = subprocess.run(
            ["git", "-C", str(here), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    commit = out.stdout.strip()
    return commit if out.returncode == 0 and len(commit) == 40 else None


def base_provenance() -> dict[str, object]:
    """Provenance common to every written table: package version, git commit, creation time.

    With ``SOURCE_DATE_EPOCH`` set (the reproducible-builds convention; the workflow sets it for
    the tables it commits), the creation time is that epoch and the commit is left out, so the
    same inputs give the same bytes in any checkout.
    """
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if epoch.isdigit():
        created = _dt.datetime.fromtimestamp(int(epoch), _dt.UTC)
        commit = None
    else:
        created, commit = _dt.datetime.now(_dt.UTC), git_commit()
    return {
        "package": "zeus-bench",
        "package_version": __version__,
        "git_commit": commit,
        "created_utc": created.isoformat(timespec="seconds"),
    }
