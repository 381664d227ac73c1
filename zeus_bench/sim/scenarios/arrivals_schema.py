"""Schema of the arrival table (kind ``arrivals``), the input of ``zeus-bench simulate --arrivals``.

The columns, their types and their value checks are stated here once;
:func:`zeus_bench.sim.scenarios.arrivals.validate_arrivals` applies them column by column on NumPy arrays
(a cluster-scale table has millions of rows: no per-row Python object is made) and keeps only the
rules across rows (end after start, one workload per group).
"""

from __future__ import annotations

import numpy as np

from zeus_bench.core.errors import TraceFormatError
from zeus_bench.store import Column, TableSchema, register_schema

#: Largest runtime_ratio accepted: a job a million times its workload's mean runtime is a unit
#: mistake, and scaled costs that large overflow the replay's energy and time (float64) downstream.
MAX_RUNTIME_RATIO = 1e6

ARRIVALS = register_schema(
    TableSchema(
        kind="arrivals",
        version=1,
        description=(
            "Concurrent submissions of recurring jobs (the Alibaba GPU cluster trace's shape): one row "
            "per job submission, replayed by `zeus-bench simulate --arrivals` group by group."
        ),
        columns=(
            Column("group", "str", "Recurring job the submission belongs to (one policy per group)", example="g1"),
            Column("start_time", "float", "Submission time (any origin)", "s", "0.0", checks=("finite",)),
            Column(
                "end_time", "float", "Time the job ended in the original trace, after start_time", "s",
                "3600.0", checks=("finite",),
            ),
            Column("workload", "str", "Workload id (registry); one workload per group", example="imagenet"),
            Column(
                "runtime_ratio", "float",
                f"Runtime of this job over its workload's mean runtime, in (0, {MAX_RUNTIME_RATIO:g}]",
                example="1.0", checks=("finite", "positive"),
            ),
        ),
    )
)  # fmt: skip

#: Upper bounds of columns (inclusive) beyond the schema's checks, and what the column means.
UPPER_BOUNDS = {"runtime_ratio": (MAX_RUNTIME_RATIO, "a job's runtime over its workload's mean")}


def check_number_column(
    values: np.ndarray, raw: object, name: str, where: str, rules: tuple[str, ...] = ("finite", "positive")
) -> None:
    """Apply the ``arrivals`` schema's checks of column ``name`` among ``rules`` to its values (floats).

    ``raw`` is the column as read (a pandas Series or a NumPy array), quoted in the message of a value that is
    not a finite number. Raises :class:`TraceFormatError`, one line naming ``where``, the column
    and the first row at fault.
    """
    col = ARRIVALS.column(name)
    bad = ~np.isfinite(values)  # NaN where the value is not a number at all
    if "finite" in rules and "finite" in col.checks and bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = raw.iloc[row] if hasattr(raw, "iloc") else raw[row]  # type: ignore[index]
        raise TraceFormatError(f"{where}: column {name!r} row {row}: not a finite number: {value!r}")
    upper, meaning = UPPER_BOUNDS.get(name, (np.inf, col.description))
    if "positive" in rules and "positive" in col.checks:
        bad = (values <= 0) | (values > upper)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            raise TraceFormatError(
                f"{where}: column {name!r} row {row}: {float(values[row]):g} is outside (0, {upper:g}] "
                f"({meaning})"
            )
