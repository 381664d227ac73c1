"""Entry-point helpers shared by every command-line program: argument types, bounds, the exit.

The console script (``zeus_bench.cli``), the simulator's and the analysis' ``python -m`` programs
and the workflow's scripts take these from here, the lowest floor, so that no floor imports the CLI.
It imports no numpy (what needs it is imported where it is used): an entry point imports it before
its command has chosen its threads (``zeus_bench.cli.main.NO_BLAS_COMMANDS``), which must happen
before numpy is first imported.
"""

from __future__ import annotations

import argparse
import gc
import math
import re
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

from zeus_bench.core.errors import ConfigError
from zeus_bench.core.fsutil import check_writable_file

#: A number as a user writes one: ASCII digits, an optional sign, decimal point and exponent
#: (``float()`` also takes ``1_0``, ``nan``, ``inf``, ``infinity``, spaces around it and other
#: scripts' digits, which no option means).
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]{1,4})?")
#: What ``allow_inf`` takes as infinity (beta's "no early stopping").
_INFINITY = ("inf", "+inf")


def parse_float(text: str, allow_inf: bool = False) -> float:
    """``text`` as a finite number if it is written as a decimal one (the one float parser of options).

    ``allow_inf``: ``inf`` is taken too (an option whose infinity means something, e.g. beta).

    Raises:
        ValueError: anything else (``nan``, ``inf``, ``1_0``, spaces, ``0x10``, other scripts'
            digits, a value that overflows to infinity such as ``1e999``).
    """
    if allow_inf and text in _INFINITY:
        return math.inf
    if not _NUMBER.fullmatch(text):
        raise ValueError(f"not a number: {text!r}")
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"not a finite number: {text!r}")
    return value


def float_arg(what: str, minimum: float | None = None) -> Callable[[str], float]:
    """Build an argparse type: a finite number (:func:`parse_float`), ``>= minimum`` when given."""

    def parse(text: str) -> float:
        try:
            value = parse_float(text)
        except ValueError:
            bound = "" if minimum is None else f" >= {minimum:g}"
            raise argparse.ArgumentTypeError(f"{what} must be a finite number{bound}, got {text!r}") from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"{what} must be a finite number >= {minimum:g}, got {text!r}")
        return value

    return parse


def _checked_float(text: str, check: Callable[[float], float], allow_inf: bool = False) -> float:
    """``check(parse_float(text))``, its errors as argparse's (one line, exit status 2)."""
    try:
        return check(parse_float(text, allow_inf))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def eta_arg(text: str) -> float:
    """Argparse type: eta in [0, 1] (:func:`~zeus_bench.core.cost.check_eta`)."""
    from zeus_bench.core.cost import check_eta  # (here: this module stays free of numpy, see exit_command)

    return _checked_float(text, check_eta)


def beta_arg(text: str) -> float:
    """Argparse type: beta > 0, ``inf`` turns early stopping off (:func:`~zeus_bench.core.cost.check_beta`)."""
    from zeus_bench.core.cost import check_beta

    return _checked_float(text, check_beta, allow_inf=True)


#: The most seeds one command accepts (each seed replays every job): far beyond any useful study
#: (issue 14's memory check runs 20,000); simulate streams its rows, so memory stays bounded, and
#: the bound keeps the output (about 70 rows per seed and job) and the run time finite.
MAX_SEEDS = 100_000
#: The most recurrences per job a replay accepts (the paper's jobs recur 2 x |B| x |P| <= ~100 times).
MAX_RECURRENCES = 100_000
#: The most tries (one row each) one replay command accepts: seeds, recurrences, jobs and policies
#: are each bounded, their product too. At the replay's some 70,000 tries/s per core (simulate,
#: Zeus on SQuAD) this is about 25 CPU-minutes and some 10 GB of rows; the committed studies need
#: under 2 million (issue 14's memory check: 20,000 seeds x ~100 recurrences).
MAX_TRIES = 100_000_000


def check_tries(tries: int, sizes: str) -> None:
    """Refuse, before any replay, work whose product of sizes is beyond :data:`MAX_TRIES`.

    Args:
        tries: The product (the rows the replay would write).
        sizes: What was multiplied, for the message (e.g. ``"50 seeds x 120 recurrences x 4 jobs"``).

    Raises:
        ConfigError: one line naming the sizes and the bound.
    """
    if tries > MAX_TRIES:
        raise ConfigError(
            f"{sizes} is {tries:,} tries; at most {MAX_TRIES:,} are allowed "
            "(fewer seeds, recurrences, workloads or policies)"
        )


#: An integer as a user writes one: ASCII digits, an optional sign (``int()`` also takes ``1_000``,
#: `` 7 `` and other scripts' digits such as ``٣``, which no option means).
_INTEGER = re.compile(r"[+-]?[0-9]{1,30}")
#: The largest seed (NumPy takes any non-negative integer; a 64-bit one is more than enough).
MAX_SEED = 2**63 - 1


def parse_int(text: str) -> int:
    """``text`` as an integer if it is one written in ASCII digits (at most 30).

    Raises:
        ValueError: anything else (underscores, spaces, other scripts' digits, ``1e3``, ``0x10``).
    """
    if not _INTEGER.fullmatch(text):
        raise ValueError(f"not an integer: {text!r}")
    return int(text)


