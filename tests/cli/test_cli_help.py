"""Every subcommand and option of zeus-bench has help text (issue 23)."""

from __future__ import annotations

import argparse
import re

from zeus_bench.cli.main import build_parser


def _walk(parser: argparse.ArgumentParser, path: str):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield f"{path} {name}", None, helps.get(name), sub
                yield from _walk(sub, f"{path} {name}")
        else:
            yield path, action, action.help, parser


def test_every_subcommand_and_option_has_help_text():
    missing = []
    for path, action, text, sub in _walk(build_parser(), "zeus-bench"):
        if action is None:
            if not text or not sub.description:
                missing.append(f"{path}: {'no help' if not text else 'no description'}")
        elif not text and action.help is not argparse.SUPPRESS:
            missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    assert not missing, "\n".join(missing)


def test_help_text_has_no_raw_markup():
    for path, _, _, sub in _walk(build_parser(), "zeus-bench"):
        text = sub.format_help()
        assert "``" not in text, f"{path}: raw double backticks in --help"


def test_simulate_help_lists_the_registered_policies():
    from zeus_bench.sim.policies import POLICIES

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    text = sub.choices["simulate"].format_help()
    text = re.sub(r"-\s+", "-", " ".join(text.split()))  # argparse wraps lines at hyphens
    assert "registered: " in text
    for name in POLICIES:
        assert name in text, name
