"""Zeus inside a real training job: JIT power-limit profiling and the persisted batch-size optimizer.

* :mod:`zeus_bench.online.profiler`: :class:`JITPowerLimitProfiler` (state machine), its cache.
* :mod:`zeus_bench.online.optimizer`: :class:`BatchSizeOptimizer` (one of the simulator's
  batch-size optimizers, :data:`zeus_bench.optimizers.OPTIMIZERS`, persisted between recurrences,
  with early stopping).
* :mod:`zeus_bench.online.callback`: :class:`ZeusCallback`, the training-loop integration.
"""
