"""Each workload's training step against a minimal hand-written loop of the same model, same GPU.

For every workload (at its published default batch size b0 unless ``--batch-size`` says
otherwise) two loops train on one synthetic batch made once on the device:

* **workload**: ``workload.train_step_async`` with ``workload.build_optimizer``, exactly what
  ``zeus-bench sweep`` runs;
* **minimal**: a loop written here by hand, as a practitioner would for speed: the network from
  ``workload.build_model()`` (the same model), the same optimiser class and learning rate built
  directly with PyTorch's fused (Adam, AdamW) or foreach (Adadelta) kernels, bf16 autocast
  where the workload uses it, channels-last for the convnets, the loss written inline (the
  BERT heads' own loss for SQuAD and Sentiment140), no host synchronisation inside the loop.

The two are timed in alternation (A B B A ...): each run is ``--steps`` steps after a device
synchronisation, ended by one; the median of ``--repeats`` runs per loop is reported. The
workload passes when its median step time is within ``--tolerance`` (10 %) of the minimal loop's.

Usage (GPU machine; nothing is written to the GPU's settings)::

    python3 benchmarks/device/workload_speed.py --out speed.json
    python3 benchmarks/device/workload_speed.py --workloads imagenet,cifar100 --compile

CPU smoke test of the script itself: ``--device cpu --tiny --steps 2 --repeats 1``.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from zeus_bench.sweep.workload import TrainingWorkload, available_workloads, load_workload
from zeus_bench.traces.workloads import get_workload

log = logging.getLogger("workload_speed")

IDS = ("cifar100", "imagenet", "squad", "sentiment140", "librispeech", "movielens-1m")
BERT_INPUTS = ("input_ids", "token_type_ids", "attention_mask")


def minimal_loss(workload_id: str, model: torch.nn.Module, batch: Any) -> torch.Tensor:
    """The loss a practitioner writes inline for each model (independent of the workload's ``loss``)."""
    if workload_id in ("cifar100", "imagenet"):
        images, labels = batch
        return F.cross_entropy(model(images), labels)
    if workload_id == "squad":
        out = model(
            **{k: batch[k] for k in BERT_INPUTS},
            start_positions=batch["start_positions"],
            end_positions=batch["end_positions"],
        )
        return out.loss
    if workload_id == "sentiment140":
        return model(**{k: batch[k] for k in BERT_INPUTS}, labels=batch["labels"]).loss
    if workload_id == "librispeech":
        log_probs, out_lengths = model(batch["spectrograms"], batch["lengths"])
        return F.ctc_loss(
            log_probs.float(), batch["targets"], out_lengths, batch["target_lengths"], zero_infinity=True
        )
    if workload_id == "movielens-1m":
        return F.binary_cross_entropy_with_logits(
            model(batch["users"], batch["items"]).float(), batch["labels"]
        )
    raise ValueError(f"no minimal loop for {workload_id!r}")


def minimal_optimizer(workload_id: str, model: torch.nn.Module, lr: float) -> torch.optim.Optimizer:
    """The workload's optimiser class and learning rate, built by hand with the fast kernels."""
    cuda = next(model.parameters()).is_cuda
    params = model.parameters()
    if workload_id in ("cifar100", "imagenet"):
        return torch.optim.Adadelta(params, lr=lr, foreach=cuda or None)
    if workload_id in ("squad", "sentiment140"):
        return torch.optim.AdamW(params, lr=lr, weight_decay=0.01, fused=cuda or None)
    if workload_id == "librispeech":
        return torch.optim.AdamW(params, lr=lr, fused=cuda or None)
    return torch.optim.Adam(params, lr=lr, fused=cuda or None)


def sync(device: torch.device) -> None:
    """Wait for the device."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_steps(step: Callable[[], object], steps: int, device: torch.device) -> float:
    """Seconds per step over ``steps`` steps (synchronised at both ends)."""
    sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    sync(device)
    return (time.perf_counter() - start) / steps


def compare(
    workload: TrainingWorkload, batch_size: int, device: torch.device, args: argparse.Namespace
) -> dict[str, Any]:
    """Time the workload's step and the minimal loop for one workload; return the row."""
    wid = workload.id
    torch.manual_seed(0)
    model = workload.build_model().to(device)
    opt = workload.build_optimizer(model, batch_size)
    batch = next(workload.synthetic_batches(batch_size, device, seed=0))

    def workload_step() -> object:
        return workload.train_step_async(model, opt, batch)

    torch.manual_seed(0)
    hand = workload.build_model().to(device)
    if getattr(workload, "channels_last", False):
        hand = hand.to(memory_format=torch.channels_last)
    hand.train()
    hand_net = torch.compile(hand) if args.compile else hand
    hand_opt = minimal_optimizer(wid, hand, float(opt.param_groups[0]["lr"]))
    amp = bool(workload.amp) and device.type == "cuda"

    def minimal_step() -> object:
        hand_opt.zero_grad(set_to_none=True)
        with torch.autocast(device_type=device.type, dtype=torch.bfloat16, enabled=amp):
            loss = minimal_loss(wid, hand_net, batch)
        loss.backward()
        hand_opt.step()
        return loss.detach()

    loops = {"workload": workload_step, "minimal": minimal_step}
    per_step = 0.0
    for fn in loops.values():  # warm-up: autotuning, allocator, compilation
        time_steps(fn, max(1, args.warmup), device)
        per_step = max(per_step, time_steps(fn, 2, device))
    steps = max(args.steps, math.ceil(args.min_run_s / per_step))  # runs long enough to time
    times: dict[str, list[float]] = {name: [] for name in loops}
    order = ["workload", "minimal", "minimal", "workload"]
    for r in range(args.repeats):
        name = order[r % 4]
        other = "minimal" if name == "workload" else "workload"
        for n in (name, other):
            times[n].append(time_steps(loops[n], steps, device))
    losses = {name: float(fn()) for name, fn in loops.items()}  # one read: both finite?
    w, m = statistics.median(times["workload"]), statistics.median(times["minimal"])
    row = {
        "workload": wid,
        "network": get_workload(wid).network,
        "batch_size": batch_size,
        "amp_bf16": amp,
        "channels_last": bool(getattr(workload, "channels_last", False)),
        "optimizer": type(opt).__name__,
        "compile": bool(args.compile),
        "steps_per_run": steps,
        "workload_step_ms": 1e3 * w,
        "minimal_step_ms": 1e3 * m,
        "workload_samples_per_s": batch_size / w,
        "minimal_samples_per_s": batch_size / m,
        "ratio": w / m,
        "within_tolerance": w / m <= 1 + args.tolerance,
        "runs_ms": {k: [round(1e3 * v, 4) for v in vs] for k, vs in times.items()},
        "final_loss": losses,
    }
    return row


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command-line arguments."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workloads", default=",".join(IDS), help="comma-separated ids (default: all six)")
    p.add_argument(
        "--batch-size",
        action="append",
        default=[],
        metavar="ID=B",
        help="batch size of one workload (default b0)",
    )
    p.add_argument("--device", default="cuda", help="torch device (default cuda)")
    p.add_argument("--steps", type=int, default=20, help="steps per timed run (default 20)")
    p.add_argument("--warmup", type=int, default=10, help="warm-up steps per loop (default 10)")
    p.add_argument(
        "--min-run-s", type=float, default=0.3, help="each timed run lasts at least this long (default 0.3)"
    )
    p.add_argument("--repeats", type=int, default=6, help="timed runs per loop (default 6)")
    p.add_argument("--tolerance", type=float, default=0.10, help="allowed slowdown (default 0.10)")
    p.add_argument("--compile", action="store_true", help="torch.compile both loops' models")
    p.add_argument("--tiny", action="store_true", help="tiny models (CPU smoke test)")
    p.add_argument("--out", type=Path, default=None, help="JSON file for the rows and the environment")
    args = p.parse_args(argv)
    if min(args.steps, args.repeats) < 1 or args.warmup < 0:
        p.error("--steps and --repeats must be >= 1, --warmup >= 0")
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the comparison; print a table; exit 1 if a workload is outside the tolerance."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    args = parse_args(argv)
    ids = [w for w in args.workloads.split(",") if w]
    unknown = sorted(set(ids) - set(available_workloads()))
    if unknown:
        print(f"workload_speed: unknown workload(s) {', '.join(unknown)}", file=sys.stderr)
        return 2
    sizes = {}
    for item in args.batch_size:
        wid, _, b = item.partition("=")
        if not b.isdigit() or int(b) < 1:
            print(f"workload_speed: --batch-size expects ID=B, got {item!r}", file=sys.stderr)
            return 2
        sizes[wid] = int(b)
    device = torch.device(args.device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    rows = []
    for wid in ids:
        workload = load_workload(wid, tiny=args.tiny)
        workload.compile = args.compile
        b = sizes.get(wid, get_workload(wid).default_batch_size)
        log.info("%s at batch size %d", wid, b)
        rows.append(compare(workload, b, device, args))
        if device.type == "cuda":
            torch.cuda.empty_cache()  # the last workload's models are gone with compare()'s frame
    header = f"{'workload':<13} {'batch':>6} {'workload ms':>12} {'minimal ms':>11} {'ratio':>6}  within {args.tolerance:.0%}"
    print(header)
    for r in rows:
        print(
            f"{r['workload']:<13} {r['batch_size']:>6} {r['workload_step_ms']:>12.3f} "
            f"{r['minimal_step_ms']:>11.3f} {r['ratio']:>6.3f}  {'yes' if r['within_tolerance'] else 'NO'}"
        )
    if args.out is not None:
        env = {
            "torch": torch.__version__,
            "cuda": torch.version.cuda,
            "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
            "settings": {k: v for k, v in vars(args).items() if k != "out"},
        }
        args.out.write_text(json.dumps({"environment": env, "rows": rows}, indent=1, default=str))
    return 0 if all(r["within_tolerance"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
