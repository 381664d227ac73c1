"""Power-trace sweeps on real or fake GPUs, their merge, and projections onto other GPUs.

``zeus-bench sweep`` reads like its data flow (see :mod:`zeus_bench.sweep.runner`):

* :mod:`~zeus_bench.sweep.plan` -- what one sweep measures (:class:`SweepPlan`), checked once;
* :mod:`~zeus_bench.sweep.devices` -- the GPUs (CUDA ordinals to backend indices) and torch device;
* :mod:`~zeus_bench.sweep.points` -- the measuring loop over (batch size, power limit) points;
* :mod:`~zeus_bench.sweep.measure` -- the torch-free measurement of one point (warm-up until
  clocks and temperature hold steady, :mod:`~zeus_bench.sweep.steady`, then energy windows until
  energy per sample is known to a confidence target, :mod:`~zeus_bench.sweep.stats`, or a cap),
  with the window energy the monitor's one counter thread interpolated;
  :mod:`~zeus_bench.sweep.point` holds what a point's windows saw;
* :mod:`~zeus_bench.sweep.writer` -- the ``power`` trace and its rows (``power_row``), rewritten
  after every point; resume;
* :mod:`~zeus_bench.sweep.provenance` -- what is recorded about the GPU, software and SLURM job;
* :mod:`~zeus_bench.sweep.single` and :mod:`~zeus_bench.sweep.ddp` -- the drivers (one GPU in
  this process; several with DistributedDataParallel), chosen by :func:`~zeus_bench.sweep.runner.run_sweep`;
* :mod:`~zeus_bench.sweep.train` -- ``--train-to-target``: epochs to the target metric (``train``
  schema) on the real dataset;
* :mod:`~zeus_bench.sweep.merge` -- merge of per-cell shards into one trace;
* :mod:`~zeus_bench.sweep.projection` -- ``zeus-bench project``: a train trace joined with a power
  trace measured on another GPU.
"""

import zeus_bench.traces  # noqa: F401  (registers the train and power kinds this package writes and reads)
