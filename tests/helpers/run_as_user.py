"""Run ``zeus-bench ARGS`` as an unprivileged user: ``python run_as_user.py USER ARGS...`` (as root).

The test interpreter may live where other users cannot read it (CI's ``/root/.pyenv``), so this
script starts as root, runs a throw-away tiny sweep on a scratch fake GPU (so that every module
the command imports lazily is loaded), then drops to the user's uid, gid and groups
(``setgroups``/``setgid``/``setuid``: irreversible) and runs the command. From then on the
process is that user to the kernel: ``SO_PEERCRED`` reports its uid, files obey its rights.
"""

from __future__ import annotations

import logging
import os
import pwd
import shutil
import sys
import tempfile

from zeus_bench.cli.main import main

WARM_UP = [
    *("sweep", "--backend", "fake", "--workload", "movielens-1m", "--tiny", "--batch-sizes", "4"),
    *("--power-limits", "300", "--warmup-iters", "1", "--warmup-s", "0", "--steady-s", "0"),
    *(
        "--measure-iters",
        "1",
        "--measure-s",
        "0",
        "--window-s",
        "0.01",
        "--min-windows",
        "1",
        "--max-measure-s",
        "0",
    ),
]
SCRATCH_ENV = ("ZEUS_BENCH_FAKE_STATE", "ZEUS_BENCH_STATE_DIR", "ZEUS_BENCH_GPUD", "ZEUS_BENCH_FAKE_GPUS")


def warm_up() -> None:
    """One sweep point as root on a scratch fake GPU, its output discarded."""
    scratch = tempfile.mkdtemp(prefix="zb-warm-")
    saved = {k: os.environ.pop(k, None) for k in SCRATCH_ENV}
    os.environ.update(ZEUS_BENCH_FAKE_STATE=f"{scratch}/fake.json", ZEUS_BENCH_STATE_DIR=f"{scratch}/state")
    saved_fds = [os.dup(1), os.dup(2)]
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    try:
        status = main([*WARM_UP, "--out", f"{scratch}/warm.parquet"])
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        for fd, copy in zip((1, 2), saved_fds, strict=True):
            os.dup2(copy, fd)
            os.close(copy)
        os.close(null)
        logging.root.handlers.clear()  # the real command sets up its own logging
        shutil.rmtree(scratch, ignore_errors=True)
        for key, value in saved.items():
            os.environ.pop(key, None)
            if value is not None:
                os.environ[key] = value
    assert status == 0, "the warm-up sweep failed"


def drop_to(user: str) -> None:
    """Become ``user`` for good: its supplementary groups, primary group and uid."""
    entry = pwd.getpwnam(user)
    os.setgroups(os.getgrouplist(entry.pw_name, entry.pw_gid))
    os.setgid(entry.pw_gid)
    os.setuid(entry.pw_uid)
    assert os.geteuid() == entry.pw_uid and os.getegid() == entry.pw_gid


if __name__ == "__main__":
    warm_up()
    drop_to(sys.argv[1])
    sys.exit(main(sys.argv[2:]))
