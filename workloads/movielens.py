"""NeuMF on MovieLens-1M implicit feedback (workload ``movielens-1m``).

Model: :class:`workloads.models.neumf.NeuMF` (written here): GMF of 64 factors and an MLP of
256-256-128-64, the MLPerf recommendation benchmark's configuration.

Data: ``ratings.dat`` of MovieLens-1M (``UserID::MovieID::Rating::Timestamp``) under ``root``
or ``root/ml-1m``. As in the NCF paper, every rating is a positive interaction; each user's
latest rating is held out for validation (leave-one-out), the others are training positives.
An epoch is every training positive once plus 4 negatives per positive, drawn afresh each epoch
from the items the user never rated: (1 000 209 - 6 040) x 5 = 4 970 845 pairs. Validation ranks
each held-out item among 100 sampled unrated items; the metric is NDCG@10 (HR@10 also offered).
"""

from __future__ import annotations

import io
import logging
import math
from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from workloads._common import (
    DatasetError,
    TensorBatches,
    TorchWorkload,
    check_split,
    find_root,
    generator,
    model_device,
    optimizer_kernels,
    repeat_forever,
    require_file,
    sqrt_scaled_lr,
)
from workloads.models.neumf import NeuMF
from zeus_bench.sweep.workload import Batch

log = logging.getLogger(__name__)

NUM_USERS = 6040
NUM_ITEMS = 3706  # movies with at least one rating
NEGATIVES_PER_POSITIVE = 4
EVAL_NEGATIVES = 100
TOP_K = 10


