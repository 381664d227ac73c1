"""``zeus-bench fetch-traces``: obtain the published Zeus trace CSVs, verified by sha256."""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add ``fetch-traces``."""
    from zeus_bench.core.entry import add_output_dir_arg

    p = sub.add_parser(
        "fetch-traces",
        help="copy (from a local folder) or download the Zeus trace CSVs, checking each file's sha256",
        description=(
            "Obtain the Zeus trace CSVs into OUT_DIR with a MANIFEST.json. With --local-dir, copy from that "
            "folder; otherwise download URL (with {commit} and {file} placeholders). Every file is checked "
            "against its --file NAME=SHA256; a file given without a checksum is refused unless "
            "--allow-unverified."
        ),
    )
    add_output_dir_arg(
        p, "--out", "folder for the CSVs and MANIFEST.json (absent or empty, unless --force)", "OUT_DIR"
    )
    p.add_argument(
        "--file",
        dest="files",
        action="append",
        required=True,
        metavar="NAME[=SHA256]",
        help="a trace file to obtain and its expected sha256 (repeat; summary_train.csv is required)",
    )
    p.add_argument(
        "--local-dir", type=Path, default=None, metavar="DIR", help="local copy of the upstream trace/ folder"
    )
    p.add_argument(
        "--url",
        default="",
        help="download URL template with {commit} and {file}, or a base URL the file name is appended to",
    )
    p.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="S",
        help="seconds to wait for the server before giving up (default 30)",
    )
    p.add_argument("--commit", default="", help="upstream commit pinned by the URL")
    p.add_argument(
        "--allow-unverified", action="store_true", help="accept files whose sha256 is not known (warned)"
    )
    p.add_argument(
        "--allow-missing",
        action="store_true",
        help="if the traces cannot be obtained, write a manifest with status 'unavailable' and exit 0",
    )
    add_output_dir_arg(
        p,
        "--import-to",
        "also import the obtained traces to Parquet in DIR (as 'zeus-bench traces import-zeus'); "
        "when they are unavailable DIR is created empty",
        required=False,
    )
    p.set_defaults(func=_fetch)


def _seconds(text: str) -> float:
    """Argparse type: a duration in seconds, > 0 and at most an hour."""
    from zeus_bench.core.entry import parse_float

    try:
        value = parse_float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value <= 3600:
        raise argparse.ArgumentTypeError(f"must be in (0, 3600] s, got {text}")
    return value


def _fetch(args: argparse.Namespace) -> int:
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.core.fsutil import check_output_dir, output_dir
    from zeus_bench.traces.fetch import (
        DOWNLOAD_TIMEOUT_S,
        TraceSource,
        obtain_zeus_traces,
        parse_file_spec,
        url_template_from,
    )

    files: dict[str, str | None] = {}
    for spec in args.files:
        name, digest = parse_file_spec(spec)
        if name in files:
            raise ConfigError(f"trace file {name} given twice")
        files[name] = digest
    out_existed = args.out.exists()
    check_output_dir(args.out, args.force, "--out")
    if args.import_to is not None:
        check_output_dir(args.import_to, args.force, "--import-to")
    source = TraceSource(
        local_dir=args.local_dir,
        url_template=url_template_from(args.url, {}),
        commit=args.commit,
        timeout_s=args.timeout or DOWNLOAD_TIMEOUT_S,
    )
    result = obtain_zeus_traces(
        files,
        args.out,
        source,
        allow_unverified=args.allow_unverified,
        allow_missing=args.allow_missing,
        force=args.force,
    )
    if result.status != "ok":
        print(f"zeus-bench: warning: Zeus traces unavailable: {result.message}", file=sys.stderr)
        if args.import_to is not None:
            with output_dir(args.import_to, args.force, what="--import-to"):
                pass  # created empty (or left as it is)
        return 0
    for name, info in result.files.items():
        print(f"{'ok' if info['verified'] else 'UNVERIFIED'} {args.out / name} sha256 {info['sha256']}")
    for name, why in result.skipped.items():
        print(f"skipped {name}: {why}")
    if args.import_to is not None:
        from zeus_bench.traces.zeus_csv import import_zeus

        try:
            written = import_zeus(args.out, args.import_to, args.force)
        except BaseException:
            # The CSVs are useless without their import: take back the folder this run created.
            if not out_existed:
                shutil.rmtree(args.out, ignore_errors=True)
            raise
        for path in written:
            print(f"imported {path}")
    return 0
