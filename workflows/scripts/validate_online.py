"""The measured side of the validation: a recurring job trained N times under the online optimizer.

``python workflows/scripts/validate_online.py --workload teacher-student --data-root DIR
--state-dir DIR --gpu-kind h200 --recurrences 30 --out measured.parquet --observe`` trains the
workload N times in one process with :mod:`zeus_bench.online` unchanged: each recurrence asks the
persisted batch-size optimizer (pruning, then Thompson sampling) for a batch size, trains a fresh
model to the registry's target with early stopping (beta x the best cost), the JIT power-limit
profiler measuring the first epoch of each new batch size (observe mode: at the limit in force,
never set), and reports the run's measured energy-time cost back. As in the simulator's replay,
a recurrence runs tries until one reaches the target (at most ``--max-tries``); each try is one
row of the ``validation_online`` table, rewritten atomically after every try, so an interrupted
run keeps what it measured and a rerun with the same state folder resumes after it.

``--deadline-s`` starts no new recurrence after that many seconds (a device call's budget).
On the fake backend (``--backend fake``, CPU, ``--tiny``) steps are paced by the fake GPU's
speed model, as in ``examples/train_online.py``: the whole path runs in seconds without a GPU.
"""

from __future__ import annotations

import argparse
import logging
import math
import sys
import time
from pathlib import Path
from typing import Any

import zeus_bench.studies  # noqa: F401  (registers validation_online)
from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA, Cost
from zeus_bench.core.entry import beta_arg, eta_arg, float_arg

log = logging.getLogger("validate_online")

#: The simulator's bound on tries per recurrence (the paper's replay).
MAX_TRIES = 20
#: Seeds of the measured tries: far from the train trace's (0, 1, ...), so every try is a fresh draw.
SEED_BASE = 1000


def build_parser() -> argparse.ArgumentParser:
    """Options; the job's target, epoch budget and b0 come from the workload registry."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--workload", required=True, help="workload id (registry and entry point)")
    p.add_argument("--data-root", type=Path, required=True, help="dataset folder of the workload")
    p.add_argument(
        "--state-dir", type=Path, required=True, help="the job's optimizer state and power profiles"
    )
    p.add_argument("--out", type=Path, required=True, help="validation_online table to write (.parquet)")
    p.add_argument("--gpu-kind", required=True, help="value of the table's gpu column (h200, fake, ...)")
    p.add_argument("--recurrences", type=int, required=True, help="recurrences N of the job")
    p.add_argument("--batch-sizes", required=True, help="feasible batch sizes, e.g. 64,128,256")
    p.add_argument("--default-batch-size", type=int, default=None, help="b0 (default: the registry's)")
    p.add_argument("--max-epochs", type=int, default=None, help="epoch budget (default: the registry's)")
    p.add_argument("--eta", type=eta_arg, default=DEFAULT_ETA)
    p.add_argument("--beta", type=beta_arg, default=DEFAULT_BETA)
    p.add_argument("--seed", type=int, default=0, help="seed of the batch-size optimizer")
    p.add_argument("--max-tries", type=int, default=MAX_TRIES, help="tries per recurrence, at most")
    p.add_argument("--backend", default=None, help="GPU backend: nvml or fake (default: the environment's)")
    p.add_argument("--device", default=None, help="torch device (default: cuda when available)")
    p.add_argument("--tiny", action="store_true", help="the workload's tiny model (CPU tests)")
    p.add_argument(
        "--observe", action="store_true", help="never set power limits (measure at the current one)"
    )
    p.add_argument(
        "--profile-s", type=float_arg("--profile-s"), default=0.5, help="seconds the JIT profiler measures"
    )
    p.add_argument(
        "--deadline-s",
        type=float_arg("--deadline-s"),
        default=math.inf,
        help="start no recurrence after this",
    )
    p.add_argument(
        "--workloads-file", type=Path, default=None, help="YAML file of extra/overriding workloads"
    )
    return p


def train_once(
    args: argparse.Namespace, workload: Any, backend: Any, spec: Any, batch_sizes: list[int], seed: int
) -> dict[str, Any]:
    """One try: a fresh model trained under a new :class:`ZeusCallback`; its summary."""
    import torch

    from zeus_bench.device.fake_load import fake_load
    from zeus_bench.online.callback import ZeusCallback
    from zeus_bench.online.profiler import ProfilerConfig

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    zeus = ZeusCallback(
        job=args.workload,
        batch_sizes=batch_sizes,
        # b0 capped at the largest batch size, as the simulator caps it at the power trace's largest
        default_batch_size=args.default_batch_size or min(spec.default_batch_size, max(batch_sizes)),
        target_metric=spec.target_metric,
        max_epochs=args.max_epochs or spec.max_epochs,
        state_dir=args.state_dir,
        cost=Cost(args.eta),
        beta=args.beta,
        higher_is_better=spec.metric_direction == "max",
        backend=backend,
        observe=args.observe,
        seed=args.seed,
        recurrences=args.recurrences,
        profiler=ProfilerConfig(
            cost=Cost(args.eta),
            warmup_iters=3,
            warmup_min_s=args.profile_s / 4,
            profile_iters=10,
            profile_min_s=args.profile_s,
        ),
    )
    bs = zeus.batch_size
    torch.manual_seed(seed)
    model = workload.build_model().to(device)
    opt = workload.build_optimizer(model, bs)
    train = workload.real_loader(args.data_root, "train", bs)
    fake = fake_load(zeus.gpus)
    with zeus:
        if fake is not None:
            fake.__enter__()
        try:
            for _epoch in zeus.epochs():
                for batch in train:
                    zeus.on_step_begin()
                    on_device = workload.to_device(batch, device)

                    def step(b: Any = on_device) -> None:
                        workload.train_step_async(model, opt, b)

                    if fake is not None:  # the fake GPU's speed model sets each step's time
                        fake.paced(step, bs)()
                    else:
                        step()
                    zeus.on_step_end(samples=bs)
                val = workload.real_loader(args.data_root, "val", bs)
                zeus.on_epoch_end(metric=float(workload.evaluate(model, val)))
        finally:
            if fake is not None:
                fake.__exit__(None, None, None)
    summary = zeus.summary()
    if summary["power_limit_w"] is None:  # the profiler measured nothing (a run shorter than its window)
        summary["power_limit_w"] = zeus.gpus[0].power_limit_w()  # the limit in force (observe mode)
    return {**summary, "max_power_w": zeus.max_power_w}


def row_of(
    args: argparse.Namespace, recurrence: int, attempt: int, seed: int, s: dict[str, Any]
) -> dict[str, Any]:
    """The ``validation_online`` row of one try's summary."""
    return {
        "gpu": args.gpu_kind,
        "workload": args.workload,
        "recurrence": recurrence,
        "attempt": attempt,
        "batch_size": int(s["batch_size"]),
        "power_limit_w": float(s["power_limit_w"]),
        "epochs": int(s["epochs"]),
        "reached": bool(s["reached"]),
        "early_stopped": bool(s["early_stopped"]),
        "metric": float(s["metric"]),
        "energy_j": float(s["energy_j"]),
        "time_s": float(s["time_s"]),
        "cost": float(s["cost_j"]),
        "max_power_w": float(s["max_power_w"]),
        "seed": seed,
    }


