"""What the golden scripts share: the original simulator's import, the workload registry, the labels.

The golden scripts run in a throwaway environment with ``zeus==0.16.0`` (``make golden``); this
module imports the original only when asked (:func:`original`), with a one-line error when missing.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
REFERENCE_SEEDS = tuple(range(1, 11))  # eta 0.5, beta 2: the seeds of the reference figures
LABEL = "original simulator (Zeus v0.3.0 code)"


class GoldenError(Exception):
    """A problem with the inputs of this script (reported in one line, exit status 2)."""


def original() -> Any:
    """Import the original simulator's modules (one-line error when missing)."""
    try:
        from zeus._legacy import simulate
        from zeus._legacy.job import Job
        from zeus._legacy.policy.optimizer import JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer
    except ImportError as exc:
        raise GoldenError(
            f"cannot import the original simulator ({exc}); run in a venv with zeus==0.16.0 (make golden)"
        ) from None
    return simulate, Job, JITPowerLimitOptimizer, PruningGTSBatchSizeOptimizer


def workloads() -> dict[str, Any]:
    """The workload registry of this checkout (zeus_bench, by path: the peer venv does not install it)."""
    sys.path.insert(0, str(REPO))
    from zeus_bench.traces.workloads import load_workloads

    return dict(load_workloads())
