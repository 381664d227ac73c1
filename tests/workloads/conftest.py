"""Fixtures of tiny datasets in the real formats (defined in tiny_datasets.py); one torch thread."""

from collections.abc import Iterator

import pytest
from tiny_datasets import (
    cifar_root,
    imagenet_root,
    librispeech_root,
    movielens_root,
    sentiment_root,
    squad_root,
)

__all__ = [
    "cifar_root",
    "imagenet_root",
    "librispeech_root",
    "movielens_root",
    "sentiment_root",
    "squad_root",
]


@pytest.fixture(autouse=True)
def one_torch_thread() -> Iterator[None]:
    """Run the tiny models on one intra-op thread.

    They are too small to gain from more, and on a busy 2-core CI machine two spinning threads
    per op slow a step down by up to 50x.
    """
    try:
        import torch
    except ImportError:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)
