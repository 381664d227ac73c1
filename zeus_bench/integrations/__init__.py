"""Callbacks that bring the online optimizer to the training frameworks users already run.

* :mod:`zeus_bench.integrations.transformers_callback`: a ``transformers.TrainerCallback``.
* :mod:`zeus_bench.integrations.lightning_callback`: a PyTorch Lightning ``Callback``.

Both translate their hooks into one :class:`~zeus_bench.integrations.driver.RecurrenceDriver`.

Both wrap one :class:`~zeus_bench.online.callback.ZeusCallback` per recurrence of a job: it picks
the batch size (read it before building the trainer), profiles power limits just in time during
the first epoch at a new batch size, measures every epoch, stops at the target metric, at
``max_epochs`` or early (cost above ``beta`` times the best), and reports the run to the
persisted batch-size optimizer when training ends. Each module imports its framework; a missing
framework is a one-line error.
"""
