"""The SLURM prolog/epilog logic (zeus_bench.device.slurm_hooks) without SLURM, on fake GPUs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from zeus_bench.device.fake import FakeBackend
from zeus_bench.device.slurm_hooks import main

REPO = Path(__file__).resolve().parents[2]


def job_env(tmp_path: Path, job: str = "42", gpus: str = "1") -> dict[str, str]:
    return {
        "SLURM_JOB_ID": job,
        "SLURM_JOB_GPUS": gpus,
        "ZEUS_BENCH_BACKEND": "fake",
        "ZEUS_BENCH_FAKE_STATE": str(tmp_path / "fake.json"),
        "ZEUS_BENCH_FAKE_GPUS": "2",
        "ZEUS_BENCH_SLURM_RECORD_DIR": str(tmp_path / "records"),
    }


def export(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """``env`` in os.environ (slurmd's environment for the hooks) and returned."""
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


def test_epilog_puts_back_the_limit_before_the_job(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    backend = FakeBackend(tmp_path / "fake.json", n_gpus=2)
    backend.gpu(1).set_power_limit_w(640)
    env = export(job_env(tmp_path), monkeypatch)
    assert main(["prolog"], env) == 0
    backend.gpu(1).set_power_limit_w(250)  # the job caps its GPU and is SIGKILLed
    backend.gpu(0).set_power_limit_w(300)  # another job's GPU: not this job's business
    assert main(["epilog"], env) == 0
    assert [backend.gpu(i).power_limit_w() for i in range(2)] == [300.0, 640.0]
    assert not list((tmp_path / "records").iterdir())
    assert main(["epilog"], env) == 0  # a second epilog (or one without prolog) has nothing to do


def test_epilog_failures_exit_1_and_keep_the_record(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = export(job_env(tmp_path, gpus="0"), monkeypatch)
    assert main(["prolog"], env) == 0
    record = tmp_path / "records" / "job-42.json"
    record.write_text(record.read_text().replace("GPU-fake-0", "GPU-other"))
    assert main(["epilog"], env) == 1  # slurmd drains the node
    assert record.exists()
    record.write_text("{not json")
    assert main(["epilog"], env) == 1
    assert main(["bogus"], env) == 2
    assert main(["prolog"], {**env, "SLURM_JOB_ID": ""}) == 2


def test_scripts_do_nothing_without_their_settings_file(tmp_path: Path) -> None:
    for hook in ("prolog", "epilog"):
        out = subprocess.run(
            [str(REPO / "deploy/slurm" / f"{hook}.sh")],
            env={"ZEUS_BENCH_SLURM_HOOK_ENV": str(tmp_path / "absent.env"), "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            check=False,
        )
        assert (out.returncode, out.stdout, out.stderr) == (0, "", "")
    conf = tmp_path / "hooks.env"
    conf.write_text(
        "".join(f"{k}={v}\n" for k, v in job_env(tmp_path).items()) + f"ZEUS_BENCH_PYTHON={sys.executable}\n"
    )
    out = subprocess.run(
        [str(REPO / "deploy/slurm/prolog.sh")],
        env={"ZEUS_BENCH_SLURM_HOOK_ENV": str(conf), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert '"power_limit_w": 700.0' in (tmp_path / "records" / "job-42.json").read_text()
