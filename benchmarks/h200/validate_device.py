"""Run the GPU stages of ``workflows/validate.smk`` on a lent H200 within one device call.

The device has no Snakemake, so this runs the commands of the workflow's GPU rules
(``workflows/rules/validate.smk``: the power-sweep cells, the noise repeats, the train-trace
cells and the online run) one after the other, every one under ``observe_only.py`` (every NVML
setter trapped) with ``--observe``; it reads the same config file as the workflow
(``config/validate-h200.yaml``) and writes the files where the workflow expects them, so the
workflow continues from them on a CPU (simulate, compare, figure). ``nvidia-smi`` reads the
GPU's limit, clocks and modes before and after (``env-before.txt``, ``env-after.txt``).

Stages (``--stages``, in this order): ``curves`` (validation metric per epoch at each batch
sizes, to choose the target: several processes at once, no energy measured), ``power``,
``noise``, ``train`` (train-trace cells, several processes at once: epochs to target do not
depend on timing) and ``online``. A stage is skipped once ``--deadline-s`` has passed; a running
command is stopped at the deadline (its shard keeps what it finished).

Usage (device machine, from the copied checkout)::

    python3 benchmarks/h200/validate_device.py --config config/validate-h200.yaml \
        --stages curves,power,noise --deadline-s 540 --out $OUT/call1.tar.gz
"""

from __future__ import annotations

import argparse
import logging
import os
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
from pathlib import Path
from typing import Any

import yaml

log = logging.getLogger("validate_device")
REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))  # zeus_bench from this checkout (nothing is installed on the device)
GUARD = [sys.executable, str(REPO / "benchmarks/h200/observe_only.py")]


def shim_entry_points(work: Path) -> str:
    """A dist-info folder that registers the checkout's workloads (no pip install on the device)."""
    eps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"][
        "zeus_bench.workloads"
    ]
    info = work / "shim" / "zeus_bench_checkout-0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zeus-bench-checkout\nVersion: 0\n")
    lines = "".join(f"{k} = {v}\n" for k, v in eps.items())
    (info / "entry_points.txt").write_text(f"[zeus_bench.workloads]\n{lines}")
    return str(work / "shim")


def nvidia_smi(path: Path) -> None:
    """Append the GPU's limits, clocks, temperature and modes to ``path``."""
    query = (
        "name,driver_version,power.limit,power.default_limit,power.max_limit,power.min_limit,"
        "clocks.sm,clocks.mem,temperature.gpu,persistence_mode,compute_mode,power.draw"
    )
    try:
        out = subprocess.run(
            ["nvidia-smi", f"--query-gpu={query}", "--format=csv"],
            capture_output=True,
            text=True,
            check=False,
        )
        text = out.stdout + out.stderr
    except FileNotFoundError:  # a fake-backend rehearsal on a machine without a GPU
        text = "nvidia-smi: not found\n"
    with path.open("a") as fh:
        fh.write(f"# {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n{text}")


class Runner:
    """Runs commands with logs under ``work/logs`` until a deadline."""

    def __init__(self, work: Path, deadline_s: float, env: dict[str, str]) -> None:
        self.work, self.env = work, env
        self.end = time.monotonic() + deadline_s
        (work / "logs").mkdir(parents=True, exist_ok=True)

    def left_s(self) -> float:
        return self.end - time.monotonic()

    def start(self, name: str, cmd: list[str]) -> tuple[subprocess.Popen[bytes], Any]:
        fh = (self.work / "logs" / f"{name}.log").open("wb")
        log.info("start %s: %s", name, " ".join(cmd))
        return subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, env=self.env, cwd=REPO), fh

    def wait(self, procs: list[tuple[str, subprocess.Popen[bytes], Any]]) -> None:
        for name, proc, fh in procs:
            try:
                rc = proc.wait(timeout=max(1.0, self.left_s()))
            except subprocess.TimeoutExpired:
                proc.terminate()
                rc = proc.wait()
                log.warning("%s stopped at the deadline", name)
            fh.close()
            log.info("%s: exit %s (%.0f s left)", name, rc, self.left_s())

    def run(self, name: str, cmd: list[str]) -> None:
        if self.left_s() < 5:
            log.warning("skipped %s: deadline", name)
            return
        proc, fh = self.start(name, cmd)
        self.wait([(name, proc, fh)])

    def parallel(self, jobs: list[tuple[str, list[str]]]) -> None:
        if self.left_s() < 5:
            log.warning("skipped %d jobs: deadline", len(jobs))
            return
        self.wait([(n, *self.start(n, c)) for n, c in jobs])


