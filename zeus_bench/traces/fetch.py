"""Obtain the published Zeus trace CSVs: from a local copy or a pinned download, verified by sha256.

The files to obtain and their checksums are data (``config/config.yaml`` of the workflow, or
``--file NAME=SHA256`` on the command line), never code. A file is accepted only when its sha256
matches; a file whose checksum is unknown is refused unless the caller explicitly allows
unverified files. ``summary_train.csv`` is required; power traces that are absent from a local
copy, or missing upstream, are skipped with a log line.

The result is a folder holding the accepted CSVs and ``MANIFEST.json``: where they came from, each
file's sha256, whether it was verified, the GPU kinds available and, when nothing could be
obtained (``allow_missing``), a ``status`` of ``unavailable`` and the message saying how to get
the traces. Downstream steps read the manifest instead of guessing.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.client
import json
import logging
import os
import shutil
import socket
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from zeus_bench.core.errors import ConfigError, TraceFormatError, ZeusBenchError
from zeus_bench.core.fsutil import atomic_path, atomic_write_text, check_output_dir, output_dir
from zeus_bench.core.provenance import sha256_file
from zeus_bench.traces.zeus_csv import POWER_FILE_RE, TRAIN_FILE

log = logging.getLogger(__name__)

MANIFEST = "MANIFEST.json"
DOWNLOAD_TIMEOUT_S = 30.0
#: Environment variable that overrides the download URL (a template, or a base URL to which the
#: file name is appended), e.g. a mirror or a local test server.
URL_ENV = "ZEUS_TRACE_URL"


class TracesUnavailableError(ZeusBenchError):
    """The traces could not be obtained (no local copy and no download); the message says how."""


Fetch = Callable[[str], bytes]


def urlopen_fetch(url: str, timeout_s: float = DOWNLOAD_TIMEOUT_S) -> bytes:
    """Download ``url`` and return its bytes (``http(s)://`` or ``file://``)."""
    with urllib.request.urlopen(url, timeout=timeout_s) as response:
        data: bytes = response.read()
    return data


def url_template_from(config_url: str, environ: Mapping[str, str] | None = None) -> str:
    """The download URL template: ``$ZEUS_TRACE_URL`` when set, else ``config_url``.

    A value without a ``{file}`` placeholder is a base URL: ``/{file}`` is appended.
    """
    env = os.environ if environ is None else environ
    url = env.get(URL_ENV, "").strip() or config_url
    if url and "{file}" not in url:
        url = url.rstrip("/") + "/{file}"
    return url


def file_url(template: str, commit: str, name: str) -> str:
    """The URL of trace file ``name``: ``{commit}`` and ``{file}`` of the template filled in.

    Other braces are left alone (``str.format`` would choke on them).
    """
    return template.replace("{commit}", commit).replace("{file}", name)


@dataclass
class FetchResult:
    """What :func:`obtain_zeus_traces` did."""

    status: str  # "ok" or "unavailable"
    source: str  # "local:<dir>", "download:<url template>" or ""
    files: dict[str, dict[str, Any]] = field(default_factory=dict)
    gpus: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)
    message: str = ""

    def to_json(self) -> str:
        """The manifest text."""
        return json.dumps(self.__dict__, indent=2, sort_keys=True) + "\n"


def how_to_point(commit: str) -> str:
    """The sentence that tells a user how to provide a local copy of the traces."""
    return (
        "point at a local copy of the Zeus trace folder (summary_train.csv and summary_power_<gpu>.csv "
        f"from github.com/SymbioticLab/Zeus, folder trace/, commit {commit}): "
        "export ZEUS_TRACE_DIR=/path/to/trace or set traces.zeus.local_dir in config/config.yaml"
    )


def parse_file_spec(text: str) -> tuple[str, str | None]:
    """Parse ``NAME=SHA256`` or ``NAME`` (checksum unknown) into a (name, sha256) pair."""
    name, _, digest = text.partition("=")
    name, digest = name.strip(), digest.strip().lower()
    if not name or "/" in name or name in (".", ".."):
        raise ConfigError(f"bad trace file name {text!r} (expected NAME or NAME=SHA256)")
    if digest and (len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest)):
        raise ConfigError(f"{name}: sha256 must be 64 hex digits, got {digest!r}")
    return name, digest or None


