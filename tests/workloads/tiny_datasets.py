"""Tiny datasets in the real on-disk formats, written by the tests themselves (fixtures in conftest)."""

from __future__ import annotations

import csv
import json
import pickle
from pathlib import Path

import numpy as np
import pytest

VOCAB = [
    "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
    "the", "cat", "sat", "on", "mat", "where", "did", "what", "is", "a", "dog", "ran", "to",
    "park", "in", "red", "house", "who", "lives", "there", "alice", "bob", "i", "love", "this",
    "hate", "rain", "sun", "day", "good", "bad", "cafe", "?", ".", ",", "!", "##s", "##e",
]  # fmt: skip


def write_vocab(folder: Path) -> Path:
    path = folder / "vocab.txt"
    path.write_text("\n".join(VOCAB) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def cifar_root(tmp_path: Path) -> Path:
    """cifar-100-python/{train,test,meta}: 6 training and 4 test images."""
    folder = tmp_path / "cifar-100-python"
    folder.mkdir()
    rng = np.random.default_rng(0)
    for name, n in (("train", 6), ("test", 4)):
        entry = {
            b"data": rng.integers(0, 256, (n, 3072), dtype=np.uint8),
            b"fine_labels": [int(x) for x in rng.integers(0, 100, n)],
            b"coarse_labels": [0] * n,
            b"filenames": [f"img{i}.png".encode() for i in range(n)],
        }
        with (folder / name).open("wb") as fh:
            pickle.dump(entry, fh)
    with (folder / "meta").open("wb") as fh:
        pickle.dump({b"fine_label_names": [f"c{i}".encode() for i in range(100)]}, fh)
    return tmp_path


@pytest.fixture
def imagenet_root(tmp_path: Path) -> Path:
    """train/<wnid>/*.JPEG and val/<wnid>/*.JPEG, two classes, JPEGs of odd sizes."""
    from PIL import Image

    rng = np.random.default_rng(0)
    for split, per_class in (("train", 2), ("val", 1)):
        for wnid in ("n01440764", "n01443537"):
            folder = tmp_path / split / wnid
            folder.mkdir(parents=True)
            for i in range(per_class):
                pixels = rng.integers(0, 256, (60 + 7 * i, 90, 3), dtype=np.uint8)
                Image.fromarray(pixels).save(folder / f"{wnid}_{i}.JPEG", format="JPEG")
    return tmp_path


SQUAD_CONTEXT = "The cat sat on the red mat. Alice lives in the house."


def squad_json(answers_per_question: int) -> dict:
    qas = [
        {
            "id": "q1",
            "question": " Where did the cat sat?",
            "answers": [{"answer_start": SQUAD_CONTEXT.index("the red mat"), "text": "the red mat"}]
            * answers_per_question,
        },
        {
            "id": "q2",
            "question": "Who lives in the house?",
            "answers": [{"answer_start": SQUAD_CONTEXT.index("Alice"), "text": "Alice"}],
        },
    ]
    return {
        "version": "1.1",
        "data": [{"title": "t", "paragraphs": [{"context": SQUAD_CONTEXT, "qas": qas}]}],
    }


@pytest.fixture
def squad_root(tmp_path: Path) -> Path:
    """train-v1.1.json, dev-v1.1.json (several gold answers) and vocab.txt."""
    (tmp_path / "train-v1.1.json").write_text(json.dumps(squad_json(1)), encoding="utf-8")
    (tmp_path / "dev-v1.1.json").write_text(json.dumps(squad_json(3)), encoding="utf-8")
    write_vocab(tmp_path)
    return tmp_path


SENTIMENT_ROWS = [
    ("0", "1467810369", "Mon Apr 06 22:19:45 PDT 2009", "NO_QUERY", "user1", "i hate the rain, bad day"),
    ("4", "1467810370", "Mon Apr 06 22:19:49 PDT 2009", "NO_QUERY", "user2", "i love this café!"),
    ("0", "1467810371", "Mon Apr 06 22:19:53 PDT 2009", "NO_QUERY", "user3", 'the "dog" ran, bad'),
    ("4", "1467810372", "Mon Apr 06 22:19:57 PDT 2009", "NO_QUERY", "user4", "good sun, good day"),
]


def write_sentiment_csv(path: Path, rows: list[tuple[str, ...]]) -> None:
    with path.open("w", encoding="latin-1", newline="") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL).writerows(rows)


@pytest.fixture
def sentiment_root(tmp_path: Path) -> Path:
    """The training CSV (polarity 0/4) and the manual test CSV (with a neutral tweet), latin-1."""
    write_sentiment_csv(tmp_path / "training.1600000.processed.noemoticon.csv", SENTIMENT_ROWS)
    neutral = ("2", "3", "Mon May 11 03:17:40 UTC 2009", "kindle2", "user5", "a house")
    write_sentiment_csv(
        tmp_path / "testdata.manual.2009.06.14.csv", [SENTIMENT_ROWS[1], neutral, SENTIMENT_ROWS[0]]
    )
    write_vocab(tmp_path)
    return tmp_path


LIBRI_TRANSCRIPTS = {"19-198-0000": "THE CAT SAT", "19-198-0001": "ALICE'S HOUSE"}


@pytest.fixture
def librispeech_root(tmp_path: Path) -> Path:
    """LibriSpeech/{train-clean-100,dev-clean}/19/198/: two FLAC utterances and a trans.txt each."""
    import soundfile

    base = tmp_path / "LibriSpeech"
    t = np.arange(16_000 * 3 // 4) / 16_000
    for subset in ("train-clean-100", "dev-clean"):
        folder = base / subset / "19" / "198"
        folder.mkdir(parents=True)
        lines = []
        for k, (utt, text) in enumerate(LIBRI_TRANSCRIPTS.items()):
            wave = 0.3 * np.sin(2 * np.pi * (220 + 110 * k) * t[: len(t) - 1600 * k])
            soundfile.write(str(folder / f"{utt}.flac"), wave.astype(np.float32), 16_000, format="FLAC")
            lines.append(f"{utt} {text}")
        (folder / "19-198.trans.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


# user, movie, rating, timestamp: user 1's latest is movie 3, user 2's is movie 10, user 7's is movie 5.
RATINGS = [
    (1, 1, 5, 100), (1, 3, 4, 300), (1, 2, 3, 200),
    (2, 10, 5, 50), (2, 1, 2, 10),
    (7, 2, 4, 70), (7, 10, 1, 60), (7, 5, 3, 90), (7, 11, 3, 80),
]  # fmt: skip


@pytest.fixture
def movielens_root(tmp_path: Path) -> Path:
    """ml-1m/ratings.dat with ``::`` separators; 3 users, 6 movies (ids not contiguous)."""
    folder = tmp_path / "ml-1m"
    folder.mkdir()
    text = "".join("::".join(str(v) for v in row) + "\n" for row in RATINGS)
    (folder / "ratings.dat").write_text(text, encoding="latin-1")
    return tmp_path
