"""Values are parsed, not shape-checked, and checked against what exists (issue 36, classes 4, 5 and 8).

The parser is walked: every option whose type yields integers refuses what only looks like one
(``1_0``, `` 7``, other scripts' digits, ``1e3``), and every seed option refuses a negative seed,
so a new option is caught. ``--set`` values are type-checked against the policy's constants and
refused when the policy does not read them under the horizon; GPU names in the study's options
must have traces; every seed range of the main config is checked, wherever it sits; the product
of separately bounded sizes is bounded before any replay.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.studies.test_arena import two_gpu_traces
from zeus_bench.cli.configcheck import check_main_config
from zeus_bench.cli.main import build_parser, main
from zeus_bench.core.entry import MAX_TRIES, parse_int
from zeus_bench.core.errors import ConfigError
from zeus_bench.studies.crossfit import variant

REPO = Path(__file__).resolve().parents[2]
LOOKALIKES = ["1_0", "٧", "１", "1e3", "0x10", "+-7", "7.0", "", "9" * 31]


def _typed_actions() -> list[tuple[str, argparse.Action]]:
    found = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])
            elif action.type is not None:
                found.append((" ".join([*words, *action.option_strings[:1]]) or action.dest, action))

    walk(build_parser(), [])
    return found


def _yields_ints(action: argparse.Action) -> bool:
    try:
        value = action.type("7")  # type: ignore[misc]
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return False
    return (isinstance(value, int) and not isinstance(value, bool)) or (
        isinstance(value, list) and bool(value) and all(isinstance(v, int) for v in value)
    )


def test_no_option_takes_pythons_int() -> None:
    offenders = [where for where, action in _typed_actions() if action.type is int]
    assert offenders == [], "use bounded_int_arg / seed_arg / int_range_arg (zeus_bench.core.entry)"


@pytest.mark.parametrize("text", LOOKALIKES)
def test_every_integer_option_refuses_what_only_looks_like_an_integer(text: str) -> None:
    ints = [(w, a) for w, a in _typed_actions() if _yields_ints(a)]
    assert len(ints) >= 15  # the walk found the integer options
    for where, action in ints:
        with pytest.raises((argparse.ArgumentTypeError, ValueError)):
            result = action.type(text)  # type: ignore[misc]
            pytest.fail(f"{where} took {text!r} as {result!r}")


def test_every_seed_option_refuses_a_negative_seed() -> None:
    seeds = [(w, a) for w, a in _typed_actions() if "seed" in a.dest and _yields_ints(a)]
    assert {w.split()[-1] for w, _ in seeds} == {"--seed", "--seeds", "--replicate-seeds"}
    for where, action in seeds:
        with pytest.raises((argparse.ArgumentTypeError, ValueError)):
            action.type("-1")  # type: ignore[misc]
            pytest.fail(f"{where} took -1")


def test_parse_int_takes_plain_integers() -> None:
    assert [parse_int(t) for t in ("0", "7", "-3", "+12", "0007")] == [0, 7, -3, 12, 7]


def test_a_negative_seed_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "a.csv"
    assert main(["synth-arrivals", "--workloads", "squad", "--seed", "-1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "seed must be in [0, " in err and not out.exists()


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"horizon": 2.5}, "constant 'horizon' takes int (default 0), got 2.5"),
        ({"horizon": True}, "constant 'horizon' takes int"),
        ({"horizon": "20"}, "constant 'horizon' takes int"),
        ({"margin": "0.2"}, "constant 'margin' takes float"),
        ({"margin": float("inf")}, "constant 'margin' takes float"),
        ({"prune": 1}, "constant 'prune' takes bool"),
        ({"loan": "x"}, "constant 'loan' takes a number or null"),
        ({"predict": 1}, "has no constant 'predict'"),
        ({"_init_jit": 1}, "has no constant '_init_jit'"),
        ({"nope": 1}, "has no constant 'nope'"),
    ],
)
def test_set_values_are_type_checked(setting: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        variant("zeus-plus", setting)


def test_set_values_of_the_right_type_pass() -> None:
    cls = variant("zeus-plus", {"horizon": 20, "margin": 1, "prune": False, "loan": None, "lookahead": 0.5})
    assert (cls.horizon, cls.margin, cls.prune, cls.loan) == (20, 1, False, None)


@pytest.mark.parametrize(
    ("horizon", "item", "ok"),
    [
        ("known", "zeus-plus.horizon=20", False),
        ("50", "zeus-plus.horizon=20", False),
        ("unknown", "zeus-plus.horizon=20", True),
        ("unknown", "zeus-plus-safe.horizon=20", False),  # the anytime budget reads no horizon
        ("known", "zeus-plus.lookahead=0.5", False),
        ("known", "zeus-plus-safe.lookahead=0.5", True),
        ("known", "zeus-plus.margin=0.3", True),
    ],
)
def test_set_without_effect_under_the_horizon_is_refused(
    horizon: str, item: str, ok: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from zeus_bench.cli.arena import _overrides

    if ok:
        assert _overrides([item], horizon)
        return
    with pytest.raises(ConfigError, match=rf"--set {item}: .* does not read .* under --horizon {horizon}"):
        _overrides([item], horizon)


def test_set_twice_is_refused() -> None:
    from zeus_bench.cli.arena import _overrides

    with pytest.raises(ConfigError, match=r"zeus-plus\.margin given twice"):
        _overrides(["zeus-plus.margin=0.3", "zeus-plus.margin=0.4"])


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    return two_gpu_traces(tmp_path / "traces")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--drift-gpus", "v1OO"], "--drift-gpus: GPU 'v1OO' has no --traces v1OO=DIR; did you mean v100?"),
        (["--warm-pairs", "v100:h200"], "--warm-pairs: GPU 'h200' has no --traces h200=DIR"),
        (["--warm-pairs", "v100"], "--warm-pairs: 'v100' is not PRIOR:TARGET"),
        (["--warm-pairs", "a40:a40"], "--warm-pairs: 'a40:a40' is not PRIOR:TARGET"),
        (["--traces", "h100=TINY"], "h100"),
        (["--traces", "v100=TINY"], "--traces: GPU 'v100' given twice"),
    ],
)
def test_study_gpu_names_are_checked(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    argv = ["study", "--traces", f"v100={tiny}", "--traces", f"a40={tiny}", "--seeds", "1"]
    extra = [e.replace("TINY", str(tiny)) for e in extra]
    assert main([*argv, *extra, "--out-dir", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
    assert not (tmp_path / "out").exists()


def _config() -> dict[str, Any]:
    return yaml.safe_load((REPO / "config" / "config.yaml").read_text())


def _seed_keys(node: dict[str, Any], prefix: str = "") -> list[str]:
    keys = []
    for key, value in node.items():
        if key == "seeds":
            keys.append(prefix + key)
        elif isinstance(value, dict):
            keys += _seed_keys(value, f"{prefix}{key}.")
    return keys


def test_every_seed_range_of_the_main_config_is_checked() -> None:
    keys = _seed_keys(_config())
    assert {"seeds", "arena.seeds", "alibaba.seeds", "policy_study.seeds"} <= set(keys)
    for key in keys:
        cfg = _config()
        node = cfg
        *parents, last = key.split(".")
        for p in parents:
            node = node[p]
        node[last] = "9-2"
        with pytest.raises(ConfigError, match=rf"^config\.yaml: {key}: '9-2': empty range"):
            check_main_config(cfg, "config.yaml", REPO / "results" / "traces")


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"recurrences": 10**9}, "recurrences: must be auto or in [1, 100000], got 1000000000"),
        ({"window": 1}, "window: window 1 makes every choice random"),
        ({"window": 10**9}, "window: window must be in [0, 100000]"),
        ({"arena": {"seeds": "1-3", "jobs": 5000}}, "arena.jobs: must be in [1, 1024], got 5000"),
    ],
)
def test_main_config_sizes_within_what_the_commands_accept(changes: dict[str, Any], message: str) -> None:
    cfg = {**_config(), **changes}
    with pytest.raises(ConfigError) as exc:
        check_main_config(cfg, "config.yaml", REPO / "results" / "traces")
    assert message in str(exc.value)


def test_the_product_of_sizes_is_bounded_before_any_replay(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "runs.parquet"
    sim = ["simulate", "--traces", str(tiny), "--gpu", "v100", "--policies", "zeus", "--workloads", "squad"]
    # Each size is within its own bound; their product is not (1001 x 100,000 > MAX_TRIES).
    assert main([*sim, "--seeds", "1-1001", "--recurrences", "100000", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"at most {MAX_TRIES:,} are allowed" in err, err
    assert "1001 seed(s) x 1 beta(s) x 1 cost(s) x 1 policy x 1 job(s)" in err
    # At the bound exactly: accepted (planned; a tiny replay).
    assert main([*sim, "--seeds", "1-2", "--recurrences", "3", "--out", str(out)]) == 0
    # The arena and the study check the same bound (a small one here: tiny traces' jobs are short).
    import zeus_bench.core.entry

    monkeypatch.setattr(zeus_bench.core.entry, "MAX_TRIES", 1000)
    arena = ["arena", "--traces", str(tiny), "--gpu", "v100", "--seeds", "1-100"]
    assert main([*arena, "--out", str(tmp_path / "arena")]) == 2
    assert "tries; at most 1,000 are allowed" in capsys.readouterr().err
    study = ["study", "--traces", f"v100={tiny}", "--seeds", "1-100"]
    assert main([*study, "--out-dir", str(tmp_path / "study")]) == 2
    assert "tries; at most 1,000 are allowed" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.parquet", "traces"]


@pytest.mark.parametrize(
    ("mean", "precision"),
    [("1e300", "1e10"), ("-1e200", "1e-50"), ("1e5", "1e-320"), ("1e160", "1e-10")],
)
def test_an_extreme_prior_is_refused_not_turned_into_infinities(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], mean: str, precision: str
) -> None:
    out = tmp_path / "runs.parquet"
    sim = ["simulate", "--traces", str(tiny), "--gpu", "v100", "--policies", "zeus", "--seeds", "1"]
    assert main([*sim, f"--prior-mean={mean}", f"--prior-precision={precision}", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "overflows the posterior" in err, err
    assert not out.exists()


def test_a_mild_prior_is_accepted() -> None:
    from zeus_bench.optimizers.posterior import check_prior

    for mean, precision in ((0.0, 0.0), (-1e6, 1e-12), (1e200, 1e-100), (-5e4, 1e6)):
        check_prior(mean, precision)
