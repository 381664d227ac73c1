"""Convert the Zeus paper's Alibaba job groups (``alibaba_groups.csv[.xz]``) to an arrival table.

The upstream file has the columns ``group`` (Alibaba group id), ``start_time`` and ``end_time``
(s), ``dataset`` (one of the six workloads) and ``runtime_ratio`` (the job's runtime over the
mean runtime of its dataset's jobs): the arrival table of :mod:`zeus_bench.sim.scenarios.arrivals` with
``dataset`` for ``workload``. The conversion renames that column, checks every dataset against
the workload registry and validates the rest with :func:`~zeus_bench.sim.scenarios.arrivals.validate_arrivals`
(the owner of the arrival-table rules); the result is written as Parquet.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from zeus_bench.core.errors import TraceFormatError

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

ALIBABA_COLUMNS = ("group", "start_time", "end_time", "dataset", "runtime_ratio")


def read_alibaba_groups(path: str | Path) -> pd.DataFrame:
    """Read ``alibaba_groups.csv`` (or ``.csv.xz``) as a validated arrival table.

    Raises:
        TraceFormatError: unreadable or truncated file, a missing column, an unknown dataset or
            a row the arrival-table rules refuse (one line naming the file and the column).
    """
    import lzma

    import pandas as pd

    from zeus_bench.sim.scenarios.arrivals import validate_arrivals
    from zeus_bench.traces.workloads import load_workloads

    path = Path(path)
    if not path.is_file():
        raise TraceFormatError(f"{path}: no such file")
    try:
        df = pd.read_csv(path, dtype={"group": str, "dataset": str})
    except (ValueError, OSError, EOFError, lzma.LZMAError, pd.errors.ParserError) as exc:
        raise TraceFormatError(
            f"{path}: not a readable Alibaba group table ({exc})".splitlines()[0]
        ) from None
    missing = [c for c in ALIBABA_COLUMNS if c not in df.columns]
    if missing:
        raise TraceFormatError(
            f"{path}: missing column(s) {', '.join(missing)} (need {', '.join(ALIBABA_COLUMNS)})"
        )
    extra = [c for c in df.columns if c not in ALIBABA_COLUMNS]
    if extra:
        raise TraceFormatError(f"{path}: unexpected column(s) {', '.join(map(str, extra))}")
    known = load_workloads()
    unknown = sorted(set(df["dataset"].dropna().astype(str)) - set(known))
    if unknown:
        raise TraceFormatError(
            f"{path}: column 'dataset': unknown workload(s) {', '.join(unknown)}; known: {', '.join(known)}"
        )
    table = validate_arrivals(df.rename(columns={"dataset": "workload"}), str(path))
    log.info(
        "%s: %d jobs in %d groups over %d workloads",
        path,
        len(table),
        table["group"].nunique(),
        table["workload"].nunique(),
    )
    return table


def import_alibaba(src: str | Path, out: str | Path) -> pd.DataFrame:
    """Convert ``src`` (:func:`read_alibaba_groups`) and write it to ``out`` (Parquet), atomically."""
    from zeus_bench.core.fsutil import atomic_path

    out = Path(out)
    if out.suffix != ".parquet":
        raise TraceFormatError(f"{out}: the arrival table is written as Parquet (.parquet)")
    table = read_alibaba_groups(src)
    with atomic_path(out) as tmp:
        table.to_parquet(tmp, index=False)
    return table
