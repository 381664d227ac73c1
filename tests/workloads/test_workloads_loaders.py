"""Real loaders read tiny files in each dataset's published format; the batches train the model."""

from __future__ import annotations

import math
import pickle

import numpy as np
import pytest

from tests.helpers.optional import require

torch = require("torch")

from tiny_datasets import (  # noqa: E402
    LIBRI_TRANSCRIPTS,
    SENTIMENT_ROWS,
)

from workloads.librispeech import decode_indices  # noqa: E402
from zeus_bench.sweep.workload import load_workload  # noqa: E402


def step_and_eval(workload, train, val):
    torch.manual_seed(0)
    model = workload.build_model()
    opt = workload.build_optimizer(model, 2)
    loss = workload.train_step(model, opt, next(iter(train)))
    assert math.isfinite(loss)
    return workload.evaluate(model, val)


def test_cifar100_reads_the_python_pickles(cifar_root):
    w = load_workload("cifar100", tiny=True)
    val = w.real_loader(cifar_root, "val", 3)
    images, labels = next(iter(val))
    assert images.shape == (3, 3, 32, 32) and images.dtype == torch.float32
    with (cifar_root / "cifar-100-python" / "test").open("rb") as fh:
        raw = pickle.load(fh, encoding="bytes")
    assert labels.tolist() == raw[b"fine_labels"][:3]  # val is not shuffled
    # Normalised with the CIFAR-100 statistics: pixel 0 of channel 0 of image 0.
    expected = (raw[b"data"][0, 0] / 255 - 0.5071) / 0.2673
    assert float(images[0, 0, 0, 0]) == pytest.approx(expected, abs=1e-5)
    # The folder itself is accepted as root as well.
    train = w.real_loader(cifar_root / "cifar-100-python", "train", 2)
    assert sum(len(y) for _, y in train) == 6
    assert 0.0 <= step_and_eval(w, train, val) <= 1.0


def test_imagenet_reads_an_image_folder(imagenet_root):
    w = load_workload("imagenet", tiny=True)
    train = w.real_loader(imagenet_root, "train", 4)
    images, labels = next(iter(train))
    assert images.shape == (4, 3, 64, 64)
    assert sorted(labels.tolist()) == [0, 0, 1, 1]
    val = w.real_loader(imagenet_root, "val", 2)
    _, val_labels = next(iter(val))
    assert val_labels.tolist() == [0, 1]
    assert 0.0 <= step_and_eval(w, train, val) <= 1.0


def test_squad_features_hold_the_answer_spans(squad_root):
    w = load_workload("squad", tiny=True)
    val = w.real_loader(squad_root, "val", 8)
    batch = next(iter(val))
    assert batch["input_ids"].shape == (2, 64)
    assert batch["answer_spans"].shape == (2, 3, 2)
    vocab = (squad_root / "vocab.txt").read_text().splitlines()
    for row, answer in ((0, "the red mat"), (1, "alice")):
        s, e = batch["start_positions"][row].item(), batch["end_positions"][row].item()
        tokens = [vocab[i] for i in batch["input_ids"][row, s : e + 1].tolist()]
        assert " ".join(tokens) == answer
        assert (batch["token_type_ids"][row, s : e + 1] == 1).all()
    assert batch["answer_spans"][1, 1:].eq(-1).all()  # q2 has one gold answer, padded
    train = w.real_loader(squad_root, "train", 2)
    assert 0.0 <= step_and_eval(w, train, val) <= 100.0


