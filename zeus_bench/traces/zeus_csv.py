"""Import of the published Zeus trace CSVs (``summary_train.csv``, ``summary_power_<gpu>.csv``).

The parser is strict about content and lenient about form. It accepts any column order, CRLF
line ends, a UTF-8 byte-order mark, blank lines, extra columns (ignored, logged) and an empty or
``nan`` ``target_epoch`` (never reached). It refuses, with one line that names the file, the line
and the column: missing columns, truncated or over-long rows, non-numeric or non-finite numbers,
zero or negative power, limits and times, fractional batch sizes or runs, negative epochs,
conflicting duplicate measurements (identical duplicates are dropped), and empty or binary files.
"""

from __future__ import annotations

import csv
import io
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.core.provenance import sha256_file

log = logging.getLogger(__name__)

TRAIN_FILE = "summary_train.csv"
POWER_FILE_RE = re.compile(r"^summary_power_(?P<gpu>[A-Za-z0-9][A-Za-z0-9_-]*)\.csv$")
_MISSING_EPOCH = {"", "nan", "NaN", "NAN", "NA", "N/A", "null", "None"}


@dataclass(frozen=True)
class _Field:
    """How one CSV column is read and checked."""

    csv_name: str
    out_name: str
    kind: str  # "str", "int", "float"
    rule: str = ""  # "", "positive", "nonnegative"
    missing_ok: bool = False


#: The fields that name a job's configuration, first in both files.
_CONFIG_FIELDS: tuple[_Field, ...] = (
    _Field("dataset", "dataset", "str"),
    _Field("network", "network", "str"),
    _Field("batch_size", "batch_size", "int", "positive"),
    _Field("optimizer", "optimizer", "str"),
)
TRAIN_FIELDS: tuple[_Field, ...] = (
    *_CONFIG_FIELDS,
    _Field("learning_rate", "learning_rate", "float", "positive"),
    _Field("run", "run", "int", "nonnegative"),
    _Field("target_metric", "target_metric", "float"),
    _Field("target_epoch", "target_epoch", "int", "epoch", missing_ok=True),
)
POWER_FIELDS: tuple[_Field, ...] = (
    *_CONFIG_FIELDS,
    _Field("power_limit", "power_limit_w", "float", "positive"),
    _Field("time_per_epoch", "time_per_epoch_s", "float", "positive"),
    _Field("average_power", "avg_power_w", "float", "positive"),
)
TRAIN_KEY = ("dataset", "network", "optimizer", "batch_size", "learning_rate", "run", "target_metric")
POWER_KEY = ("dataset", "network", "optimizer", "batch_size", "power_limit_w")


