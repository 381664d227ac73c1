"""DeepSpeech2 on LibriSpeech with CTC, measured by word error rate (workload ``librispeech``).

Model: :class:`workloads.models.deepspeech2.DeepSpeech2` (written here), 29 outputs: the CTC
blank, apostrophe, space and a-z. Input: log(1 + |STFT|) of 16 kHz audio, 20 ms Hamming
windows every 10 ms (161 frequency bins), normalised per utterance.

Data: the published LibriSpeech layout, ``<subset>/<speaker>/<chapter>/`` with FLAC files
and ``<speaker>-<chapter>.trans.txt`` (``UTTERANCE-ID TRANSCRIPT`` per line), under ``root``
or ``root/LibriSpeech``. ``train`` is the full 960 h set (train-clean-100, train-clean-360 and
train-other-500; 281 241 utterances), which the Zeus trace's epoch times imply; ``val`` is
dev-clean. Any single subset name (e.g. ``train-clean-100``) is also accepted as a split.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, Dataset

from workloads._common import (
    DatasetError,
    OneLineErrors,
    TorchWorkload,
    check_split,
    find_root,
    generator,
    model_device,
    optimizer_kernels,
    repeat_forever,
    sqrt_scaled_lr,
)
from workloads.models.deepspeech2 import DeepSpeech2
from zeus_bench.sweep.workload import Batch

log = logging.getLogger(__name__)

SAMPLE_RATE_HZ = 16_000
WINDOW = 320  # 20 ms
HOP = 160  # 10 ms
N_FREQ = WINDOW // 2 + 1
ALPHABET = "_' abcdefghijklmnopqrstuvwxyz"  # index 0 is the CTC blank
_CHAR_INDEX = {ch: i for i, ch in enumerate(ALPHABET) if i > 0}
SUBSETS = (
    "train-clean-100",
    "train-clean-360",
    "train-other-500",
    "dev-clean",
    "dev-other",
    "test-clean",
    "test-other",
)
SPLITS = {"train": SUBSETS[:3], "val": ("dev-clean",), **{s: (s,) for s in SUBSETS}}


def encode_transcript(text: str) -> list[int]:
    """Character indices of a transcript (case-insensitive); raises ``KeyError`` on other characters."""
    return [_CHAR_INDEX[ch] for ch in text.lower()]


def decode_indices(indices: Sequence[int]) -> str:
    """The transcript of character indices (blanks skipped)."""
    return "".join(ALPHABET[i] for i in indices if i > 0)


def greedy_ctc_decode(log_probs: torch.Tensor, lengths: torch.Tensor) -> list[str]:
    """Best-path CTC decoding of ``(T, B, C)`` log-probabilities: argmax, merge repeats, drop blanks."""
    best = log_probs.argmax(dim=-1).T.cpu()
    out = []
    for row, n in zip(best.tolist(), lengths.tolist(), strict=True):
        merged = [c for i, c in enumerate(row[:n]) if i == 0 or c != row[i - 1]]
        out.append(decode_indices(merged))
    return out


def word_errors(hypothesis: str, reference: str) -> int:
    """Word-level Levenshtein distance (substitutions + insertions + deletions)."""
    hyp, ref = hypothesis.split(), reference.split()
    prev = list(range(len(hyp) + 1))
    for i, r in enumerate(ref, start=1):
        cur = [i] + [0] * len(hyp)
        for j, h in enumerate(hyp, start=1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (r != h))
        prev = cur
    return prev[-1]


def log_spectrogram(wave: torch.Tensor) -> torch.Tensor:
    """``(samples,)`` float audio -> ``(161, frames)`` per-utterance-normalised log magnitude."""
    spec = torch.stft(
        wave,
        n_fft=WINDOW,
        hop_length=HOP,
        win_length=WINDOW,
        window=torch.hamming_window(WINDOW),
        center=True,
        return_complex=True,
    )
    spec = torch.log1p(spec.abs())
    return (spec - spec.mean()) / spec.std().clamp(min=1e-5)


def index_subset(workload_id: str, folder: Path) -> list[tuple[Path, str]]:
    """``(flac path, transcript)`` of every utterance of one subset folder.

    Raises:
        DatasetError: a transcript line is malformed, names a missing FLAC file, or uses
            characters outside the alphabet; or the subset holds no transcript.
    """
    items: list[tuple[Path, str]] = []
    for trans in sorted(folder.rglob("*.trans.txt")):
        try:
            lines = trans.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise DatasetError(f"{workload_id}: cannot read {trans}: {exc}") from None
        for n, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            utt, _, text = line.strip().partition(" ")
            flac = trans.parent / f"{utt}.flac"
            if not text or any(ch not in _CHAR_INDEX for ch in text.lower()):
                raise DatasetError(
                    f"{workload_id}: {trans}:{n}: not 'UTTERANCE-ID TRANSCRIPT' in A-Z, ' and space"
                )
            if not flac.is_file():
                raise DatasetError(f"{workload_id}: {trans}:{n}: missing audio {flac.name}")
            items.append((flac, text))
    if not items:
        raise DatasetError(f"{workload_id}: {folder} holds no <speaker>-<chapter>.trans.txt")
    return items


class _Utterances(Dataset[tuple[torch.Tensor, list[int]]]):
    def __init__(self, workload_id: str, items: list[tuple[Path, str]]) -> None:
        self.workload_id = workload_id
        self.items = items

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> tuple[torch.Tensor, list[int]]:
        import soundfile

        path, text = self.items[i]
        try:
            wave, rate = soundfile.read(str(path), dtype="float32", always_2d=False)
        except (RuntimeError, soundfile.LibsndfileError) as exc:
            raise DatasetError(f"{self.workload_id}: cannot decode {path}: {exc}") from None
        if rate != SAMPLE_RATE_HZ or wave.ndim != 1:
            raise DatasetError(f"{self.workload_id}: {path}: expected 16 kHz mono audio, got {rate} Hz")
        return log_spectrogram(torch.from_numpy(wave)), encode_transcript(text)


def collate(items: list[tuple[torch.Tensor, list[int]]]) -> dict[str, torch.Tensor]:
    """Pad spectrograms (with zeros) and transcripts (with blanks) to the batch's longest."""
    lengths = torch.tensor([s.shape[1] for s, _ in items])
    target_lengths = torch.tensor([len(t) for _, t in items])
    specs = torch.zeros(len(items), 1, N_FREQ, int(lengths.max()))
    targets = torch.zeros(len(items), int(target_lengths.max()), dtype=torch.long)
    for i, (spec, target) in enumerate(items):
        specs[i, 0, :, : spec.shape[1]] = spec
        targets[i, : len(target)] = torch.tensor(target)
    return {"spectrograms": specs, "lengths": lengths, "targets": targets, "target_lengths": target_lengths}


