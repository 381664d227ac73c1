"""Run several ``zeus-bench`` command lines in one Python process: the imports are paid once.

Usage (the workflow's sweep rules): ``python zeus_bench_many.py 'simulate ...' 'simulate ...'``.
Each argument is one command line (shell-quoted, without the leading ``zeus-bench``). They run
in order; the first that fails stops the batch with its exit status, so a failed batch is a
failed job and Snakemake removes every output of it.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence


def run_many(command_lines: Sequence[str]) -> int:
    """Run each command line through ``zeus_bench.cli.main.main``; return the first non-zero status."""
    from tqdm import tqdm

    from zeus_bench.cli.main import main

    # A bar on a terminal only (disable=None): under Snakemake stderr is the rule's log file.
    for line in tqdm(command_lines, desc="zeus-bench commands", unit="command", disable=None, leave=False):
        status = main(shlex.split(line))
        if status:
            return status
    return 0


if __name__ == "__main__":
    from zeus_bench.core.entry import exit_command

    exit_command(run_many(sys.argv[1:]))
