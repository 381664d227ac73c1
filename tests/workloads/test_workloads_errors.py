"""Unreadable or malformed dataset roots: one-line ConfigError (exit 2 in the CLI), naming the problem."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers.optional import require

require("torch")

from tiny_datasets import write_sentiment_csv, write_vocab  # noqa: E402

from workloads._common import DatasetError  # noqa: E402
from zeus_bench.core.errors import ConfigError  # noqa: E402
from zeus_bench.sweep.workload import load_workload  # noqa: E402

IDS = ["cifar100", "imagenet", "squad", "sentiment140", "librispeech", "movielens-1m"]


def raises_one_line(wid, root, split="train", match=None):
    with pytest.raises(DatasetError) as exc:
        loader = load_workload(wid, tiny=True).real_loader(root, split, 2)
        next(iter(loader))
    assert isinstance(exc.value, ConfigError)
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"{wid}: ")
    if match:
        assert match in msg, msg
    return msg


@pytest.mark.parametrize("wid", IDS)
def test_missing_root(wid, tmp_path):
    raises_one_line(
        wid, tmp_path / "nope", match=f"dataset root {tmp_path / 'nope'} is not a readable directory"
    )


@pytest.mark.parametrize("wid", IDS)
def test_root_without_the_dataset(wid, tmp_path):
    raises_one_line(wid, tmp_path, match=f"dataset root {tmp_path} has no")


@pytest.mark.parametrize("wid", IDS)
def test_unknown_split(wid, tmp_path):
    raises_one_line(
        wid, tmp_path, split="holdout", match="unknown split 'holdout'; expected one of train, val"
    )


def test_unreadable_root(tmp_path):
    root = tmp_path / "locked"
    root.mkdir()
    root.chmod(0)
    try:
        if os.geteuid() != 0:
            raises_one_line("cifar100", root)
            return
        # Root reads anything (CI runs as root): check it as an unprivileged user, in a child.
        # The interpreter lives where nobody may read, so every module is imported first (a
        # missing root raises the same kind of error along the same code path).
        raises_one_line("cifar100", tmp_path / "absent")
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child reports through its exit status
            status = 1
            try:
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                raises_one_line("cifar100", root)
                status = 0
            except BaseException as exc:  # any failure is the child's exit status, its reason in a file
                os.write(write_end, f"{type(exc).__name__}: {exc}".encode())
                status = 1
            finally:
                os._exit(status)
        os.close(write_end)
        _, status = os.waitpid(pid, 0)
        why = os.read(read_end, 4096).decode()
        os.close(read_end)
        assert os.waitstatus_to_exitcode(status) == 0, f"as nobody: {why}"
    finally:
        root.chmod(0o755)


def test_cifar_garbage_pickle(cifar_root):
    (cifar_root / "cifar-100-python" / "train").write_bytes(b"not a pickle")
    raises_one_line("cifar100", cifar_root, match="is not a CIFAR-100 python pickle")


def test_cifar_missing_split_file(cifar_root):
    (cifar_root / "cifar-100-python" / "test").unlink()
    raises_one_line("cifar100", cifar_root, split="val", match="(CIFAR-100 python-version pickle)")


def test_imagenet_without_class_folders(imagenet_root):
    for path in sorted((imagenet_root / "val").rglob("*"), reverse=True):
        path.unlink() if path.is_file() else path.rmdir()
    raises_one_line(
        "imagenet", imagenet_root, split="val", match="is not an ImageFolder tree of <wnid>/*.JPEG"
    )


def test_imagenet_val_classes_differ(imagenet_root):
    (imagenet_root / "val" / "n01443537").rename(imagenet_root / "val" / "n99999999")
    raises_one_line("imagenet", imagenet_root, split="val", match="class folders of")


def test_squad_malformed_json(squad_root):
    (squad_root / "train-v1.1.json").write_text("{", encoding="utf-8")
    raises_one_line("squad", squad_root, match="is not SQuAD v1.1 JSON")


def test_squad_wrong_layout(squad_root):
    (squad_root / "train-v1.1.json").write_text(json.dumps({"data": [{"title": "x"}]}), encoding="utf-8")
    raises_one_line("squad", squad_root, match="(missing key 'paragraphs')")


def test_squad_vocab_without_special_tokens(squad_root):
    (squad_root / "vocab.txt").write_text("the\ncat\n", encoding="utf-8")
    raises_one_line("squad", squad_root, match="lacks the special tokens [PAD] [UNK] [CLS] [SEP]")


def test_sentiment_vocab_larger_than_the_model(sentiment_root):
    write_vocab(sentiment_root)
    extra = "\n".join(f"w{i}" for i in range(200))
    with (sentiment_root / "vocab.txt").open("a", encoding="utf-8") as fh:
        fh.write(extra + "\n")
    raises_one_line("sentiment140", sentiment_root, match="tokens; the model has 128")


def test_sentiment_bad_columns_and_polarity(sentiment_root):
    path = sentiment_root / "training.1600000.processed.noemoticon.csv"
    write_sentiment_csv(path, [("0", "1", "d", "q", "u", "ok"), ("4", "2", "d", "q", "u")])
    raises_one_line("sentiment140", sentiment_root, match=f"{path}:2: expected 6 columns, found 5")
    write_sentiment_csv(path, [("3", "1", "d", "q", "u", "ok")])
    raises_one_line("sentiment140", sentiment_root, match="polarity '3' is not 0, 2 or 4")


def test_librispeech_960h_needs_all_three_subsets(librispeech_root):
    raises_one_line(
        "librispeech", librispeech_root, match="split 'train' needs train-clean-360, train-other-500"
    )


def test_librispeech_bad_transcript_and_missing_audio(librispeech_root):
    trans = librispeech_root / "LibriSpeech" / "dev-clean" / "19" / "198" / "19-198.trans.txt"
    trans.write_text("19-198-0000 THE CAT 42\n", encoding="utf-8")
    raises_one_line(
        "librispeech", librispeech_root, split="val", match="19-198.trans.txt:1: not 'UTTERANCE-ID"
    )
    trans.write_text("19-198-0009 THE CAT\n", encoding="utf-8")
    raises_one_line("librispeech", librispeech_root, split="val", match="missing audio 19-198-0009.flac")


def test_librispeech_undecodable_flac(librispeech_root):
    flac = librispeech_root / "LibriSpeech" / "dev-clean" / "19" / "198" / "19-198-0000.flac"
    flac.write_bytes(b"fLaC but not really")
    raises_one_line("librispeech", librispeech_root, split="val", match="cannot decode")


def test_librispeech_wrong_sample_rate(librispeech_root):
    import numpy as np
    import soundfile

    flac = librispeech_root / "LibriSpeech" / "dev-clean" / "19" / "198" / "19-198-0000.flac"
    soundfile.write(str(flac), np.zeros(8000, dtype=np.float32), 8000, format="FLAC")
    raises_one_line(
        "librispeech", librispeech_root, split="val", match="expected 16 kHz mono audio, got 8000 Hz"
    )


def test_movielens_bad_separator(movielens_root):
    (movielens_root / "ml-1m" / "ratings.dat").write_text("1,2,5,100\n3,4,5,6\n", encoding="latin-1")
    raises_one_line(
        "movielens-1m", movielens_root, match="is not UserID::MovieID::Rating::Timestamp integers"
    )


def test_movielens_user_who_rated_everything(movielens_root):
    (movielens_root / "ml-1m" / "ratings.dat").write_text("1::2::5::100\n1::3::5::6\n", encoding="latin-1")
    raises_one_line("movielens-1m", movielens_root, match="user 1 rated every movie")


def test_root_that_is_a_file(tmp_path):
    path = tmp_path / "cifar.tar.gz"
    path.write_bytes(b"\x1f\x8b")
    raises_one_line("cifar100", path, match=f"dataset root {path} is not a readable directory")


def test_worker_errors_stay_one_line(librispeech_root):
    """A DatasetError raised in a DataLoader worker reaches the user as one line.

    PyTorch re-raises a worker's exception through ``torch._utils.ExceptionWrapper`` with the
    worker's traceback in the message; the same wrapper is used here in-process (a real worker
    that fails takes PyTorch 5 s to shut down).
    """
    import sys

    from torch._utils import ExceptionWrapper

    from workloads._common import OneLineErrors

    flac = librispeech_root / "LibriSpeech" / "dev-clean" / "19" / "198" / "19-198-0001.flac"
    flac.write_bytes(b"garbage")
    dataset = load_workload("librispeech", tiny=True).real_loader(librispeech_root, "val", 2).dataset

    class AsInWorker:
        def __iter__(self):
            try:
                yield dataset[1]
            except DatasetError:
                ExceptionWrapper(sys.exc_info(), where="in DataLoader worker process 0").reraise()

    with pytest.raises(DatasetError) as raw:
        next(iter(AsInWorker()))
    assert "Traceback" in str(raw.value)  # what PyTorch alone would show
    with pytest.raises(DatasetError) as exc:
        next(iter(OneLineErrors(AsInWorker())))
    msg = str(exc.value)
    assert "\n" not in msg and msg.startswith(f"librispeech: cannot decode {flac}")


def test_imagenet_corrupt_jpeg(imagenet_root):
    jpeg = next((imagenet_root / "val" / "n01440764").glob("*.JPEG"))
    jpeg.write_bytes(b"\xff\xd8 truncated")
    raises_one_line("imagenet", imagenet_root, split="val", match=f"imagenet: cannot decode {jpeg}")
