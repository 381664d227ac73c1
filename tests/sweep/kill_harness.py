"""Fork server of the kill-anywhere test: zeus-bench and torch imported once, each command forked.

Reads JSON lines ``{"argv": [...], "env": {...}, "log": PATH}`` on stdin; runs ``zeus-bench ARGV``
(:func:`zeus_bench.cli.main.main`) in a forked child with ``env`` added (``ZEUS_BENCH_FAULT``
makes it SIGKILL itself at a fault point), its output appended to ``log``; answers one JSON line
``{"exit": N}`` or ``{"signal": N}`` and the child's wall seconds. A fork costs milliseconds where
a fresh interpreter importing torch costs seconds, so 20 kills and their reruns fit in a test.
"""

from __future__ import annotations

import json
import os
import sys
import time
import traceback

os.environ["OMP_NUM_THREADS"] = "1"


import torch

from tests.helpers.run_as_user import warm_up
from zeus_bench.cli.main import main
from zeus_bench.core import faults

torch.set_num_threads(1)
warm_up()  # one tiny sweep on a scratch fake GPU: every lazy import done before the forks


def serve() -> None:
    """Answer requests until stdin closes."""
    for line in sys.stdin:
        req = json.loads(line)
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:
            code = 99
            try:
                fd = os.open(req["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
                os.dup2(fd, 1)
                os.dup2(fd, 2)
                os.environ.update(req["env"])
                faults._reached.clear()
                print(f"--- zeus-bench {' '.join(req['argv'])} ({req['env']})", flush=True)
                code = main(req["argv"])
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        _, status = os.waitpid(pid, 0)
        out: dict[str, float] = {"wall_s": round(time.monotonic() - start, 3)}
        if os.WIFSIGNALED(status):
            out["signal"] = os.WTERMSIG(status)
        else:
            out["exit"] = os.WEXITSTATUS(status)
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    serve()
