"""The workflows' fail-fast checks at their bounds and defaults (issue 36: a rule told from its slip).

Each bound is hit exactly on both sides (recurrences, window, arena.jobs, policy_study.jobs, a GPU index equal to the
number of GPUs, power limits at exactly the ends of the GPU's range), each default is exercised by
leaving its key out (observe, backend, gpu_index, arena.jobs, window), and duplicates are found
across spellings (``300`` and ``300.0``). Functions are called directly (no Snakemake); the
backends are a recording stand-in.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from zeus_bench.cli.configcheck import (
    check_backends_start,
    check_main_config,
    check_sizes,
    check_sweep_config,
    check_unique,
)
from zeus_bench.core.entry import MAX_JOBS, MAX_RECURRENCES
from zeus_bench.core.errors import ConfigError
from zeus_bench.device.fake import FakeBackend

REPO = Path(__file__).resolve().parents[2]
SWEEP = yaml.safe_load((REPO / "config" / "sweep.yaml").read_text())["sweep"]


@pytest.mark.parametrize(
    ("config", "ok"),
    [
        ({}, True),  # every default: recurrences auto, window 0, arena.jobs 1
        ({"recurrences": 1}, True),
        ({"recurrences": MAX_RECURRENCES}, True),
        ({"recurrences": 0}, False),
        ({"recurrences": MAX_RECURRENCES + 1}, False),
        ({"window": 2}, True),
        ({"window": MAX_RECURRENCES}, True),
        ({"window": 1}, False),
        ({"window": -1}, False),
        ({"window": MAX_RECURRENCES + 1}, False),
        ({"arena": {}}, True),
        ({"arena": {"jobs": 1}}, True),
        ({"arena": {"jobs": MAX_JOBS}}, True),
        ({"arena": {"jobs": 0}}, False),
        ({"arena": {"jobs": MAX_JOBS + 1}}, False),
        ({"policy_study": {"jobs": MAX_JOBS}}, True),
        ({"policy_study": {"jobs": 0}}, False),
        ({"policy_study": {"jobs": MAX_JOBS + 1}}, False),
    ],
)
def test_sizes_at_their_bounds_and_defaults(config: dict[str, Any], ok: bool) -> None:
    if ok:
        check_sizes(config, "cfg.yaml")
    else:
        key = next(iter(config))
        with pytest.raises(ConfigError, match=rf"^cfg\.yaml: {key}"):
            check_sizes(config, "cfg.yaml")


def test_a_number_listed_twice_in_two_spellings_is_a_duplicate() -> None:
    with pytest.raises(ConfigError, match=r"300\.0 is listed twice"):
        check_unique("power_limits", [300, 250, 300.0], "cfg.yaml")
    with pytest.raises(ConfigError, match="'a' is listed twice"):
        check_unique("gpus", ["a", "b", "a"], "cfg.yaml")
    check_unique("power_limits", [300, 301, "300x"], "cfg.yaml")
    check_unique("power_limits", "current", "cfg.yaml")


def _sweep(**gpu: Any) -> dict[str, Any]:
    sweep = copy.deepcopy(SWEEP)
    sweep["gpus"] = {"kind": gpu}
    return sweep


def test_observe_is_on_unless_turned_off() -> None:
    # No observe key: observe (never set a limit), so a list of limits is refused.
    with pytest.raises(ConfigError, match=r"sweep\.gpus\.kind: observe: true"):
        check_sweep_config(_sweep(backend="fake", power_limits=[300]), "s.yaml")
    check_sweep_config(_sweep(backend="fake", observe=False, power_limits=[300]), "s.yaml")
    check_sweep_config(_sweep(backend="fake"), "s.yaml")  # power_limits defaults to current


class _Recorded:
    """A stand-in for :func:`zeus_bench.device.get_backend`: fake GPUs of range 200-700 W, names recorded."""

    def __init__(self, tmp_path: Path, n_gpus: int) -> None:
        self.backend = FakeBackend(tmp_path / "fake.json", n_gpus=n_gpus)
        self.names: list[str] = []

    def __call__(self, name: str | None = None) -> FakeBackend:
        self.names.append(str(name))
        return self.backend


@pytest.fixture
def two_gpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _Recorded:
    import zeus_bench.device

    recorded = _Recorded(tmp_path, 2)
    monkeypatch.setattr(zeus_bench.device, "get_backend", recorded)
    return recorded


def test_the_backend_defaults_to_nvml_and_the_index_to_0(two_gpus: _Recorded) -> None:
    check_backends_start(_sweep(), "s.yaml")
    assert set(two_gpus.names) == {"nvml"}
    check_backends_start(_sweep(gpu_index=1), "s.yaml")  # the last GPU
    with pytest.raises(ConfigError, match=r"gpu_index: 2, but the nvml backend sees 2 GPU\(s\)"):
        check_backends_start(_sweep(gpu_index=2), "s.yaml")  # equal to the count: no such GPU


def test_power_limits_at_exactly_the_ends_of_the_range_are_taken(two_gpus: _Recorded) -> None:
    check_backends_start(_sweep(backend="fake", observe=False, power_limits=[200, 700]), "s.yaml")
    for outside in (199.5, 700.5):
        with pytest.raises(
            ConfigError, match=rf"power_limits: {outside:g} W is outside the range of GPU 0 \(200-700 W"
        ):
            check_backends_start(_sweep(backend="fake", observe=False, power_limits=[300, outside]), "s.yaml")
    # The range asked of the GPU the index names (GPU 1 is narrowed to 250-700 W here).
    two_gpus.backend.configure(allow_set=True)
    state = json.loads((two_gpus.backend.state_path).read_text())
    state["gpus"][1]["min_power_limit_w"] = 250.0
    (two_gpus.backend.state_path).write_text(json.dumps(state))
    check_backends_start(_sweep(backend="fake", observe=False, power_limits=[200]), "s.yaml")
    with pytest.raises(ConfigError, match=r"200 W is outside the range of GPU 1 \(250-700 W"):
        check_backends_start(_sweep(backend="fake", observe=False, gpu_index=1, power_limits=[200]), "s.yaml")


MAIN = yaml.safe_load((REPO / "config" / "config.yaml").read_text())


@pytest.mark.parametrize(
    ("key", "value", "named"),
    [
        ("prior_mean", float("nan"), "prior_mean"),
        ("prior_precision", float("inf"), "prior_precision"),
        ("eta", float("-inf"), "eta"),
        ("beta", float("nan"), "beta"),
        ("eta_sweep", {**MAIN["eta_sweep"], "values": [0.5, float("nan")]}, "eta_sweep.values"),
    ],
)
def test_a_number_that_is_not_finite_is_refused_naming_its_key(
    key: str, value: Any, named: str, tmp_path: Path
) -> None:
    config = {**copy.deepcopy(MAIN), key: value}
    with pytest.raises(ConfigError, match=rf"^cfg\.yaml: {named}: .* is not a finite number$"):
        check_main_config(config, "cfg.yaml", tmp_path)


def test_only_betas_keys_take_infinity(tmp_path: Path) -> None:
    check_main_config({**copy.deepcopy(MAIN), "beta": float("inf")}, "cfg.yaml", tmp_path)
    sweep = {**MAIN["beta_sweep"], "values": [2.0, float("inf")]}
    check_main_config({**copy.deepcopy(MAIN), "beta_sweep": sweep}, "cfg.yaml", tmp_path)
    check_main_config(copy.deepcopy(MAIN), "cfg.yaml", tmp_path)
    measure = {**SWEEP["measure"], "rel_ci": float("nan")}
    with pytest.raises(ConfigError, match=r"sweep\.measure\.rel_ci: nan is not a finite number"):
        check_sweep_config({**copy.deepcopy(SWEEP), "measure": measure}, "s.yaml")


def test_the_unused_iri_grammar_is_skipped_and_schemas_still_judge(tmp_path):
    # In a new interpreter (jsonschema not yet imported): the optional package reads as absent, and
    # a schema still refuses a bad value in one line; once jsonschema is imported, nothing changes.
    import subprocess
    import sys

    schema = tmp_path / "s.json"
    schema.write_text(
        '{"type": "object", "properties": {"n": {"type": "integer"}}, "additionalProperties": false}'
    )
    code = (
        "import sys\n"
        "from zeus_bench.cli.configcheck import check_schema, skip_unused_iri_grammar\n"
        "from zeus_bench.core.errors import ConfigError\n"
        "skip_unused_iri_grammar()\n"
        "import jsonschema\n"
        "print(sys.modules['rfc3987_syntax'] is None)\n"
        f"check_schema({{'n': 3}}, {str(schema)!r}, 'cfg')\n"
        "try:\n"
        f"    check_schema({{'n': 'x'}}, {str(schema)!r}, 'cfg')\n"
        "except ConfigError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    first, second = out.stdout.splitlines()
    assert first == "True" and second.startswith("cfg: n:") and "'x'" in second
    again = "import jsonschema, sys\nfrom zeus_bench.cli.configcheck import skip_unused_iri_grammar\n"
    again += "before = sys.modules.get('rfc3987_syntax', 'absent')\nskip_unused_iri_grammar()\n"
    again += "print(sys.modules.get('rfc3987_syntax', 'absent') is before)\n"
    out = subprocess.run(
        [sys.executable, "-c", again], capture_output=True, text=True, check=True, timeout=60
    )
    assert out.stdout.strip() == "True"