def sweep_cmd(cfg: dict[str, Any], bs: str, out: Path) -> list[str]:
    """The workflow's power-sweep command (rules ``validate_power``, ``validate_noise_repeat``)."""
    m = cfg["measure"]
    return [
        *GUARD, "zeus-bench", "sweep", "--workload", cfg["workload"], "--batch-sizes", str(bs),
        "--power-limits", "current", "--observe", "--backend", cfg["backend"], "--gpu-kind", cfg["gpu"],
        *tiny(cfg),
        "--warmup-s", str(m["warmup_s"]), "--measure-s", str(m["measure_s"]),
        "--max-measure-s", str(m["max_measure_s"]), "--warmup-max-s", str(m["warmup_max_s"]),
        "--out", str(out),
    ]  # fmt: skip


def choose_target(curves_dir: Path, largest: int, epochs: int, out: Path, workload: str) -> list[str]:
    """Write a registry override whose target the largest batch size reaches in about 3/4 of the epochs.

    The target is the least, over the seeds, of the best metric the largest batch size reached
    in the first 3/4 of ``epochs`` (rounded down to 0.005); the epoch budget is ``epochs``. Smaller
    batch sizes reach it in fewer epochs. Returns ``--workloads-file`` arguments (none when the
    curves are missing: the registry's target stays).
    """
    import json

    from zeus_bench.traces.workloads import load_workloads

    path = curves_dir / f"bs{largest}.jsonl"
    if not path.exists():
        log.warning("no learning curves at batch size %d: the registry's target stays", largest)
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    head = max(1, (3 * epochs) // 4)
    best = min(max(r["metric"][:head]) for r in rows)
    target = int(best * 200) / 200
    spec = load_workloads()[workload]
    keys = ("dataset", "network", "optimizer", "metric", "metric_direction", "default_batch_size")
    entry = {k: getattr(spec, k) for k in keys}
    entry.update(target_metric=target, max_epochs=int(epochs))
    out.write_text(yaml.safe_dump({"workloads": {workload: entry}}, sort_keys=False))
    log.info("target %.3f, max epochs %d (curves at batch size %d) -> %s", target, epochs, largest, out)
    return ["--workloads-file", str(out)]


def tiny(cfg: dict[str, Any]) -> list[str]:
    """``--tiny`` when the config asks for the tiny model (fake-backend rehearsals)."""
    return ["--tiny"] if cfg.get("tiny") else []


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, required=True)
    p.add_argument("--stages", default="curves,train,power,noise,online")
    p.add_argument("--deadline-s", type=float, default=540.0)
    p.add_argument("--work", type=Path, default=Path("/tmp/zbv"))
    p.add_argument("--out", type=Path, required=True, help="tar.gz of everything measured, with logs")
    p.add_argument("--resume", type=Path, default=None, help="tar.gz of an earlier call to continue")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    cfg = yaml.safe_load(args.config.read_text())["validate"]
    work = args.work
    if args.resume is not None:
        with tarfile.open(args.resume) as tar:
            tar.extractall(work.parent, filter="data")
    res = work / "results"
    res.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), shim_entry_points(work), env.get("PYTHONPATH", "")])
    env["PYTHONUNBUFFERED"] = "1"
    env.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    r = Runner(work, args.deadline_s, env)
    nvidia_smi(work / "env-before.txt")
    subprocess.run(
        [sys.executable, "-c", "import sys,torch,pynvml;print(sys.version);print(torch.__version__, torch.version.cuda, torch.backends.cudnn.version())"],
        stdout=(work / "env-before.txt").open("a"), stderr=subprocess.STDOUT, env=env, check=False,
    )  # fmt: skip
    data = work / "data"
    r.run("data", [sys.executable, "-m", "workloads.teacher_student", str(data), *tiny(cfg)])
    stages = args.stages.split(",")
    bss = [int(b) for b in cfg["batch_sizes"]]
    if "curves" in stages:
        (work / "curves").mkdir(exist_ok=True)
        r.parallel(
            [
                (
                    f"curves-bs{bs}",
                    [
                        sys.executable,
                        "benchmarks/h200/learning_curves.py",
                        "--workload",
                        cfg["workload"],
                        "--data-root",
                        str(data),
                        "--batch-sizes",
                        str(bs),
                        "--seeds",
                        "0,1",
                        "--epochs",
                        str(cfg["curves"]["epochs"]),
                        "--max-s",
                        str(cfg["curves"]["max_s"]),
                        "--out",
                        str(work / "curves" / f"bs{bs}.jsonl"),
                        *tiny(cfg),
                    ],
                )
                for bs in cfg["curves"]["batch_sizes"]
            ]
        )
    override = choose_target(
        work / "curves", max(bss), int(cfg["curves"]["epochs"]), work / "workloads.yaml", cfg["workload"]
    )
    if "train" in stages:
        r.parallel(
            [
                (
                    f"train-bs{bs}",
                    [
                        *GUARD,
                        "zeus-bench",
                        "sweep",
                        "--workload",
                        cfg["workload"],
                        "--train-to-target",
                        "--data-root",
                        str(data),
                        "--batch-sizes",
                        str(bs),
                        "--runs",
                        str(cfg["runs"]),
                        "--backend",
                        cfg["backend"],
                        "--observe",
                        "--torch-device",
                        cfg["torch_device"],
                        "--resume",
                        *tiny(cfg),
                        "--out",
                        str(res / "train" / f"bs{bs}.parquet"),
                        *override,
                    ],
                )
                for bs in bss
            ]
        )
    if "power" in stages and not (res / "power.parquet").exists():
        r.run("power", sweep_cmd(cfg, ",".join(map(str, bss)), res / "power.parquet"))
    if "online" in stages:
        o = cfg["online"]
        r.run(
            "online",
            [*GUARD, "script", "workflows/scripts/validate_online.py", "--workload", cfg["workload"],
             "--data-root", str(data), "--state-dir", str(work / "online-state"), "--out", str(res / "measured.parquet"),
             "--gpu-kind", cfg["gpu"], "--recurrences", str(o["recurrences"]),
             "--batch-sizes", ",".join(map(str, bss)), "--eta", str(cfg["eta"]), "--beta", str(cfg["beta"]),
             "--backend", cfg["backend"], "--observe", "--profile-s", str(o["profile_s"]),
             "--device", cfg["torch_device"], *tiny(cfg), *override,
             "--deadline-s", str(max(0.0, r.left_s() - o["reserve_s"]))],
        )  # fmt: skip
    if "noise" in stages:
        for k in range(1, int(cfg["noise"]["repeats"]) + 1):
            out = res / f"noise-r{k}.parquet"
            if not out.exists():
                r.run(f"noise-r{k}", sweep_cmd(cfg, ",".join(map(str, cfg["noise"]["batch_sizes"])), out))
    nvidia_smi(work / "env-after.txt")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(args.out, "w:gz") as tar:
        tar.add(
            work, arcname=work.name, filter=lambda t: None if "/shim" in t.name or "/data" in t.name else t
        )
    shutil.copy(work / "logs" / "data.log", args.out.parent / "data.log")
    log.info("wrote %s (%.0f s left)", args.out, r.left_s())
    return 0


if __name__ == "__main__":
    sys.exit(main())
