"""Provenance recorded in every table this project writes."""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import os
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