class LibrispeechDeepSpeech2(TorchWorkload):
    """DeepSpeech2 trained with CTC on LibriSpeech 960 h, AdamW (fused on CUDA), fp32.

    Mixed precision is off: the paper's recipe trains the LSTMs in full precision; CTC is
    computed in fp32 in any case. Synthetic mode: spectrograms ``(B, 1, 161, 1270)`` (12.7 s,
    the mean utterance of LibriSpeech training sets) and transcripts of 190 characters.
    """

    id = "librispeech"
    samples_per_epoch = 281_241  # utterances of the 960 h training set
    paper_batch_sizes = (2, 4, 8, 12, 16, 24, 32, 48, 56, 64, 72, 96, 128, 156, 192)
    metric_name = "validation word error rate (%)"
    metric_direction = "min"
    amp = False
    # Zeus train trace: lr = 3e-4 * sqrt(b / 256).
    base_lr = 3e-4
    base_batch_size = 256

    def __init__(self, tiny: bool = False) -> None:
        """Full size: 5 x 1024 LSTM layers; tiny: 2 x 32, 4 conv channels, 1.2 s synthetic audio."""
        super().__init__(tiny)
        self.synthetic_frames = 120 if tiny else 1270
        self.synthetic_chars = 12 if tiny else 190

    def build_model(self) -> nn.Module:
        """DeepSpeech2 with random weights."""
        if self.tiny:
            return DeepSpeech2(N_FREQ, len(ALPHABET), conv_channels=4, rnn_hidden=32, rnn_layers=2)
        return DeepSpeech2(N_FREQ, len(ALPHABET))

    def build_optimizer(self, model: nn.Module, batch_size: int) -> torch.optim.Optimizer:
        """AdamW, lr = 3e-4 * sqrt(batch_size / 256)."""
        return torch.optim.AdamW(
            model.parameters(),
            lr=sqrt_scaled_lr(self.base_lr, self.base_batch_size, batch_size),
            **optimizer_kernels(model, fused=True),
        )

    def real_loader(
        self, root: str | Path, split: str, batch_size: int, *, num_workers: int = 0
    ) -> Iterable[dict[str, torch.Tensor]]:
        """Batches of spectrograms and transcripts decoded from FLAC under ``root``."""
        check_split(self.id, split, tuple(SPLITS))
        subsets = SPLITS[split]
        base = find_root(self.id, root, subsets[0], ("LibriSpeech",))
        missing = [s for s in subsets if not (base / s).is_dir()]
        if missing:
            raise DatasetError(f"{self.id}: split {split!r} needs {', '.join(missing)} under {base}")
        items = [item for s in subsets for item in index_subset(self.id, base / s)]
        log.info("%s: %d utterances from %s", split, len(items), ", ".join(subsets))
        loader = DataLoader(
            _Utterances(self.id, items),
            batch_size=batch_size,
            shuffle=split.startswith("train"),
            collate_fn=collate,
            num_workers=num_workers,
            pin_memory=torch.cuda.is_available(),
            persistent_workers=num_workers > 0,
        )
        return OneLineErrors(loader)

    def synthetic_batches(
        self, batch_size: int, device: torch.device, seed: int = 0
    ) -> Iterator[dict[str, torch.Tensor]]:
        """Random spectrograms and character transcripts of fixed length, made once on ``device``."""
        gen = generator(device, seed)
        frames, chars = self.synthetic_frames, self.synthetic_chars
        batch = {
            "spectrograms": torch.randn(batch_size, 1, N_FREQ, frames, generator=gen, device=device),
            "lengths": torch.full((batch_size,), frames, dtype=torch.long, device=device),
            "targets": torch.randint(1, len(ALPHABET), (batch_size, chars), generator=gen, device=device),
            "target_lengths": torch.full((batch_size,), chars, dtype=torch.long, device=device),
        }
        return repeat_forever(batch)

    def loss(self, model: nn.Module, batch: Batch) -> torch.Tensor:
        """CTC loss (fp32), averaged over the batch after dividing by target lengths."""
        log_probs, out_lengths = model(batch["spectrograms"], batch["lengths"])
        return F.ctc_loss(
            log_probs.float(),
            batch["targets"],
            out_lengths,
            batch["target_lengths"],
            blank=0,
            reduction="mean",
            zero_infinity=True,
        )

    def evaluate(self, model: nn.Module, batches: Iterable[Batch]) -> float:
        """Word error rate in percent: total word edits over total reference words, greedy decoding."""
        device = model_device(model)
        errors, words = 0, 0
        with self.eval_context(model):
            for raw in batches:
                batch = self.to_device(raw, device)
                log_probs, out_lengths = model(batch["spectrograms"], batch["lengths"])
                hyps = greedy_ctc_decode(log_probs, out_lengths)
                targets = batch["targets"].cpu().tolist()
                for hyp, target, n in zip(hyps, targets, batch["target_lengths"].tolist(), strict=True):
                    ref = decode_indices(target[:n])
                    errors += word_errors(hyp, ref)
                    words += len(ref.split())
        if words == 0:
            raise ValueError("evaluate() got no reference words")
        return 100.0 * errors / words
