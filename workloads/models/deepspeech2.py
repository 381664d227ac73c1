"""DeepSpeech2 (Amodei et al., 2016): convolutional front-end, bidirectional RNNs, CTC output.

The layout follows the widely used PyTorch reproduction of the paper's English model: two 2-D
convolutions over the log spectrogram (32 channels, kernels 41x11 and 21x11, strides 2x2 and
2x1, batch norm, clipped ReLU), five bidirectional LSTM layers of 1024 units whose directions
are summed, sequence-wise batch norm between them, and a linear layer to the characters.
The time axis is halved once, so the model emits one frame per 20 ms of audio.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


def _conv_out(size: int, kernel: int, stride: int, padding: int) -> int:
    return (size + 2 * padding - kernel) // stride + 1


class SequenceBatchNorm(nn.Module):
    """Batch norm over the feature axis of a ``(T, B, F)`` sequence (statistics over T and B)."""

    def __init__(self, features: int) -> None:
        """Normalise ``features`` channels."""
        super().__init__()
        self.bn = nn.BatchNorm1d(features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Normalise ``x`` of shape ``(T, B, F)``."""
        t, b, f = x.shape
        return self.bn(x.reshape(t * b, f)).reshape(t, b, f)


class BatchRNN(nn.Module):
    """Optional sequence batch norm, then a bidirectional LSTM whose two directions are summed."""

    def __init__(self, input_size: int, hidden_size: int, batch_norm: bool) -> None:
        """One recurrent layer of ``hidden_size`` units per direction."""
        super().__init__()
        self.hidden_size = hidden_size
        self.norm = SequenceBatchNorm(input_size) if batch_norm else nn.Identity()
        self.rnn = nn.LSTM(input_size, hidden_size, bidirectional=True)

    def forward(self, x: torch.Tensor, lengths: torch.Tensor) -> torch.Tensor:
        """``x`` ``(T, B, F)`` and per-sample valid lengths -> ``(T, B, hidden_size)``."""
        x = self.norm(x)
        packed = pack_padded_sequence(x, lengths.cpu(), enforce_sorted=False)
        out, _ = self.rnn(packed)
        out, _ = pad_packed_sequence(out, total_length=x.shape[0])
        return out[..., : self.hidden_size] + out[..., self.hidden_size :]


class DeepSpeech2(nn.Module):
    """Log spectrogram ``(B, 1, F, T)`` -> per-frame character log-probabilities ``(T', B, C)``."""

    def __init__(
        self,
        n_freq: int = 161,
        n_classes: int = 29,
        conv_channels: int = 32,
        rnn_hidden: int = 1024,
        rnn_layers: int = 5,
    ) -> None:
        """Build the network for ``n_freq`` spectrogram bins and ``n_classes`` outputs (blank 0)."""
        super().__init__()
        c = conv_channels
        self.conv = nn.Sequential(
            nn.Conv2d(1, c, kernel_size=(41, 11), stride=(2, 2), padding=(20, 5), bias=False),
            nn.BatchNorm2d(c),
            nn.Hardtanh(0, 20, inplace=True),
            nn.Conv2d(c, c, kernel_size=(21, 11), stride=(2, 1), padding=(10, 5), bias=False),
            nn.BatchNorm2d(c),
            nn.Hardtanh(0, 20, inplace=True),
        )
        freq = _conv_out(_conv_out(n_freq, 41, 2, 20), 21, 2, 10)
        sizes = [c * freq] + [rnn_hidden] * rnn_layers
        self.rnns = nn.ModuleList(
            BatchRNN(sizes[i], sizes[i + 1], batch_norm=i > 0) for i in range(rnn_layers)
        )
        self.head = nn.Sequential(SequenceBatchNorm(rnn_hidden), nn.Linear(rnn_hidden, n_classes, bias=False))

    @staticmethod
    def output_lengths(input_lengths: torch.Tensor) -> torch.Tensor:
        """Output frames for ``input_lengths`` spectrogram frames (the first conv halves time)."""
        return torch.div(input_lengths + 2 * 5 - 11, 2, rounding_mode="floor") + 1

    def forward(self, spectrogram: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Return fp32 log-probabilities ``(T', B, C)`` and their valid lengths ``(B,)``."""
        x = self.conv(spectrogram)  # (B, C, F', T')
        b, c, f, t = x.shape
        x = x.permute(3, 0, 1, 2).reshape(t, b, c * f)
        out_lengths = self.output_lengths(lengths).clamp(min=1, max=t)
        for rnn in self.rnns:
            x = rnn(x, out_lengths)
        logits = self.head(x)
        return logits.float().log_softmax(dim=-1), out_lengths
