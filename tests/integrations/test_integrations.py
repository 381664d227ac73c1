"""The transformers and Lightning callbacks train a tiny model on CPU against the fake GPU."""

from __future__ import annotations

import json
import os
import types

import pytest

from tests.helpers.optional import require

torch = require("torch")

from zeus_bench.core.errors import ConfigError  # noqa: E402
from zeus_bench.device.fake import FakeBackend  # noqa: E402
from zeus_bench.online.callback import ZeusCallback  # noqa: E402
from zeus_bench.online.profiler import ProfilerConfig  # noqa: E402

FAST = ProfilerConfig(
    power_limits_w=(700.0, 400.0), warmup_iters=1, warmup_min_s=0.0, profile_iters=2, profile_min_s=0.0
)
GPU_UNDER_TEST = os.environ.get("ZEUS_BENCH_TEST_BACKEND", "fake")  # "nvml": observe mode on a real GPU


class Tiny(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(4, 2)

    def forward(self, x, labels=None):
        logits = self.lin(x)
        out = {"logits": logits}
        if labels is not None:
            out["loss"] = torch.nn.functional.cross_entropy(logits, labels)
        return out


def _data(n: int = 160) -> list[dict]:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 4, generator=g)
    y = (x[:, 0] > 0).long()
    return [{"x": x[i], "labels": y[i]} for i in range(n)]


def _zeus(tmp_path, backend, beta=2.0, observe=False, target=0.9, max_epochs=5):
    return ZeusCallback(
        job="tiny",
        batch_sizes=[8, 16],
        default_batch_size=16,
        target_metric=target,
        max_epochs=max_epochs,
        state_dir=tmp_path / "job",
        beta=beta,
        backend=backend,
        observe=observe,
        profiler=FAST,
        journal_dir=tmp_path / "state",
    )


def _backend(tmp_path):
    if GPU_UNDER_TEST == "nvml":
        from zeus_bench.device import get_backend
        from zeus_bench.device.nvml import forbid_power_limit_writes

        forbid_power_limit_writes()
        return get_backend("nvml"), True
    backend = FakeBackend(state_path=tmp_path / "fake.json")
    backend.configure(load=0.5)
    return backend, False


def _hf_recurrence(tmp_path, backend, accuracy, observe, beta=2.0):
    from transformers import Trainer, TrainingArguments

    from zeus_bench.integrations.transformers_callback import ZeusTrainerCallback

    zeus = _zeus(tmp_path, backend, beta=beta, observe=observe)
    callback = ZeusTrainerCallback(zeus, metric="eval_accuracy")
    args = TrainingArguments(
        output_dir=str(tmp_path / "hf"),
        per_device_train_batch_size=callback.batch_size,
        num_train_epochs=zeus.max_epochs,
        eval_strategy="epoch",
        save_strategy="no",
        logging_strategy="no",
        report_to="none",
        use_cpu=GPU_UNDER_TEST != "nvml",
        disable_tqdm=True,
    )
    trainer = Trainer(
        model=Tiny(),
        args=args,
        train_dataset=_data(),
        eval_dataset=_data(16),
        compute_metrics=lambda _pred: {"accuracy": accuracy},
        callbacks=[callback],
    )
    with callback:
        trainer.train()
    return zeus, trainer


def test_transformers_trainer_callback_end_to_end(tmp_path):
    require("transformers")
    backend, observe = _backend(tmp_path)
    first, trainer = _hf_recurrence(tmp_path, backend, accuracy=1.0, observe=observe)
    # target reached at the first evaluation: training stopped after epoch 1 of 5
    assert first.reached and first.epoch == 1 and trainer.state.epoch == pytest.approx(1.0)
    assert len(first.epoch_measurements) == 1 and first.energy_j > 0
    assert first.record is not None and first.record.batch_size == 16
    profiles = json.loads((tmp_path / "job" / "power_profiles.json").read_text())
    (profile,) = profiles.values()
    tried = [m["power_limit_w"] for m in profile["measurements"]]
    assert tried == ([backend.gpu(0).power_limit_w()] if observe else [700.0, 400.0])
    if not observe:
        assert backend.gpu(0).power_limit_w() == 700.0  # restored after the run
    # second recurrence never reaches the target: stopped early once its cost passes beta x best
    second, trainer = _hf_recurrence(tmp_path, backend, accuracy=0.0, observe=observe, beta=1.0)
    assert second.early_stopped and not second.reached and second.epoch < 5
    assert trainer.state.epoch == pytest.approx(second.epoch)
    state = json.loads((tmp_path / "job" / "tiny.optimizer.json").read_text())
    assert [r["reached"] for r in state["runs"]] == [True, False]
    assert state["runs"][1]["early_stopped"] and state["runs"][1]["batch_size"] == second.batch_size


