"""Capriccio: the Zeus paper's drifting dataset, Sentiment140 cut into overlapping time slices.

The paper (and the Zeus repository's ``capriccio/``) sorts the 1.6 M Sentiment140 training tweets
by time and cuts them with a sliding window: starting at 2009-05-01 (April has too many days
without tweets) and moving one day at a time, each slice is the ``size`` = 500,000 tweets that
follow the first tweet of that day, until a slice would run past the last tweet: 38 slices. Each
slice is shuffled with a fixed seed (42) and split 85 / 15 %: 425,000 training and 75,000
validation tweets. One slice is one recurrence of the job: trained after the previous, its data
drift with the days.

:func:`build_slices` does the same from the published CSV (latin-1, six columns: polarity, id,
date, query, user, text; dates like ``Mon May 11 03:17:40 UTC 2009``). Each slice is written as
a folder ``slice-NN`` in the Sentiment140 CSV format, so that the ``sentiment140`` workload reads
it as its data root unchanged (train: ``training.1600000.processed.noemoticon.csv``, validation:
``testdata.manual.2009.06.14.csv``, and the WordPiece ``vocab.txt`` when one is given), with an
index ``slices.csv`` (first and last tweet time, sizes, overlap with the previous slice).

Departures, documented: ties in time keep the file's order (a stable sort; the original's sort
was not stable); a day without tweets is skipped (the original's lookup of that day would fail).
The size, split, start day, stride and seed are options, so that tests run on small files.
"""

from __future__ import annotations

import csv
import datetime as dt
import logging
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from zeus_bench.core.errors import ConfigError, TraceFormatError

log = logging.getLogger(__name__)

TRAIN_NAME = "training.1600000.processed.noemoticon.csv"
VAL_NAME = "testdata.manual.2009.06.14.csv"
INDEX = "slices.csv"
PAPER_SLICE_SIZE = 500_000
PAPER_TRAIN_FRACTION = 0.85
PAPER_START = dt.date(2009, 5, 1)
PAPER_SEED = 42
PAPER_SLICES = 38
#: Bound on the tweets read (the real file has 1.6 M).
MAX_TWEETS = 20_000_000
POLARITIES = ("0", "2", "4")


@dataclass(frozen=True)
class Tweets:
    """The rows of a Sentiment140 CSV, sorted by time (stable)."""

    rows: list[list[str]]
    times: np.ndarray  # datetime64[s], sorted


def _parse_time(text: str) -> np.datetime64:
    """``Mon May 11 03:17:40 UTC 2009`` (any zone word, which the data hold fixed) as datetime64[s]."""
    parts = text.split()
    if len(parts) != 6:
        raise ValueError(text)
    stamp = dt.datetime.strptime(" ".join(parts[1:4] + parts[5:]), "%b %d %H:%M:%S %Y")
    return np.datetime64(stamp, "s")


def read_tweets(path: str | Path) -> Tweets:
    """Read a Sentiment140 CSV and sort it by tweet time (ties keep the file's order).

    Raises:
        TraceFormatError: a missing or unreadable file, a row without six columns, a polarity
            other than 0, 2 or 4, or a date that does not parse (one line: file, line, column).
    """
    path = Path(path)
    if not path.is_file():
        raise TraceFormatError(f"{path}: no such Sentiment140 CSV")
    rows: list[list[str]] = []
    times: list[np.datetime64] = []
    try:
        with path.open(encoding="latin-1", newline="") as fh:
            for line, row in enumerate(csv.reader(fh), start=1):
                if len(row) != 6:
                    raise TraceFormatError(f"{path}:{line}: expected 6 columns, found {len(row)}")
                if row[0].strip() not in POLARITIES:
                    raise TraceFormatError(f"{path}:{line}: column 1 (polarity) {row[0]!r} is not 0, 2 or 4")
                try:
                    times.append(_parse_time(row[2]))
                except ValueError:
                    raise TraceFormatError(
                        f"{path}:{line}: column 3 (date) {row[2]!r} is not like 'Mon May 11 03:17:40 UTC 2009'"
                    ) from None
                rows.append(row)
                if len(rows) > MAX_TWEETS:
                    raise TraceFormatError(f"{path}: more than {MAX_TWEETS} tweets")
    except (OSError, csv.Error) as exc:
        raise TraceFormatError(f"{path}: cannot read: {exc}".splitlines()[0]) from None
    if not rows:
        raise TraceFormatError(f"{path}: no tweets")
    stamp = np.array(times, dtype="datetime64[s]")
    order = np.argsort(stamp, kind="stable")
    return Tweets([rows[i] for i in order], stamp[order])


def slice_starts(times: np.ndarray, size: int, start: dt.date, stride_days: int) -> list[int]:
    """Index of the first tweet of each slice: the first tweet of each day from ``start`` on.

    Days without a tweet are skipped; the last slice is the last one with ``size`` tweets.
    """
    starts: list[int] = []
    day = np.datetime64(start, "D")
    last = times[-1].astype("datetime64[D]")
    step = np.timedelta64(stride_days, "D")
    while day <= last:
        i = int(np.searchsorted(times, day.astype("datetime64[s]"), side="left"))
        if i + size > len(times):
            break
        if times[i].astype("datetime64[D]") == day:  # a tweet on that day
            starts.append(i)
        day = day + step
    return starts


def _write_csv(path: Path, rows: Sequence[list[str]]) -> None:
    with path.open("w", encoding="latin-1", newline="") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)


