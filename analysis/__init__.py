"""Figures and the report of zeus-bench, drawn from results files only.

This package reads the tables that ``zeus-bench`` commands write (potential CSVs, per-configuration
Parquet, simulation Parquet, power traces); it never imports the simulator or the device layer.

* :mod:`analysis.style` -- palette, policy colours, figure sizes.
* :mod:`analysis.metrics` -- pure aggregations of result tables into the data each figure shows.
* :mod:`analysis.plots` -- plot functions: a DataFrame in, a matplotlib Figure out.
* :mod:`analysis.figures` -- the figure registry; ``python -m analysis.figures KIND ...``: load,
  aggregate, plot, save (the workflow's figure rules are generated from the registry).
* :mod:`analysis.report` -- ``python -m analysis.report``: ``results/report.md``.
"""
