"""Run several ``zeus-bench`` command lines in one Python process (or a few): the imports are paid once.

Usage (the workflow's sweep and recurrence rules)::

    python zeus_bench_many.py [--jobs N] 'simulate ...' 'simulate ...'

Each argument is one command line (shell-quoted, without the leading ``zeus-bench``). With
``--jobs 1`` (the default) they run in order in this process; the first that fails stops the batch
with its exit status, so a failed batch is a failed job and Snakemake removes every output of it.
With ``--jobs N`` (N > 1) they run on N worker processes forked from this one, each command line
whole on one worker, taken in the order given (put the longest first); the first failure (in
the order given) is the batch's status: a line is handed to a worker only when one is free, so
once a line fails no further one starts (those running end).
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Callable, Sequence

MAX_JOBS = 64
"""The most worker processes ``--jobs`` accepts."""


def _run_line(line: str) -> int:
    """One command line through ``zeus_bench.cli.main.main``: its exit status."""
    from zeus_bench.cli.main import main

    return main(shlex.split(line))


def run_many(command_lines: Sequence[str], jobs: int = 1) -> int:
    """Run each command line through ``zeus_bench.cli.main.main``; return the first non-zero status.

    ``jobs``: worker processes (1: in this process, in order).
    """
    from tqdm import tqdm

    # A bar on a terminal only (disable=None): under Snakemake stderr is the rule's log file.
    bar = tqdm(
        total=len(command_lines), desc="zeus-bench commands", unit="command", disable=None, leave=False
    )
    with bar:
        if jobs <= 1 or len(command_lines) <= 1:
            for line in command_lines:
                status = _run_line(line)
                bar.update()
                if status:
                    return status
            return 0
        return _run_pool(command_lines, min(jobs, len(command_lines)), bar.update)


def _run_pool(command_lines: Sequence[str], jobs: int, done: Callable[[], object]) -> int:
    """:func:`run_many` on ``jobs`` forked workers: the first failure in the order given, else 0.

    A line is handed to a worker only when one is free, so once a line fails no further one starts
    (those running end).
    """
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait

    import zeus_bench.cli.main  # noqa: F401  (imported once here; the forked workers inherit it)

    statuses: dict[int, int] = {}
    lines = iter(enumerate(command_lines))
    # fork: the workers start with this process's imports (the point of the batch)
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        running: dict[Future[int], int] = {}

        def hand_out() -> None:
            for i, line in lines:  # the next line, if any
                running[pool.submit(_run_line, line)] = i
                return

        for _ in range(jobs):
            hand_out()
        failed = False
        while running:
            finished, _ = wait(running, return_when=FIRST_COMPLETED)
            for f in finished:
                statuses[running.pop(f)] = status = f.result()
                done()
                failed = failed or bool(status)
                if not failed:
                    hand_out()
    return next((statuses[i] for i in sorted(statuses) if statuses[i]), 0)


def main(argv: Sequence[str]) -> int:
    """Parse ``[--jobs N] LINE...`` and run the lines; 2 with one line on stderr for a bad ``--jobs``."""
    args = list(argv)
    jobs = 1
    if args[:1] == ["--jobs"] or (args and args[0].startswith("--jobs=")):
        value = args[0].partition("=")[2] if "=" in args[0] else (args[1] if len(args) > 1 else "")
        args = args[1:] if "=" in args[0] else args[2:]
        if not value.isdigit() or not 1 <= int(value) <= MAX_JOBS:
            print(
                f"zeus_bench_many.py: error: --jobs must be an integer in 1..{MAX_JOBS}, got {value!r}",
                file=sys.stderr,
            )
            return 2
        jobs = int(value)
    return run_many(args, jobs)


if __name__ == "__main__":
    from zeus_bench.core.entry import exit_command

    exit_command(main(sys.argv[1:]))
