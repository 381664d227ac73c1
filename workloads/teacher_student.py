"""A student MLP learning a fixed, seeded teacher network (workload ``teacher-student``).

The one workload that needs no download: its data are made, not read. A *teacher* (a random
two-layer tanh network, fixed by ``teacher_seed``) labels Gaussian inputs with the argmax of its
logits; a share ``label_noise`` of the training labels is replaced by a uniformly drawn class
(validation labels stay clean). The *student* is a ReLU MLP trained with Adam; the metric is its
validation accuracy. Like the paper's jobs, its epochs to the target grow with the batch size
(one learning rate for every batch size) and differ from run to run (initial weights and shuffling follow the run's seed). It exists to check
the simulator against a run measured on a GPU (``workflows/validate.smk``, issue 35).

The dataset's on-disk format is a spec, ``teacher-student.json`` in the root (the sizes and seeds
of the data, nothing else): ``python -m workloads.teacher_student DIR [--tiny]`` writes it, and
:meth:`TeacherStudent.real_loader` generates the same tensors from it on any machine.

Sizes (full; ``--tiny`` in brackets): 8-dimensional inputs, 10 classes, teacher width 64,
131 072 [4 096] training and 16 384 [1 024] validation samples, student 8-1024-1024-10 [8-32-10].
The learning rate is the same at every batch size (Adam, 1e-3): a larger batch takes fewer
steps per epoch at the same rate, so it needs more epochs.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from workloads._common import (
    DatasetError,
    TorchWorkload,
    check_split,
    find_root,
    generator,
    model_device,
    optimizer_kernels,
    repeat_forever,
)
from zeus_bench.sweep.workload import Batch

log = logging.getLogger(__name__)

SPEC_FILE = "teacher-student.json"
WORKLOAD_ID = "teacher-student"


@dataclass(frozen=True)
class DataSpec:
    """Everything that fixes the generated dataset (the contents of ``teacher-student.json``).

    Attributes:
        dim: Input dimension.
        classes: Number of classes.
        teacher_width: Hidden units of the teacher.
        train_samples: Training samples (one epoch).
        val_samples: Validation samples.
        label_noise: Share of training labels replaced by a uniformly drawn class.
        teacher_gain: Scale of the teacher's weights (larger: a more tangled decision boundary).
        teacher_seed: Seed of the teacher's weights.
        data_seed: Seed of the inputs and the label noise.
    """

    dim: int = 8
    classes: int = 10
    teacher_width: int = 64
    train_samples: int = 131_072
    val_samples: int = 16_384
    label_noise: float = 0.05
    teacher_gain: float = 1.0
    teacher_seed: int = 1234
    data_seed: int = 5678

    @classmethod
    def for_size(cls, tiny: bool) -> DataSpec:
        """The full dataset, or the tiny one of the CPU tests."""
        return cls(train_samples=4_096, val_samples=1_024) if tiny else cls()

    @classmethod
    def read(cls, path: Path) -> DataSpec:
        """The spec in ``path``.

        Raises:
            DatasetError: unreadable, not JSON, unknown or missing keys, or values out of range.
        """
        try:
            raw = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise DatasetError(f"{WORKLOAD_ID}: {path} is not a readable JSON spec ({exc})") from None
        fields = set(cls.__dataclass_fields__)
        if not isinstance(raw, dict) or set(raw) != fields:
            got = sorted(raw) if isinstance(raw, dict) else type(raw).__name__
            raise DatasetError(
                f"{WORKLOAD_ID}: {path} must hold exactly the keys {sorted(fields)}, got {got}"
            )
        try:
            values: dict[str, Any] = {
                k: (float(v) if k in _FLOAT_KEYS else _whole(k, v)) for k, v in raw.items()
            }
            spec = cls(**values)
        except (TypeError, ValueError) as exc:
            raise DatasetError(f"{WORKLOAD_ID}: {path}: {exc}") from None
        if min(spec.dim, spec.classes - 1, spec.teacher_width, spec.train_samples, spec.val_samples) < 1:
            raise DatasetError(f"{WORKLOAD_ID}: {path}: sizes must be positive and classes >= 2")
        if not 0.0 <= spec.label_noise < 1.0:
            raise DatasetError(
                f"{WORKLOAD_ID}: {path}: label_noise must lie in [0, 1), got {spec.label_noise}"
            )
        return spec

    def write(self, root: Path) -> Path:
        """Write ``root/teacher-student.json`` (root created if missing); returns its path."""
        from zeus_bench.core.fsutil import atomic_write_text

        root.mkdir(parents=True, exist_ok=True)
        path = root / SPEC_FILE
        atomic_write_text(path, json.dumps(asdict(self), indent=1) + "\n")
        return path


_FLOAT_KEYS = ("label_noise", "teacher_gain")


def _whole(key: str, value: object) -> int:
    """``value`` as an int, refusing bools and fractions."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{key} must be a whole number, got {value!r}")
    return value


