"""Validation accuracy after every epoch of a workload, to choose its target before tracing it.

The train trace records only the first epoch at which a run reaches the target, so the target
must be chosen first: this prints, per (batch size, seed), the validation metric after each
epoch (one JSON object per run), without any energy measurement (several processes may share a
GPU). Used for ``teacher-student`` before its H200 traces (issue 35).

Usage::

    python3 benchmarks/h200/learning_curves.py --workload teacher-student --data-root DIR \
        --batch-sizes 64,2048 --seeds 0,1 --epochs 40 --max-s 90 --out curves.jsonl
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from zeus_bench.sweep.workload import load_workload


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", required=True)
    p.add_argument("--data-root", type=Path, required=True)
    p.add_argument("--batch-sizes", required=True)
    p.add_argument("--seeds", default="0")
    p.add_argument("--epochs", type=int, default=30)
    p.add_argument("--max-s", type=float, default=120.0, help="stop a run after this many seconds")
    p.add_argument("--tiny", action="store_true")
    p.add_argument("--out", type=Path, required=True)
    args = p.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    w = load_workload(args.workload, tiny=args.tiny)
    with args.out.open("a") as fh:
        for bs in (int(b) for b in args.batch_sizes.split(",")):
            for seed in (int(s) for s in args.seeds.split(",")):
                torch.manual_seed(seed)
                model = w.build_model().to(device)
                opt = w.build_optimizer(model, bs)
                train = w.real_loader(args.data_root, "train", bs)
                curve, times = [], []
                start = time.perf_counter()
                for _ in range(args.epochs):
                    for batch in train:
                        w.train_step_async(model, opt, w.to_device(batch, device))
                    curve.append(round(float(w.evaluate(model, w.real_loader(args.data_root, "val", bs))), 5))
                    times.append(round(time.perf_counter() - start, 3))
                    if times[-1] > args.max_s:
                        break
                row = {"batch_size": bs, "seed": seed, "metric": curve, "elapsed_s": times}
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
