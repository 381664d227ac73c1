"""``zeus-bench traces``: import and validate trace files."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)


def register(sub: Any) -> None:
    """Add the ``traces`` command group."""
    p = sub.add_parser("traces", help="import and validate trace files")
    tsub = p.add_subparsers(dest="traces_command", metavar="SUBCOMMAND", parser_class=type(p))
    tsub.required = True
    imp = tsub.add_parser("import-zeus", help="convert the published Zeus CSV traces to Parquet")
    imp.add_argument(
        "src_dir",
        type=Path,
        metavar="SRC_DIR",
        help="folder with summary_train.csv and summary_power_<gpu>.csv",
    )
    imp.add_argument(
        "--out",
        type=Path,
        required=True,
        metavar="OUT_DIR",
        help="folder for train.parquet and power-<gpu>.parquet",
    )
    imp.set_defaults(func=_import_zeus)
    val = tsub.add_parser(
        "validate", help="check trace files (Zeus CSV or zeus-bench Parquet) without converting"
    )
    val.add_argument("paths", type=Path, nargs="+", metavar="PATH", help="trace files or folders to check")
    val.set_defaults(func=_validate)
    from zeus_bench.cli.traces_alibaba import register as register_alibaba

    register_alibaba(tsub)


def _import_zeus(args: argparse.Namespace) -> int:
    from zeus_bench.traces.zeus_csv import import_zeus

    for path in import_zeus(args.src_dir, args.out):
        print(path)
    return 0


def validate_path(path: Path) -> str:
    """Validate one file; return a one-line summary or raise TraceFormatError."""
    import zeus_bench.catalog  # noqa: F401  (a file of any kind: every built-in kind registered)
    from zeus_bench.core.errors import TraceFormatError
    from zeus_bench.store import read_metadata, read_table
    from zeus_bench.traces.zeus_csv import POWER_FILE_RE, TRAIN_FILE, read_zeus_power_csv, read_zeus_train_csv

    if path.suffix == ".parquet":
        kind = str(read_metadata(path).get("kind"))
        df = read_table(path, kind)
        return f"ok {path}: {kind} table, {len(df)} rows"
    if path.name == TRAIN_FILE:
        return f"ok {path}: Zeus train trace, {len(read_zeus_train_csv(path))} rows"
    if POWER_FILE_RE.match(path.name):
        return f"ok {path}: Zeus power trace, {len(read_zeus_power_csv(path))} rows"
    raise TraceFormatError(
        f"{path}: unknown trace file (expected *.parquet, {TRAIN_FILE} or summary_power_<gpu>.csv)"
    )


def _validate(args: argparse.Namespace) -> int:
    from zeus_bench.core.errors import ZeusBenchError

    failed: list[str] = []
    for path in args.paths:
        try:
            print(validate_path(path))
        except ZeusBenchError as exc:
            failed.append(str(exc))
    if failed:
        from zeus_bench.core.errors import TraceFormatError

        if len(failed) == 1:
            raise TraceFormatError(failed[0])
        raise TraceFormatError(f"{len(failed)} invalid files; first: {failed[0]}")
    return 0
