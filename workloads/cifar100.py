"""ShuffleNetV2 on CIFAR-100 (workload ``cifar100``).

Model: torchvision's ShuffleNetV2 1.0x with the usual CIFAR stem (3x3 stride-1 first
convolution, no max-pool), so 32x32 images keep enough resolution; 100 classes.
Data: the python version of CIFAR-100 (``cifar-100-python/{train,test,meta}``, pickled dicts
with ``data`` uint8 ``(N, 3072)`` and ``fine_labels``); ``val`` is the 10 000-image test set.
Training augmentation: random 32x32 crop of the 4-pixel padded image and horizontal flip.
"""

from __future__ import annotations

import pickle
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from workloads._common import DatasetError, OneLineErrors, check_split, find_root, require_file
from workloads._vision import ImageClassification

# Per-channel statistics of the CIFAR-100 training images.
MEAN = (0.5071, 0.4865, 0.4409)
STD = (0.2673, 0.2564, 0.2762)
_FILES = {"train": "train", "val": "test"}


def _read_pickle(workload_id: str, path: Path) -> tuple[np.ndarray, np.ndarray]:
    """Images ``(N, 3, 32, 32)`` uint8 and fine labels ``(N,)`` from one CIFAR-100 pickle."""
    require_file(workload_id, path, "CIFAR-100 python-version pickle")
    try:
        with path.open("rb") as fh:
            entry: dict[Any, Any] = pickle.load(fh, encoding="bytes")
        data = np.asarray(entry[b"data"], dtype=np.uint8)
        labels = np.asarray(entry[b"fine_labels"], dtype=np.int64)
    except (pickle.UnpicklingError, EOFError, KeyError, TypeError, ValueError, AttributeError) as exc:
        raise DatasetError(
            f"{workload_id}: {path} is not a CIFAR-100 python pickle ({type(exc).__name__}: {exc})"
        ) from None
    if data.ndim != 2 or data.shape[1] != 3 * 32 * 32 or len(data) != len(labels) or len(data) == 0:
        raise DatasetError(f"{workload_id}: {path}: expected data (N, 3072) and N fine_labels")
    if labels.min() < 0 or labels.max() >= 100:
        raise DatasetError(f"{workload_id}: {path}: fine_labels outside 0..99")
    return data.reshape(-1, 3, 32, 32), labels


class _Cifar(Dataset[tuple[torch.Tensor, int]]):
    def __init__(self, images: np.ndarray, labels: np.ndarray, train: bool) -> None:
        from torchvision.transforms import v2

        self.images = torch.from_numpy(images)
        self.labels = labels
        steps: list[Any] = [v2.RandomCrop(32, padding=4), v2.RandomHorizontalFlip()] if train else []
        self.transform = v2.Compose([*steps, v2.ToDtype(torch.float32, scale=True), v2.Normalize(MEAN, STD)])

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int]:
        return self.transform(self.images[i]), int(self.labels[i])


class Cifar100ShuffleNetV2(ImageClassification):
    """ShuffleNetV2 1.0x on CIFAR-100, Adadelta, bf16 autocast on CUDA, channels-last."""

    id = "cifar100"
    samples_per_epoch = 50_000
    # Batch sizes of the Zeus power traces (V100 and A40, union).
    paper_batch_sizes = (8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
    image_size = 32
    num_classes = 100

    def build_model(self) -> nn.Module:
        """ShuffleNetV2 1.0x (tiny: one block per stage, narrow) with a CIFAR stem."""
        from torchvision.models import ShuffleNetV2

        if self.tiny:
            model = ShuffleNetV2([1, 1, 1], [8, 16, 32, 64, 128], num_classes=self.num_classes)
        else:
            model = ShuffleNetV2([4, 8, 4], [24, 116, 232, 464, 1024], num_classes=self.num_classes)
        stem = model.conv1[0].out_channels
        model.conv1 = nn.Sequential(
            nn.Conv2d(3, stem, 3, stride=1, padding=1, bias=False),
            nn.BatchNorm2d(stem),
            nn.ReLU(inplace=True),
        )
        model.maxpool = nn.Identity()
        return self.memory_format(model)

    def real_loader(
        self, root: str | Path, split: str, batch_size: int, *, num_workers: int = 0
    ) -> Iterable[tuple[torch.Tensor, torch.Tensor]]:
        """CIFAR-100 python version under ``root`` (or ``root/cifar-100-python``)."""
        check_split(self.id, split)
        folder = find_root(self.id, root, "meta", ("cifar-100-python",))
        images, labels = _read_pickle(self.id, folder / _FILES[split])
        train = split == "train"
        loader = DataLoader(
            _Cifar(images, labels, train),
            batch_size=batch_size,
            shuffle=train,
            drop_last=False,
            num_workers=num_workers,
            pin_memory=torch.cuda.is_available(),
            persistent_workers=num_workers > 0,
        )
        return OneLineErrors(loader)
