"""BERT-base on Sentiment140 tweet polarity (workload ``sentiment140``).

Model: ``BertForSequenceClassification`` (2 labels) on a local BERT-base configuration,
random init. Data: the published CSVs (latin-1, six columns: polarity, id, date, query, user,
text) and a WordPiece ``vocab.txt`` in the root. ``train`` is
``training.1600000.processed.noemoticon.csv`` (1.6 M tweets, polarity 0 or 4); ``val`` is the
hand-labelled ``testdata.manual.2009.06.14.csv`` without its neutral (polarity 2) tweets, 359
tweets. Tweets are tokenised per batch and padded to 128 tokens. Metric: accuracy.
"""

from __future__ import annotations

import csv
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

from workloads._bert import MODEL_INPUTS, BertWorkload, bert_config, load_tokenizer
from workloads._common import (
    DatasetError,
    OneLineErrors,
    check_split,
    find_root,
    generator,
    model_device,
    repeat_forever,
    require_file,
)
from zeus_bench.sweep.workload import Batch

log = logging.getLogger(__name__)

_FILES = {
    "train": "training.1600000.processed.noemoticon.csv",
    "val": "testdata.manual.2009.06.14.csv",
}
_LABELS = {"0": 0, "4": 1}


def read_sentiment140(workload_id: str, path: Path) -> tuple[list[str], list[int]]:
    """Tweets and labels (0 negative, 1 positive) of a Sentiment140 CSV; neutral rows dropped.

    Raises:
        DatasetError: a row does not have six columns or its polarity is not 0, 2 or 4.
    """
    require_file(workload_id, path, "Sentiment140 CSV")
    texts: list[str] = []
    labels: list[int] = []
    neutral = 0
    try:
        with path.open(encoding="latin-1", newline="") as fh:
            for line, row in enumerate(csv.reader(fh), start=1):
                if len(row) != 6:
                    raise DatasetError(f"{workload_id}: {path}:{line}: expected 6 columns, found {len(row)}")
                polarity = row[0].strip()
                if polarity == "2":
                    neutral += 1
                    continue
                if polarity not in _LABELS:
                    raise DatasetError(
                        f"{workload_id}: {path}:{line}: polarity {polarity!r} is not 0, 2 or 4"
                    )
                labels.append(_LABELS[polarity])
                texts.append(row[5])
    except (OSError, csv.Error) as exc:
        raise DatasetError(f"{workload_id}: cannot read {path}: {exc}") from None
    if not texts:
        raise DatasetError(f"{workload_id}: {path} holds no positive or negative tweet")
    log.info("%s: %d tweets (%d neutral dropped)", path.name, len(texts), neutral)
    return texts, labels


class _Tweets(Dataset[tuple[str, int]]):
    def __init__(self, texts: list[str], labels: list[int]) -> None:
        self.texts = texts
        self.labels = labels

    def __len__(self) -> int:
        return len(self.labels)

    def __getitem__(self, i: int) -> tuple[str, int]:
        return self.texts[i], self.labels[i]


class _Collate:
    """Tokenise a list of ``(text, label)`` to fixed-length tensors (picklable for workers)."""

    def __init__(self, tokenizer: Any, seq_len: int) -> None:
        self.tokenizer = tokenizer
        self.seq_len = seq_len

    def __call__(self, items: list[tuple[str, int]]) -> dict[str, torch.Tensor]:
        enc = self.tokenizer(
            [t for t, _ in items],
            truncation=True,
            max_length=self.seq_len,
            padding="max_length",
            return_tensors="pt",
        )
        batch = {name: enc[name] for name in MODEL_INPUTS}
        batch["labels"] = torch.tensor([y for _, y in items], dtype=torch.long)
        return batch


class Sentiment140Bert(BertWorkload):
    """BERT-base binary sentiment classification on Sentiment140, AdamW, bf16 autocast on CUDA.

    Synthetic mode: ``input_ids``/``token_type_ids``/``attention_mask`` ``(B, 128)`` (one
    segment) and ``labels`` ``(B,)`` in {0, 1}.
    """

    id = "sentiment140"
    samples_per_epoch = 1_600_000  # the training CSV; the manual test set is the validation set
    paper_batch_sizes = (8, 16, 32, 64, 128, 256)
    metric_name = "validation accuracy"
    metric_direction = "max"
    # Zeus train trace: lr = 1e-7 * sqrt(b / 8).
    base_lr = 1e-7
    base_batch_size = 8

    def __init__(self, tiny: bool = False) -> None:
        """Full size: tweets padded to 128 tokens; tiny: 32."""
        super().__init__(tiny)
        self.seq_len = 32 if tiny else 128

    def build_model(self) -> nn.Module:
        """``BertForSequenceClassification`` with two labels and random weights."""
        from transformers import BertForSequenceClassification

        return BertForSequenceClassification(bert_config(self.tiny, num_labels=2))

    def real_loader(
        self, root: str | Path, split: str, batch_size: int, *, num_workers: int = 0
    ) -> Iterable[dict[str, torch.Tensor]]:
        """Batches of tokenised tweets from the published CSVs under ``root``."""
        check_split(self.id, split)
        folder = find_root(self.id, root, "vocab.txt", ("sentiment140",))
        texts, labels = read_sentiment140(self.id, folder / _FILES[split])
        tokenizer = load_tokenizer(self.id, folder, self.config_vocab_size)
        loader = DataLoader(
            _Tweets(texts, labels),
            batch_size=batch_size,
            shuffle=split == "train",
            collate_fn=_Collate(tokenizer, self.seq_len),
            num_workers=num_workers,
            persistent_workers=num_workers > 0,
        )
        return OneLineErrors(loader)

    def synthetic_batches(
        self, batch_size: int, device: torch.device, seed: int = 0
    ) -> Iterator[dict[str, torch.Tensor]]:
        """Random full-length single-segment token batches and labels, made once on ``device``."""
        gen = generator(device, seed)
        batch = self.synthetic_tokens(batch_size, self.seq_len, device, gen)
        batch["labels"] = torch.randint(0, 2, (batch_size,), generator=gen, device=device)
        return repeat_forever(batch)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Cross-entropy of the two-class logits (in fp32)."""
        logits = model(**{k: batch[k] for k in MODEL_INPUTS}).logits
        return F.cross_entropy(logits.float(), batch["labels"])

    def evaluate(self, model: nn.Module, batches: Iterable[Batch]) -> float:
        """Accuracy in [0, 1]."""
        device = model_device(model)
        correct, total = 0, 0
        with self.eval_context(model):
            for raw in batches:
                batch = self.to_device(raw, device)
                logits = model(**{k: batch[k] for k in MODEL_INPUTS}).logits
                correct += int((logits.argmax(dim=1) == batch["labels"]).sum())
                total += len(batch["labels"])
        if total == 0:
            raise ValueError("evaluate() got no samples")
        return correct / total
