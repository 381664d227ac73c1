"""Neural matrix factorisation, NeuMF (He et al., "Neural Collaborative Filtering", WWW 2017).

A generalised matrix factorisation branch (element-wise product of user and item embeddings)
and a multi-layer perceptron branch (concatenated embeddings through ReLU layers) are
concatenated and mapped to one logit: the score that the user interacts with the item.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import torch
from torch import nn


class NeuMF(nn.Module):
    """``(users (B,), items (B,))`` -> interaction logits ``(B,)``."""

    def __init__(
        self,
        num_users: int,
        num_items: int,
        mf_dim: int = 64,
        mlp_layers: Sequence[int] = (256, 256, 128, 64),
    ) -> None:
        """``mlp_layers[0]`` is the concatenated embedding width (half per side)."""
        super().__init__()
        if mlp_layers[0] % 2:
            raise ValueError("mlp_layers[0] must be even (user and item halves)")
        self.mf_user = nn.Embedding(num_users, mf_dim)
        self.mf_item = nn.Embedding(num_items, mf_dim)
        self.mlp_user = nn.Embedding(num_users, mlp_layers[0] // 2)
        self.mlp_item = nn.Embedding(num_items, mlp_layers[0] // 2)
        layers: list[nn.Module] = []
        for d_in, d_out in itertools.pairwise(mlp_layers):
            layers += [nn.Linear(d_in, d_out), nn.ReLU(inplace=True)]
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(mf_dim + mlp_layers[-1], 1)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """Embeddings N(0, 0.01); MLP Glorot-uniform; output layer Kaiming-uniform for a sigmoid."""
        for emb in (self.mf_user, self.mf_item, self.mlp_user, self.mlp_item):
            nn.init.normal_(emb.weight, std=0.01)
        for layer in self.mlp:
            if isinstance(layer, nn.Linear):
                nn.init.xavier_uniform_(layer.weight)
                nn.init.zeros_(layer.bias)
        nn.init.kaiming_uniform_(self.out.weight, a=1, nonlinearity="sigmoid")
        nn.init.zeros_(self.out.bias)

    def forward(self, users: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        """Logits of shape ``users.shape``."""
        mf = self.mf_user(users) * self.mf_item(items)
        mlp = self.mlp(torch.cat((self.mlp_user(users), self.mlp_item(items)), dim=-1))
        return self.out(torch.cat((mf, mlp), dim=-1)).squeeze(-1)
