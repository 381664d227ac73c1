"""Entry point of ``zeus-bench``: one parser, subcommands contributed by command modules.

Each module listed in :data:`COMMAND_MODULES` has ``register(subparsers)``, which adds its
subcommands and sets ``func`` on them. Modules must keep heavy imports (torch, NVML, matplotlib)
inside their handlers so that ``zeus-bench --help`` stays fast and the core runs without torch.

Any :class:`~zeus_bench.core.errors.ZeusBenchError` becomes one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from zeus_bench import __version__
from zeus_bench.core.errors import ZeusBenchError

COMMAND_MODULES: tuple[str, ...] = (
    "zeus_bench.cli.traces",
    "zeus_bench.cli.sweep",
    "zeus_bench.cli.analysis",
    "zeus_bench.cli.fetch",
    "zeus_bench.cli.gpu",
    "zeus_bench.cli.measure",
    "zeus_bench.cli.sim",
    "zeus_bench.cli.arena",
    "zeus_bench.cli.study",
    "zeus_bench.cli.capriccio",
    "zeus_bench.cli.validate",
)

#: The module of each subcommand: a command line naming one imports that module alone (start-up:
#: the other modules' imports are not paid); ``tests/core/test_cli_lazy.py`` checks it against them.
COMMANDS: dict[str, str] = {
    "traces": "zeus_bench.cli.traces",
    "sweep": "zeus_bench.cli.sweep",
    "sweep-merge": "zeus_bench.cli.sweep",
    "project": "zeus_bench.cli.sweep",
    "potential": "zeus_bench.cli.analysis",
    "pareto": "zeus_bench.cli.analysis",
    "fetch-traces": "zeus_bench.cli.fetch",
    "gpu": "zeus_bench.cli.gpu",
    "gpud": "zeus_bench.cli.gpu",
    "simulate": "zeus_bench.cli.sim",
    "summarize": "zeus_bench.cli.sim",
    "synth-arrivals": "zeus_bench.cli.sim",
    "arena": "zeus_bench.cli.arena",
    "study": "zeus_bench.cli.study",
    "capriccio": "zeus_bench.cli.capriccio",
    "measure": "zeus_bench.cli.measure",
    "validate": "zeus_bench.cli.validate",
}

log = logging.getLogger("zeus_bench")


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line and exit 2."""

    def error(self, message: str) -> NoReturn:
        """Print one line naming the problem and exit 2."""
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """Build the ``zeus-bench`` parser: every subcommand, or only ``command``'s module's (:data:`COMMANDS`)."""
    parser = _Parser(prog="zeus-bench", description="Measure and cut the GPU energy of DNN training.")
    parser.add_argument("--version", action="version", version=f"zeus-bench {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output (-vv: debug)")
    parser.add_argument("-q", "--quiet", action="store_true", help="only warnings and errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name in (COMMANDS[command],) if command in COMMANDS else COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    _describe(sub)
    return parser


def _describe(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    """Give every subcommand without a description its one-line help as one (``X --help`` shows it)."""
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, parser in sub.choices.items():
        if not parser.description and helps.get(name):
            parser.description = str(helps[name])[:1].upper() + str(helps[name])[1:] + "."
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                _describe(action)


def _setup_logging(verbose: int, quiet: bool) -> None:
    level = logging.WARNING if quiet else (logging.DEBUG if verbose > 1 else logging.INFO)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)


#: Subcommands that do no linear algebra: for them OpenBLAS (numpy's BLAS) starts no worker
#: threads, whose start-up spins for some 0.05-0.1 s of CPU time while numpy is imported.
NO_BLAS_COMMANDS = frozenset({"simulate"})
#: The environment those subcommands set before numpy and pyarrow are imported (a user's own
#: setting wins): one OpenBLAS thread, and Arrow's CPU pool of one thread (its size follows
#: ``OMP_NUM_THREADS``): its idle workers spun for about 0.09 s of CPU time in the 1,200-job grid
#: (0.78 -> 0.69 s), the wall time the same (the traces are small; the Parquet output has its own thread).
SINGLE_THREAD_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}


def _command(argv: Sequence[str]) -> str | None:
    """The subcommand named in ``argv`` (its first word that is not an option), if any."""
    return next((word for word in argv if not word.startswith("-")), None)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``zeus-bench``; returns the exit status (0 ok, 2 bad input, 130 interrupted)."""
    words = sys.argv[1:] if argv is None else list(argv)
    command = _command(words)
    if command in NO_BLAS_COMMANDS and "numpy" not in sys.modules:  # (pyarrow imports numpy)
        for name, value in SINGLE_THREAD_ENV.items():
            os.environ.setdefault(name, value)  # a user's own setting wins
    parser = build_parser(command)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version and usage errors (status 2)
        return exc.code if isinstance(exc.code, int) else 2
    _setup_logging(args.verbose, args.quiet)
    try:
        status = args.func(args)
    except ZeusBenchError as exc:
        print(f"zeus-bench: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("zeus-bench: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except OSError as exc:
        if exc.filename is None:
            raise  # not a path the user gave: a bug, keep the traceback
        # A path the user named that cannot be read or written (read-only place, a folder where a
        # file belongs, ...), met past the up-front checks: one line, like any bad input.
        where = exc.filename if exc.filename2 is None else f"{exc.filename} -> {exc.filename2}"
        print(f"zeus-bench: error: {where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return int(status or 0)


def run() -> NoReturn:
    """Console-script entry point."""
    from zeus_bench.core.entry import exit_command  # (no numpy: main chooses the threads first)

    exit_command(main())


if __name__ == "__main__":
    run()
