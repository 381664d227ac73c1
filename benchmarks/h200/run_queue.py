"""Drive the H200 sweep on a two-GPU machine within one device call, resumable across calls.

Single-GPU jobs (a workload and a chunk of its batch sizes, one ``zeus-bench sweep`` process
each, shard ``<job>.parquet``) are pulled from one queue by two workers, one per GPU, so both
GPUs stay busy; then the DistributedDataParallel jobs run on both GPUs, one after another.
Every command goes through ``observe_only.py`` (every NVML setter trapped) with ``--observe``.
No job starts within ``--min-start-s`` of the deadline, and a running one is stopped at the
deadline: its shard keeps every point finished so far, and the next call (``--resume-from``
the shards that came back) measures only what is missing. Worker 0 first runs the step-speed
benchmark and the counter probe when ``--speed`` is given.

Usage (device machine, repository root)::

    python3 benchmarks/h200/run_queue.py --work /tmp/zb --deadline-s 470 --speed
    python3 benchmarks/h200/run_queue.py --work /tmp/zb --deadline-s 430 --resume-from .device-in/shards --ddp
"""

from __future__ import annotations

import argparse
import logging
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

log = logging.getLogger("run_queue")

# Batch sizes: the Zeus train trace's for each workload, plus the largest that fit on the H200
# in the first sweep (out of memory at twice that; movielens-1m never ran out up to 2^21).
SINGLE = {
    "librispeech-a": ("librispeech", "2,4,8,12,16,24,32,48,56"),
    "librispeech-b": ("librispeech", "64,72,96,128,156,192,256,512"),
    "movielens-1m": ("movielens-1m", "4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384,2097152"),
    "cifar100": ("cifar100", "8,16,32,64,128,256,512,1024,2048,4096,32768"),
    "imagenet": ("imagenet", "64,128,192,256,360,512,1024,2048"),
    "squad": ("squad", "4,8,12,16,24,32,48,56,512"),
    "sentiment140": ("sentiment140", "8,16,32,40,48,56,64,128,2048"),
    # v2, third and later calls (single H200): what the first two calls left out or flagged.
    "librispeech-mid": ("librispeech", "32,48,56"),
    "librispeech-ext": ("librispeech", "256,512"),
    "imagenet-ext": ("imagenet", "360,512,1024,2048"),
    "cifar100-ext": ("cifar100", "32768"),
    # Re-measured with the edge-only counter tracker (flagged points of calls 1-2).
    "re-movielens-1m": ("movielens-1m", "4,8,16,32,64,128,256,512,1024,2048,4096,8192,16384"),
    "re-cifar100": ("cifar100", "8,16,32,64,128,256,512,1024"),
    "re-imagenet": ("imagenet", "64"),
    "re-librispeech": ("librispeech", "2,4,8,12,16,24"),
}
# DDP over both GPUs: each workload at its published default batch size b0 (global).
DDP = {
    "ddp-imagenet": ("imagenet", "256"),
    "ddp-cifar100": ("cifar100", "1024"),
    "ddp-squad": ("squad", "32"),
    "ddp-sentiment140": ("sentiment140", "128"),
    "ddp-librispeech": ("librispeech", "256"),
    "ddp-movielens-1m": ("movielens-1m", "1024"),
}
SETTINGS = [
    *("--warmup-iters", "3", "--warmup-s", "2", "--warmup-max-s", "20", "--steady-s", "2"),
    *("--measure-iters", "3", "--measure-s", "10", "--window-s", "2", "--min-windows", "3"),
    *("--rel-ci", "0.01", "--max-measure-s", "30"),
]
WRAP = [sys.executable, "benchmarks/h200/observe_only.py"]


