"""``zeus-bench traces fetch-alibaba`` and ``zeus-bench traces import-alibaba``: the Alibaba job groups."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import Any


def register(tsub: Any) -> None:
    """Add ``fetch-alibaba`` and ``import-alibaba`` to the ``traces`` command group."""
    from zeus_bench.cli.fetch import _seconds
    from zeus_bench.core.entry import add_output_dir_arg

    f = tsub.add_parser(
        "fetch-alibaba",
        help="copy or download alibaba_groups.csv.xz, verified by its git blob SHA-1",
        description=(
            "Obtain alibaba_groups.csv.xz into OUT_DIR with a MANIFEST.json (its git blob SHA-1 checked, its "
            "sha256 recorded). With --local-dir, copy from that folder; otherwise download --url (with {commit} "
            "and {file}). A file absent there (or HTTP 404) is recorded as absent, not an error."
        ),
    )
    add_output_dir_arg(
        f, "--out", "folder for the file and MANIFEST.json (absent or empty, unless --force)", "OUT_DIR"
    )
    f.add_argument("--blob-sha1", required=True, metavar="SHA1", help="the file's expected git blob SHA-1")
    f.add_argument(
        "--local-dir", type=Path, default=None, metavar="DIR", help="local copy of the upstream trace/ folder"
    )
    f.add_argument("--url", default="", help="download URL template with {commit} and {file}, or a base URL")
    f.add_argument("--commit", default="", help="upstream commit pinned by the URL")
    f.add_argument(
        "--timeout",
        type=_seconds,
        default=None,
        metavar="S",
        help="seconds to wait for the server (default 30)",
    )
    f.add_argument(
        "--import-to",
        type=Path,
        default=None,
        metavar="FILE.parquet",
        help="also convert the file to an arrival table (as 'import-alibaba') when it was obtained",
    )
    f.set_defaults(func=_fetch)
    i = tsub.add_parser(
        "import-alibaba",
        help="convert alibaba_groups.csv[.xz] to an arrival table (zeus-bench simulate --arrivals)",
        description=(
            "Read the Zeus paper's Alibaba job groups (columns group, start_time, end_time, dataset, runtime_ratio), "
            "validate them and write the arrival table (dataset becomes workload) as Parquet."
        ),
    )
    i.add_argument(
        "src", type=Path, metavar="FILE.csv[.xz]", help="alibaba_groups.csv or alibaba_groups.csv.xz"
    )
    i.add_argument(
        "--out", type=Path, required=True, metavar="FILE.parquet", help="the arrival table to write"
    )
    i.set_defaults(func=_import)


def _import(args: argparse.Namespace) -> int:
    from zeus_bench.core.fsutil import check_writable_dir
    from zeus_bench.sim.scenarios.alibaba_groups import import_alibaba

    check_writable_dir(args.out.parent, "output folder")
    table = import_alibaba(args.src, args.out)
    print(f"imported {args.out}: {len(table)} jobs in {table['group'].nunique()} groups")
    return 0


def _fetch(args: argparse.Namespace) -> int:
    from zeus_bench.core.entry import check_out
    from zeus_bench.core.fsutil import check_output_dir
    from zeus_bench.sim.scenarios.alibaba_groups import import_alibaba
    from zeus_bench.traces.alibaba_fetch import ALIBABA_FILE, obtain_alibaba
    from zeus_bench.traces.fetch import DOWNLOAD_TIMEOUT_S, url_template_from

    existed = args.out.exists()
    check_output_dir(args.out, args.force, "--out")
    check_out(args.import_to, (".parquet",), "--import-to")
    manifest = obtain_alibaba(
        args.out,
        args.blob_sha1,
        local_dir=args.local_dir,
        url_template=url_template_from(args.url, {}) if args.url else "",
        commit=args.commit,
        timeout_s=args.timeout or DOWNLOAD_TIMEOUT_S,
        force=args.force,
    )
    if manifest["status"] != "ok":
        print(f"absent {ALIBABA_FILE}: {manifest['reason']}")
        return 0
    print(f"ok {args.out / ALIBABA_FILE} git blob {manifest['git_blob_sha1']} sha256 {manifest['sha256']}")
    if args.import_to is not None:
        try:
            table = import_alibaba(args.out / ALIBABA_FILE, args.import_to)
        except BaseException:
            if not existed:  # the file is useless without its import: nothing half-done
                shutil.rmtree(args.out, ignore_errors=True)
            raise
        print(f"imported {args.import_to}: {len(table)} jobs in {table['group'].nunique()} groups")
    return 0
