"""Train a small model with Zeus online: batch-size optimizer + JIT power-limit profiler.

Each run of this script is one *recurrence* of the job: it asks the persisted optimizer for a
batch size, trains until the validation accuracy reaches the target (or the epoch limit, or an
early stop), and reports the run's energy-time cost back. Run it several times (or pass
``--recurrences``) and watch the batch size settle.

On a CPU with the fake GPU (no NVIDIA hardware needed; needs PyTorch, the extra ``workloads``:
``pip install -e '.[workloads]'``); ``--tiny`` trains a model small enough that the fake GPU's
speed model, not the host, sets each step's time (six recurrences model about 20 s of GPU time)::

    ZEUS_BENCH_FAKE_STATE=/tmp/fake-gpu.json python examples/train_online.py \
        --backend fake --device cpu --tiny --state-dir /tmp/zeus-job --recurrences 6

On a real GPU (setting limits needs root or CAP_SYS_ADMIN; add --observe to only measure)::

    python examples/train_online.py --backend nvml --device cuda --state-dir ~/zeus-job

The Zeus part is the ``ZeusCallback`` lines: construct, ``with zeus:``, ``zeus.epochs()``,
``on_step_begin``/``on_step_end`` around each step and ``on_epoch_end(metric)``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from pathlib import Path

try:
    import torch
    from torch import nn
except ImportError:  # the core install has no torch: one line saying which extra brings it
    print(
        "train_online.py: error: needs PyTorch, which is not installed: pip install -e '.[workloads]'",
        file=sys.stderr,
    )
    sys.exit(2)

from zeus_bench.core.cost import Cost
from zeus_bench.device import BACKENDS, get_backend
from zeus_bench.device.base import GPUBackend
from zeus_bench.device.fake import FakeBackend, FakeGPU
from zeus_bench.device.fake_load import FakeLoad
from zeus_bench.online.callback import ZeusCallback
from zeus_bench.online.profiler import ProfilerConfig


def make_data(
    n: int, dim: int, classes: int, seed: int, device: torch.device, args_noise: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Overlapping Gaussian clusters: a task a small MLP learns in a few epochs."""
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, dim, generator=torch.Generator().manual_seed(1234)) * 2.0
    y = torch.randint(0, classes, (n,), generator=g)
    x = centers[y] + torch.randn(n, dim, generator=g) * args_noise
    return x.to(device), y.to(device)


def one_recurrence(args: argparse.Namespace, backend: GPUBackend) -> dict:
    device = torch.device(args.device)
    x_train, y_train = make_data(args.train_samples, args.dim, args.classes, 0, device, args.noise)
    x_val, y_val = make_data(2000, args.dim, args.classes, 1, device, args.noise)

    zeus = ZeusCallback(
        job="gaussian-mlp",
        batch_sizes=args.batch_sizes,
        default_batch_size=args.default_batch_size,
        target_metric=args.target,
        max_epochs=args.max_epochs,
        state_dir=args.state_dir,
        cost=Cost(args.eta),
        beta=args.beta,
        backend=backend,
        observe=args.observe,
        profiler=ProfilerConfig(
            cost=Cost(args.eta),
            step_w=args.step_w,
            warmup_iters=max(1, args.profile_iters // 3),
            warmup_min_s=args.profile_s / 4,
            profile_iters=args.profile_iters,
            profile_min_s=args.profile_s,
        ),
    )
    bs = zeus.batch_size
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Linear(args.dim, args.hidden), nn.ReLU(), nn.Linear(args.hidden, args.classes)
    ).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr * bs / 64, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    fake_gpu = (
        zeus.gpus[0] if isinstance(backend, FakeBackend) and isinstance(zeus.gpus[0], FakeGPU) else None
    )
    fake = FakeLoad([fake_gpu]) if fake_gpu is not None else None
    if fake_gpu is not None and isinstance(backend, FakeBackend):
        # The fake GPU's speed model sets each step's time (--fake-samples-per-s uncapped, slower
        # capped), not the host's load: a busy machine cannot make a low limit look faster.
        backend.configure(
            index=fake_gpu.index, samples_per_s=args.fake_samples_per_s, half_batch=args.fake_half_batch
        )
        fake_gpu.set_load(min(1.0, 0.4 + bs / 512))  # larger batches keep the (fake) GPU busier
    with zeus:
        for _epoch in zeus.epochs():
            perm = torch.randperm(len(x_train), device=device)
            for i in range(0, len(perm) - bs + 1, bs):
                idx = perm[i : i + bs]
                zeus.on_step_begin()

                def train_step(idx: torch.Tensor = idx) -> None:
                    loss = loss_fn(model(x_train[idx]), y_train[idx])
                    opt.zero_grad(set_to_none=True)
                    loss.backward()
                    opt.step()

                if fake is not None:  # the fake GPU's speed model at the limit in force, not the host's
                    fake.paced(train_step, bs)()
                else:
                    train_step()
                zeus.on_step_end(samples=bs)
            with torch.no_grad():
                acc = (model(x_val).argmax(1) == y_val).float().mean().item()
            zeus.on_epoch_end(metric=acc)
    return {**zeus.summary(), "best_batch_size": zeus.optimizer.best_batch_size()}


