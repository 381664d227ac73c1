"""Kill-anywhere: a fake-GPU sweep SIGKILLed at 20 seeded moments, rerun each time, loses nothing.

The sweep is the workflow's (``workflows/rules/sweep.smk``) in miniature: two cells, each
``zeus-bench sweep --resume --out <shard>`` over two power limits, then ``zeus-bench sweep-merge``.
Each kill picks, with a seeded generator, the next step still to do and a moment in it: inside the
warm-up, inside an energy window, during a shard's write (after the temporary file is written,
before it replaces the shard), or during the merge's write; the process SIGKILLs itself there
(``ZEUS_BENCH_FAULT``, :mod:`zeus_bench.core.faults`), and the step is rerun. After every kill the
limits must come back to 700 W: through ``zeus-bench gpu restore`` (its journal) without the
daemon, by the daemon alone with it. Each finished episode's trace must hold exactly the cells
of an uninterrupted run, each once, at the same power (the fake GPU's model; throughput depends
on this machine's CPU, so it is not compared), from complete shards, with no partial file left.

Commands run in children forked from one server process (``kill_harness.py``) that has imported
torch and zeus-bench once, so that 40 runs take seconds instead of minutes.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.gpud_helpers import Daemon, fake_limits
from zeus_bench.store import read_table

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[2]  # the harness runs as python -m tests.sweep.kill_harness from here
KILLS = 20
LIMITS = (300.0, 500.0)
BATCH_SIZES = (4, 8)
SETTINGS = [
    *("--warmup-iters", "1", "--warmup-s", "0", "--steady-s", "0", "--measure-iters", "2"),
    *("--measure-s", "0.01", "--window-s", "0.01", "--min-windows", "1", "--max-measure-s", "0.05"),
]


class Harness:
    """The fork server: ``run(argv, env)`` -> ``{"exit": N}`` or ``{"signal": N}``."""

    def __init__(self, folder: Path, env: dict[str, str]) -> None:
        self.log = folder / "runs.log"
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "tests.sweep.kill_harness"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
            cwd=REPO,
        )

    def run(self, argv: list[str], env: dict[str, str] | None = None) -> dict[str, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"argv": argv, "env": env or {}, "log": str(self.log)}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"the harness died: {self.log.read_text()[-3000:]}"
        answer: dict[str, float] = json.loads(line)
        return answer

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


def cell(folder: Path, batch_size: int) -> list[str]:
    limits = ",".join(f"{w:g}" for w in LIMITS)
    return [
        *("sweep", "--backend", "fake", "--workload", "movielens-1m", "--tiny", "--gpu-kind", "fake-h200"),
        *("--batch-sizes", str(batch_size), "--power-limits", limits, *SETTINGS, "--resume"),
        *("--out", str(folder / "shards" / f"bs{batch_size}.parquet")),
    ]


def merge(folder: Path) -> list[str]:
    shards = [str(folder / "shards" / f"bs{b}.parquet") for b in BATCH_SIZES]
    return ["sweep-merge", *shards, "--out", str(folder / "power.parquet")]


def cells_of(path: Path) -> list[tuple[int, float, float]]:
    df = read_table(path, "power")
    return sorted(zip(df["batch_size"].astype(int), df["power_limit_w"], df["avg_power_w"], strict=True))


def check_episode(folder: Path, reference: list[tuple[int, float, float]]) -> None:
    """The merged trace equals the reference's cells; shards complete, each point once; no partial file."""
    got = cells_of(folder / "power.parquet")
    assert [(b, w) for b, w, _ in got] == [(b, w) for b, w, _ in reference]  # nothing lost, none twice
    for (_, _, p), (_, _, q) in zip(got, reference, strict=True):
        # The fake GPU draws min(600 W, limit); the energy and window clocks are read a moment
        # apart, so tiny windows on a loaded machine move a few per cent.
        assert p == pytest.approx(q, rel=0.1)
    merged = read_table(folder / "power.parquet", "power").attrs["zeus_bench"]
    assert merged["complete"] is True
    for b in BATCH_SIZES:
        meta = read_table(folder / "shards" / f"bs{b}.parquet", "power").attrs["zeus_bench"]
        assert meta["complete"] is True
        records = [*meta.get("reused_points", []), *meta["points"]]
        points = sorted((int(p["batch_size"]), float(p["power_limit_w"])) for p in records)
        assert points == [(b, w) for w in LIMITS]  # each point's record once, reused or not
    leftovers = [p.name for p in folder.rglob("*.tmp")]
    assert leftovers == []


