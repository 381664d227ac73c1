"""Obtain the Alibaba job-group trace of the Zeus paper (``alibaba_groups.csv.xz``), verified.

The file is an ordinary git file of the Zeus repository at the same pinned commit as the other
traces. Its sha256 is not published, but its git blob SHA-1 is (the object id git stores it
under): :func:`git_blob_sha1` computes it as git does, ``sha1(b"blob <size>" + NUL + content)``, so
a download is verified by that id; the file's sha256 is recorded in the manifest once known.

:func:`obtain_alibaba` copies the file from a local copy of the trace folder or downloads it,
verifies it and writes the folder ``out_dir`` with the file and ``MANIFEST.json``. A file absent
from the local copy, absent upstream (HTTP 404) or not asked for (downloads off) is not an error:
the manifest records ``status: absent`` and the reason, so that the workflow's Alibaba stage
skips and the report says why. A wrong blob id, a failed download or an unwritable folder is an
error, and nothing is left behind.
"""

from __future__ import annotations

import hashlib
import http.client
import json
import logging
import shutil
import urllib.error
from pathlib import Path
from typing import Any

from zeus_bench.core.errors import ConfigError, TraceFormatError
from zeus_bench.core.fsutil import atomic_path, atomic_write_text, check_writable_dir, staged_dir
from zeus_bench.core.provenance import sha256_file
from zeus_bench.traces.fetch import (
    DOWNLOAD_TIMEOUT_S,
    MANIFEST,
    Fetch,
    TracesUnavailableError,
    _reason,
    file_url,
    urlopen_fetch,
)

log = logging.getLogger(__name__)

ALIBABA_FILE = "alibaba_groups.csv.xz"
#: Bound on the file's size (the real one is a few MiB): a server sending more is refused.
MAX_BYTES = 1 << 30


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a file with content ``data``: ``sha1(b"blob <size>" + NUL + data)``."""
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def git_blob_sha1_file(path: str | Path, chunk_size: int = 1 << 20) -> str:
    """:func:`git_blob_sha1` of a file's bytes, read in chunks."""
    path = Path(path)
    digest = hashlib.sha1(usedforsecurity=False)
    digest.update(b"blob %d\0" % path.stat().st_size)
    with open(path, "rb") as fh:
        while block := fh.read(chunk_size):
            digest.update(block)
    return digest.hexdigest()


def check_blob_id(text: str) -> str:
    """A git blob SHA-1 as given on the command line or in the config: 40 hex digits (lower-cased)."""
    value = str(text).strip().lower()
    if len(value) != 40 or any(c not in "0123456789abcdef" for c in value):
        raise ConfigError(f"{ALIBABA_FILE}: git blob SHA-1 must be 40 hex digits, got {text!r}")
    return value


def obtain_alibaba(
    out_dir: str | Path,
    blob_sha1: str,
    *,
    local_dir: str | Path | None = None,
    url_template: str = "",
    commit: str = "",
    fetch: Fetch | None = None,
    timeout_s: float = DOWNLOAD_TIMEOUT_S,
) -> dict[str, Any]:
    """Copy or download ``alibaba_groups.csv.xz`` into ``out_dir``, verified by its git blob SHA-1.

    Args:
        out_dir: Folder that receives the file (when obtained) and ``MANIFEST.json``.
        blob_sha1: The file's expected git blob SHA-1 (40 hex digits).
        local_dir: A local copy of the upstream ``trace/`` folder: the file is taken from it (or
            recorded absent); nothing is downloaded.
        url_template: Download URL with ``{commit}`` and ``{file}``; empty: no download (absent).
        commit: Upstream commit the URL pins.
        fetch: Download function (tests inject one); default :func:`urlopen_fetch`.
        timeout_s: Seconds to wait for the server.

    Returns:
        The manifest: ``status`` (``ok`` or ``absent``), ``file``, ``source``, ``git_blob_sha1``
        and, when obtained, ``sha256`` and ``bytes``; when absent, ``reason``.

    Raises:
        TraceFormatError: the file's git blob SHA-1 is not the expected one.
        TracesUnavailableError: the download failed (other than HTTP 404).
        ConfigError: a bad blob id, a missing local folder or an unwritable output folder.
    """
    expected = check_blob_id(blob_sha1)
    check_writable_dir(out_dir, "Alibaba trace folder")
    if fetch is None:

        def fetch(url: str) -> bytes:
            return urlopen_fetch(url, timeout_s)

    manifest: dict[str, Any] = {"file": ALIBABA_FILE, "git_blob_sha1": expected}
    with staged_dir(out_dir) as out:
        target = out / ALIBABA_FILE
        if local_dir is not None:
            src = Path(local_dir)
            if not src.is_dir():
                raise ConfigError(f"{src}: no such folder (set by ZEUS_TRACE_DIR or traces.zeus.local_dir)")
            manifest["source"] = f"local:{src.resolve()}"
            path = src / ALIBABA_FILE
            if path.is_file():
                _check(git_blob_sha1_file(path), expected, str(path))
                with atomic_path(target) as tmp:
                    shutil.copyfile(path, tmp)
            else:
                manifest["reason"] = f"{ALIBABA_FILE} is absent from the local copy of the Zeus traces"
        elif url_template:
            url = file_url(url_template, commit, ALIBABA_FILE)
            manifest["source"] = f"download:{url}"
            data = _download(url, fetch)
            if data is None:
                manifest["reason"] = f"{ALIBABA_FILE} not found at {url} (HTTP 404)"
            else:
                _check(git_blob_sha1(data), expected, url)
                with atomic_path(target) as tmp:
                    tmp.write_bytes(data)
        else:
            manifest["source"] = ""
            manifest["reason"] = "no local copy of the Zeus traces and downloads are off"
        if target.is_file():
            manifest.update(status="ok", sha256=sha256_file(target), bytes=target.stat().st_size)
            log.info("%s: git blob %s verified, sha256 %s", ALIBABA_FILE, expected, manifest["sha256"])
        else:
            manifest["status"] = "absent"
            log.warning("Alibaba trace not obtained: %s", manifest["reason"])
        atomic_write_text(out / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return manifest


def _check(actual: str, expected: str, where: str) -> None:
    if actual != expected:
        raise TraceFormatError(
            f"{where}: git blob SHA-1 mismatch for {ALIBABA_FILE}: expected {expected}, got {actual}"
        )


def _download(url: str, fetch: Fetch) -> bytes | None:
    """The file's bytes, or None on HTTP 404."""
    try:
        data = fetch(url)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            log.warning("%s: not found (HTTP 404)", url)
            return None
        raise TracesUnavailableError(
            f"cannot download {ALIBABA_FILE} from {url}: HTTP {exc.code} {exc.reason}"
        ) from None
    except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
        raise TracesUnavailableError(f"cannot download {ALIBABA_FILE} from {url}: {_reason(exc)}") from None
    if len(data) > MAX_BYTES:
        raise TraceFormatError(f"{url}: {ALIBABA_FILE} is {len(data)} bytes, over the bound of {MAX_BYTES}")
    return data