def _check_names(files: Mapping[str, str | None]) -> None:
    if TRAIN_FILE not in files:
        raise ConfigError(f"the trace file list must include {TRAIN_FILE}")
    bad = [n for n in files if n != TRAIN_FILE and not POWER_FILE_RE.match(n)]
    if bad:
        raise ConfigError(
            f"unknown trace file name(s) {', '.join(bad)} (expected {TRAIN_FILE} or summary_power_<gpu>.csv)"
        )


def _verify(name: str, actual: str, expected: str | None, where: str) -> bool:
    """Return True if verified, False if accepted unverified (no known checksum); raise on mismatch."""
    if expected is None:
        log.warning("%s: %s accepted WITHOUT checksum verification (sha256 %s)", where, name, actual)
        return False
    if actual != expected:
        raise TraceFormatError(f"{where}: sha256 mismatch for {name}: expected {expected}, got {actual}")
    return True


@dataclass(frozen=True)
class TraceSource:
    """Where :func:`obtain_zeus_traces` takes the trace files from: a local copy, else a download.

    Attributes:
        local_dir: A local copy of the upstream ``trace/`` folder; when given, nothing is
            downloaded and listed files absent from it are skipped (except the train trace).
        url_template: Download URL with ``{commit}`` and ``{file}`` placeholders.
        commit: Upstream commit the URL pins.
        fetch: Download function (tests inject one); default: :func:`urlopen_fetch`.
        timeout_s: Seconds to wait for a server before giving up (default download only).

    Raises:
        ConfigError: a timeout that is not > 0.
    """

    local_dir: str | Path | None = None
    url_template: str = ""
    commit: str = ""
    fetch: Fetch | None = None
    timeout_s: float = DOWNLOAD_TIMEOUT_S

    def __post_init__(self) -> None:
        """Refuse a timeout that could never wait."""
        if self.timeout_s <= 0:
            raise ConfigError(f"download timeout must be > 0 s, got {self.timeout_s:g}")

    def fetcher(self) -> Fetch:
        """The download function: :attr:`fetch`, else :func:`urlopen_fetch` with :attr:`timeout_s`."""
        return self.fetch or functools.partial(urlopen_fetch, timeout_s=self.timeout_s)


def obtain_zeus_traces(
    files: Mapping[str, str | None],
    out_dir: str | Path,
    source: TraceSource | None = None,
    *,
    allow_unverified: bool = False,
    allow_missing: bool = False,
    force: bool = False,
    **where: Any,
) -> FetchResult:
    """Copy (from a local copy) or download the Zeus trace CSVs into ``out_dir``, verified.

    Args:
        files: File name -> expected sha256 (None: unknown). Must include ``summary_train.csv``.
        out_dir: Folder that receives the accepted files and ``MANIFEST.json``.
        source: Where the files come from (:class:`TraceSource`; None: its defaults).
        allow_unverified: Accept files whose sha256 is unknown (logged as a warning). Files with
            a known checksum that does not match are always refused.
        allow_missing: When nothing can be obtained (no local copy, download impossible), write a
            manifest with ``status: unavailable`` instead of raising.
        force: Write into an existing non-empty folder (replacing the trace CSVs and manifest only).
        **where: Any field of :class:`TraceSource` by name (``local_dir=...``), overriding ``source``'s.

    Returns:
        The manifest, also written to ``out_dir/MANIFEST.json``. The files are committed to
        ``out_dir`` once everything succeeded (:func:`~zeus_bench.core.fsutil.output_dir`: an
        existing non-empty folder only with ``force``, and then only the trace CSVs and the
        manifest are replaced); on any error it is left as it was (and not created).

    Raises:
        TracesUnavailableError: no local copy and the download failed (unless ``allow_missing``).
        TraceFormatError: a checksum does not match.
        ConfigError: a bad file list, a missing local folder, or an unverified file refused.
        TypeError: a keyword that names no field of :class:`TraceSource`.
    """
    _check_names(files)
    source = dataclasses.replace(source or TraceSource(), **where)
    check_output_dir(out_dir, force, "trace folder")
    with output_dir(out_dir, force, owned_by_fetch, "trace folder") as out:
        if source.local_dir is not None:
            result = _from_local(files, out, Path(source.local_dir), allow_unverified)
        else:
            try:
                result = _download(files, out, source, allow_unverified)
            except TracesUnavailableError as exc:
                if not allow_missing:
                    raise
                log.warning("%s", exc)
                for partial in out.glob("*.csv"):
                    partial.unlink()
                result = FetchResult(status="unavailable", source="", message=str(exc))
        atomic_write_text(out / MANIFEST, result.to_json())
    return result