def draw_fault(rng: random.Random, step: str) -> str:
    """A seeded moment inside ``step``: ``warmup``/``window``/``write`` of a cell, the merge's write."""
    if step == "merge":
        return rng.choice(["merge:1", "write:1"])  # shards read, output not yet written / being written
    phase = rng.choice(["warmup", "window", "write"])
    count = {"warmup": rng.randint(1, 2), "window": rng.randint(1, 8), "write": rng.randint(1, 3)}[phase]
    return f"{phase}:{count}"


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    state = tmp_path / "fake.json"
    for key, value in {
        "ZEUS_BENCH_FAKE_STATE": str(state),
        "ZEUS_BENCH_STATE_DIR": str(tmp_path / "state"),
        "ZEUS_BENCH_FAKE_GPUS": "1",
        "OMP_NUM_THREADS": "1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("ZEUS_BENCH_GPUD", raising=False)
    monkeypatch.delenv("ZEUS_BENCH_FAULT", raising=False)
    yield tmp_path


@pytest.mark.parametrize("with_daemon", [False, True], ids=["journal", "daemon"])
def test_sweep_survives_20_kills(folder: Path, with_daemon: bool) -> None:
    start = time.monotonic()
    state = folder / "fake.json"
    env = dict(os.environ)
    daemon = None
    if with_daemon:
        import grp

        daemon = Daemon(folder, grp.getgrgid(os.getgid()).gr_name, env).start()
        env["ZEUS_BENCH_GPUD"] = str(daemon.socket)
    harness = Harness(folder, env)
    try:
        ref = folder / "reference"
        for b in BATCH_SIZES:
            assert harness.run(cell(ref, b))["exit"] == 0
        assert harness.run(merge(ref))["exit"] == 0
        reference = cells_of(ref / "power.parquet")
        assert [(b, w) for b, w, _ in reference] == [(b, w) for b in BATCH_SIZES for w in LIMITS]
        assert fake_limits(state) == [700.0]

        rng = random.Random(24)
        kills: list[str] = []
        restore_s: list[float] = []
        episodes = 0
        while len(kills) < KILLS:
            run = folder / f"episode{episodes}"
            for step in [*(f"bs{b}" for b in BATCH_SIZES), "merge"]:
                argv = merge(run) if step == "merge" else cell(run, int(step[2:]))
                if len(kills) == KILLS:  # the last episode's remaining steps run unharmed
                    assert harness.run(argv)["exit"] == 0
                    continue
                fault = draw_fault(rng, step)
                result = harness.run(argv, {"ZEUS_BENCH_FAULT": fault})
                if "exit" in result:  # the step ended before that moment: it is done
                    assert result["exit"] == 0
                    continue
                assert result["signal"] == signal.SIGKILL
                kills.append(f"{step} {fault}")
                if daemon is None:
                    assert harness.run(["gpu", "restore", "--backend", "fake"])["exit"] == 0
                    assert not list((folder / "state" / "journal").glob("*.json"))
                else:
                    killed = time.monotonic()
                    while fake_limits(state) != [700.0] and time.monotonic() - killed < 2:
                        time.sleep(0.002)
                    restore_s.append(time.monotonic() - killed)
                assert fake_limits(state) == [700.0], f"after the kill at {step} {fault}"
                assert harness.run(argv)["exit"] == 0, f"rerun after {step} {fault}"
                assert fake_limits(state) == [700.0]
            check_episode(run, reference)
            episodes += 1
        phases = {"merge" if k.startswith("merge") else k.split()[1].split(":")[0] for k in kills}
        assert len(kills) == KILLS and phases == {"warmup", "window", "write", "merge"}
        took = time.monotonic() - start
        extra = f", daemon restored within {max(restore_s) * 1000:.0f} ms" if restore_s else ""
        print(f"{len(kills)} kills over {episodes} episodes in {took:.1f} s{extra}: {kills}")
        if daemon is not None:
            assert max(restore_s) < 1.0
            assert "connection closed" in daemon.log.read_text()
    finally:
        harness.close()
        if daemon is not None:
            daemon.stop()


WORKFLOW_KILLS = ("window", "write", "merge")


def workflow_config(folder: Path) -> Path:
    measure = dict(zip([a.lstrip("-").replace("-", "_") for a in SETTINGS[::2]], SETTINGS[1::2], strict=True))
    cfg = {
        "sweep": {
            "out_dir": "results/sweep",
            "command": "",
            "tiny": True,
            "gpus": {
                "fake-h200": {
                    "backend": "fake",
                    "gpu_index": 0,
                    "observe": False,
                    "power_limits": list(LIMITS),
                }
            },
            "measure": {k: float(v) if "." in v else int(v) for k, v in measure.items()},
            "workloads": {"movielens-1m": list(BATCH_SIZES)},
        }
    }
    path = folder / "sweep.yaml"
    path.write_text(json.dumps(cfg))
    return path


def test_workflow_survives_kills_of_the_whole_run(folder: Path) -> None:
    """Snakemake itself and its job SIGKILLed together (``NAME:N:group``), then unlocked and rerun."""
    start = time.monotonic()
    repo = Path(__file__).resolve().parents[2]
    base = [
        sys.executable,
        "-m",
        "snakemake",
        "-s",
        str(repo / "workflows/sweep.smk"),
        "--directory",
        str(folder),
    ]
    base += ["--configfile", str(workflow_config(folder)), "--cores", "1", "--resources", "gpu=1"]
    rng = random.Random(2408)

    def snakemake(*args: str, fault: str | None = None) -> int:
        env = {**os.environ, **({"ZEUS_BENCH_FAULT": fault} if fault else {})}
        proc = subprocess.run(
            [*base, *args], env=env, capture_output=True, text=True, timeout=600, start_new_session=True
        )
        return proc.returncode

    killed = []
    for phase in WORKFLOW_KILLS:
        fault = f"{phase}:{rng.randint(1, 4) if phase != 'merge' else 1}:group"
        code = snakemake("--rerun-incomplete", fault=fault)
        assert code == -signal.SIGKILL, f"{fault}: snakemake ended with {code}, not killed"
        killed.append(fault)
        assert snakemake("--unlock") == 0
        assert gpu_restore() == [700.0]
    assert snakemake("--rerun-incomplete") == 0
    merged = folder / "results/sweep/fake-h200/power-fake-h200.parquet"
    got = cells_of(merged)
    assert [(b, w) for b, w, _ in got] == [(b, w) for b in BATCH_SIZES for w in LIMITS]
    assert read_table(merged, "power").attrs["zeus_bench"]["complete"] is True
    for b in BATCH_SIZES:
        meta = read_table(folder / f"results/sweep/fake-h200/movielens-1m/bs{b}.parquet", "power").attrs[
            "zeus_bench"
        ]
        assert meta["complete"] is True
        assert sorted((int(p["batch_size"]), float(p["power_limit_w"])) for p in meta["points"]) == [
            (b, w) for w in LIMITS
        ]
    assert [p.name for p in (folder / "results").rglob("*.tmp")] == []
    assert fake_limits(folder / "fake.json") == [700.0]
    print(f"workflow: {len(killed)} kills {killed} and reruns in {time.monotonic() - start:.1f} s")


def gpu_restore() -> list[float]:
    """``zeus-bench gpu restore`` after a kill (a fresh process), then the fake GPU's limits."""
    out = subprocess.run(
        [sys.executable, "-m", "zeus_bench.cli.main", "gpu", "restore", "--backend", "fake"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return fake_limits(Path(os.environ["ZEUS_BENCH_FAKE_STATE"]))
