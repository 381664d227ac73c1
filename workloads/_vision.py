"""Image classification shared by CIFAR-100 and ImageNet: loss, top-1 accuracy, synthetic images."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import torch
import torch.nn.functional as F

from workloads._common import TorchWorkload, generator, model_device, optimizer_kernels, repeat_forever
from zeus_bench.sweep.workload import Batch


class ImageClassification(TorchWorkload):
    """Cross-entropy training and top-1 accuracy on ``(images, labels)`` batches.

    Subclasses set ``image_size`` and ``num_classes``. Optimiser: Adadelta with the learning
    rate of the Zeus train trace (0.1 at every batch size), foreach kernels on CUDA (PyTorch has
    no fused Adadelta). Model and images are channels-last (NHWC), the layout cuDNN's fastest
    convolutions use with bf16.
    """

    image_size: int
    num_classes: int
    metric_name = "top-1 validation accuracy"
    metric_direction = "max"
    amp = True
    channels_last = True
    base_lr = 0.1

    def build_optimizer(self, model: torch.nn.Module, batch_size: int) -> torch.optim.Optimizer:
        """Adadelta, lr 0.1 (the trace's value for every batch size)."""
        return torch.optim.Adadelta(
            model.parameters(), lr=self.base_lr, **optimizer_kernels(model, fused=False)
        )

    def synthetic_batches(self, batch_size: int, device: torch.device, seed: int = 0) -> Iterator[Batch]:
        """Normalised-looking random images ``(B, 3, H, W)`` float32 (channels-last) and labels ``(B,)`` int64."""
        gen = generator(device, seed)
        images = torch.randn(batch_size, 3, self.image_size, self.image_size, generator=gen, device=device)
        if self.channels_last:
            images = images.contiguous(memory_format=torch.channels_last)
        labels = torch.randint(0, self.num_classes, (batch_size,), generator=gen, device=device)
        return repeat_forever((images, labels))

    def loss(self, model: torch.nn.Module, batch: Batch) -> torch.Tensor:
        """Cross-entropy of the logits (computed in fp32); images are made channels-last if needed."""
        images, labels = batch
        if self.channels_last:
            images = images.contiguous(memory_format=torch.channels_last)  # no copy if already
        return F.cross_entropy(model(images).float(), labels)

    def evaluate(self, model: torch.nn.Module, batches: Iterable[Batch]) -> float:
        """Top-1 accuracy in [0, 1] over ``batches``."""
        device = model_device(model)
        correct, total = 0, 0
        with self.eval_context(model):
            for batch in batches:
                images, labels = self.to_device(batch, device)
                correct += int((model(images).argmax(dim=1) == labels).sum())
                total += len(labels)
        if total == 0:
            raise ValueError("evaluate() got no samples")
        return correct / total
