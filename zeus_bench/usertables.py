"""Tables a user writes by hand (arrival tables, drift tables): read as CSV or Parquet, one-line errors."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from zeus_bench.errors import TraceFormatError

if TYPE_CHECKING:  # imported when a table is read
    import pandas as pd


def read_user_table(path: str | Path, what: str) -> pd.DataFrame:
    """Read ``path`` as Parquet (``.parquet``) or CSV (anything else).

    Args:
        path: The file.
        what: What the table is, for messages (``"arrival table"``).

    Raises:
        TraceFormatError: the file is missing or cannot be read as a table (one line).
    """
    import pandas as pd

    path = Path(path)
    try:
        return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)
    except FileNotFoundError:
        raise TraceFormatError(f"{path}: no such {what}") from None
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        raise TraceFormatError(f"{path}: not a readable {what} ({exc})".splitlines()[0]) from None
