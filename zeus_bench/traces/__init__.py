"""Trace store: schemas of train and power traces, import of the published Zeus CSVs."""

from zeus_bench.traces.schema import POWER, TRAIN

__all__ = ["POWER", "TRAIN"]
