"""workflows/scripts/zeus_bench_many.py: several zeus-bench command lines in one process, or on forked workers."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from workflow_helpers import script_module

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "workflows" / "scripts" / "zeus_bench_many.py"


@pytest.fixture(scope="module")
def many():
    """The script as a module (registered, so that its functions reach the forked workers by name)."""
    with script_module(SCRIPT) as module:
        yield module


def _arrivals(out: Path, seed: int) -> str:
    """A quick command line that writes a file: a small synthetic arrival table."""
    return shlex.join(
        [
            "synth-arrivals",
            "--workloads",
            "cifar100,squad",
            "--groups",
            "2",
            "--seed",
            str(seed),
            "--out",
            str(out),
        ]
    )


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_every_line_runs_and_writes_what_it_would_alone(many, tmp_path, jobs):
    lines = [_arrivals(tmp_path / f"t{seed}.csv", seed) for seed in (1, 2, 3, 4)]
    assert many.run_many(lines, jobs) == 0
    alone = tmp_path / "alone.csv"
    assert many.run_many([_arrivals(alone, 3)]) == 0
    tables = {seed: pd.read_csv(tmp_path / f"t{seed}.csv") for seed in (1, 2, 3, 4)}
    assert all(len(t) == 200 for t in tables.values())  # 2 workloads x 2 groups x 50 submissions
    assert (tmp_path / "t3.csv").read_bytes() == alone.read_bytes()
    assert not tables[1].equals(tables[2])  # each line its own seed


@pytest.mark.parametrize("jobs", [1, 2])
def test_the_first_failure_in_order_is_the_status_and_later_lines_do_not_start(many, tmp_path, jobs):
    typo = _arrivals(tmp_path / "typo.csv", 2).replace("cifar100,", "cifar10,")  # unknown workload: status 2
    lines = [_arrivals(tmp_path / "first.csv", 1), typo]
    lines += [_arrivals(tmp_path / f"late{i}.csv", 10 + i) for i in range(6)]
    assert many.run_many(lines, jobs) == 2
    assert (tmp_path / "first.csv").is_file() and not (tmp_path / "typo.csv").exists()
    if jobs == 1:  # in order: nothing after the failure ran
        assert not any(tmp_path.glob("late*.csv"))
    else:  # on workers: a line starts only on a free worker, none after the failure (the other's ends)
        assert len(list(tmp_path.glob("late*.csv"))) <= jobs - 1


def test_unknown_command_is_status_2_with_one_line(many, capfd):
    assert many.run_many(["--version", "no-such-command"], 2) == 2
    err = capfd.readouterr().err
    assert "invalid choice: 'no-such-command'" in err


@pytest.mark.parametrize("bad", ["0", "x", "65", ""])
def test_bad_jobs_is_one_line_and_status_2(bad, tmp_path):
    args = ["--jobs", bad] if bad else ["--jobs"]
    out = subprocess.run(
        [sys.executable, str(SCRIPT), *args, _arrivals(tmp_path / "t.csv", 1)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and "--jobs must be an integer in 1..64" in out.stderr
    assert not (tmp_path / "t.csv").exists()


def test_jobs_option_as_one_word(tmp_path):
    out = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--jobs=2",
            _arrivals(tmp_path / "a.csv", 1),
            _arrivals(tmp_path / "b.csv", 2),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "a.csv").is_file() and (tmp_path / "b.csv").is_file()


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_log_takes_the_commands_output_and_the_console_keeps_the_progress(tmp_path, jobs):
    log = tmp_path / "batch.log"
    log.write_text("an old log: kept\n")
    seeds = range(1, 9)
    lines = [_arrivals(tmp_path / f"t{seed}.csv", seed) for seed in seeds]
    out = subprocess.run(  # unbuffered streams (a line's text and newline written apart): lines stay whole
        [sys.executable, str(SCRIPT), "--jobs", jobs, "--log", str(log), *lines],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == ""  # every command's output is in the log
    text = log.read_text()
    assert text.startswith("an old log: kept\n")  # appended to, never emptied
    assert sorted(line for line in text.splitlines() if line.startswith("wrote 200 submissions")) == sorted(
        f"wrote 200 submissions in 4 groups to {tmp_path / f't{seed}.csv'}" for seed in seeds
    )
    progress = out.stderr.strip().splitlines()
    assert progress[-1].startswith("INFO zeus_bench_many: zeus-bench commands: 8/8 done (synth-arrivals -> ")
    assert all(line.startswith("INFO zeus_bench_many: zeus-bench commands: ") for line in progress)


def test_unwritable_log_is_one_line_and_status_2(tmp_path):
    log = tmp_path / "no-such-folder" / "batch.log"
    out = subprocess.run(
        [sys.executable, str(SCRIPT), "--log", str(log), _arrivals(tmp_path / "t.csv", 1)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stderr.strip().count("\n") == 0 and f"--log {log}: No such file or directory" in out.stderr
    assert not (tmp_path / "t.csv").exists() and not (tmp_path / "no-such-folder").exists()


def test_a_workers_streams_write_whole_lines(tmp_path: Path) -> None:
    """Unbuffered streams write a line's text and its newline apart; a worker's log streams write whole lines."""
    log = tmp_path / "w.log"
    code = (
        f"import sys; sys.path.insert(0, {str(SCRIPT.parent)!r})\n"
        "import zeus_bench_many as m\n"
        "assert sys.stdout.write_through  # (PYTHONUNBUFFERED: each write goes out at once)\n"
        f"m._worker_to_log({str(log)!r})\n"
        "assert sys.stdout.line_buffering and not sys.stdout.write_through\n"
        "assert sys.stderr.line_buffering and not sys.stderr.write_through\n"
        "print('out line'); print('err line', file=sys.stderr)\n"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, timeout=60, env={**os.environ, "PYTHONUNBUFFERED": "1"}
    )
    assert log.read_text().splitlines() == ["out line", "err line"]


def test_a_batch_of_simulate_lines_runs_with_one_blas_and_arrow_thread(
    tmp_path: Path, tiny_traces: Path
) -> None:
    """As ``zeus-bench simulate`` does (zeus_bench.cli.main.NO_BLAS_COMMANDS): the script's entry leaves
    numpy unimported until the first line has chosen its threads (a user's own setting wins)."""
    out = tmp_path / "runs.parquet"
    line = shlex.join(
        ["-q", "simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--policies", "zeus", "--seeds", "1-2", "--out", str(out)]
    )  # fmt: skip
    code = (
        "import atexit, os, runpy, sys\n"
        "def check():\n"
        "    import pyarrow\n"
        "    print(os.environ.get('OPENBLAS_NUM_THREADS'), os.environ.get('OMP_NUM_THREADS'), pyarrow.cpu_count())\n"
        "atexit.register(check)\n"
        f"sys.argv = [{str(SCRIPT)!r}, {line!r}]\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__main__')\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS")}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env, cwd=REPO
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1", "1", "1"]
    assert out.is_file()
