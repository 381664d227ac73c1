"""Train the sentiment140 workload on the Capriccio slices, one after the other, with the online optimizer.

``python workflows/scripts/capriccio_train.py --slices DIR --state-dir DIR --out DIR`` is the
paper's drift experiment: each slice of ``zeus-bench capriccio`` is one recurrence of the job.
The batch-size optimizer (pruning + Thompson sampling, window 10) and the JIT power-limit
profiler of :mod:`zeus_bench.online` choose the batch size and limit of each recurrence; the
run trains the slice's training tweets until the validation accuracy reaches the target, the
epoch limit or an early stop (beta x the best cost), as in the paper (batch sizes 8-128, b0 128,
target 0.84, 10 epochs, eta 0.5, beta 2).

It writes, into ``--out``:

- ``capriccio.parquet``: one row per slice (slice, batch size, power limit, epochs, reached,
  early stop, metric, energy, time, cost): the report reads it;
- ``train.parquet``: the train trace of those runs (the project's ``train`` table: one training
  path per slice, ``run`` = slice, ``target_epoch`` empty where the target was not reached),
  which ``zeus-bench simulate`` reads beside a power trace.

A slice is resumed, not redone, when the state folder already holds its run (the optimizer's
state file persists between recurrences). Needs PyTorch and the ``workloads`` package; on a CPU
with the fake GPU (``--backend fake --device cpu --tiny``) it checks the whole path quickly.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA, Cost
from zeus_bench.core.entry import beta_arg, eta_arg, float_arg

log = logging.getLogger("capriccio_train")

PAPER = {
    "batch_sizes": [8, 16, 32, 64, 128],
    "b0": 128,
    "target": 0.84,
    "max_epochs": 10,
    "eta": DEFAULT_ETA,  # the paper's eta and beta are the defaults
    "beta": DEFAULT_BETA,
}
WINDOW = 10


def build_parser() -> argparse.ArgumentParser:
    """Options (the paper's settings by default)."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--slices", type=Path, required=True, help="folder written by zeus-bench capriccio")
    p.add_argument(
        "--state-dir", type=Path, required=True, help="the job's optimizer state and power profiles"
    )
    p.add_argument("--out", type=Path, required=True, help="folder for capriccio.parquet and train.parquet")
    p.add_argument("--backend", default=None, help="GPU backend: nvml (default) or fake")
    p.add_argument("--device", default=None, help="torch device (default cuda when available)")
    p.add_argument("--tiny", action="store_true", help="a shrunken BERT (tests on the CPU)")
    p.add_argument("--batch-sizes", default=",".join(map(str, PAPER["batch_sizes"])))
    p.add_argument("--default-batch-size", type=int, default=PAPER["b0"])
    p.add_argument("--target", type=float_arg("--target"), default=PAPER["target"])
    p.add_argument("--max-epochs", type=int, default=PAPER["max_epochs"])
    p.add_argument("--eta", type=eta_arg, default=PAPER["eta"])
    p.add_argument("--beta", type=beta_arg, default=PAPER["beta"])
    p.add_argument("--window", type=int, default=WINDOW)
    p.add_argument("--max-slices", type=int, default=None, help="train only the first N slices")
    p.add_argument("--max-steps", type=int, default=None, help="cap the steps of an epoch (tests)")
    p.add_argument(
        "--profile-s", type=float_arg("--profile-s"), default=2.0, help="seconds of profiling per power limit"
    )
    p.add_argument("--observe", action="store_true", help="never set power limits")
    return p


def train_slice(args: argparse.Namespace, root: Path, backend: Any) -> dict[str, Any]:
    """One recurrence: train on one slice under the online optimizer; return its summary."""
    import torch

    from zeus_bench.online.callback import ZeusCallback
    from zeus_bench.online.profiler import ProfilerConfig
    from zeus_bench.sweep.workload import load_workload

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    workload = load_workload("sentiment140", tiny=args.tiny)
    zeus = ZeusCallback(
        job="capriccio",
        batch_sizes=[int(b) for b in args.batch_sizes.split(",")],
        default_batch_size=args.default_batch_size,
        target_metric=args.target,
        max_epochs=args.max_epochs,
        state_dir=args.state_dir,
        cost=Cost(args.eta),
        beta=args.beta,
        backend=backend,
        observe=args.observe,
        window=args.window,
        profiler=ProfilerConfig(
            cost=Cost(args.eta),
            warmup_iters=2,
            warmup_min_s=args.profile_s / 4,
            profile_iters=4,
            profile_min_s=args.profile_s,
        ),
    )
    bs = zeus.batch_size
    torch.manual_seed(0)
    model = workload.build_model().to(device)
    opt = workload.build_optimizer(model, bs)
    fake_gpu = zeus.gpus[0] if backend.name == "fake" else None
    with zeus:
        for _epoch in zeus.epochs():
            for step, batch in enumerate(workload.real_loader(root, "train", bs)):
                if args.max_steps is not None and step >= args.max_steps:
                    break
                zeus.on_step_begin()
                started = time.perf_counter()
                workload.train_step(model, opt, workload.to_device(batch, device))
                if fake_gpu is not None:  # the fake GPU's throughput model: capped steps run longer
                    elapsed = time.perf_counter() - started
                    time.sleep(elapsed * (1.0 / fake_gpu.relative_throughput() - 1.0))
                zeus.on_step_end(samples=bs)
            zeus.on_epoch_end(metric=workload.evaluate(model, workload.real_loader(root, "val", bs)))
    return {**zeus.summary(), "learning_rate": float(opt.param_groups[0]["lr"])}


def write_outputs(rows: list[dict[str, Any]], out: Path) -> None:
    """``capriccio.parquet`` (one row per slice) and the train trace ``train.parquet``."""
    import pandas as pd

    from zeus_bench.core.fsutil import atomic_path
    from zeus_bench.store import write_table
    from zeus_bench.traces.workloads import load_workloads

    spec = load_workloads()["sentiment140"]
    runs = pd.DataFrame(rows)
    with atomic_path(out / "capriccio.parquet") as tmp:
        runs.to_parquet(tmp, index=False)
    train = pd.DataFrame(
        {
            "dataset": spec.dataset,
            "network": spec.network,
            "optimizer": spec.optimizer,
            "batch_size": runs["batch_size"].astype(int),
            "learning_rate": runs["learning_rate"].astype(float),
            "run": runs["slice"].astype(int),
            "target_metric": float(rows[0]["target_metric"]),
            "target_epoch": [
                int(e) if r else pd.NA for e, r in zip(runs["epochs"], runs["reached"], strict=True)
            ],
        }
    )
    train["target_epoch"] = train["target_epoch"].astype("Int64")
    write_table(
        train, out / "train.parquet", "train", {"sources": {"capriccio": str(out / "capriccio.parquet")}}
    )


def main(argv: list[str] | None = None) -> int:
    """Train every slice in order; exit status 2 with one line on bad input."""
    import pandas as pd

    from zeus_bench.core.errors import ZeusBenchError
    from zeus_bench.device import get_backend

    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        index_path = args.slices / "slices.csv"
        if not index_path.is_file():
            raise ZeusBenchError(f"{index_path}: no such file (run zeus-bench capriccio first)")
        index = pd.read_csv(index_path)
        slices = [int(k) for k in index["slice"]][: args.max_slices]
        args.state_dir.mkdir(parents=True, exist_ok=True)
        done_path = args.state_dir / "capriccio-runs.json"
        rows: list[dict[str, Any]] = json.loads(done_path.read_text()) if done_path.is_file() else []
        backend = get_backend(args.backend)
        for k in slices[len(rows) :]:
            started = time.perf_counter()
            s = train_slice(args, args.slices / f"slice-{k:02d}", backend)
            s.update(slice=k, target_metric=args.target)
            s.pop("profiled_limits_w", None)
            rows.append(s)
            done_path.write_text(json.dumps(rows))
            log.info(
                "slice %d/%d: batch size %d, %d epochs, reached %s (%.1f s)",
                k, len(slices), s["batch_size"], s["epochs"], s["reached"], time.perf_counter() - started,
            )  # fmt: skip
        args.out.mkdir(parents=True, exist_ok=True)
        write_outputs(rows, args.out)
    except ZeusBenchError as exc:
        print(f"capriccio_train: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
