"""ResNet-50 on ImageNet-1k (workload ``imagenet``).

Model: torchvision's ResNet-50, randomly initialised (no downloaded weights), 1000 classes.
Data: the ImageFolder layout, ``train/<wnid>/*.JPEG`` and ``val/<wnid>/*.JPEG`` (the validation
images sorted into class folders, as the usual preparation scripts do). Training: random
resized 224 crop and horizontal flip; validation: resize to 256, centre 224 crop.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader

from workloads._common import DatasetError, OneLineErrors, check_split, find_root
from workloads._vision import ImageClassification

MEAN = (0.485, 0.456, 0.406)
STD = (0.229, 0.224, 0.225)


def read_rgb(path: str) -> Any:
    """Decode one image file to an RGB PIL image.

    Raises:
        DatasetError: the file is not a decodable image.
    """
    from PIL import Image

    try:
        with Image.open(path) as image:
            return image.convert("RGB")
    except OSError as exc:
        raise DatasetError(f"imagenet: cannot decode {path}: {exc}") from None


class ImagenetResNet50(ImageClassification):
    """ResNet-50 on ImageNet-1k, Adadelta, bf16 autocast on CUDA, channels-last.

    ``tiny=True``: a ResNet with one bottleneck per stage, 64x64 images, 10 classes.
    """

    id = "imagenet"
    samples_per_epoch = 1_281_167
    paper_batch_sizes = (8, 16, 32, 64, 128, 192, 256, 360, 512)

    def __init__(self, tiny: bool = False) -> None:
        """Full size: 224x224 images, 1000 classes; tiny: 64x64, 10 classes."""
        super().__init__(tiny)
        self.image_size = 64 if tiny else 224
        self.num_classes = 10 if tiny else 1000

    def build_model(self) -> nn.Module:
        """ResNet-50 (tiny: bottleneck ResNet with layers [1, 1, 1, 1])."""
        from torchvision.models import resnet50
        from torchvision.models.resnet import Bottleneck, ResNet

        if self.tiny:
            model = ResNet(Bottleneck, [1, 1, 1, 1], num_classes=self.num_classes, width_per_group=16)
        else:
            model = resnet50(weights=None, num_classes=self.num_classes)
        return self.memory_format(model)

    def real_loader(
        self, root: str | Path, split: str, batch_size: int, *, num_workers: int = 0
    ) -> Iterable[tuple[torch.Tensor, torch.Tensor]]:
        """ImageFolder batches from ``root/train`` or ``root/val`` (class folders named by wnid)."""
        from torchvision.datasets import ImageFolder
        from torchvision.transforms import v2

        check_split(self.id, split)
        base = find_root(self.id, root, "train", ("imagenet", "ILSVRC2012"))
        folder = base / split
        if split == "train":
            steps = [v2.RandomResizedCrop(self.image_size, antialias=True), v2.RandomHorizontalFlip()]
        else:
            resize = self.image_size * 256 // 224
            steps = [v2.Resize(resize, antialias=True), v2.CenterCrop(self.image_size)]
        transform = v2.Compose(
            [
                v2.PILToTensor(),
                *steps,
                v2.ToDtype(torch.float32, scale=True),
                v2.Normalize(MEAN, STD),
            ]
        )
        try:
            dataset = ImageFolder(str(folder), transform=transform, loader=read_rgb)
        except (FileNotFoundError, OSError) as exc:
            msg = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            raise DatasetError(
                f"{self.id}: {folder} is not an ImageFolder tree of <wnid>/*.JPEG ({msg})"
            ) from None
        if len(dataset.classes) > self.num_classes:
            raise DatasetError(
                f"{self.id}: {folder} has {len(dataset.classes)} class folders; the model has {self.num_classes}"
            )
        if split == "val":
            train_classes = sorted(p.name for p in (base / "train").iterdir() if p.is_dir())
            if dataset.classes != train_classes:
                raise DatasetError(
                    f"{self.id}: class folders of {folder} differ from those of {base / 'train'}"
                )
        loader = DataLoader(
            dataset,
            batch_size=batch_size,
            shuffle=split == "train",
            num_workers=num_workers,
            pin_memory=torch.cuda.is_available(),
            persistent_workers=num_workers > 0,
        )
        return OneLineErrors(loader)
