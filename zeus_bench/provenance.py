"""Provenance recorded in every table this project writes."""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import subprocess
from pathlib import Path

from zeus_bench import __version__


def sha256_file(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """Return the hex sha256 of a file's bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


@functools.cache
def git_commit() -> str | None:
    """Return the commit of the zeus-bench checkout this package runs from, if any."""
    here = Path(__file__).resolve().parent
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
    """Provenance common to every written table: package version, git commit, creation time."""
    return {
        "package": "zeus-bench",
        "package_version": __version__,
        "git_commit": git_commit(),
        "created_utc": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
    }
