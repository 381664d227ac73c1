"""Power-trace sweeps on real or fake GPUs, their merge, and projections onto other GPUs.

* :mod:`zeus_bench.sweep.measure` -- the torch-free measurement of one sweep point (warm-up,
  then a measuring window of at least N iterations and T seconds) and the row it yields.
* :mod:`zeus_bench.sweep.runner` -- ``zeus-bench sweep``: one process per workload, the model
  built once, every (batch size, power limit) point measured in turn, rows in the ``power``
  schema written after each point (a half-finished sweep keeps what it measured).
* :mod:`zeus_bench.sweep.ddp` -- the same sweep with DistributedDataParallel over several GPUs.
* :mod:`zeus_bench.sweep.train` -- ``--train-to-target``: epochs to the target metric (``train``
  schema) on the real dataset.
* :mod:`zeus_bench.sweep.merge` -- merge of per-cell shards into one trace.
* :mod:`zeus_bench.sweep.projection` -- ``zeus-bench project``: a train trace joined with a power
  trace measured on another GPU.
"""