def int_range_arg(text: str, limit: int = MAX_SEEDS) -> list[int]:
    """Parse as argparse type: ``1-10``, ``3`` or ``1,4,7-9`` -> sorted unique non-negative ints.

    An empty range (``""``, ``5-3``) is refused, and so is a range of more than ``limit`` values
    (checked from the bounds, before any list is built).
    """
    bounds: list[tuple[int, int]] = []
    for raw in text.split(","):
        part = raw.strip()
        if not part:
            continue
        lo, sep, hi = part.partition("-")
        try:
            a = parse_int(lo.strip())
            b = parse_int(hi.strip()) if sep else a
        except ValueError:
            raise argparse.ArgumentTypeError(f"not an integer range: {text!r}") from None
        if b < a:
            raise argparse.ArgumentTypeError(f"empty range {part!r}")
        bounds.append((a, b))
    if not bounds:
        raise argparse.ArgumentTypeError(f"empty range {text!r}")
    count = sum(b - a + 1 for a, b in bounds)
    if count > limit:
        raise argparse.ArgumentTypeError(f"{text!r} is {count} values; at most {limit} are allowed")
    return sorted({v for a, b in bounds for v in range(a, b + 1)})


def bounded_int_arg(minimum: int, maximum: int, what: str, auto: bool = False) -> Callable[[str], int | None]:
    """Build an argparse type: an integer in [minimum, maximum] (``auto`` -> None when allowed)."""

    def parse(text: str) -> int | None:
        if auto and text == "auto":
            return None
        try:
            n = parse_int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"not {'auto or ' if auto else ''}an integer: {text!r}"
            ) from None
        if not minimum <= n <= maximum:
            raise argparse.ArgumentTypeError(f"{what} must be in [{minimum}, {maximum}], got {n}")
        return n

    return parse


def add_int_option(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    flag: str,
    bounds: tuple[int, int],
    default: int | None,
    help: str | None = None,
    metavar: str | None = None,
    what: str | None = None,
    auto: bool = False,
) -> argparse.Action:
    """Add ``flag``: an integer in ``bounds`` (:func:`bounded_int_arg`; ``what`` names it in the error, default the flag)."""
    kind = bounded_int_arg(bounds[0], bounds[1], what or flag, auto=auto)
    return parser.add_argument(flag, type=kind, default=default, metavar=metavar, help=help)


#: Bound of --jobs (worker processes): more is a typo.
MAX_JOBS = 1024


def add_jobs_arg(parser: argparse.ArgumentParser, help: str = "worker processes (default 1)") -> None:
    """Add ``--jobs N``: worker processes, in [1, :data:`MAX_JOBS`], default 1."""
    add_int_option(parser, "--jobs", (1, MAX_JOBS), 1, help, metavar="N")


def seed_arg(text: str) -> int:
    """Argparse type: a random seed, an integer in [0, :data:`MAX_SEED`] (NumPy refuses negative ones)."""
    return int(bounded_int_arg(0, MAX_SEED, "seed")(text))  # type: ignore[arg-type]


def check_out(path: Path | None, suffixes: tuple[str, ...] = (), what: str = "--out") -> None:
    """Refuse, before any work, an output that cannot be written or has the wrong suffix.

    Raises:
        ConfigError: one line naming the output and the problem.
    """
    if path is not None:
        check_writable_file(path, suffixes, what)


#: Attribute set on the argparse action of every output folder (the tests walk the parser for it).
OUTPUT_FOLDER_MARK = "zeus_bench_output_folder"


def add_output_dir_arg(
    parser: argparse.ArgumentParser, flag: str, help: str, metavar: str = "DIR", required: bool = True
) -> argparse.Action:
    """Add an output-folder option (written through :func:`~zeus_bench.core.fsutil.output_dir`) and ``--force``.

    The folder must be absent or empty unless ``--force`` is given; then the command replaces only
    the files it writes. Every command that writes a folder declares it with this function.
    """
    action = parser.add_argument(flag, type=Path, required=required, metavar=metavar, help=help)
    setattr(action, OUTPUT_FOLDER_MARK, True)
    if not any("--force" in a.option_strings for a in parser._actions):
        parser.add_argument(
            "--force",
            action="store_true",
            help="write into an existing non-empty output folder, replacing only the files this command writes",
        )
    return action


def require_extra(module: str, extra: str, purpose: str) -> None:
    """Refuse a command whose optional dependency is missing, naming the extra that installs it.

    Raises:
        ConfigError: ``module`` cannot be imported.
    """
    import importlib

    try:
        importlib.import_module(module)
    except ImportError:
        raise ConfigError(
            f"{purpose} needs {module}, which is not installed: pip install -e '.[{extra}]'"
        ) from None


#: Allocations between two of the youngest generation's collections while a long command runs
#: (Python's default: 700); the replay makes many small objects that live on.
BUSY_THRESHOLD = 7000


@contextmanager
def busy_heap() -> Iterator[None]:
    """Fewer, shorter cyclic garbage collections while a long command runs; all restored after.

    The objects made so far (the modules imported, the inputs read) are frozen: a full collection
    while the command runs does not walk them again (it took some 30-60 ms in ``zeus-bench
    simulate``'s grid), and the youngest generation is collected every :data:`BUSY_THRESHOLD`
    allocations. Unfrozen at the end, so a library caller's process collects them as before.
    """
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(BUSY_THRESHOLD, threshold[0]), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def exit_command(status: int) -> NoReturn:
    """End a command-line process with ``status``, without the interpreter's final collections.

    At exit Python runs its cyclic garbage collector over every object left (about 0.1 s once
    pandas and matplotlib are imported, in each of the workflow's processes). Freezing them
    first skips that work; atexit handlers and module teardown still run. For entry points only
    (``python -m ...``, console scripts): their outputs are written and closed before they return,
    so no finaliser of unreachable objects is needed. Never for a library caller's process.
    """
    gc.freeze()
    sys.exit(status)