def owned_by_fetch(name: str) -> bool:
    """Whether a folder entry is one :func:`obtain_zeus_traces` writes (a trace CSV or the manifest)."""
    return name == MANIFEST or (name.startswith("summary_") and name.endswith(".csv"))


def _gpu_of(name: str) -> str | None:
    match = POWER_FILE_RE.match(name)
    return match["gpu"].lower() if match else None


def _from_local(files: Mapping[str, str | None], out: Path, src: Path, allow_unverified: bool) -> FetchResult:
    if not src.is_dir():
        raise ConfigError(f"{src}: no such folder (set by ZEUS_TRACE_DIR or traces.zeus.local_dir)")
    result = FetchResult(status="ok", source=f"local:{src.resolve()}")
    for name, expected in files.items():
        path = src / name
        if not path.is_file():
            if name == TRAIN_FILE:
                raise ConfigError(f"{src}: no {TRAIN_FILE} in the local trace copy")
            result.skipped[name] = "absent from the local copy"
            log.info("%s: %s absent; skipped", src, name)
            continue
        actual = sha256_file(path)
        if expected is None and not allow_unverified:
            result.skipped[name] = "no known sha256 (unverified files not allowed)"
            log.warning("%s: %s has no known sha256; skipped (allow unverified files to use it)", src, name)
            continue
        verified = _verify(name, actual, expected, str(src))
        with atomic_path(out / name) as tmp:
            shutil.copyfile(path, tmp)
        result.files[name] = {"sha256": actual, "verified": verified}
    extra = sorted(p.name for p in src.glob("summary_power_*.csv") if p.name not in files)
    if extra:
        log.info("%s: not in the file list, ignored: %s", src, ", ".join(extra))
    result.gpus = sorted(g for n in result.files if (g := _gpu_of(n)))
    return result


def _download(
    files: Mapping[str, str | None], out: Path, source: TraceSource, allow_unverified: bool
) -> FetchResult:
    url_template, commit, fetch = source.url_template, source.commit, source.fetcher()
    if not url_template:
        raise TracesUnavailableError(
            f"no local copy of the Zeus traces and no download URL; {how_to_point(commit)}"
        )
    result = FetchResult(status="ok", source=f"download:{url_template.replace('{commit}', commit)}")
    for name, expected in files.items():
        if expected is None and not allow_unverified:
            result.skipped[name] = "no known sha256 (unverified files not allowed)"
            log.warning("%s has no known sha256; not downloaded (allow unverified files to use it)", name)
            continue
        url = file_url(url_template, commit, name)
        try:
            data = fetch(url)
        except urllib.error.HTTPError as exc:
            if name != TRAIN_FILE and exc.code == 404:
                result.skipped[name] = "not found upstream (HTTP 404)"
                log.warning("%s: not found (HTTP 404); skipped", url)
                continue
            raise TracesUnavailableError(
                f"cannot download {name} from {url}: HTTP {exc.code} {exc.reason}; {how_to_point(commit)}"
            ) from None
        except (urllib.error.URLError, http.client.HTTPException, OSError) as exc:
            reason = _reason(exc)
            raise TracesUnavailableError(
                f"cannot download {name} from {url}: {reason}; offline? {how_to_point(commit)}"
            ) from None
        actual = hashlib.sha256(data).hexdigest()
        verified = _verify(name, actual, expected, url)
        with atomic_path(out / name) as tmp:
            tmp.write_bytes(data)
        result.files[name] = {"sha256": actual, "verified": verified}
    result.gpus = sorted(g for n in result.files if (g := _gpu_of(n)))
    return result


def _reason(exc: BaseException) -> str:
    """A short reason for a failed download: ``timed out after 1 s``, ``connection refused``."""
    reason = getattr(exc, "reason", exc)
    if isinstance(reason, socket.timeout | TimeoutError) or "timed out" in str(reason):
        return "timed out (no answer from the server)"
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, http.client.IncompleteRead):
        return f"incomplete answer ({len(reason.partial)} bytes received)"
    text = getattr(reason, "strerror", None) or str(reason)
    return " ".join(text.split()) or type(reason).__name__


def read_manifest(folder: str | Path) -> dict[str, Any]:
    """Read the ``MANIFEST.json`` that :func:`obtain_zeus_traces` wrote."""
    path = Path(folder) / MANIFEST
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such file (run 'zeus-bench fetch-traces')") from None
    except json.JSONDecodeError:
        raise TraceFormatError(f"{path}: corrupt manifest") from None
    if not isinstance(data, dict):
        raise TraceFormatError(f"{path}: corrupt manifest")
    return data
