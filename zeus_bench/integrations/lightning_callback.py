"""The online optimizer inside a PyTorch Lightning ``Trainer``.

Example::

    zeus = ZeusCallback(job="cifar100", batch_sizes=[32, 64, 128], default_batch_size=64,
                        target_metric=0.6, max_epochs=50, state_dir="~/.zeus-jobs")
    loader = DataLoader(train_set, batch_size=zeus.batch_size, shuffle=True)
    trainer = lightning.pytorch.Trainer(max_epochs=zeus.max_epochs,
                                        callbacks=[ZeusLightningCallback(zeus, metric="val_acc")])
    trainer.fit(model, loader, val_loader)

The metric is read from ``trainer.callback_metrics`` at the end of each training epoch (after
that epoch's validation), so the module must ``self.log`` it during validation. Each batch counts
the length of its first tensor as its samples.
"""

from __future__ import annotations

import logging
from typing import Any

from zeus_bench.core.errors import ZeusBenchError
from zeus_bench.integrations.driver import RecurrenceDriver
from zeus_bench.online.callback import ZeusCallback

try:
    import lightning.pytorch as pl
except ImportError:  # pragma: no cover - exercised where lightning is absent
    raise ZeusBenchError("ZeusLightningCallback needs PyTorch Lightning: pip install lightning") from None

log = logging.getLogger(__name__)


def batch_samples(batch: Any) -> int:
    """Samples in a batch: the length of its first tensor (tensors, tuples, lists or dicts)."""
    if hasattr(batch, "shape") and len(batch.shape) > 0:
        return int(batch.shape[0])
    if isinstance(batch, dict):
        batch = list(batch.values())
    if isinstance(batch, list | tuple):
        for item in batch:
            n = batch_samples(item)
            if n:
                return n
    return 0


class ZeusLightningCallback(pl.Callback):  # type: ignore[misc]
    """Drive a :class:`ZeusCallback` from Lightning's hooks.

    Args:
        zeus: The recurrence's callback (not yet entered; this callback enters and leaves it).
        metric: Name of the logged validation metric compared with ``zeus.target_metric``.
    """

    def __init__(self, zeus: ZeusCallback, metric: str = "val_acc") -> None:
        self.zeus = zeus
        self.metric = metric
        self._driver = RecurrenceDriver(zeus, metric)

    @property
    def batch_size(self) -> int:
        """The batch size the optimizer chose for this recurrence."""
        return self.zeus.batch_size

    def on_fit_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Open the power-limit session and the energy monitor."""
        self._driver.start()

    def on_train_epoch_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Start the epoch's measurement (and the power-limit profile at a new batch size)."""
        if self._driver.epoch_begin():
            trainer.should_stop = True

    def on_train_batch_start(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        """Before each training step."""
        self._driver.step_begin()

    def on_train_batch_end(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """After each training step."""
        self._driver.step_end(batch_samples(batch))

    def on_train_epoch_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """End the epoch with the validation metric; stop at the target or on an early stop."""
        if self._driver.epoch_end(trainer.callback_metrics, "log it in validation_step"):
            trainer.should_stop = True

    def on_fit_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        """Report the run to the batch-size optimizer and restore the power limits."""
        self._driver.close()

    def on_exception(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, exception: BaseException
    ) -> None:
        """Restore the power limits; a failed run is not reported."""
        self._driver.close(exception)