def test_squad_f1_of_an_exact_span_is_100():
    from workloads.squad import best_spans, span_f1

    gold = torch.tensor([[[3, 5], [-1, -1]], [[2, 2], [4, 6]]])
    assert span_f1(torch.tensor([[3, 5], [4, 6]]), gold).tolist() == [1.0, 1.0]
    # Pred 3..4 against gold 3..5: precision 1, recall 2/3.
    assert span_f1(torch.tensor([[3, 4], [0, 0]]), gold).tolist() == pytest.approx([0.8, 0.0])
    start = torch.tensor([[0.0, 5.0, 0.0, 1.0]])
    end = torch.tensor([[9.0, 0.0, 1.0, 4.0]])
    mask = torch.tensor([[False, True, True, True]])
    assert best_spans(start, end, mask, max_len=30).tolist() == [[1, 3]]
    assert best_spans(start, end, mask, max_len=2).tolist() == [[1, 2]]


def test_sentiment140_reads_latin1_csv_and_drops_neutral(sentiment_root):
    w = load_workload("sentiment140", tiny=True)
    train = w.real_loader(sentiment_root, "train", 4)
    batch = next(iter(train))
    assert batch["input_ids"].shape == (4, 32)
    assert sorted(batch["labels"].tolist()) == [0, 0, 1, 1]
    val = w.real_loader(sentiment_root, "val", 8)
    vbatch = next(iter(val))
    assert vbatch["labels"].tolist() == [1, 0]  # the neutral tweet is dropped
    from workloads.sentiment140 import read_sentiment140

    texts, _ = read_sentiment140("sentiment140", sentiment_root / "testdata.manual.2009.06.14.csv")
    assert texts[0] == SENTIMENT_ROWS[1][5] == "i love this café!"
    # Tokenisation also runs in worker processes (the collate function pickles).
    parallel = next(iter(w.real_loader(sentiment_root, "val", 8, num_workers=1)))
    assert torch.equal(parallel["input_ids"], vbatch["input_ids"])
    assert len(val) == 1 and val.batch_size == 8  # the loader's attributes stay reachable
    assert 0.0 <= step_and_eval(w, train, val) <= 1.0


