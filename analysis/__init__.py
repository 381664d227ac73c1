"""Figures and the report of zeus-bench, drawn from results files only.

This package reads the tables that ``zeus-bench`` commands write (potential CSVs, per-configuration
Parquet, simulation Parquet, power traces, the studies' tables) and never runs a simulation or
touches a GPU. From the simulator it imports only what defines the results it reads: the runs
table's summary and curves (:mod:`zeus_bench.sim.summarize`, :mod:`zeus_bench.sim.metrics`: savings
and regret have one owner) and the table store.

* :mod:`analysis.style` -- palette, policy colours, figure sizes.
* :mod:`analysis.tables` -- reading results files.
* :mod:`analysis.metrics` -- pure aggregations of result tables into the data each figure shows.
* :mod:`analysis.plots` -- plot functions: a DataFrame in, a matplotlib Figure out.
* :mod:`analysis.figures` -- the figure registry; ``python -m analysis.figures KIND ...``: load,
  aggregate, plot, save (the workflow's figure rules are generated from the registry).
* :mod:`analysis.report` -- ``python -m analysis.report``: ``results/report.md`` (its findings in
  :mod:`analysis.report.findings`, its sections in :mod:`analysis.report.sections`).
* :mod:`analysis.readme` -- ``python -m analysis.readme``: ``results/README.md`` from the schemas.
"""
