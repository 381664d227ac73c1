"""SLURM prolog and epilog: every GPU of a job's allocation ends the job at its limit before the job.

``deploy/slurm/prolog.sh`` and ``deploy/slurm/epilog.sh`` (slurm.conf ``Prolog=`` / ``Epilog=``,
run by slurmd as root on the node) call::

    python -m zeus_bench.device.slurm_hooks prolog   # record each allocated GPU's limit
    python -m zeus_bench.device.slurm_hooks epilog   # put each back, whatever the job did

The prolog writes ``<record dir>/job-<SLURM_JOB_ID>.json`` (GPU index, uuid, limit; atomically);
the epilog sets every GPU whose limit differs back and deletes the record. This covers the cases
no process can handle itself: a job killed by ``scancel --signal=KILL``, by its time limit (SIGTERM,
then SIGKILL after ``KillWait``), by the OOM killer. The GPUs are ``SLURM_JOB_GPUS`` (the node's
indices, as in gres.conf), else ``CUDA_VISIBLE_DEVICES``. Settings come from the environment
(the scripts read ``/etc/zeus-bench/slurm-hooks.env``, or the file ``$ZEUS_BENCH_SLURM_HOOK_ENV``
names): ``ZEUS_BENCH_BACKEND`` (``nvml`` by default; ``fake`` with ``ZEUS_BENCH_FAKE_STATE`` in
tests), ``ZEUS_BENCH_SLURM_RECORD_DIR`` (default ``/var/lib/zeus-bench/slurm``).

Exit status: 0 when done (or nothing to do), 1 when a limit could not be read or restored: slurmd
then drains the node, which is what should happen to a node whose GPU is left capped.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from zeus_bench.core.errors import ZeusBenchError
from zeus_bench.core.fsutil import atomic_write_text
from zeus_bench.device.base import GPUBackend
from zeus_bench.device.journal import SAME_LIMIT_TOLERANCE_W

log = logging.getLogger("zeus_bench.slurm_hooks")

RECORD_DIR_ENV = "ZEUS_BENCH_SLURM_RECORD_DIR"
DEFAULT_RECORD_DIR = "/var/lib/zeus-bench/slurm"


def job_gpu_indices(env: dict[str, str]) -> list[int]:
    """The node's GPU indices allocated to the job (``SLURM_JOB_GPUS``, else ``CUDA_VISIBLE_DEVICES``)."""
    text = env.get("SLURM_JOB_GPUS") or env.get("CUDA_VISIBLE_DEVICES") or ""
    return [int(v) for v in text.split(",") if v.strip().isdigit()]


def record_path(record_dir: Path, job_id: str) -> Path:
    """The record file of one job."""
    safe = "".join(c for c in job_id if c.isalnum() or c in "_.-")
    return record_dir / f"job-{safe}.json"


def record(backend: GPUBackend, indices: Sequence[int], path: Path) -> list[dict[str, object]]:
    """Write the limits of GPUs ``indices`` to ``path``; return the entries."""
    entries: list[dict[str, object]] = []
    for index in indices:
        gpu = backend.gpu(index)
        entries.append({"index": index, "uuid": gpu.uuid(), "power_limit_w": gpu.power_limit_w()})
    atomic_write_text(path, json.dumps({"backend": backend.name, "gpus": entries}, indent=1) + "\n")
    return entries


def restore(backend: GPUBackend, path: Path) -> list[tuple[int, float, float]]:
    """Put every GPU of the record ``path`` back to its limit; delete it; return (index, was, now).

    Raises:
        ZeusBenchError: the record is unreadable, a GPU is not the one recorded, or a limit cannot
            be set (the record is kept).
    """
    if not path.exists():
        return []
    try:
        entries = json.loads(path.read_text())["gpus"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ZeusBenchError(f"{path}: unreadable prolog record ({exc})") from None
    changed: list[tuple[int, float, float]] = []
    for e in entries:
        gpu = backend.gpu(int(e["index"]))
        if gpu.uuid() != e["uuid"]:
            raise ZeusBenchError(f"{path}: GPU {e['index']} is {gpu.uuid()}, not {e['uuid']}; not restoring")
        current, wanted = gpu.power_limit_w(), float(e["power_limit_w"])
        if abs(current - wanted) > SAME_LIMIT_TOLERANCE_W:
            gpu.set_power_limit_w(wanted)
            changed.append((gpu.index, current, wanted))
    path.unlink()
    return changed


def main(argv: Sequence[str] | None = None, env: dict[str, str] | None = None) -> int:
    """``prolog`` or ``epilog`` for the job in ``env`` (default: this process's environment).

    The backend is chosen and opened from this process's environment in any case.
    """
    from zeus_bench.device import get_backend

    args = list(sys.argv[1:] if argv is None else argv)
    env = dict(os.environ if env is None else env)
    logging.basicConfig(level=logging.INFO, format="zeus-bench %(message)s", stream=sys.stderr)
    if args not in (["prolog"], ["epilog"]):
        log.error("usage: python -m zeus_bench.device.slurm_hooks prolog|epilog")
        return 2
    job = env.get("SLURM_JOB_ID", "")
    if not job:
        log.error("%s: SLURM_JOB_ID is not set (run by slurmd as Prolog/Epilog)", args[0])
        return 2
    path = record_path(Path(env.get(RECORD_DIR_ENV, DEFAULT_RECORD_DIR)), job)
    try:
        backend = get_backend(env.get("ZEUS_BENCH_BACKEND"))
        if args[0] == "prolog":
            indices = job_gpu_indices(env)
            if indices:
                entries = record(backend, indices, path)
                log.info(
                    "prolog job %s: recorded %s", job, [(e["index"], e["power_limit_w"]) for e in entries]
                )
            return 0
        for index, was, now in restore(backend, path):
            log.warning("epilog job %s: GPU %d restored %g W -> %g W", job, index, was, now)
        return 0
    except ZeusBenchError as exc:
        log.error("%s job %s: %s", args[0], job, exc)
        return 1


if __name__ == "__main__":
    sys.exit(main())