def read_ratings(workload_id: str, path: Path) -> np.ndarray:
    """``(N, 3)`` int64 array of user, movie and timestamp from a ``::``-separated ratings.dat.

    Raises:
        DatasetError: the file is not four integer columns separated by ``::``.
    """
    import pandas as pd

    require_file(workload_id, path, "MovieLens-1M ratings.dat")
    try:
        text = path.read_text(encoding="latin-1").replace("::", "\t")
        table = pd.read_csv(
            io.StringIO(text), sep="\t", header=None, names=["user", "item", "rating", "time"], dtype="int64"
        )
    except (OSError, ValueError, pd.errors.ParserError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DatasetError(
            f"{workload_id}: {path} is not UserID::MovieID::Rating::Timestamp integers ({first})"
        ) from None
    if table.empty:
        raise DatasetError(f"{workload_id}: {path} holds no ratings")
    return table[["user", "item", "time"]].to_numpy()


def _codes(users: np.ndarray, items: np.ndarray) -> np.ndarray:
    return users.astype(np.int64) * NUM_ITEMS + items


class Interactions:
    """Leave-one-out split of implicit feedback with contiguous user and item indices."""

    def __init__(self, workload_id: str, ratings: np.ndarray) -> None:
        """Index users and items, hold out each user's latest interaction.

        Raises:
            DatasetError: more users or items than MovieLens-1M has (the model's tables).
        """
        user_ids, users = np.unique(ratings[:, 0], return_inverse=True)
        item_ids, items = np.unique(ratings[:, 1], return_inverse=True)
        if len(user_ids) > NUM_USERS or len(item_ids) > NUM_ITEMS:
            raise DatasetError(
                f"{workload_id}: {len(user_ids)} users and {len(item_ids)} movies; MovieLens-1M has "
                f"{NUM_USERS} and {NUM_ITEMS}"
            )
        self.num_items = len(item_ids)
        rated = np.bincount(users)
        if (rated >= self.num_items).any():
            user = user_ids[int(np.argmax(rated >= self.num_items))]
            raise DatasetError(f"{workload_id}: user {user} rated every movie; no negatives can be drawn")
        # Latest interaction per user (ties: the later line) is held out.
        order = np.lexsort((np.arange(len(users)), ratings[:, 2], users))
        last = np.r_[users[order][1:] != users[order][:-1], True]
        held = order[last]
        train = np.ones(len(users), dtype=bool)
        train[held] = False
        self.train_users, self.train_items = users[train], items[train]
        self.val_users, self.val_items = users[held], items[held]
        self.known = np.unique(_codes(users, items))  # sorted codes of every interaction

    def sample_unrated(self, users: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One item per entry of ``users`` that the user never rated (rejection sampling)."""
        items = rng.integers(0, self.num_items, size=len(users))
        bad = np.isin(_codes(users, items), self.known, assume_unique=False)
        while bad.any():
            items[bad] = rng.integers(0, self.num_items, size=int(bad.sum()))
            bad[bad] = np.isin(_codes(users[bad], items[bad]), self.known)
        return items


class NcfTrainBatches:
    """Training epochs: positives plus fresh negatives, shuffled; re-iterable."""

    def __init__(self, data: Interactions, batch_size: int, seed: int = 0) -> None:
        """Draw negatives with a generator seeded once (reproducible epochs)."""
        self.data = data
        self.batch_size = batch_size
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        """Batches per epoch."""
        n = len(self.data.train_users) * (1 + NEGATIVES_PER_POSITIVE)
        return math.ceil(n / self.batch_size)

    def __iter__(self) -> Iterator[dict[str, torch.Tensor]]:
        """One epoch."""
        d = self.data
        neg_users = np.repeat(d.train_users, NEGATIVES_PER_POSITIVE)
        users = np.concatenate((d.train_users, neg_users))
        items = np.concatenate((d.train_items, d.sample_unrated(neg_users, self.rng)))
        labels = np.concatenate((np.ones(len(d.train_users)), np.zeros(len(neg_users)))).astype(np.float32)
        tensors = {"users": users, "items": items, "labels": labels}
        seed = int(self.rng.integers(2**31))
        yield from TensorBatches(
            {k: torch.from_numpy(v) for k, v in tensors.items()}, self.batch_size, shuffle=True, seed=seed
        )


class Movielens1mNeuMF(TorchWorkload):
    """NeuMF on MovieLens-1M, Adam (fused on CUDA), bf16 autocast on CUDA.

    Training batches: ``users``, ``items`` ``(B,)`` int64 and ``labels`` ``(B,)`` float32 (1 for
    a rating, 0 for a sampled negative). Validation batches: ``users`` ``(U,)`` and ``items``
    ``(U, 101)``, the held-out item first. Synthetic mode generates both with these shapes.
    """

    id = "movielens-1m"
    samples_per_epoch = (1_000_209 - NUM_USERS) * (1 + NEGATIVES_PER_POSITIVE)
    paper_batch_sizes = (4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768)
    metric_name = "validation NDCG@10"
    metric_direction = "max"
    amp = True
    # Zeus train trace: lr = 1e-3 * sqrt(b / 256).
    base_lr = 1e-3
    base_batch_size = 256

    def build_model(self) -> nn.Module:
        """NeuMF with 64 GMF factors and MLP 256-256-128-64 (tiny: 8 factors, MLP 16-8)."""
        if self.tiny:
            return NeuMF(NUM_USERS, NUM_ITEMS, mf_dim=8, mlp_layers=(16, 8))
        return NeuMF(NUM_USERS, NUM_ITEMS)

    def build_optimizer(self, model: nn.Module, batch_size: int) -> torch.optim.Optimizer:
        """Adam, lr = 1e-3 * sqrt(batch_size / 256)."""
        return torch.optim.Adam(
            model.parameters(),
            lr=sqrt_scaled_lr(self.base_lr, self.base_batch_size, batch_size),
            **optimizer_kernels(model, fused=True),
        )

    def real_loader(
        self, root: str | Path, split: str, batch_size: int, *, num_workers: int = 0
    ) -> Iterable[dict[str, torch.Tensor]]:
        """Training pairs (``train``) or ranking lists of ``batch_size`` users (``val``); ``num_workers`` unused."""
        check_split(self.id, split)
        folder = find_root(self.id, root, "ratings.dat", ("ml-1m",))
        data = Interactions(self.id, read_ratings(self.id, folder / "ratings.dat"))
        log.info(
            "%d training positives, %d users, %d movies",
            len(data.train_users),
            len(data.val_users),
            data.num_items,
        )
        if split == "train":
            return NcfTrainBatches(data, batch_size)
        rng = np.random.default_rng(12345)  # fixed candidates: comparable metrics across runs
        negatives = data.sample_unrated(np.repeat(data.val_users, EVAL_NEGATIVES), rng)
        candidates = np.concatenate((data.val_items[:, None], negatives.reshape(-1, EVAL_NEGATIVES)), axis=1)
        return TensorBatches(
            {"users": torch.from_numpy(data.val_users), "items": torch.from_numpy(candidates)},
            batch_size,
            shuffle=False,
        )

    def synthetic_batches(
        self, batch_size: int, device: torch.device, seed: int = 0
    ) -> Iterator[dict[str, torch.Tensor]]:
        """Random user/item pairs with one positive in five, made once on ``device``."""
        gen = generator(device, seed)
        batch = {
            "users": torch.randint(0, NUM_USERS, (batch_size,), generator=gen, device=device),
            "items": torch.randint(0, NUM_ITEMS, (batch_size,), generator=gen, device=device),
            "labels": (torch.rand(batch_size, generator=gen, device=device) < 0.2).float(),
        }
        return repeat_forever(batch)

    def synthetic_eval_batches(
        self, batch_size: int, device: torch.device, seed: int = 0
    ) -> Iterator[dict[str, torch.Tensor]]:
        """Random users with 101 candidate items each, made once on ``device``."""
        gen = generator(device, seed)
        batch = {
            "users": torch.randint(0, NUM_USERS, (batch_size,), generator=gen, device=device),
            "items": torch.randint(
                0, NUM_ITEMS, (batch_size, 1 + EVAL_NEGATIVES), generator=gen, device=device
            ),
        }
        return repeat_forever(batch)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Binary cross-entropy of the interaction logits."""
        return F.binary_cross_entropy_with_logits(
            model(batch["users"], batch["items"]).float(), batch["labels"]
        )

    def ranking_metrics(self, model: nn.Module, batches: Iterable[Batch]) -> tuple[float, float]:
        """HR@10 and NDCG@10 of the first candidate of each list (ties count against it)."""
        device = model_device(model)
        hits, gains, users = 0.0, 0.0, 0
        with self.eval_context(model):
            for raw in batches:
                batch = self.to_device(raw, device)
                items = batch["items"]
                if items.dim() != 2:
                    raise ValueError(
                        "evaluate() takes ranking batches (users (U,), items (U, 101)), as from "
                        "real_loader(root, 'val', ...) or synthetic_eval_batches"
                    )
                scores = model(batch["users"][:, None].expand_as(items), items).float()
                rank = (scores[:, 1:] >= scores[:, :1]).sum(dim=1)
                hit = rank < TOP_K
                hits += float(hit.sum())
                gains += float((hit / torch.log2(rank.float() + 2)).sum())
                users += len(items)
        if users == 0:
            raise ValueError("evaluate() got no users")
        return hits / users, gains / users

    def evaluate(self, model: nn.Module, batches: Iterable[Batch]) -> float:
        """NDCG@10 in [0, 1] over validation batches (as from ``real_loader(..., 'val', ...)``)."""
        return self.ranking_metrics(model, batches)[1]
