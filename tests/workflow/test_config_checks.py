"""Config mistakes end both workflows at once, in one line naming the file and key (issue 23)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml
from workflow_helpers import REPO, SNAKEMAKE, make_workdir

from zeus_bench.cli.configcheck import check_main_config, check_schema, check_sweep_config, nearest
from zeus_bench.core.errors import ConfigError

MAIN_SCHEMA = REPO / "config" / "config.schema.json"
SWEEP_SCHEMA = REPO / "config" / "sweep.schema.json"


def _main_config(**changes):
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    cfg.update(changes)
    return cfg


def _sweep_config(path: str = "config/sweep.yaml"):
    return yaml.safe_load((REPO / path).read_text())


def _one_line(out: subprocess.CompletedProcess[str]) -> str:
    """The single `error:` line of a refused run (and that there is no traceback)."""
    text = out.stdout + out.stderr
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert out.returncode == 2, text[-2000:]
    assert len(errors) == 1, text[-2000:]
    assert "Traceback" not in text and "WorkflowError" not in text, text[-2000:]
    return errors[0]


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"gpus": ["v1OO"]}, "gpus: unknown GPU kind 'v1OO'; did you mean v100?"),
        ({"gpus": ["v100", "v100"]}, "gpus: duplicated value v100"),
        ({"seeds": "10-1"}, "seeds: '10-1': empty range"),
        ({"workloads": ["cifar101"]}, "workloads: unknown workload 'cifar101'; did you mean cifar100?"),
        (
            {"eta_sweep": {"values": [0.5, 0.5], "policies": ["zeus", "baseline"], "seeds": "1"}},
            "eta_sweep.values",
        ),
        (
            {"beta_sweep": {"values": [2.0], "policies": ["zeus", "baseline"], "seeds": "5-3"}},
            "beta_sweep.seeds",
        ),
        ({"policy_study": {"enabled": True, "seeds": "9-2"}}, "policy_study.seeds"),
    ],
)
def test_main_config_values_are_checked(changes, expected):
    cfg = _main_config(**changes)
    with pytest.raises(ConfigError, match=r"^config/config\.yaml: ") as exc:
        check_schema(cfg, MAIN_SCHEMA, "config/config.yaml")  # types and uniqueness
        check_main_config(cfg, "config/config.yaml", own_dir=REPO / "results" / "traces")
    assert expected in str(exc.value) and "\n" not in str(exc.value)


def test_the_committed_configs_pass():
    check_main_config(_main_config(), "config/config.yaml", own_dir=REPO / "results" / "traces")
    for path in ("config/sweep.yaml", "config/sweep-fake.yaml"):
        data = _sweep_config(path)
        check_schema(data, SWEEP_SCHEMA, path)
        check_sweep_config(data["sweep"], path)


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({"bogus": 1}, "unknown key bogus"),
        ({"eta_sweep": {"valuez": [1]}}, "unknown key eta_sweep.valuez; did you mean values?"),
        ({"figures": {"format": ["png"]}}, "unknown key figures.format; did you mean formats?"),
        ({"eta": 1.5}, "eta: 1.5 is not valid"),
    ],
)
def test_schema_violation_is_one_line_naming_the_key(changes, expected):
    with pytest.raises(ConfigError) as exc:
        check_schema(_main_config(**changes), MAIN_SCHEMA, "config/config.yaml")
    message = str(exc.value)
    assert expected in message and "\n" not in message and len(message) < 400, message


def test_sweep_config_duplicates_and_unknown_keys():
    data = _sweep_config()
    data["sweep"]["gpus"]["h200"].update(observe=False, power_limits=[300, 300])
    with pytest.raises(ConfigError, match=r"sweep.gpus.h200.power_limits: duplicated value 300"):
        check_schema(data, SWEEP_SCHEMA, "config/sweep.yaml")
    data = _sweep_config()
    data["sweep"]["measure"]["rel_cl"] = 0.01
    with pytest.raises(ConfigError, match=r"unknown key sweep.measure.rel_cl; did you mean rel_ci\?"):
        check_schema(data, SWEEP_SCHEMA, "config/sweep.yaml")
    data = _sweep_config()
    data["sweep"]["gpus"]["h200"]["backend"] = "nvlm"
    with pytest.raises(ConfigError, match=r"backend: unknown backend 'nvlm'; did you mean nvml\?"):
        check_sweep_config(data["sweep"], "config/sweep.yaml")
    data = _sweep_config()
    data["sweep"]["workloads"]["cifar100"] = [8, 16, 8.0]
    with pytest.raises(ConfigError, match=r"sweep.workloads.cifar100: 8.0 is listed twice"):
        check_sweep_config(data["sweep"], "config/sweep.yaml")


def test_nearest_names():
    assert nearest("v1OO", ["v100", "a40", "p100"]) == "; did you mean v100?"
    assert nearest("zzzz", ["v100"]) == ""


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        ({"gpus": ["v1OO"]}, "gpus: unknown GPU kind 'v1OO'; did you mean v100?"),
        ({"seeds": "10-1"}, "seeds: '10-1': empty range"),
        ({"bogus": 1}, "unknown key bogus"),
        (
            {"traces": {"zeus": {"local_dir": "/nonexistent/zeus"}}},
            "traces.zeus.local_dir: /nonexistent/zeus is not a folder",
        ),
        ({"arena": {"seeds": "9-2"}}, "arena.seeds: '9-2': empty range"),
    ],
)
def test_main_workflow_refuses_in_one_line_before_scheduling(tmp_path, overrides, expected):
    wd = make_workdir(tmp_path, overrides)
    line = _one_line(wd.snakemake("-n", check=False))
    assert expected in line and "overrides.yaml" in line
    assert not (tmp_path / "results").exists() and not (tmp_path / "logs").exists()


def _sweep_workflow(tmp_path: Path, config: dict, *args: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "sweep-config.yaml"
    path.write_text(yaml.safe_dump(config))
    cmd = [str(SNAKEMAKE), "-s", str(REPO / "workflows" / "sweep.smk"), "--directory", str(tmp_path)]
    cmd += ["--configfile", str(path), "--profile", str(REPO / "profiles" / "local"), *args]
    return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=300)


def test_sweep_workflow_refuses_a_duplicated_power_limit(tmp_path):
    data = _sweep_config()
    data["sweep"]["gpus"]["h200"].update(observe=False, power_limits=[300, 250, 300])
    line = _one_line(_sweep_workflow(tmp_path, data, "-n"))
    assert "sweep.gpus.h200.power_limits: duplicated value 300" in line


def _nvml_starts() -> bool:
    from zeus_bench.core.errors import ZeusBenchError
    from zeus_bench.device import get_backend

    try:
        get_backend("nvml")
    except ZeusBenchError:
        return False
    return True


def test_sweep_workflow_without_a_gpu_fails_once_at_the_start(tmp_path):
    if _nvml_starts():
        pytest.skip("a GPU is visible: the sweep would really start")  # GPU-only machines
    out = _sweep_workflow(tmp_path, _sweep_config())
    line = _one_line(out)
    assert "the nvml backend cannot start on this machine" in line and "config/sweep-fake.yaml" in line
    assert not (tmp_path / "logs").exists() and not (tmp_path / "results").exists()
    # A dry run still lists the cells (nothing is started).
    dry = _sweep_workflow(tmp_path, _sweep_config(), "-n")
    assert dry.returncode == 0 and "sweep_cell" in dry.stdout + dry.stderr


def test_own_traces_are_found_one_folder_per_gpu(tmp_path):
    from zeus_bench.cli.configcheck import known_gpus, own_power_traces

    assert own_power_traces(REPO / "results" / "traces") == {
        "h200": REPO / "results" / "traces" / "h200" / "power-h200.parquet"
    }
    (tmp_path / "x9").mkdir()
    (tmp_path / "x9" / "power-x9.parquet").write_bytes(b"")
    (tmp_path / "power-x8.parquet").write_bytes(b"")  # one GPU's folder given as own_dir counts too
    assert list(own_power_traces(tmp_path)) == ["x8", "x9"]
    assert known_gpus(_main_config(), tmp_path)[-2:] == ["x8", "x9"]
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "power-x9.parquet").write_bytes(b"")
    with pytest.raises(ConfigError, match=r"^traces.own_dir: two power traces of GPU 'x9': .*again/power-x9"):
        own_power_traces(tmp_path)