def final_summary(runs: list[dict], eta: float) -> str:
    """What the optimizer chose over the recurrences and why, in a few lines."""
    lines = ["", "run  batch  limit_W  epochs  outcome  energy_J  time_s    cost_J  chosen by"]
    for k, r in enumerate(runs, 1):
        outcome = "reached" if r["reached"] else ("early" if r["early_stopped"] else "missed")
        limit = "-" if r["power_limit_w"] is None else f"{r['power_limit_w']:g}"
        lines.append(
            f"{k:>3}  {r['batch_size']:>5}  {limit:>7}  {r['epochs']:>6}  {outcome:<7}  {r['energy_j']:>8.4g}"
            f"  {r['time_s']:>6.3g}  {r['cost_j']:>8.4g}  {r['phase']}"
        )
    last = runs[-1]
    lines += [
        "",
        "outcome: reached the target, stopped early (cost above beta x the best run's), or missed it.",
        "chosen by: pruning (Zeus tries each batch size in turn and drops those that fail or cost too",
        "much), then thompson (Thompson sampling: the batch size whose sampled cost is least).",
        f"Best batch size so far: {last['best_batch_size']}, the least mean cost among runs that reached",
        f"the target (cost = {eta:g} x energy + {1 - eta:g} x max power x time). Each new batch size's first",
        "epoch profiled the power limits and kept the least-cost one; later runs reuse it.",
    ]
    return "\n".join(lines) + "\n"


#: ``--tiny``: a model and data set small enough that the host's time per step stays below the
#: fake GPU's model time, so the profile measures the model, not the host (seconds per run).
TINY = {
    "batch_sizes": [8, 16, 32, 64, 128],
    "default_batch_size": 32,
    "train_samples": 4000,
    "dim": 16,
    "hidden": 32,
    "noise": 2.0,
    "lr": 0.005,
    "max_epochs": 8,
    "target": 0.935,
    "profile_s": 0.05,
    "profile_iters": 5,
    "step_w": 250.0,
    "fake_samples_per_s": 40_000.0,
    "fake_half_batch": 32.0,
}


def _shown(value: object) -> str:
    """A --tiny default as it would be typed."""
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return f"{value:g}" if isinstance(value, float) else str(value)


MAX_RECURRENCES = 10_000  # each recurrence trains a model: far more than an example needs


def recurrences_arg(text: str) -> int:
    """Argparse type of --recurrences: an integer in [1, MAX_RECURRENCES], checked before any work."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if not 1 <= n <= MAX_RECURRENCES:
        raise argparse.ArgumentTypeError(f"must be in [1, {MAX_RECURRENCES}], got {n}")
    return n


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", choices=BACKENDS, default=None)
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    ap.add_argument(
        "--state-dir", type=Path, required=True, help="the job's persisted optimizer and profiles"
    )
    ap.add_argument(
        "--recurrences",
        type=recurrences_arg,
        default=1,
        help=f"recurrences of the job to run (at most {MAX_RECURRENCES})",
    )
    ap.add_argument(
        "--observe", action="store_true", help="never set power limits (measure at the current one)"
    )
    ap.add_argument("--eta", type=float, default=0.5)
    ap.add_argument("--beta", type=float, default=2.0)
    ap.add_argument("--batch-sizes", type=int, nargs="+", default=[32, 64, 128, 256, 512])
    ap.add_argument("--default-batch-size", type=int, default=128)
    ap.add_argument("--target", type=float, default=0.93, help="validation accuracy to reach")
    ap.add_argument("--max-epochs", type=int, default=20)
    ap.add_argument("--train-samples", type=int, default=50000)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=256, help="hidden units of the MLP")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument(
        "--noise", type=float, default=4.0, help="spread of the clusters (harder task when larger)"
    )
    ap.add_argument("--lr", type=float, default=0.05, help="SGD learning rate per 64 samples of batch")
    ap.add_argument("--profile-s", type=float, default=0.2, help="seconds measured per power limit")
    ap.add_argument("--profile-iters", type=int, default=10, help="steps measured per power limit (at least)")
    ap.add_argument("--step-w", type=float, default=100.0, help="step between profiled power limits, W")
    ap.add_argument(
        "--fake-samples-per-s",
        type=float,
        default=50_000.0,
        help="the fake GPU's uncapped speed, samples/s (--backend fake)",
    )
    ap.add_argument(
        "--fake-half-batch",
        type=float,
        default=0.0,
        help="batch size at which the fake GPU runs at half its speed (0: every batch size at full speed)",
    )
    ap.add_argument(
        "--tiny",
        action="store_true",
        help="a small model and data set (defaults: "
        + ", ".join(f"--{k.replace('_', '-')} {_shown(v)}" for k, v in TINY.items())
        + "); options given win",
    )
    ap.add_argument("--json", action="store_true", help="print each recurrence as a JSON line, no summary")
    if "--tiny" in sys.argv[1:]:
        ap.set_defaults(**TINY)
    args = ap.parse_args()
    if args.tiny:
        torch.set_num_threads(1)  # a tiny model gains nothing from threads, and loses on a busy host
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    backend = get_backend(args.backend)
    runs = []
    for _ in range(args.recurrences):
        runs.append(one_recurrence(args, backend))
        if args.json:
            print(json.dumps(runs[-1]))
    if not args.json:
        print(final_summary(runs, args.eta), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
