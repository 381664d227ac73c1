"""Fixtures of tiny datasets in the real formats (defined in tiny_datasets.py)."""

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