class Deadline:
    """Seconds left until the call's deadline."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()


def run(cmd: list[str], log_path: Path, deadline: Deadline, min_start_s: float, what: str) -> int | None:
    """Run ``cmd`` (output appended to ``log_path``) until it ends or the deadline; None: not started."""
    if deadline.left() < min_start_s:
        log.info("%s: not started (%.0f s left)", what, deadline.left())
        with log_path.open("a") as fh:
            fh.write(f"== {what}: not started, deadline\n")
        return None
    with log_path.open("a") as fh:
        fh.write(f"== {what} start {time.strftime('%H:%M:%S', time.gmtime())}: {' '.join(cmd)}\n")
        fh.flush()
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT)
        try:
            rc = proc.wait(timeout=max(1.0, deadline.left()))
        except subprocess.TimeoutExpired:
            proc.terminate()  # zeus-bench ends cleanly; the shard keeps its finished points
            try:
                rc = proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                rc = proc.wait()
            fh.write(f"== {what}: stopped at the deadline\n")
        fh.write(f"== {what} exit {rc} {time.strftime('%H:%M:%S', time.gmtime())}\n")
    log.info("%s: exit %s (%.0f s left)", what, rc, deadline.left())
    return rc


def sweep_cmd(workload: str, sizes: str, gpus: str, kind: str, shard: Path) -> list[str]:
    """The ``zeus-bench sweep`` command of one job (resumes when the shard exists).

    A one-GPU job ends at the first batch size that does not fit (``--stop-at-oom``); a DDP job
    cannot (the sweep refuses that option on several GPUs), so its batch sizes must fit.
    """
    cmd = [*WRAP, "zeus-bench", "sweep", "--backend", "nvml", "--workload", workload, "--gpus", gpus]
    cmd += ["--observe", "--gpu-kind", kind, "--batch-sizes", sizes]
    cmd += [*(["--stop-at-oom"] if "," not in gpus else []), *SETTINGS]
    cmd += ["--out", str(shard)]
    if shard.exists():
        cmd.append("--resume")
    return cmd


def main() -> int:
    """Run the queue; exit 0 (what was and was not measured is in the logs)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--work", type=Path, required=True, help="folder for shards and logs")
    p.add_argument("--deadline-s", type=float, required=True, help="stop everything after this many seconds")
    p.add_argument("--min-start-s", type=float, default=35.0, help="start no job with less time left")
    p.add_argument("--resume-from", type=Path, default=None, help="shards of an earlier call to continue")
    p.add_argument(
        "--speed", action="store_true", help="GPU 0 first runs the speed benchmark and counter probe"
    )
    p.add_argument("--ddp", action="store_true", help="after the single-GPU queue, run the DDP jobs")
    p.add_argument(
        "--jobs", default=",".join(SINGLE), help="single-GPU jobs in the order they are taken (default: all)"
    )
    p.add_argument("--ddp-jobs", default=",".join(DDP), help="DDP jobs in order (default: all)")
    p.add_argument("--max-measure-s", default="30", help="cap on one point's measured seconds (default 30)")
    p.add_argument("--gpus", default="0,1", help="GPU indices, one queue worker each (default 0,1)")
    args = p.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    deadline = Deadline(args.deadline_s)
    shards = args.work / "shards"
    logs = args.work / "logs"
    shards.mkdir(parents=True, exist_ok=True)
    logs.mkdir(parents=True, exist_ok=True)
    if args.resume_from is not None:
        for f in args.resume_from.glob("*.parquet"):
            shutil.copy(f, shards / f.name)
    jobs: queue.Queue[str] = queue.Queue()
    for name in (j for j in args.jobs.split(",") if j):
        if name not in SINGLE:
            p.error(f"unknown job {name!r}; known: {', '.join(SINGLE)}")
        jobs.put(name)
    SETTINGS[SETTINGS.index("--max-measure-s") + 1] = args.max_measure_s

    def worker(gpu: int) -> None:
        gpu_log = logs / f"gpu{gpu}.log"
        if gpu == gpus[0] and args.speed:
            speed = [*WRAP, "script", "benchmarks/device/workload_speed.py", "--device", "cuda:0"]
            speed += [
                "--steps",
                "8",
                "--repeats",
                "4",
                "--warmup",
                "3",
                "--out",
                str(args.work / "speed.json"),
            ]
            run(speed, logs / "speed.log", deadline, args.min_start_s, "speed benchmark")
            probe = [*WRAP, "script", "benchmarks/h200/counter_probe.py", "--gpu", "0"]
            probe += ["--out", str(args.work / "counter_probe.json")]
            run(probe, logs / "counter_probe.log", deadline, 15, "counter probe")
        while True:
            try:
                name = jobs.get_nowait()
            except queue.Empty:
                return
            workload, sizes = SINGLE[name]
            cmd = sweep_cmd(workload, sizes, str(gpu), "h200", shards / f"{name}.parquet")
            run(cmd, gpu_log, deadline, args.min_start_s, f"{name} on GPU {gpu}")

    gpus = [int(g) for g in args.gpus.split(",") if g]
    threads = [threading.Thread(target=worker, args=(g,)) for g in gpus]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if args.ddp:
        for name in (j for j in args.ddp_jobs.split(",") if j):
            workload, sizes = DDP[name]
            cmd = sweep_cmd(workload, sizes, "0,1", "h200x2", shards / f"{name}.parquet")
            run(cmd, logs / "ddp.log", deadline, args.min_start_s, name)
    log.info("done, %.0f s left", deadline.left())
    return 0


if __name__ == "__main__":
    sys.exit(main())
