"""Zeus inside a real training job: JIT power-limit profiling and the persisted batch-size optimizer.

* :mod:`zeus_bench.online.profiler`: :class:`JITPowerLimitProfiler` (state machine), its cache.
* :mod:`zeus_bench.online.optimizer`: :class:`BatchSizeOptimizer` (the simulator's bandit,
  persisted between recurrences, with early stopping).
* :mod:`zeus_bench.online.callback`: :class:`ZeusCallback`, the training-loop integration.
"""
