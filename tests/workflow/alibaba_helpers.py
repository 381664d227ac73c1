"""A synthetic ``alibaba_groups.csv.xz`` in the upstream format (made here, never from the real file)."""

from __future__ import annotations

import lzma
from pathlib import Path

import numpy as np

WORKLOADS = ("cifar100", "imagenet", "squad", "librispeech", "movielens-1m", "sentiment140")


def synthetic_alibaba_csv(
    groups_per_workload: int = 2, jobs: tuple[int, int] = (3, 12), seed: int = 0, workloads=WORKLOADS
) -> str:
    """CSV text: columns group, start_time, end_time, dataset, runtime_ratio; overlapping jobs per group."""
    rng = np.random.default_rng(seed)
    lines = ["group,start_time,end_time,dataset,runtime_ratio"]
    for w in workloads:
        runtimes = []
        rows = []
        for g in range(groups_per_workload):
            gid = f"{rng.integers(0, 2**63):016x}{g:016x}"
            t = float(rng.integers(0, 100_000))
            for _ in range(int(rng.integers(jobs[0], jobs[1] + 1))):
                runtime = float(rng.lognormal(8.0, 0.8))
                rows.append((gid, t, t + runtime))
                runtimes.append(runtime)
                t += float(rng.exponential(runtime * 0.7))  # some jobs overlap the previous one
        mean = float(np.mean(runtimes))
        for (gid, start, end), runtime in zip(rows, runtimes, strict=True):
            lines.append(f"{gid},{start:.1f},{end:.1f},{w},{runtime / mean!r}")
    return "\n".join(lines) + "\n"


def write_synthetic_alibaba(folder: Path, **kwargs) -> Path:
    """Write ``folder/alibaba_groups.csv.xz`` (see :func:`synthetic_alibaba_csv`); return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "alibaba_groups.csv.xz"
    path.write_bytes(lzma.compress(synthetic_alibaba_csv(**kwargs).encode()))
    return path