def test_transformers_callback_refuses_bad_arguments(tmp_path):
    require("transformers")
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from zeus_bench.integrations.transformers_callback import ZeusTrainerCallback

    callback = ZeusTrainerCallback(_zeus(tmp_path, FakeBackend(state_path=None)))
    args = TrainingArguments(output_dir=str(tmp_path), eval_strategy="no", use_cpu=True, report_to="none")
    with pytest.raises(ConfigError, match="eval_strategy='epoch'"):
        callback.on_train_begin(args, TrainerState(), TrainerControl())
    args = TrainingArguments(
        output_dir=str(tmp_path),
        eval_strategy="epoch",
        per_device_train_batch_size=3,
        use_cpu=True,
        report_to="none",
    )
    with pytest.raises(ConfigError, match="per_device_train_batch_size is 3 but the optimizer chose 16"):
        callback.on_train_begin(args, TrainerState(), TrainerControl())


class TinyLightning:
    """Built lazily: the class needs lightning imported."""

    @staticmethod
    def make(accuracy: float):
        import lightning.pytorch as pl

        class Module(pl.LightningModule):
            def __init__(self) -> None:
                super().__init__()
                self.net = Tiny()

            def training_step(self, batch, batch_idx):
                x, y = batch
                return self.net(x, y)["loss"]

            def validation_step(self, batch, batch_idx):
                self.log("val_acc", accuracy)

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.1)

        return Module()


def _pl_recurrence(tmp_path, backend, accuracy, observe, beta=2.0):
    import lightning.pytorch as pl
    from torch.utils.data import DataLoader, TensorDataset

    from zeus_bench.integrations.lightning_callback import ZeusLightningCallback

    zeus = _zeus(tmp_path, backend, beta=beta, observe=observe)
    callback = ZeusLightningCallback(zeus, metric="val_acc")
    g = torch.Generator().manual_seed(0)
    x = torch.randn(160, 4, generator=g)
    data = TensorDataset(x, (x[:, 0] > 0).long())
    trainer = pl.Trainer(
        max_epochs=zeus.max_epochs,
        accelerator="cuda" if GPU_UNDER_TEST == "nvml" else "cpu",
        devices=1,
        callbacks=[callback],
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        default_root_dir=str(tmp_path / "pl"),
    )
    trainer.fit(
        TinyLightning.make(accuracy),
        DataLoader(data, batch_size=callback.batch_size),
        DataLoader(data, batch_size=16),
    )
    return zeus, trainer


def test_lightning_callback_end_to_end(tmp_path):
    require("lightning")
    backend, observe = _backend(tmp_path)
    first, trainer = _pl_recurrence(tmp_path, backend, accuracy=1.0, observe=observe)
    assert first.reached and first.epoch == 1 and trainer.current_epoch == 1
    assert first.record is not None and len(first.epoch_measurements) == 1
    profiles = json.loads((tmp_path / "job" / "power_profiles.json").read_text())
    assert len(next(iter(profiles.values()))["measurements"]) == (1 if observe else 2)
    second, trainer = _pl_recurrence(tmp_path, backend, accuracy=0.0, observe=observe, beta=1.0)
    assert second.early_stopped and second.epoch < 5 and trainer.current_epoch == second.epoch
    state = json.loads((tmp_path / "job" / "tiny.optimizer.json").read_text())
    assert [r["reached"] for r in state["runs"]] == [True, False]


def test_lightning_missing_metric_is_one_line(tmp_path):
    require("lightning")
    from zeus_bench.integrations.lightning_callback import ZeusLightningCallback, batch_samples

    assert batch_samples((torch.zeros(5, 2), torch.zeros(5))) == 5
    assert batch_samples({"x": torch.zeros(3, 1)}) == 3
    callback = ZeusLightningCallback(_zeus(tmp_path, FakeBackend(state_path=None)), metric="val_loss")
    callback._driver._epoch_open = True

    trainer = types.SimpleNamespace(callback_metrics={"val_acc": 1.0})
    with pytest.raises(ConfigError, match="metric 'val_loss' was not logged"):
        callback.on_train_epoch_end(trainer, None)


def test_driver_ignores_events_outside_an_epoch_and_names_a_missing_metric(tmp_path):
    from zeus_bench.integrations.driver import RecurrenceDriver

    driver = RecurrenceDriver(_zeus(tmp_path, FakeBackend(state_path=None)), metric="val_acc")
    assert driver.epoch_end({}, "log it") is False  # an evaluation before any epoch: ignored
    driver.step_begin()  # no open epoch: nothing to measure, no error
    driver.step_end(8)
    driver._epoch_open = True
    with pytest.raises(ConfigError, match=r"metric 'val_acc' was not logged \(logged: loss\); log it"):
        driver.epoch_end({"loss": 1.0}, "log it")
    driver.close()  # never entered: closing is a no-op
    assert not driver.zeus.finished
