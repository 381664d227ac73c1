"""The online optimizer inside a Hugging Face ``transformers.Trainer``.

Example::

    zeus = ZeusCallback(job="bert-squad", batch_sizes=[8, 16, 32], default_batch_size=16,
                        target_metric=0.85, max_epochs=10, state_dir="~/.zeus-jobs")
    callback = ZeusTrainerCallback(zeus, metric="eval_accuracy")
    args = TrainingArguments(..., per_device_train_batch_size=callback.batch_size,
                             num_train_epochs=zeus.max_epochs, eval_strategy="epoch")
    with callback:            # the power limits come back even if training raises
        Trainer(model, args, ..., callbacks=[callback]).train()

The Trainer must evaluate once per epoch (``eval_strategy="epoch"``): the metric that decides
the target and the early stop is read from that evaluation. Each optimizer step counts
``per_device_train_batch_size x gradient_accumulation_steps`` samples for the profiler.
"""

from __future__ import annotations

import logging
from typing import Any

from zeus_bench.core.errors import ConfigError, ZeusBenchError
from zeus_bench.integrations.driver import RecurrenceDriver
from zeus_bench.online.callback import ZeusCallback

try:
    from transformers import TrainerCallback, TrainerControl, TrainerState, TrainingArguments
except ImportError:  # pragma: no cover - exercised where transformers is absent
    raise ZeusBenchError(
        "ZeusTrainerCallback needs transformers: pip install 'zeus-bench[workloads]' (or transformers)"
    ) from None

log = logging.getLogger(__name__)


class ZeusTrainerCallback(TrainerCallback):  # type: ignore[misc]
    """Drive a :class:`ZeusCallback` from ``transformers.Trainer`` events.

    Args:
        zeus: The recurrence's callback (not yet entered; this callback enters and leaves it).
        metric: Key of the evaluation metric compared with ``zeus.target_metric``.
    """

    def __init__(self, zeus: ZeusCallback, metric: str = "eval_accuracy") -> None:
        self.zeus = zeus
        self.metric = metric
        self._driver = RecurrenceDriver(zeus, metric)

    @property
    def batch_size(self) -> int:
        """The batch size the optimizer chose for this recurrence (``per_device_train_batch_size``)."""
        return self.zeus.batch_size

    # Lifetime -------------------------------------------------------------------------------
    def __enter__(self) -> ZeusTrainerCallback:
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        self.close(exc_type, exc, tb)

    def close(self, exc_type: Any = None, exc: Any = None, tb: Any = None) -> None:
        """Leave the recurrence: restore power limits and, after a clean run, report it."""
        self._driver.close(exc)

    # Trainer events -------------------------------------------------------------------------
    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """Check the arguments, then open the power-limit session and the energy monitor."""
        if str(getattr(args.eval_strategy, "value", args.eval_strategy)) != "epoch":
            raise ConfigError(
                f"ZeusTrainerCallback needs eval_strategy='epoch' (got {args.eval_strategy!r}): the "
                "metric of each epoch's evaluation decides the target and the early stop"
            )
        if args.per_device_train_batch_size != self.zeus.batch_size:
            raise ConfigError(
                f"per_device_train_batch_size is {args.per_device_train_batch_size} but the optimizer "
                f"chose {self.zeus.batch_size} for this recurrence: pass "
                "per_device_train_batch_size=callback.batch_size"
            )
        self._driver.start()

    def on_epoch_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """Start the epoch's measurement (and the power-limit profile at a new batch size)."""
        if self._driver.epoch_begin():
            control.should_training_stop = True

    def on_step_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """Before each optimizer step."""
        self._driver.step_begin()

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """After each optimizer step."""
        self._driver.step_end(args.per_device_train_batch_size * args.gradient_accumulation_steps)

    def on_evaluate(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        metrics: dict[str, float] | None = None,
        **kwargs: Any,
    ) -> None:
        """End the epoch with its metric; stop training at the target or on an early stop."""
        if self._driver.epoch_end(metrics or {}, "pass metric= the key of an evaluation metric"):
            control.should_training_stop = True

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        """Report the run to the batch-size optimizer and restore the power limits."""
        self.close()
