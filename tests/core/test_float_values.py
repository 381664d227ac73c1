"""Numbers given on the command line go through one strict parser (issue 36, class 4).

Python's ``float()`` takes ``nan``, ``inf``, ``infinity``, ``1_0``, spaces around the digits and
other scripts' digits. The parser is walked: every option whose type yields a float (or a list
of them) refuses each of those, so a new option that uses ``float`` is caught; only beta's options
take ``inf`` (no early stopping).
"""

from __future__ import annotations

import argparse
import math

import pytest

from tests.core.test_parsed_values import _typed_actions
from zeus_bench.cli.main import main
from zeus_bench.core.entry import float_arg, parse_float
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.rules import check_horizon, check_noise

NOT_NUMBERS = [
    "nan",
    "NaN",
    "-nan",
    "infinity",
    "-inf",
    "1_0",
    "0_5",
    " 0.5",
    "0.5 ",
    "٣",
    "０.5",
    "0x1",
    "1e999",
    "",
]
#: The options whose infinity means something: beta (no early stopping).
TAKE_INF = {"--beta", "--betas"}


def _yields_floats(action: argparse.Action) -> bool:
    try:
        value = action.type("0.5")  # type: ignore[misc]
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return False
    return isinstance(value, float) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, float) for v in value)
    )


FLOATS = [(where, action) for where, action in _typed_actions() if _yields_floats(action)]


def test_the_walk_finds_the_number_options() -> None:
    flags = {where.split()[-1] for where, _ in FLOATS}
    assert {
        "--eta",
        "--beta",
        "--prior-mean",
        "--overlap",
        "--warmup-s",
        "--rel-ci",
        "--train-fraction",
    } <= flags
    assert len(FLOATS) >= 20


@pytest.mark.parametrize("text", NOT_NUMBERS)
@pytest.mark.parametrize(("where", "action"), FLOATS, ids=[w for w, _ in FLOATS])
def test_every_number_option_refuses_what_float_takes_but_no_user_means(
    where: str, action: argparse.Action, text: str
) -> None:
    if isinstance(action.type("0.5"), list) and text.strip() != text:  # type: ignore[misc]
        # A comma-separated list strips the spaces around its items ("0.5, 1"): the item is read
        # as without them, never as something else.
        assert action.type(text) == action.type(text.strip())  # type: ignore[misc]
        return
    with pytest.raises(argparse.ArgumentTypeError):
        result = action.type(text)  # type: ignore[misc]
        pytest.fail(f"{where} took {text!r} as {result!r}")


@pytest.mark.parametrize(("where", "action"), FLOATS, ids=[w for w, _ in FLOATS])
def test_only_betas_options_take_inf(where: str, action: argparse.Action) -> None:
    if where.split()[-1] in TAKE_INF:
        got = action.type("inf")  # type: ignore[misc]
        assert got == math.inf or got == [math.inf]
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            action.type("inf")  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "value"), [("0.5", 0.5), ("-2", -2.0), ("1e-3", 0.001), (".5", 0.5), ("+3.", 3.0)]
)
def test_plain_numbers_are_taken(text: str, value: float) -> None:
    assert parse_float(text) == value
    assert float_arg("--x")(text) == value


def test_a_bound_and_the_message_name_the_option() -> None:
    with pytest.raises(
        argparse.ArgumentTypeError, match=r"--carbon-price must be a finite number >= 0, got '-1'"
    ):
        float_arg("--carbon-price", minimum=0.0)("-1")
    with pytest.raises(argparse.ArgumentTypeError, match=r"--overlap must be a finite number, got 'nan'"):
        float_arg("--overlap")("nan")
    assert parse_float("inf", allow_inf=True) == math.inf
    with pytest.raises(ValueError):
        parse_float("nan", allow_inf=True)


@pytest.mark.parametrize("text", ["nan", "1_0", "inf", " 0.5"])
def test_the_command_exits_2_with_one_line_naming_the_flag(
    text: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["synth-arrivals", "--overlap", text, "--out", "never-written.csv"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "--overlap" in err[-1] and repr(text) in err[-1]
    assert "Traceback" not in "\n".join(err)


@pytest.mark.parametrize("text", ["1_0x", "nanx", "infx", "0_5x"])
def test_a_horizon_factor_is_parsed_strictly(text: str) -> None:
    with pytest.raises(ConfigError, match="--horizon"):
        check_horizon(text)
    assert check_horizon("0.5x") == "0.5x"


@pytest.mark.parametrize("text", ["0_0", "0_05", " 0.05"])
def test_a_noise_level_is_parsed_strictly(text: str) -> None:
    with pytest.raises(ConfigError, match="--noise"):
        check_noise(text)
    assert check_noise("0.05") == 0.05


def test_the_drift_scenarios_numbers_are_parsed_strictly(capsys: pytest.CaptureFixture[str]) -> None:
    from zeus_bench.sim.scenarios.drift import main as drift_main

    for flag, text in (("--factor", "1_0"), ("--factor", "nan"), ("--eta", "0_5")):
        args = ["--traces", "x", "--gpu", "g", "--scenario", "step", "--out", "o.csv", flag, text]
        with pytest.raises(SystemExit) as exc:
            drift_main(args)
        assert exc.value.code == 2
        assert flag in capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("script", "flag", "text"),
    [
        ("validate_online.py", "--eta", "0_5"),
        ("validate_online.py", "--deadline-s", "nan"),
        ("validate_online.py", "--profile-s", "inf"),
        ("capriccio_train.py", "--target", "nan"),
        ("capriccio_train.py", "--beta", "1_0"),
        ("capriccio_train.py", "--profile-s", " 2"),
    ],
)
def test_the_workflow_scripts_numbers_are_parsed_strictly(script: str, flag: str, text: str) -> None:
    import os
    import subprocess
    import sys
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    out = subprocess.run(
        [sys.executable, str(repo / "workflows" / "scripts" / script), flag, text],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 2
    last = out.stderr.strip().splitlines()[-1]
    assert flag in last and repr(text) in last and "Traceback" not in out.stderr
