"""Trace store: schemas of train and power traces, import of the published Zeus CSVs.

Importing it registers the trace kinds and the trace analysis's (``potential``, ``configurations``,
``reference``).
"""

from zeus_bench.traces import analysis_schema
from zeus_bench.traces.schema import POWER, TRAIN

__all__ = ["POWER", "TRAIN", "analysis_schema"]