def run(args: argparse.Namespace) -> int:
    """Train the recurrences still missing from ``--out``; returns the number of rows written."""
    import pandas as pd

    from zeus_bench.core.errors import ConfigError
    from zeus_bench.device import get_backend
    from zeus_bench.store import read_table, write_table
    from zeus_bench.sweep.provenance import software_provenance, utc_now
    from zeus_bench.sweep.workload import load_workload
    from zeus_bench.traces.workloads import get_workload

    if args.recurrences < 1 or args.max_tries < 1:
        raise ConfigError("--recurrences and --max-tries must be >= 1")
    if args.out.suffix != ".parquet":
        raise ConfigError(f"--out {args.out}: expected a .parquet file")
    spec = get_workload(args.workload, args.workloads_file)
    workload = load_workload(args.workload, tiny=args.tiny)
    batch_sizes = sorted({int(b) for b in args.batch_sizes.split(",") if b.strip()})
    backend = get_backend(args.backend)
    rows: list[dict[str, Any]] = []
    if args.out.exists():
        rows = read_table(args.out, "validation_online").to_dict("records")
    done = {int(r["recurrence"]) for r in rows if r["reached"]}
    started = time.monotonic()
    gpu = backend.gpus([0])[0]
    prov = {
        "source": "workflows/scripts/validate_online.py",
        "gpu_name": gpu.name(),
        "driver": backend.driver_version(),
        "power_limit_w_at_start": gpu.power_limit_w(),
        "observe": args.observe,
        "tiny": args.tiny,
        "eta": args.eta,
        "beta": args.beta,
        "optimizer_seed": args.seed,
        "started_utc": utc_now(),
        **software_provenance(),
    }
    for r in range(1, args.recurrences + 1):
        if r in done:
            continue
        if time.monotonic() - started > args.deadline_s:
            log.warning(
                "deadline of %.0f s passed: recurrences %d-%d not run", args.deadline_s, r, args.recurrences
            )
            break
        tries = [x for x in rows if x["recurrence"] == r]
        for attempt in range(len(tries) + 1, args.max_tries + 1):
            seed = SEED_BASE + 100 * r + attempt
            t0 = time.monotonic()
            s = train_once(args, workload, backend, spec, batch_sizes, seed)
            rows.append(row_of(args, r, attempt, seed, s))
            write_table(
                pd.DataFrame(rows),
                args.out,
                "validation_online",
                provenance={**prov, "power_limit_w_now": gpu.power_limit_w(), "finished_utc": utc_now()},
            )
            log.info(
                "recurrence %d try %d: batch size %d, %d epochs, metric %.4f, reached %s%s, cost %.4g J (%.1f s)",
                r, attempt, s["batch_size"], s["epochs"], s["metric"], s["reached"],
                " (early stop)" if s["early_stopped"] else "", s["cost_j"], time.monotonic() - t0,
            )  # fmt: skip
            if s["reached"]:
                break
        else:
            raise ConfigError(f"recurrence {r}: no try reached the target in {args.max_tries} tries")
    return len(rows)


def main(argv: list[str] | None = None) -> int:
    """Run; one line and exit status 2 on bad input."""
    from zeus_bench.core.errors import ZeusBenchError

    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        n = run(args)
    except ZeusBenchError as exc:
        print(f"validate_online: error: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {args.out}: {n} tries")
    return 0


if __name__ == "__main__":
    sys.exit(main())
