"""``zeus-bench capriccio``: cut Sentiment140 into the Capriccio slices of the paper's drift experiment."""

from __future__ import annotations

import argparse
import datetime as dt
from pathlib import Path
from typing import Any

from zeus_bench.core.entry import parse_int, seed_arg

MAX_SLICE = 10_000_000


def _positive(text: str) -> int:
    try:
        value = parse_int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= value <= MAX_SLICE:
        raise argparse.ArgumentTypeError(f"must be in [1, {MAX_SLICE}], got {value}")
    return value


def _fraction(text: str) -> float:
    from zeus_bench.core.entry import parse_float

    try:
        value = parse_float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"must be in (0, 1), got {text}")
    return value


def _day(text: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date YYYY-MM-DD: {text!r}") from None


def register(sub: Any) -> None:
    """Add ``capriccio``."""
    from zeus_bench.core.entry import add_output_dir_arg
    from zeus_bench.traces.capriccio import PAPER_SEED, PAPER_SLICE_SIZE, PAPER_START, PAPER_TRAIN_FRACTION

    p = sub.add_parser(
        "capriccio",
        help="cut the Sentiment140 CSV into Capriccio's overlapping time slices (the paper's drift experiment)",
        description=(
            "Sort the Sentiment140 training tweets by time and cut them with a window moving one day at a time "
            "from 2009-05-01: slices of 500,000 tweets (425,000 train / 75,000 validation), 38 on the full file, "
            "as the Zeus paper's Capriccio. Each slice is a folder in the Sentiment140 CSV format that the "
            "sentiment140 workload reads; slices.csv indexes them. The defaults are the paper's."
        ),
    )
    p.add_argument(
        "--sentiment140",
        type=Path,
        required=True,
        metavar="CSV",
        help="training.1600000.processed.noemoticon.csv",
    )
    add_output_dir_arg(p, "--out", "folder of the slices (absent or empty, unless --force)")
    p.add_argument(
        "--size", type=_positive, default=PAPER_SLICE_SIZE, help="tweets per slice (default 500000)"
    )
    p.add_argument(
        "--train-fraction", type=_fraction, default=PAPER_TRAIN_FRACTION, help="training share (0.85)"
    )
    p.add_argument("--start", type=_day, default=PAPER_START, help="first day of the window (2009-05-01)")
    p.add_argument("--stride-days", type=_positive, default=1, help="days the window moves per slice (1)")
    p.add_argument(
        "--seed", type=seed_arg, default=PAPER_SEED, help="seed of each slice's train/validation split (42)"
    )
    p.add_argument("--vocab", type=Path, default=None, help="WordPiece vocab.txt to copy into each slice")
    p.add_argument("--max-slices", type=_positive, default=None, help="keep only the first N slices")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from zeus_bench.core.fsutil import check_output_dir
    from zeus_bench.traces.capriccio import INDEX, SliceSettings, build_slices

    check_output_dir(args.out, args.force, "--out")
    cut = SliceSettings(
        size=args.size,
        train_fraction=args.train_fraction,
        start=args.start,
        stride_days=args.stride_days,
        seed=args.seed,
        max_slices=args.max_slices,
    )
    index = build_slices(args.sentiment140, args.out, cut, vocab=args.vocab, force=args.force)
    print(f"{len(index)} slices of {args.size} tweets in {args.out} (index {args.out / INDEX})")
    return 0
