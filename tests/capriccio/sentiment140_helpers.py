"""A small synthetic Sentiment140-format CSV (made here: six columns, latin-1, Twitter-style dates)."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path

import numpy as np

GOOD = ("love", "great", "happy", "fun", "nice", "awesome")
BAD = ("hate", "sad", "awful", "bored", "tired", "sick")
FILLER = ("today", "work", "the", "movie", "going", "home", "lunch", "rain", "friends", "music")


def write_sentiment140(
    path: Path,
    days: int = 40,
    per_day: tuple[int, int] = (20, 40),
    seed: int = 0,
    first: dt.date = dt.date(2009, 4, 25),
    skip: tuple[int, ...] = (9,),
) -> Path:
    """Write tweets from ``first`` over ``days`` days (none on the days in ``skip``), in shuffled order.

    Polarity 0 or 4; the text holds words of its polarity, and the mix of words drifts with the days.
    """
    rng = np.random.default_rng(seed)
    rows = []
    for d in range(days):
        if d in skip:
            continue
        day = dt.datetime.combine(first + dt.timedelta(days=d), dt.time())
        for _ in range(int(rng.integers(per_day[0], per_day[1] + 1))):
            t = day + dt.timedelta(seconds=int(rng.integers(0, 86400)))
            pol = "4" if rng.random() < 0.5 else "0"
            words = list(rng.choice(GOOD if pol == "4" else BAD, size=2)) + list(rng.choice(FILLER, size=4))
            if rng.random() < 0.1 + 0.3 * d / days:  # drift: more noisy tweets as the days go
                words[0] = str(rng.choice(BAD if pol == "4" else GOOD))
            stamp = t.strftime("%a %b %d %H:%M:%S PDT %Y")
            rows.append(
                [
                    pol,
                    str(int(rng.integers(1e9, 2e9))),
                    stamp,
                    "NO_QUERY",
                    f"user{int(rng.integers(100))}",
                    " ".join(words),
                ]
            )
    order = rng.permutation(len(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="latin-1", newline="") as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL).writerows([rows[i] for i in order])
    return path