def teacher(spec: DataSpec) -> nn.Module:
    """The fixed teacher: ``dim -> teacher_width (tanh) -> classes``, weights from ``teacher_seed``."""
    gen = torch.Generator().manual_seed(spec.teacher_seed)
    with torch.random.fork_rng(devices=[]):  # the layers' default init must not move the global generator
        net = nn.Sequential(
            nn.Linear(spec.dim, spec.teacher_width), nn.Tanh(), nn.Linear(spec.teacher_width, spec.classes)
        )
    with torch.no_grad():
        for layer in (net[0], net[2]):
            assert isinstance(layer, nn.Linear)
            fan_in = layer.weight.shape[1]
            layer.weight.copy_(
                torch.randn(layer.weight.shape, generator=gen) * (spec.teacher_gain / math.sqrt(fan_in))
            )
            layer.bias.copy_(torch.randn(layer.bias.shape, generator=gen) * 0.1)
    return net.eval()


def make_data(spec: DataSpec) -> dict[str, torch.Tensor]:
    """The dataset of ``spec`` on the CPU: ``x_train``, ``y_train`` (noisy), ``x_val``, ``y_val`` (clean).

    Deterministic: the same spec gives the same tensors on any machine (CPU generators only).
    """
    gen = torch.Generator().manual_seed(spec.data_seed)
    net = teacher(spec)
    x = torch.randn(spec.train_samples + spec.val_samples, spec.dim, generator=gen)
    with torch.no_grad():
        y = net(x).argmax(dim=1)
    n = spec.train_samples
    y_train = y[:n].clone()
    flip = torch.rand(n, generator=gen) < spec.label_noise
    y_train[flip] = torch.randint(0, spec.classes, (int(flip.sum()),), generator=gen)
    return {
        "x_train": x[:n].contiguous(),
        "y_train": y_train,
        "x_val": x[n:].contiguous(),
        "y_val": y[n:].clone(),
    }


class ShuffledEpochs:
    """Training epochs over in-memory tensors: a fresh permutation each epoch; re-iterable.

    Each epoch's shuffled copy is made once, in page-locked memory when CUDA is present, and its
    batches are views of it, so ``to_device(batch, cuda, non_blocking=True)`` does not wait for the
    GPU: the host runs ahead as with the synthetic batches a sweep measures. The order follows a
    generator seeded from torch's global generator when the loader is made, so runs seeded
    differently (``torch.manual_seed``) see different orders.
    """

    def __init__(self, x: torch.Tensor, y: torch.Tensor, batch_size: int) -> None:
        """Wrap the training tensors ``x`` ``(N, dim)`` and labels ``y`` ``(N,)``."""
        self.x, self.y, self.batch_size = x, y, batch_size
        self._gen = torch.Generator().manual_seed(int(torch.randint(0, 2**31 - 1, (1,)).item()))
        self._pin = torch.cuda.is_available()

    def __len__(self) -> int:
        """Batches per epoch (the last one may be short)."""
        return math.ceil(len(self.x) / self.batch_size)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """One epoch of ``(inputs, labels)`` batches."""
        order = torch.randperm(len(self.x), generator=self._gen)
        x, y = self.x[order], self.y[order]
        if self._pin:
            x, y = x.pin_memory(), y.pin_memory()
        for start in range(0, len(x), self.batch_size):
            yield x[start : start + self.batch_size], y[start : start + self.batch_size]


