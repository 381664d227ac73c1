"""A command line naming a subcommand imports its command module alone (zeus_bench.cli.main.COMMANDS)."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys

from zeus_bench.cli.main import COMMAND_MODULES, COMMANDS, build_parser


def test_commands_name_every_subcommand_of_every_module() -> None:
    found: dict[str, str] = {}
    for name in COMMAND_MODULES:
        sub = argparse.ArgumentParser().add_subparsers()
        importlib.import_module(name).register(sub)
        found.update(dict.fromkeys(sub.choices, name))
    assert found == COMMANDS


def test_a_named_command_builds_its_module_only() -> None:
    parser = build_parser("simulate")
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == {"simulate", "summarize", "synth-arrivals"}
    every = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(every.choices) == set(COMMANDS)
    unknown = next(a for a in build_parser("no-such")._actions if isinstance(a, argparse._SubParsersAction))
    assert set(unknown.choices) == set(COMMANDS)


def test_simulate_help_imports_no_other_command_module() -> None:
    code = (
        "import sys; from zeus_bench.cli.main import main; main(['simulate', '--help']); "
        "print(' '.join(sorted(m for m in sys.modules if m.startswith('zeus_bench.cli.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = set(out.strip().splitlines()[-1].split())
    assert "zeus_bench.cli.sim" in loaded
    assert not loaded & {
        "zeus_bench.cli.capriccio",
        "zeus_bench.cli.sweep",
        "zeus_bench.cli.gpu",
        "zeus_bench.cli.study",
    }


def test_the_entry_helpers_import_no_numpy() -> None:
    """Entry points import ``exit_command`` before their command runs; a command that starts numpy
    with one thread (NO_BLAS_COMMANDS) must still find numpy unimported then."""
    code = "import sys, zeus_bench.cli.main, zeus_bench.core.entry; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False"]
