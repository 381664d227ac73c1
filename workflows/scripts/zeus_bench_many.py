"""Run several ``zeus-bench`` command lines in one Python process (or a few): the imports are paid once.

Usage (the workflow's sweep and recurrence rules)::

    python zeus_bench_many.py [--jobs N] [--log FILE] 'simulate ...' 'simulate ...'

Each argument is one command line (shell-quoted, without the leading ``zeus-bench``). With
``--jobs 1`` (the default) they run in order in this process; the first that fails stops the batch
with its exit status, so a failed batch is a failed job and Snakemake removes every output of it.
With ``--jobs N`` (N > 1) they run on N worker processes forked from this one, each command line
whole on one worker, taken in the order given (put the longest first); the first failure (in
the order given) is the batch's status: a line is handed to a worker only when one is free, so
once a line fails no further one starts (those running end).

A progress line (``INFO zeus_bench_many: zeus-bench commands: 3/10 done (...), 4 s so far, about
9 s left``) is written to standard error as commands finish, at most every 5 s and at the end.
``--log FILE``: the commands' own output (both streams) is appended to ``FILE`` (created if
absent; what it holds is kept) instead, so that under Snakemake the console shows the batch's progress and the log holds
the rest.
"""

from __future__ import annotations

import logging
import os
import shlex
import sys
from collections.abc import Callable, Sequence

MAX_JOBS = 64
"""The most worker processes ``--jobs`` accepts."""

log = logging.getLogger("zeus_bench_many")


def _run_line(line: str) -> int:
    """One command line through ``zeus_bench.cli.main.main``: its exit status."""
    from zeus_bench.cli.main import main

    return main(shlex.split(line))


def _label(line: str) -> str:
    """A command line's short name in the progress lines: its command and where it writes."""
    words = shlex.split(line)
    out = next((words[i + 1] for i, w in enumerate(words[:-1]) if w in ("--out", "--out-dir")), None)
    return f"{words[0]} -> {out}" if words and out else (words[0] if words else "")


def _to_log(path: str | None) -> None:
    """Send this process's standard output and error (the file descriptors) to ``path`` (appended)."""
    if path is None:
        return
    sys.stdout.flush()
    sys.stderr.flush()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)


def _worker_to_log(path: str | None) -> None:
    """:func:`_to_log` in a worker, its streams written a whole line at a time.

    Workers append to one log: a line in one ``write`` stays whole beside the others' (unbuffered
    streams, as ``PYTHONUNBUFFERED`` makes them, write a line's text and its newline apart).
    """
    import io

    _to_log(path)
    if path is None:
        return
    for name, fd in (("stdout", 1), ("stderr", 2)):
        raw = io.FileIO(fd, "w", closefd=False)
        stream = io.TextIOWrapper(
            io.BufferedWriter(raw), encoding="utf-8", errors="backslashreplace", line_buffering=True
        )
        setattr(sys, name, stream)


def run_many(command_lines: Sequence[str], jobs: int = 1, log_path: str | None = None) -> int:
    """Run each command line through ``zeus_bench.cli.main.main``; return the first non-zero status.

    ``jobs``: worker processes (1: in this process, in order); ``log_path``: where the commands'
    output goes (None: this process's streams). Progress lines go to :data:`log`.
    """
    from zeus_bench.core.progress import Progress

    progress = Progress("zeus-bench commands", len(command_lines), logger=log)
    if jobs <= 1 or len(command_lines) <= 1:
        saved = (os.dup(1), os.dup(2)) if log_path is not None else None
        try:
            for line in command_lines:
                _to_log(log_path)
                try:
                    status = _run_line(line)
                finally:
                    if saved is not None:
                        sys.stdout.flush()
                        sys.stderr.flush()
                        os.dup2(saved[0], 1)
                        os.dup2(saved[1], 2)
                progress.done(1, _label(line))
                if status:
                    return status
            return 0
        finally:
            if saved is not None:
                os.close(saved[0])
                os.close(saved[1])
    return _run_pool(command_lines, min(jobs, len(command_lines)), log_path, progress.done)


def _run_pool(
    command_lines: Sequence[str], jobs: int, log_path: str | None, done: Callable[[int, str], None]
) -> int:
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
    with ProcessPoolExecutor(
        max_workers=jobs,
        mp_context=multiprocessing.get_context("fork"),
        initializer=_worker_to_log,
        initargs=(log_path,),
    ) as pool:
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
                i = running.pop(f)
                statuses[i] = status = f.result()
                done(1, _label(command_lines[i]))
                failed = failed or bool(status)
                if not failed:
                    hand_out()
    return next((statuses[i] for i in sorted(statuses) if statuses[i]), 0)


def _option(args: list[str], name: str) -> tuple[str | None, list[str]]:
    """The value of the leading option ``name`` (``--name V`` or ``--name=V``) and the words after it."""
    if args and args[0].startswith(f"{name}="):
        return args[0].partition("=")[2], args[1:]
    if args and args[0] == name:
        return (args[1] if len(args) > 1 else ""), args[2:]
    return None, args


def main(argv: Sequence[str]) -> int:
    """Parse ``[--jobs N] [--log FILE] LINE...`` and run the lines; 2 with one line on stderr for bad options."""
    args = list(argv)
    jobs, log_path = 1, None
    while args and args[0].split("=")[0] in ("--jobs", "--log"):
        name = args[0].split("=")[0]
        value, args = _option(args, name)
        assert value is not None
        if name == "--jobs":
            if not value.isdigit() or not 1 <= int(value) <= MAX_JOBS:
                print(f"zeus_bench_many.py: error: --jobs must be an integer in 1..{MAX_JOBS}, got {value!r}", file=sys.stderr)  # fmt: skip
                return 2
            jobs = int(value)
        else:
            try:
                open(value, "a").close()  # created if absent (appended to: nothing in it is lost)
            except OSError as exc:
                print(f"zeus_bench_many.py: error: --log {value}: {exc.strerror or exc}", file=sys.stderr)
                return 2
            log_path = value
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False  # (main() of each command configures the root logger for its own lines)
    return run_many(args, jobs, log_path)


if __name__ == "__main__":
    from zeus_bench.core.entry import exit_command  # (no numpy: the first line chooses the threads)

    exit_command(main(sys.argv[1:]))