class TeacherStudent(TorchWorkload):
    """Student ReLU MLP on the teacher's labels; Adam (fused on CUDA), bf16 autocast on CUDA.

    Batches are ``(inputs (B, 8) float32, labels (B,) int64)``; validation batches the same.
    """

    id = WORKLOAD_ID
    samples_per_epoch = DataSpec().train_samples
    paper_batch_sizes = (64, 128, 256, 512, 1024, 2048)
    metric_name = "validation accuracy"
    metric_direction = "max"
    amp = True
    lr = 1e-3

    def __init__(self, tiny: bool = False) -> None:
        """Create the workload (``tiny``: a 32-32-10 student and the tiny dataset)."""
        super().__init__(tiny)
        self.spec = DataSpec.for_size(tiny)
        self.samples_per_epoch = self.spec.train_samples
        self._data: dict[Path, dict[str, torch.Tensor]] = {}

    def build_model(self) -> nn.Module:
        """The student, freshly initialised: ``dim -> 1024 -> 1024 -> classes`` (tiny: one hidden layer of 32)."""
        s = self.spec
        if self.tiny:
            return nn.Sequential(nn.Linear(s.dim, 32), nn.ReLU(), nn.Linear(32, s.classes))
        return nn.Sequential(
            nn.Linear(s.dim, 1024), nn.ReLU(), nn.Linear(1024, 1024), nn.ReLU(), nn.Linear(1024, s.classes)
        )

    def build_optimizer(self, model: nn.Module, batch_size: int) -> torch.optim.Optimizer:
        """Adam, lr 1e-3 at every batch size (``batch_size`` is checked, not used)."""
        if batch_size < 1:
            raise DatasetError(f"{self.id}: batch size must be positive, got {batch_size}")
        return torch.optim.Adam(model.parameters(), lr=self.lr, **optimizer_kernels(model, fused=True))

    def dataset(self, root: str | Path) -> dict[str, torch.Tensor]:
        """The tensors of the spec in ``root`` (generated once per root and kept).

        Raises:
            DatasetError: no readable spec, or one whose input size or classes differ from this
                workload's model (a tiny spec for a full workload or the reverse is fine).
        """
        folder = find_root(self.id, root, SPEC_FILE)
        key = folder.resolve()
        if key not in self._data:
            spec = DataSpec.read(folder / SPEC_FILE)
            if (spec.dim, spec.classes) != (self.spec.dim, self.spec.classes):
                raise DatasetError(
                    f"{self.id}: {folder / SPEC_FILE} has dim {spec.dim} and {spec.classes} classes; "
                    f"the model takes dim {self.spec.dim} and {self.spec.classes} classes"
                )
            self._data[key] = make_data(spec)
            log.info(
                "%s: generated %d training samples from %s", self.id, spec.train_samples, folder / SPEC_FILE
            )
        return self._data[key]

    def real_loader(
        self, root: str | Path, split: str, batch_size: int, *, num_workers: int = 0
    ) -> Iterable[tuple[torch.Tensor, torch.Tensor]]:
        """Shuffled training batches (``train``) or the validation set in order (``val``); ``num_workers`` unused."""
        check_split(self.id, split)
        if batch_size < 1:
            raise DatasetError(f"{self.id}: batch size must be positive, got {batch_size}")
        data = self.dataset(root)
        if split == "train":
            return ShuffledEpochs(data["x_train"], data["y_train"], batch_size)
        x, y = data["x_val"], data["y_val"]
        return [(x[i : i + batch_size], y[i : i + batch_size]) for i in range(0, len(x), batch_size)]

    def synthetic_batches(
        self, batch_size: int, device: torch.device, seed: int = 0
    ) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        """One batch of Gaussian inputs and random labels of the real shapes, made once on ``device``."""
        gen = generator(device, seed)
        s = self.spec
        batch = (
            torch.randn(batch_size, s.dim, generator=gen, device=device),
            torch.randint(0, s.classes, (batch_size,), generator=gen, device=device),
        )
        return repeat_forever(batch)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Cross-entropy of the student's logits (computed in fp32)."""
        x, y = batch
        return F.cross_entropy(model(x).float(), y)

    def evaluate(self, model: nn.Module, batches: Iterable[Batch]) -> float:
        """Accuracy in [0, 1] over ``(inputs, labels)`` batches."""
        device = model_device(model)
        correct = torch.zeros((), dtype=torch.int64, device=device)
        seen = 0
        with self.eval_context(model):
            for raw in batches:
                x, y = self.to_device(raw, device)
                correct += (model(x).argmax(dim=1) == y).sum()
                seen += len(y)
        if seen == 0:
            raise ValueError("evaluate() got no samples")
        return float(correct) / seen


def main(argv: list[str] | None = None) -> int:
    """``python -m workloads.teacher_student DIR [--tiny]``: write the dataset's spec into DIR."""
    p = argparse.ArgumentParser(description="Write the teacher-student dataset spec (teacher-student.json).")
    p.add_argument("root", type=Path, help="dataset folder to write teacher-student.json into")
    p.add_argument("--tiny", action="store_true", help="the tiny dataset of the CPU tests")
    args = p.parse_args(argv)
    try:
        path = DataSpec.for_size(args.tiny).write(args.root)
    except OSError as exc:
        print(f"teacher_student: error: {args.root}: {exc.strerror}", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
