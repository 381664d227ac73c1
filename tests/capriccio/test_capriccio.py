"""zeus-bench capriccio: Sentiment140 cut into time-sorted overlapping slices, as the paper did (scaled down)."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sentiment140_helpers import write_sentiment140

from tests.helpers.optional import require
from zeus_bench.cli.main import main
from zeus_bench.traces.capriccio import TRAIN_NAME, VAL_NAME, _parse_time, read_tweets, slice_starts


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="latin-1", newline="") as fh:
        return list(csv.reader(fh))


def test_slices_follow_the_papers_rules(tmp_path, capsys):
    src = write_sentiment140(tmp_path / "s140.csv")
    out = tmp_path / "capriccio"
    args = [
        "capriccio",
        "--sentiment140",
        str(src),
        "--out",
        str(out),
        "--size",
        "200",
        "--train-fraction",
        "0.85",
    ]
    assert main(args) == 0
    index = pd.read_csv(out / "slices.csv")
    tweets = read_tweets(src)
    times = tweets.times
    # One slice per day with a tweet from 2009-05-01 on (day 9 after 04-25 has none: skipped), while 200 tweets remain.
    expected = []
    day = np.datetime64("2009-05-01")
    while True:
        i = int(np.searchsorted(times, day.astype("datetime64[s]")))
        if i + 200 > len(times):
            break
        if day != np.datetime64("2009-05-04"):
            expected.append(i)
        day += np.timedelta64(1, "D")
    assert len(index) == len(expected) > 20
    assert f"{len(index)} slices of 200 tweets" in capsys.readouterr().out
    assert (index["train"] == 170).all() and (index["val"] == 30).all()
    for k, first in enumerate(expected, start=1):
        folder = out / f"slice-{k:02d}"
        train, val = _rows(folder / TRAIN_NAME), _rows(folder / VAL_NAME)
        assert len(train) == 170 and len(val) == 30
        # exactly the 200 tweets after the first tweet of the day, split by the fixed-seed shuffle
        window = {tuple(r) for r in tweets.rows[first : first + 200]}
        assert {tuple(r) for r in train} | {tuple(r) for r in val} == window
        perm = np.random.default_rng(42).permutation(200)
        assert train[0] == tweets.rows[first + perm[0]] and val[0] == tweets.rows[first + perm[170]]
        assert str(times[first]) == index.loc[k - 1, "first_time"]
        assert _parse_time(train[0][2]).astype("datetime64[D]") >= np.datetime64("2009-05-01")
    # overlapping slices: consecutive windows share most tweets
    assert 0.5 < index["overlap_with_previous"].iloc[1:].min() < 1.0


def test_the_slices_are_what_the_sentiment140_workload_reads(tmp_path):
    require("torch")
    from workloads.sentiment140 import read_sentiment140

    src = write_sentiment140(tmp_path / "s140.csv")
    assert (
        main(
            [
                "capriccio",
                "--sentiment140",
                str(src),
                "--out",
                str(tmp_path / "c"),
                "--size",
                "100",
                "--max-slices",
                "2",
            ]
        )
        == 0
    )
    texts, labels = read_sentiment140("sentiment140", tmp_path / "c" / "slice-02" / TRAIN_NAME)
    assert len(texts) == 85 and set(labels) <= {0, 1}
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["slice-01", "slice-02", "slices.csv"]


def test_ties_keep_file_order_and_days_without_tweets_are_skipped():
    times = np.array(
        ["2009-05-01T10:00", "2009-05-01T10:00", "2009-05-03T00:00", "2009-05-04T00:00"],
        dtype="datetime64[s]",
    )
    assert slice_starts(times, 2, dt.date(2009, 5, 1), 1) == [0, 2]
    assert slice_starts(times, 5, dt.date(2009, 5, 1), 1) == []


@pytest.mark.parametrize(
    ("content", "extra", "message"),
    [
        ('"0","1","Mon May 11 03:17:40 PDT 2009","q","u"\n', [], "expected 6 columns, found 5"),
        (
            '"1","1","Mon May 11 03:17:40 PDT 2009","q","u","t"\n',
            [],
            "column 1 (polarity) '1' is not 0, 2 or 4",
        ),
        ('"0","1","2009-05-11","q","u","t"\n', [], "column 3 (date) '2009-05-11'"),
        (
            '"0","1","Mon May 11 03:17:40 PDT 2009","q","u","t"\n',
            [],
            "no slice of 500000 tweets starts on or after 2009-05-01",
        ),
        ('"0","1","Mon May 11 03:17:40 PDT 2009","q","u","t"\n', ["--size", "0"], "must be in [1,"),
        (
            '"0","1","Mon May 11 03:17:40 PDT 2009","q","u","t"\n',
            ["--train-fraction", "1"],
            "must be in (0, 1)",
        ),
        ('"0","1","Mon May 11 03:17:40 PDT 2009","q","u","t"\n', ["--start", "May"], "not a date"),
        # SliceSettings' own checks (the CLI's parsers let these through).
        ('"0","1","Mon May 11 03:17:40 PDT 2009","q","u","t"\n', ["--size", "1"], "must be >= 2 tweets"),
        (
            '"0","1","Mon May 11 03:17:40 PDT 2009","q","u","t"\n',
            ["--size", "3", "--train-fraction", "0.2"],
            "a slice of 3 tweets split at 0.2 leaves a side empty",
        ),
        (
            '"0","1","Mon May 11 03:17:40 PDT 2009","q","u","t"\n',
            ["--vocab", "/nonexistent/vocab.txt"],
            "no such vocabulary file",
        ),
    ],
)
def test_bad_input_is_one_line_and_leaves_nothing(tmp_path, capsys, content, extra, message):
    src = tmp_path / "in.csv"
    src.write_text(content, encoding="latin-1")
    status = main(["capriccio", "--sentiment140", str(src), "--out", str(tmp_path / "a" / "out"), *extra])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and message in err
    assert not (tmp_path / "a").exists()
