"""BERT-base pieces shared by SQuAD and Sentiment140: configuration, tokenizer, optimiser.

The model is ``transformers``' BERT built from a local :class:`~transformers.BertConfig` with
random weights: nothing is downloaded. The real loaders tokenise with a WordPiece
``vocab.txt`` that the user places in the dataset root (e.g. bert-base-uncased's).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch

from workloads._common import DatasetError, TorchWorkload, optimizer_kernels, require_file, sqrt_scaled_lr

if TYPE_CHECKING:
    from transformers import BertConfig, PreTrainedTokenizerFast

# Only the tensors BERT's forward takes; batches may carry more (e.g. gold answer spans).
MODEL_INPUTS = ("input_ids", "token_type_ids", "attention_mask")


def bert_config(tiny: bool, **kwargs: Any) -> BertConfig:
    """BERT-base (12 layers, hidden 768, 12 heads, vocab 30 522) or a tiny 2-layer variant."""
    from transformers import BertConfig

    if tiny:
        return BertConfig(
            vocab_size=128,
            hidden_size=32,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=64,
            max_position_embeddings=64,
            **kwargs,
        )
    return BertConfig(**kwargs)


def load_tokenizer(workload_id: str, folder: Path, vocab_size: int) -> PreTrainedTokenizerFast:
    """A lower-casing WordPiece tokenizer from ``folder/vocab.txt``, checked against the model.

    Raises:
        DatasetError: the vocabulary is missing, empty, lacks BERT's special tokens, or is larger
            than the model's embedding table.
    """
    from transformers import BertTokenizerFast  # type: ignore[attr-defined]

    vocab = require_file(workload_id, folder / "vocab.txt", "WordPiece vocabulary, e.g. bert-base-uncased's")
    try:
        words = vocab.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"{workload_id}: cannot read {vocab}: {exc}") from None
    missing = [t for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]") if t not in words]
    if missing:
        raise DatasetError(f"{workload_id}: {vocab} lacks the special tokens {' '.join(missing)}")
    if len(words) > vocab_size:
        raise DatasetError(f"{workload_id}: {vocab} has {len(words)} tokens; the model has {vocab_size}")
    # transformers 5 takes the vocabulary as ``vocab``; 4.x as ``vocab_file`` (5.x ignores it).
    takes_file = "vocab_file" in inspect.signature(BertTokenizerFast.__init__).parameters
    arg = "vocab_file" if takes_file else "vocab"
    tokenizer = BertTokenizerFast(**{arg: str(vocab)}, do_lower_case=True)
    if len(tokenizer) != len(words):
        raise DatasetError(
            f"{workload_id}: {vocab}: tokenizer has {len(tokenizer)} tokens, file {len(words)}"
        )
    return tokenizer


class BertWorkload(TorchWorkload):
    """AdamW (fused on CUDA) with the trace's square-root learning-rate scaling; bf16 autocast on CUDA.

    Subclasses set ``seq_len``, ``base_lr`` and ``base_batch_size``.
    """

    amp = True
    seq_len: int
    base_lr: float
    base_batch_size: int

    @property
    def config_vocab_size(self) -> int:
        """Size of the model's token embedding table."""
        return int(bert_config(self.tiny).vocab_size)

    def build_optimizer(self, model: torch.nn.Module, batch_size: int) -> torch.optim.Optimizer:
        """AdamW, lr = base_lr * sqrt(batch_size / base_batch_size), weight decay 0.01 (fused on CUDA)."""
        return torch.optim.AdamW(
            model.parameters(),
            lr=sqrt_scaled_lr(self.base_lr, self.base_batch_size, batch_size),
            weight_decay=0.01,
            **optimizer_kernels(model, fused=True),
        )

    def synthetic_tokens(
        self, batch_size: int, first_segment: int, device: torch.device, gen: torch.Generator
    ) -> dict[str, torch.Tensor]:
        """Random full-length inputs: segment 0 for ``first_segment`` tokens, then segment 1."""
        ids = torch.randint(
            0, self.config_vocab_size, (batch_size, self.seq_len), generator=gen, device=device
        )
        token_type = torch.zeros_like(ids)
        token_type[:, first_segment:] = 1
        return {
            "input_ids": ids,
            "token_type_ids": token_type,
            "attention_mask": torch.ones_like(ids),
        }
