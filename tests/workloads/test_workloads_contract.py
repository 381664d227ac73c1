"""Every registered workload: builds, steps on synthetic batches of the real shapes, evaluates in range.

The contract tests run over every workload installed under the entry-point group
``zeus_bench.workloads`` (a new workload is tested as soon as it is registered in
pyproject.toml); the paper-specific checks (shapes, parameter counts, the traces' batch sizes and
learning rates) run over the paper's six.
"""

from __future__ import annotations

import math

import pytest

from tests.helpers.optional import require

torch = require("torch")

from workloads._common import sqrt_scaled_lr  # noqa: E402
from zeus_bench.core.errors import ConfigError, UnknownWorkloadError  # noqa: E402
from zeus_bench.sweep.workload import TrainingWorkload, available_workloads, load_workload  # noqa: E402
from zeus_bench.traces.workloads import load_workloads  # noqa: E402

PAPER_IDS = ["cifar100", "imagenet", "squad", "sentiment140", "librispeech", "movielens-1m"]
#: Every registered workload (entry points), the paper's six included.
IDS = available_workloads()
CPU = torch.device("cpu")
OPTIMIZERS = {"adadelta": torch.optim.Adadelta, "adamw": torch.optim.AdamW, "adam": torch.optim.Adam}
# Valid range of each metric (registry units: accuracy and NDCG in [0, 1], F1 and WER in percent).
METRIC_RANGE = {
    "cifar100": (0.0, 1.0),
    "imagenet": (0.0, 1.0),
    "squad": (0.0, 100.0),
    "sentiment140": (0.0, 1.0),
    "librispeech": (0.0, math.inf),
    "movielens-1m": (0.0, 1.0),
}


def test_all_six_installed_under_the_trace_names():
    assert set(PAPER_IDS) <= set(IDS)


def test_unknown_workload_is_a_one_line_config_error():
    with pytest.raises(UnknownWorkloadError, match="unknown workload 'mnist'; installed: cifar100") as exc:
        load_workload("mnist")
    assert isinstance(exc.value, ConfigError)
    assert "\n" not in str(exc.value)


@pytest.fixture(scope="module", params=IDS)
def built(request):
    workload = load_workload(request.param, tiny=True)
    torch.manual_seed(0)
    return workload, workload.build_model()


def test_attributes_agree_with_the_registry(built):
    workload, _ = built
    registry = load_workloads()
    assert workload.id in registry, f"{workload.id}: add its entry to zeus_bench/data/workloads.yaml"
    spec = registry[workload.id]
    assert isinstance(workload, TrainingWorkload)
    assert workload.metric_direction == spec.metric_direction
    assert workload.samples_per_epoch > 0
    assert list(workload.paper_batch_sizes) == sorted(set(workload.paper_batch_sizes))


def test_optimizer_is_the_papers(built):
    workload, model = built
    spec = load_workloads()[workload.id]
    opt = workload.build_optimizer(model, spec.default_batch_size)
    assert type(opt) is OPTIMIZERS[spec.optimizer]


def test_train_step_gives_finite_loss_and_moves_weights(built):
    workload, model = built
    batch = next(workload.synthetic_batches(4, CPU, seed=1))
    opt = workload.build_optimizer(model, 4)
    before = [p.detach().clone() for p in model.parameters()]
    loss = workload.train_step(model, opt, batch)
    assert isinstance(loss, float) and math.isfinite(loss) and loss > 0
    changed = sum(not torch.equal(b, p) for b, p in zip(before, model.parameters(), strict=True))
    assert changed >= len(before) // 2


def test_evaluate_is_a_float_in_range(built):
    workload, model = built
    it = workload.synthetic_eval_batches(3, CPU, seed=2)
    value = workload.evaluate(model, [next(it), next(it)])
    lo, hi = METRIC_RANGE.get(workload.id, (-math.inf, math.inf))
    assert isinstance(value, float) and math.isfinite(value) and lo <= value <= hi


def test_synthetic_batches_are_made_once_and_reused(built):
    workload, _ = built
    it = workload.synthetic_batches(2, CPU, seed=3)
    first, second = next(it), next(it)
    assert first is second
    again = next(workload.synthetic_batches(2, CPU, seed=3))
    values = again.values() if isinstance(again, dict) else again
    ref = first.values() if isinstance(first, dict) else first
    assert all(torch.equal(a, b) for a, b in zip(values, ref, strict=True))


