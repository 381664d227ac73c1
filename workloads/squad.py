"""BERT-base on SQuAD v1.1 extractive question answering (workload ``squad``).

Model: ``BertForQuestionAnswering`` on a local BERT-base configuration, random init.
Data: ``train-v1.1.json`` and ``dev-v1.1.json`` plus a WordPiece ``vocab.txt`` in the root.
Each question and its context become features of 384 tokens (question first, the context
truncated with a 128-token stride, as in BERT's SQuAD recipe); a feature's target is the
token span of its answer, or ``[CLS]`` (position 0) when the answer lies outside the window.

Metric: F1 (percent) of the predicted answer span against the gold spans, measured on
WordPiece tokens of each feature that contains an answer and maximised over the dev set's
gold answers. It tracks the official SQuAD F1 (which compares normalised words of the
answer text) closely but is not identical to it.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from workloads._bert import MODEL_INPUTS, BertWorkload, bert_config, load_tokenizer
from workloads._common import (
    DatasetError,
    TensorBatches,
    check_split,
    find_root,
    generator,
    model_device,
    repeat_forever,
    require_file,
)
from zeus_bench.sweep.workload import Batch

log = logging.getLogger(__name__)

_FILES = {"train": "train-v1.1.json", "val": "dev-v1.1.json"}
MAX_ANSWER_TOKENS = 30

Example = tuple[str, str, list[tuple[int, str]]]  # question, context, [(answer_start, text)]


def read_squad(workload_id: str, path: Path) -> list[Example]:
    """Questions, contexts and answers of a SQuAD v1.1 JSON file.

    Raises:
        DatasetError: the file is not valid JSON in SQuAD's layout.
    """
    require_file(workload_id, path, "SQuAD v1.1 JSON")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        examples: list[Example] = []
        for article in data["data"]:
            for para in article["paragraphs"]:
                context = para["context"]
                for qa in para["qas"]:
                    answers = [(int(a["answer_start"]), str(a["text"])) for a in qa["answers"]]
                    if not answers:
                        raise ValueError(f"question {qa.get('id', '?')!r} has no answer")
                    examples.append((str(qa["question"]).lstrip(), str(context), answers))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        msg = f"missing key {exc}" if isinstance(exc, KeyError) else str(exc).splitlines()[0]
        raise DatasetError(f"{workload_id}: {path} is not SQuAD v1.1 JSON ({msg})") from None
    if not examples:
        raise DatasetError(f"{workload_id}: {path} holds no questions")
    return examples


def _answer_chars(examples: list[Example]) -> tuple[np.ndarray, np.ndarray]:
    """Start and end (exclusive) character of every gold answer, ``(n, K)``, ``-1`` padding."""
    k = max(len(a) for _, _, a in examples)
    starts = np.full((len(examples), k), -1, dtype=np.int64)
    ends = np.full((len(examples), k), -1, dtype=np.int64)
    for e, (_, _, answers) in enumerate(examples):
        for j, (start, text) in enumerate(answers):
            starts[e, j], ends[e, j] = start, start + len(text)
    return starts, ends


def token_spans(
    context: np.ndarray, offsets: np.ndarray, start_char: np.ndarray, end_char: np.ndarray
) -> np.ndarray:
    """Token span ``(N, 2)`` of each feature's answer; ``(0, 0)`` (``[CLS]``) when it is outside the window.

    Args:
        context: ``(N, L)`` bool, the context tokens of each feature.
        offsets: ``(N, L, 2)`` character offsets of each token in the context.
        start_char: ``(N,)`` first character of the answer; ``-1`` for no answer.
        end_char: ``(N,)`` one past its last character.
    """
    n, seq = context.shape
    pos = np.broadcast_to(np.arange(seq), (n, seq))
    first = np.where(context, pos, seq).min(axis=1)
    last = np.where(context, pos, -1).max(axis=1)
    has_context = last >= 0
    rows = np.arange(n)
    inside = (
        has_context
        & (start_char >= 0)
        & (offsets[rows, np.minimum(first, seq - 1), 0] <= start_char)
        & (offsets[rows, np.maximum(last, 0), 1] >= end_char)
    )
    start = np.where(context & (offsets[..., 0] <= start_char[:, None]), pos, -1).max(axis=1)
    end = np.where(context & (offsets[..., 1] >= end_char[:, None]), pos, seq).min(axis=1)
    spans = np.stack((start, end), axis=1)
    spans[~inside] = 0
    spans[start_char < 0] = -1
    return spans


def squad_features(
    examples: list[Example], tokenizer: Any, seq_len: int, stride: int, chunk: int = 2000
) -> dict[str, torch.Tensor]:
    """Tokenised features: model inputs, the first answer's span, and all gold spans.

    Examples are tokenised ``chunk`` at a time into fixed-length arrays (no per-token Python
    objects). ``answer_spans`` is ``(N, K, 2)`` with ``-1`` padding (K = most answers of any
    question).
    """
    starts, ends = _answer_chars(examples)
    parts: dict[str, list[np.ndarray]] = {name: [] for name in (*MODEL_INPUTS, "answer_spans")}
    for lo in range(0, len(examples), chunk):
        block = examples[lo : lo + chunk]
        enc = tokenizer(
            [q for q, _, _ in block],
            [c for _, c, _ in block],
            truncation="only_second",
            max_length=seq_len,
            stride=stride,
            return_overflowing_tokens=True,
            return_offsets_mapping=True,
            padding="max_length",
            return_tensors="np",
        )
        example = lo + np.asarray(enc["overflow_to_sample_mapping"])
        offsets = np.asarray(enc["offset_mapping"])
        context = (np.asarray(enc["token_type_ids"]) == 1) & (offsets[..., 1] > 0)
        spans = [
            token_spans(context, offsets, starts[example, j], ends[example, j])
            for j in range(starts.shape[1])
        ]
        parts["answer_spans"].append(np.stack(spans, axis=1))
        for name in MODEL_INPUTS:
            parts[name].append(np.asarray(enc[name], dtype=np.int64))
    out = {name: torch.from_numpy(np.concatenate(arrays)) for name, arrays in parts.items()}
    out["start_positions"] = out["answer_spans"][:, 0, 0].clone()
    out["end_positions"] = out["answer_spans"][:, 0, 1].clone()
    return out


def best_spans(
    start_logits: torch.Tensor, end_logits: torch.Tensor, context_mask: torch.Tensor, max_len: int
) -> torch.Tensor:
    """Highest-scoring ``(start, end)`` per row with start <= end < start + max_len, inside the context."""
    neg = torch.finfo(torch.float32).min
    start = start_logits.float().masked_fill(~context_mask, neg)
    end = end_logits.float().masked_fill(~context_mask, neg)
    seq = start.shape[1]
    pos = torch.arange(seq, device=start.device)
    allowed = (pos[None, :] >= pos[:, None]) & (pos[None, :] < pos[:, None] + max_len)
    scores = (start[:, :, None] + end[:, None, :]).masked_fill(~allowed, neg)
    flat = scores.flatten(1).argmax(dim=1)
    return torch.stack((flat // seq, flat % seq), dim=1)


def span_f1(pred: torch.Tensor, gold: torch.Tensor) -> torch.Tensor:
    """Token-overlap F1 in [0, 1] of ``pred`` ``(B, 2)`` against ``gold`` ``(B, K, 2)`` (max over K).

    Gold spans of ``-1`` are padding and count as F1 0.
    """
    ps, pe = pred[:, None, 0], pred[:, None, 1]
    gs, ge = gold[..., 0], gold[..., 1]
    overlap = (torch.minimum(pe, ge) - torch.maximum(ps, gs) + 1).clamp(min=0).float()
    precision = overlap / (pe - ps + 1).float()
    recall = overlap / (ge - gs + 1).clamp(min=1).float()
    f1 = torch.where(overlap > 0, 2 * precision * recall / (precision + recall), torch.zeros_like(overlap))
    return f1.masked_fill(gs < 0, 0.0).amax(dim=1)


class SquadBert(BertWorkload):
    """BERT-base question answering on SQuAD v1.1, AdamW, bf16 autocast on CUDA.

    Synthetic mode: ``input_ids``/``token_type_ids``/``attention_mask`` ``(B, 384)`` with a
    64-token question segment, and answer spans of up to 10 tokens inside the context.
    """

    id = "squad"
    # Training features of SQuAD v1.1 train (87 599 questions) with the bert-base-uncased
    # vocabulary, 384 tokens and stride 128: an epoch is one pass over the features.
    samples_per_epoch = 88_524
    paper_batch_sizes = (8, 12, 16, 24, 32, 48, 56, 72)
    metric_name = "validation F1 (token overlap, percent)"
    metric_direction = "max"
    # Zeus train trace: lr = 3e-6 * sqrt(b / 12).
    base_lr = 3e-6
    base_batch_size = 12

    def __init__(self, tiny: bool = False) -> None:
        """Full size: 384-token features with stride 128; tiny: 64 tokens, stride 16."""
        super().__init__(tiny)
        self.seq_len = 64 if tiny else 384
        self.stride = 16 if tiny else 128
        self.question_tokens = 16 if tiny else 64

    def build_model(self) -> nn.Module:
        """``BertForQuestionAnswering`` with random weights."""
        from transformers import BertForQuestionAnswering

        return BertForQuestionAnswering(bert_config(self.tiny))

    def real_loader(
        self, root: str | Path, split: str, batch_size: int, *, num_workers: int = 0
    ) -> Iterable[dict[str, torch.Tensor]]:
        """Tokenised SQuAD v1.1 features (tokenised once, in memory); ``num_workers`` is unused."""
        check_split(self.id, split)
        folder = find_root(self.id, root, "vocab.txt", ("squad",))
        examples = read_squad(self.id, folder / _FILES[split])
        tokenizer = load_tokenizer(self.id, folder, self.config_vocab_size)
        log.info("tokenising %d %s questions of %s", len(examples), split, folder)
        feats = squad_features(examples, tokenizer, self.seq_len, self.stride)
        log.info("%d features", len(feats["input_ids"]))
        return TensorBatches(feats, batch_size, shuffle=split == "train")

    def synthetic_batches(
        self, batch_size: int, device: torch.device, seed: int = 0
    ) -> Iterator[dict[str, torch.Tensor]]:
        """Random token features with answer spans inside the context, made once on ``device``."""
        gen = generator(device, seed)
        batch = self.synthetic_tokens(batch_size, self.question_tokens, device, gen)
        start = torch.randint(
            self.question_tokens, self.seq_len - 10, (batch_size,), generator=gen, device=device
        )
        end = start + torch.randint(0, 10, (batch_size,), generator=gen, device=device)
        batch.update(
            start_positions=start, end_positions=end, answer_spans=torch.stack((start, end), 1)[:, None]
        )
        return repeat_forever(batch)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """Mean cross-entropy of the start and end positions (in fp32)."""
        out = model(**{k: batch[k] for k in MODEL_INPUTS})
        return (
            F.cross_entropy(out.start_logits.float(), batch["start_positions"])
            + F.cross_entropy(out.end_logits.float(), batch["end_positions"])
        ) / 2

    def evaluate(self, model: nn.Module, batches: Iterable[Batch]) -> float:
        """Mean span F1 (percent) over the features whose window contains a gold answer."""
        device = model_device(model)
        total, count = 0.0, 0
        with self.eval_context(model):
            for raw in batches:
                batch = self.to_device(raw, device)
                gold = batch.get("answer_spans")
                if gold is None:
                    gold = torch.stack((batch["start_positions"], batch["end_positions"]), 1)[:, None]
                keep = (gold[..., 1] > 0).any(dim=1)
                if not bool(keep.any()):
                    continue
                out = model(**{k: batch[k] for k in MODEL_INPUTS})
                context = (batch["token_type_ids"] == 1) & (batch["attention_mask"] == 1)
                pred = best_spans(out.start_logits, out.end_logits, context, MAX_ANSWER_TOKENS)
                total += float(span_f1(pred[keep], gold[keep]).sum())
                count += int(keep.sum())
        if count == 0:
            raise ValueError("evaluate() got no feature that contains an answer")
        return 100.0 * total / count