def test_librispeech_decodes_flac_to_spectrograms(librispeech_root):
    w = load_workload("librispeech", tiny=True)
    val = w.real_loader(librispeech_root, "val", 2)
    batch = next(iter(val))
    frames = [1 + (12_000 - 1600 * k) // 160 for k in range(2)]  # centred STFT, hop 160
    assert batch["lengths"].tolist() == frames
    assert batch["spectrograms"].shape == (2, 1, 161, max(frames))
    texts = [
        decode_indices(t[:n])
        for t, n in zip(batch["targets"].tolist(), batch["target_lengths"].tolist(), strict=True)
    ]
    assert texts == [t.lower() for t in LIBRI_TRANSCRIPTS.values()]
    spec = batch["spectrograms"][0, 0, :, : frames[0]]
    assert float(spec.mean()) == pytest.approx(0.0, abs=1e-4)  # normalised per utterance
    assert float(batch["spectrograms"][1, 0, :, frames[1] :].abs().sum()) == 0.0  # zero padding
    train = w.real_loader(librispeech_root, "train-clean-100", 2)
    assert step_and_eval(w, train, val) >= 0.0


def test_librispeech_wer_and_greedy_decoding():
    from workloads.librispeech import ALPHABET, greedy_ctc_decode, word_errors

    assert word_errors("the cat sat", "the cat sat") == 0
    assert word_errors("the bat sat down", "the cat sat") == 2  # one substitution, one insertion
    assert word_errors("", "a b") == 2
    path = [ALPHABET.index(c) for c in "hh_ii__ i"]  # blanks separate the repeated letters
    log_probs = torch.nn.functional.one_hot(torch.tensor(path), len(ALPHABET)).float()[:, None]
    assert greedy_ctc_decode(log_probs, torch.tensor([len(path)])) == ["hi i"]
    assert greedy_ctc_decode(log_probs, torch.tensor([3])) == ["h"]


def test_movielens_leave_one_out_and_negatives(movielens_root):
    from workloads.movielens import Interactions, read_ratings

    w = load_workload("movielens-1m", tiny=True)
    ratings = read_ratings("movielens-1m", movielens_root / "ml-1m" / "ratings.dat")
    data = Interactions("movielens-1m", ratings)
    item_ids = np.unique(ratings[:, 1])  # [1, 2, 3, 5, 10, 11]
    held = {int(u): int(item_ids[i]) for u, i in zip(data.val_users, data.val_items, strict=True)}
    assert held == {0: 3, 1: 10, 2: 5}  # each user's latest rating
    assert len(data.train_users) == 9 - 3

    train = w.real_loader(movielens_root, "train", 4)
    epoch = list(train)
    users = torch.cat([b["users"] for b in epoch])
    items = torch.cat([b["items"] for b in epoch])
    labels = torch.cat([b["labels"] for b in epoch])
    assert len(labels) == 6 * 5 and int(labels.sum()) == 6  # 4 negatives per positive
    user_index = np.unique(ratings[:, 0], return_inverse=True)[1]
    item_index = np.unique(ratings[:, 1], return_inverse=True)[1]
    codes = set(zip(user_index.tolist(), item_index.tolist(), strict=True))
    for u, i, y in zip(users.tolist(), items.tolist(), labels.tolist(), strict=True):
        assert ((u, i) in codes) == (y == 1.0)  # negatives are never rated items

    val = w.real_loader(movielens_root, "val", 2)
    vb = next(iter(val))
    assert vb["items"].shape == (2, 101)
    assert vb["items"][:, 0].tolist() == [2, 4]  # held-out movies 3 and 10 (contiguous indices)
    hr, ndcg = w.ranking_metrics(w.build_model(), val)
    assert 0.0 <= ndcg <= hr <= 1.0
    assert 0.0 <= step_and_eval(w, train, val) <= 1.0


def test_movielens_ndcg_of_a_perfect_ranker_is_one():
    w = load_workload("movielens-1m", tiny=True)

    class FirstWins(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(1))

        def forward(self, users, items):
            return -(items.float()) + self.w  # lower item index scores higher

    batch = {"users": torch.tensor([0, 1]), "items": torch.tensor([[0, 5, 6], [3, 1, 9]])}
    hr, ndcg = w.ranking_metrics(FirstWins(), [batch])
    with pytest.raises(ValueError, match="takes ranking batches"):
        w.evaluate(FirstWins(), [{"users": torch.tensor([0]), "items": torch.tensor([1])}])
    # User 0: rank 0 (gain 1); user 1: one candidate ahead, rank 1 (gain 1/log2(3)).
    assert hr == 1.0
    assert ndcg == pytest.approx((1 + 1 / math.log2(3)) / 2)


def test_squad_long_context_overflows_into_windows(squad_root):
    from workloads._bert import load_tokenizer
    from workloads.squad import squad_features

    context = "the cat sat on the mat. " * 6 + "alice lives in the red house."
    start = context.index("the red house")
    examples = [("who lives there?", context, [(start, "the red house"), (0, "the cat")])]
    tok = load_tokenizer("squad", squad_root, 128)
    feats = squad_features(examples, tok, seq_len=24, stride=8, chunk=1)
    vocab = (squad_root / "vocab.txt").read_text().splitlines()
    n = len(feats["input_ids"])
    assert n >= 3  # the context spans several windows
    spans = feats["answer_spans"]
    found = 0
    for i in range(n):
        s, e = spans[i, 0].tolist()
        if (s, e) == (0, 0):
            continue  # this window misses the answer: target [CLS]
        assert " ".join(vocab[t] for t in feats["input_ids"][i, s : e + 1].tolist()) == "the red house"
        found += 1
    assert found >= 1 and (spans[:, 0] == 0).all(dim=1).any()  # some windows miss it
    assert (
        " ".join(vocab[t] for t in feats["input_ids"][0, spans[0, 1, 0] : spans[0, 1, 1] + 1].tolist())
        == "the cat"
    )