def test_paper_batch_sizes_are_those_of_the_power_traces(built, zeus_csv_dir):
    import pandas as pd

    workload, _ = built
    spec = load_workloads()[workload.id]
    traced: set[int] = set()
    for gpu in ("v100", "a40"):
        df = pd.read_csv(zeus_csv_dir / f"summary_power_{gpu}.csv")
        rows = df[(df.dataset == spec.dataset) & (df.optimizer == spec.optimizer)]
        traced |= {int(b) for b in rows.batch_size}
    if workload.id not in PAPER_IDS:  # not a paper job (teacher-student): no published trace
        assert not traced, workload.id
        return
    assert set(workload.paper_batch_sizes) == traced


def test_learning_rates_match_the_train_trace(built, zeus_csv_dir):
    import pandas as pd

    workload, model = built
    spec = load_workloads()[workload.id]
    df = pd.read_csv(zeus_csv_dir / "summary_train.csv")
    rows = df[(df.dataset == spec.dataset) & (df.optimizer.str.lower() == spec.optimizer)]
    assert rows.empty == (workload.id not in PAPER_IDS), workload.id  # only the paper's jobs are traced
    for b, lr in rows.groupby("batch_size").learning_rate.first().items():
        got = workload.build_optimizer(model, int(b)).param_groups[0]["lr"]
        assert got == pytest.approx(lr, rel=0.02, abs=0), (workload.id, b)


# Shapes of one synthetic sample at full size (batch size 2), without building the models.
FULL_SHAPES = {
    "cifar100": [(2, 3, 32, 32), (2,)],
    "imagenet": [(2, 3, 224, 224), (2,)],
    "squad": {"input_ids": (2, 384), "attention_mask": (2, 384), "start_positions": (2,)},
    "sentiment140": {"input_ids": (2, 128), "token_type_ids": (2, 128), "labels": (2,)},
    "librispeech": {"spectrograms": (2, 1, 161, 1270), "lengths": (2,), "targets": (2, 190)},
    "movielens-1m": {"users": (2,), "items": (2,), "labels": (2,)},
}


# The fp32 tensors of each synthetic batch; everything else (ids, labels, lengths) is int64.
FLOAT_KEYS = {
    "cifar100": (0,),
    "imagenet": (0,),
    "librispeech": ("spectrograms",),
    "movielens-1m": ("labels",),
}


@pytest.mark.parametrize("wid", PAPER_IDS)
def test_full_size_synthetic_shapes(wid):
    batch = next(load_workload(wid).synthetic_batches(2, CPU))
    expected = FULL_SHAPES[wid]
    if isinstance(expected, dict):
        assert {k: tuple(batch[k].shape) for k in expected} == expected
    else:
        assert [tuple(t.shape) for t in batch] == expected
    tensors = batch.items() if isinstance(batch, dict) else enumerate(batch)
    for key, t in tensors:
        assert t.dtype == (torch.float32 if key in FLOAT_KEYS.get(wid, ()) else torch.int64), (wid, key)


@pytest.mark.parametrize(
    ("wid", "params"),
    [
        ("imagenet", 25_557_032),  # torchvision ResNet-50
        ("squad", 108_893_186),  # BERT-base encoder + QA head (no pooler use, but it is built)
        ("librispeech", 86_618_336),  # DeepSpeech2, 5 x 1024 bidirectional LSTM
        ("cifar100", 1_356_104),  # ShuffleNetV2 1.0x, 100 classes
    ],
)
def test_full_size_parameter_counts(wid, params):
    model = load_workload(wid).build_model()
    assert sum(p.numel() for p in model.parameters()) == params


def test_sqrt_scaled_lr_rejects_nonpositive_batch():
    assert sqrt_scaled_lr(1e-3, 256, 1024) == pytest.approx(2e-3)
    with pytest.raises(ConfigError, match="batch size must be positive"):
        sqrt_scaled_lr(1e-3, 256, 0)


@pytest.mark.parametrize("wid", IDS)
def test_model_and_loss_can_fit_one_batch(wid):
    """Loss, targets and model are wired together: a fixed batch is learnt (fast optimiser)."""
    workload = load_workload(wid, tiny=True)
    torch.manual_seed(0)
    model = workload.build_model()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    batch = next(workload.synthetic_batches(4, CPU, seed=4))
    losses = [workload.train_step(model, opt, batch) for _ in range(15)]
    assert min(losses[-3:]) < 0.7 * losses[0], losses