def _decode(path: Path) -> str:
    """Read a CSV file as text, refusing empty and binary files."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such file") from None
    except OSError as exc:
        raise TraceFormatError(f"{path}: cannot read ({exc.strerror})") from None
    if not raw.strip(b" \t\r\n\xef\xbb\xbf"):
        raise TraceFormatError(f"{path}: empty file")
    if b"\x00" in raw:
        raise TraceFormatError(f"{path}: binary file (NUL bytes), expected CSV text")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise TraceFormatError(f"{path}: binary or non-UTF-8 file (byte {exc.start})") from None


def _parse_value(text: str, field: _Field, where: str) -> object:
    value = text.strip()
    if field.kind == "str":
        if not value:
            raise TraceFormatError(f"{where}: empty value")
        return value.lower() if field.out_name == "optimizer" else value
    if field.missing_ok and value in _MISSING_EPOCH:
        return None
    try:
        number = float(value)
    except ValueError:
        raise TraceFormatError(f"{where}: not a number: {value!r}") from None
    if not math.isfinite(number):
        raise TraceFormatError(f"{where}: non-finite number: {value!r}")
    if field.kind == "int":
        if number != int(number):
            raise TraceFormatError(f"{where}: must be an integer, got {value!r}")
        number = int(number)
    if field.rule == "positive" and number <= 0:
        raise TraceFormatError(f"{where}: must be > 0, got {value!r}")
    if field.rule == "nonnegative" and number < 0:
        raise TraceFormatError(f"{where}: must be >= 0, got {value!r}")
    if field.rule == "epoch" and number < 1:
        raise TraceFormatError(f"{where}: epoch count must be >= 1 (empty = never reached), got {value!r}")
    return number


def _read_csv(path: Path, fields: Sequence[_Field], key: Sequence[str]) -> pd.DataFrame:
    """Parse and check one CSV file; return its rows with project column names."""
    text = _decode(path)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(reader)]
    except StopIteration:
        raise TraceFormatError(f"{path}: empty file") from None
    except csv.Error as exc:
        raise TraceFormatError(f"{path}: line 1: malformed CSV header ({exc})") from None
    missing = [f.csv_name for f in fields if f.csv_name not in header]
    if missing:
        raise TraceFormatError(f"{path}: missing column(s) {', '.join(missing)} (header: {','.join(header)})")
    dupes = sorted({h for h in header if header.count(h) > 1})
    if dupes:
        raise TraceFormatError(f"{path}: duplicated column(s) {', '.join(dupes)} in header")
    extra = [h for h in header if h not in {f.csv_name for f in fields}]
    if extra:
        log.info("%s: ignoring extra column(s) %s", path, ", ".join(extra))
    index = {f.csv_name: header.index(f.csv_name) for f in fields}
    rows: list[dict[str, object]] = []
    seen: dict[tuple[object, ...], tuple[int, dict[str, object]]] = {}
    try:
        for record in reader:
            line = reader.line_num
            if not record or all(not c.strip() for c in record):
                continue
            if len(record) < len(header):
                raise TraceFormatError(
                    f"{path}: line {line}: truncated row ({len(record)} of {len(header)} fields)"
                )
            if len(record) > len(header):
                raise TraceFormatError(f"{path}: line {line}: {len(record)} fields, header has {len(header)}")
            row = {
                f.out_name: _parse_value(
                    record[index[f.csv_name]], f, f"{path}: line {line}, column {f.csv_name!r}"
                )
                for f in fields
            }
            k = tuple(row[c] for c in key)
            if k in seen:
                first_line, first = seen[k]
                if first != row:
                    diff = [f.csv_name for f in fields if first[f.out_name] != row[f.out_name]]
                    raise TraceFormatError(
                        f"{path}: line {line}: conflicting duplicate of line {first_line} "
                        f"(differs in {', '.join(diff)})"
                    )
                log.debug("%s: line %d duplicates line %d; dropped", path, line, first_line)
                continue
            seen[k] = (line, row)
            rows.append(row)
    except csv.Error as exc:
        raise TraceFormatError(f"{path}: line {reader.line_num}: malformed CSV ({exc})") from None
    if not rows:
        raise TraceFormatError(f"{path}: no data rows")
    return pd.DataFrame(rows, columns=[f.out_name for f in fields])


def read_zeus_train_csv(path: str | Path) -> pd.DataFrame:
    """Read a Zeus ``summary_train.csv`` into a ``train`` table frame."""
    df = _read_csv(Path(path), TRAIN_FIELDS, TRAIN_KEY)
    df["target_epoch"] = pd.array(df["target_epoch"].tolist(), dtype="Int64")
    return df


def read_zeus_power_csv(path: str | Path, gpu: str | None = None) -> pd.DataFrame:
    """Read a Zeus ``summary_power_<gpu>.csv`` into a ``power`` table frame.

    Args:
        path: The CSV file.
        gpu: GPU kind; taken from the file name when not given.
    """
    path = Path(path)
    if gpu is None:
        match = POWER_FILE_RE.match(path.name)
        if match is None:
            raise TraceFormatError(
                f"{path}: cannot tell the GPU from the file name (expected summary_power_<gpu>.csv)"
            )
        gpu = match["gpu"].lower()
    df = _read_csv(path, POWER_FIELDS, POWER_KEY)
    df.insert(0, "gpu", gpu)
    return df


@dataclass(frozen=True)
class ZeusTraceFiles:
    """The CSV files of one Zeus trace folder."""

    train: Path
    power: dict[str, Path]


def find_zeus_files(src_dir: str | Path) -> ZeusTraceFiles:
    """Locate ``summary_train.csv`` and every ``summary_power_<gpu>.csv`` in a folder."""
    src = Path(src_dir)
    if not src.is_dir():
        raise TraceFormatError(f"{src}: not a folder of Zeus traces")
    train = src / TRAIN_FILE
    if not train.is_file():
        raise TraceFormatError(f"{src}: no {TRAIN_FILE}")
    power: dict[str, Path] = {}
    for p in sorted(src.iterdir()):
        m = POWER_FILE_RE.match(p.name)
        if m and p.is_file():
            power[m["gpu"].lower()] = p
    if not power:
        raise TraceFormatError(f"{src}: no summary_power_<gpu>.csv file")
    return ZeusTraceFiles(train=train, power=power)


def import_zeus(src_dir: str | Path, out_dir: str | Path, force: bool = False) -> list[Path]:
    """Convert a Zeus trace folder into ``OUT/train.parquet`` and ``OUT/power-<gpu>.parquet``.

    Every file is parsed and validated before anything is written, and the folder is written
    through :func:`~zeus_bench.core.fsutil.output_dir`, so a refused input leaves ``out_dir``
    untouched; an existing non-empty ``out_dir`` is refused unless ``force`` (then only the
    tables this function writes are replaced).

    Returns:
        The files written.
    """
    from zeus_bench.core.fsutil import check_output_dir, output_dir
    from zeus_bench.store import write_table

    check_output_dir(out_dir, force, "import folder")
    files = find_zeus_files(src_dir)
    tables: list[tuple[str, str, pd.DataFrame, Path]] = [
        ("train.parquet", "train", read_zeus_train_csv(files.train), files.train)
    ]
    for gpu, path in files.power.items():
        tables.append((f"power-{gpu}.parquet", "power", read_zeus_power_csv(path, gpu), path))
    # Validate against the Parquet schemas before the first write.
    from zeus_bench.store import validate

    for _name, kind, df, src in tables:
        validate(df, kind, where=str(src))
    out = Path(out_dir)
    with output_dir(out, force, _owned_by_import, "import folder") as tmp:
        for name, kind, df, src in tables:
            prov = {"source": "zeus-nsdi23", "sources": [{"file": src.name, "sha256": sha256_file(src)}]}
            write_table(df, tmp / name, kind, provenance=prov)
            log.info("imported %s -> %s (%d rows)", src, out / name, len(df))
    return [out / name for name, _kind, _df, _src in tables]


def _owned_by_import(name: str) -> bool:
    """Whether a folder entry is one :func:`import_zeus` writes."""
    return name == "train.parquet" or (name.startswith("power-") and name.endswith(".parquet"))
