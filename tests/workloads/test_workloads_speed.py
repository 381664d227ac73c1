"""The practitioner-speed step: same update as the synchronising step, layouts, kernels, compile."""

from __future__ import annotations

import pytest

from tests.helpers.optional import require

torch = require("torch")

from workloads._common import optimizer_kernels  # noqa: E402
from zeus_bench.sweep.workload import load_workload  # noqa: E402

IDS = ["cifar100", "imagenet", "squad", "sentiment140", "librispeech", "movielens-1m"]
CPU = torch.device("cpu")


@pytest.mark.parametrize("workload_id", IDS)
def test_async_step_returns_the_loss_tensor_and_makes_the_same_update(workload_id):
    workload = load_workload(workload_id, tiny=True)
    batch = next(workload.synthetic_batches(4, CPU, seed=3))
    params = []
    losses = []
    for step in (workload.train_step, workload.train_step_async):
        torch.manual_seed(0)
        model = workload.build_model()
        opt = workload.build_optimizer(model, 4)
        losses.append(step(model, opt, batch))
        params.append([p.detach().clone() for p in model.parameters()])
    assert isinstance(losses[0], float)
    assert isinstance(losses[1], torch.Tensor) and losses[1].dim() == 0 and not losses[1].requires_grad
    assert float(losses[1]) == pytest.approx(losses[0], rel=1e-6)
    for a, b in zip(*params, strict=True):
        torch.testing.assert_close(a, b)


@pytest.mark.parametrize("workload_id", ["cifar100", "imagenet"])
def test_convnets_and_their_images_are_channels_last(workload_id):
    workload = load_workload(workload_id, tiny=True)
    model = workload.build_model()
    convs = [m for m in model.modules() if isinstance(m, torch.nn.Conv2d)]
    assert convs and all(c.weight.is_contiguous(memory_format=torch.channels_last) for c in convs)
    images, _ = next(workload.synthetic_batches(2, CPU))
    assert images.is_contiguous(memory_format=torch.channels_last) and not images.is_contiguous()


def test_other_workloads_keep_the_default_layout():
    workload = load_workload("squad", tiny=True)
    assert not workload.channels_last
    model = torch.nn.Conv2d(3, 4, 3)
    assert workload.memory_format(model) is model and model.weight.is_contiguous()


def test_optimizer_kernels_fused_or_foreach_on_cuda_only():
    model = torch.nn.Linear(2, 2)
    assert optimizer_kernels(model, fused=True) == {} == optimizer_kernels(model, fused=False)
    meta = torch.nn.Linear(2, 2, device="meta")  # device type other than cpu, not cuda
    assert optimizer_kernels(meta, fused=True) == {}


def test_compile_flag_wraps_the_model_once_per_model():
    workload = load_workload("movielens-1m", tiny=True)
    model = workload.build_model()
    assert workload.network(model) is model
    workload.compile = True
    wrapped = workload.network(model)
    assert wrapped is not model and workload.network(model) is wrapped
    assert isinstance(wrapped, torch._dynamo.eval_frame.OptimizedModule)
    other = workload.build_model()
    assert workload.network(other) is not wrapped