@dataclass(frozen=True)
class SliceSettings:
    """How the tweets are cut into slices (the paper's values by default).

    Attributes:
        size: Tweets per slice (paper: 500,000).
        train_fraction: Share of each slice for training (paper: 0.85 -> 425,000 / 75,000).
        start: First day of the sliding window (paper: 2009-05-01).
        stride_days: Days the window moves per slice (paper: 1).
        seed: Seed of each slice's shuffle before the split (paper: 42, the same for every slice).
        max_slices: Keep only the first slices (None: all).

    Raises:
        ConfigError: a setting out of range, or a split that leaves a side of a slice empty.
    """

    size: int = PAPER_SLICE_SIZE
    train_fraction: float = PAPER_TRAIN_FRACTION
    start: dt.date = PAPER_START
    stride_days: int = 1
    seed: int = PAPER_SEED
    max_slices: int | None = None

    def __post_init__(self) -> None:
        """Refuse settings that cannot cut a slice."""
        if self.size < 2:
            raise ConfigError(f"slice size must be >= 2 tweets, got {self.size}")
        if not 0 < self.train_fraction < 1:
            raise ConfigError(f"train fraction must be in (0, 1), got {self.train_fraction:g}")
        if self.stride_days < 1:
            raise ConfigError(f"stride must be >= 1 day, got {self.stride_days}")
        if self.max_slices is not None and self.max_slices < 1:
            raise ConfigError(f"max slices must be >= 1, got {self.max_slices}")
        if self.boundary < 1 or self.boundary >= self.size:
            raise ConfigError(
                f"a slice of {self.size} tweets split at {self.train_fraction:g} leaves a side empty"
            )

    @property
    def boundary(self) -> int:
        """Training tweets per slice (the rest validate)."""
        return int(self.size * self.train_fraction)


def _write_slice(
    folder: Path,
    tweets: Tweets,
    first: int,
    previous: int | None,
    settings: SliceSettings,
    vocab: Path | None,
) -> dict[str, object]:
    """Write the slice of ``tweets`` from index ``first`` into ``folder`` (made here); its index row but the number.

    ``previous`` is the first index of the slice before (None for the first: no overlap).
    """
    size, boundary = settings.size, settings.boundary
    rows = tweets.rows[first : first + size]
    perm = np.random.default_rng(settings.seed).permutation(size)
    folder.mkdir()
    _write_csv(folder / TRAIN_NAME, [rows[i] for i in perm[:boundary]])
    _write_csv(folder / VAL_NAME, [rows[i] for i in perm[boundary:]])
    if vocab is not None:
        shutil.copyfile(vocab, folder / "vocab.txt")
    overlap = max(0, previous + size - first) / size if previous is not None else float("nan")
    return {
        "first_time": str(tweets.times[first]),
        "last_time": str(tweets.times[first + size - 1]),
        "train": boundary,
        "val": size - boundary,
        "overlap_with_previous": overlap,
    }


def build_slices(
    sentiment140: str | Path,
    out: str | Path,
    settings: SliceSettings | None = None,
    *,
    vocab: str | Path | None = None,
    force: bool = False,
) -> list[dict[str, object]]:
    """Cut the Sentiment140 CSV into Capriccio slices under ``out`` (written as a whole, or not at all).

    Args:
        sentiment140: The Sentiment140 training CSV.
        out: The folder of the slices (``slice-NN/``) and ``slices.csv``.
        settings: Size, split, window and seed of the slices (:class:`SliceSettings`; None: the paper's).
        vocab: A WordPiece ``vocab.txt`` copied into each slice (the workload needs one).
        force: Write into an existing non-empty folder (replacing the slices and index only).

    Returns:
        The index rows (also in ``slices.csv``).
    """
    from zeus_bench.core.fsutil import atomic_write_text, check_output_dir, output_dir

    cut = SliceSettings() if settings is None else settings
    vocab_path = Path(vocab) if vocab is not None else None
    if vocab_path is not None and not vocab_path.is_file():
        raise ConfigError(f"{vocab_path}: no such vocabulary file")
    check_output_dir(out, force, "Capriccio folder")
    tweets = read_tweets(sentiment140)
    starts = slice_starts(tweets.times, cut.size, cut.start, cut.stride_days)[: cut.max_slices]
    if not starts:
        raise ConfigError(
            f"{sentiment140}: no slice of {cut.size} tweets starts on or after {cut.start.isoformat()} "
            f"({len(tweets.rows)} tweets, last on {str(tweets.times[-1])[:10]})"
        )
    index: list[dict[str, object]] = []
    with output_dir(out, force, _owned_by_slices, "Capriccio folder") as tmp:
        for k, first in enumerate(starts, start=1):
            previous = starts[k - 2] if k > 1 else None
            row = _write_slice(tmp / f"slice-{k:02d}", tweets, first, previous, cut, vocab_path)
            index.append({"slice": k, **row})
            log.info("slice %d/%d: %s .. %s", k, len(starts), index[-1]["first_time"], index[-1]["last_time"])
        lines = [",".join(index[0])] + [",".join(_cell(v) for v in r.values()) for r in index]
        atomic_write_text(tmp / INDEX, "\n".join(lines) + "\n")
    if cut.size == PAPER_SLICE_SIZE and len(index) != PAPER_SLICES:
        log.warning("%d slices of %d tweets (the paper has %d)", len(index), cut.size, PAPER_SLICES)
    return index


def _owned_by_slices(name: str) -> bool:
    """Whether a folder entry is one :func:`build_slices` writes (a slice folder or the index)."""
    return name == INDEX or (name.startswith("slice-") and name[6:].isdigit())


def _cell(value: object) -> str:
    return f"{value:.6f}" if isinstance(value, float) else str(value)
