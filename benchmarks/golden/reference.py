"""``results/reference/original_simulator.csv``: savings of the original simulator's runs (``--reference``).

Called by ``run_original.py --reference``: the runs at eta 0.5, beta 2, seeds 1-10 against b0 and
max-batch at the maximum limit, the baselines' expected energy and time taken from the original's
own joined frame. The table is of the ``reference`` kind (``zeus_bench/traces/analysis_schema.py``),
validated before it is written, and written atomically.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
from peer import LABEL, REFERENCE_SEEDS, GoldenError, original, workloads

log = logging.getLogger("golden")


def _baselines(traces: Path, gpu: str) -> dict[str, dict[str, tuple[float, float]]]:
    """Per workload, the expected (energy, time) per recurrence of b0 and max-batch at max limit.

    Uses the original's own joined frame (``Simulator.df``: its ETA and TTA columns), the mean
    over the training paths that reach the target within max epochs.
    """
    simulate, Job, *_ = original()
    train = pd.read_csv(traces / "summary_train.csv")
    power = pd.read_csv(traces / f"summary_power_{gpu}.csv")
    sim = simulate.Simulator(train, power, None, None, verbose=False)
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for wid, spec in workloads().items():
        b0 = min(spec.default_batch_size, int(power.loc[power.dataset == spec.dataset, "batch_size"].max()))
        job = Job(spec.dataset, spec.network, spec.optimizer, spec.target_metric, spec.max_epochs, b0)
        df = job.filter_df(sim.df)
        ok = df.target_epoch.notna() & (df.target_epoch <= spec.max_epochs)
        all_reach = ok.groupby(df.batch_size).all()
        refs = {"b0": b0, "max-batch": int(all_reach[all_reach].index.max())}
        out[wid] = {}
        for name, bs in refs.items():
            rows = df[(df.batch_size == bs) & ok]
            rows = rows[rows.power_limit == df.loc[df.batch_size == bs, "power_limit"].max()]
            out[wid][name] = (float(rows.ETA.mean()), float(rows.TTA.mean()))
    return out


def write_reference(golden: Path, traces: Path, path: Path) -> None:
    """Savings of the original's runs at eta 0.5, beta 2, seeds 1-10 (``original_simulator.csv``)."""
    tries = pd.read_parquet(golden / "original_tries.parquet")
    tries = tries[(tries.eta == 0.5) & (tries.beta == 2.0) & tries.seed.isin(REFERENCE_SEEDS)]
    runs = pd.read_csv(golden / "original_runs.csv")
    sel = runs[(runs.eta == 0.5) & (runs.beta == 2.0) & runs.seed.isin(REFERENCE_SEEDS)]
    if (sel["error"].fillna("") != "").any():
        raise GoldenError("a reference run (eta 0.5, beta 2) raised in the original; no reference written")
    records = []
    for gpu in sorted(tries.gpu.unique()):
        refs = _baselines(traces, gpu)
        for wid, t in tries[tries.gpu == gpu].groupby("workload", sort=False):
            per_rec = t.groupby(["seed", "recurrence"])[["energy_j", "time_s"]].sum()
            for baseline, (ref_e, ref_t) in refs[wid].items():
                for scope in ("cum", "last10"):
                    vals: dict[str, list[float]] = {"energy": [], "time": []}
                    for _, s in per_rec.groupby(level="seed"):
                        s = s.iloc[-10:] if scope == "last10" else s
                        vals["energy"].append(100.0 * (1.0 - s.energy_j.sum() / (ref_e * len(s))))
                        vals["time"].append(100.0 * (1.0 - s.time_s.sum() / (ref_t * len(s))))
                    for metric, v in vals.items():
                        records.append(
                            {
                                "gpu": gpu,
                                "workload": wid,
                                "eta": 0.5,
                                "beta": 2.0,
                                "seeds": f"{min(REFERENCE_SEEDS)}-{max(REFERENCE_SEEDS)}",
                                "baseline": baseline,
                                "metric": f"{metric}_savings_{scope}",
                                "value_pct": round(float(np.mean(v)), 6),
                                "source": LABEL,
                            }
                        )
    from zeus_bench.core.fsutil import atomic_path  # zeus_bench is on the path once workloads() ran

    table = pd.DataFrame(records)
    check_reference(table, path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        table.to_csv(tmp, index=False)
    log.info("wrote %d reference figures to %s", len(records), path)


def check_reference(table: pd.DataFrame, path: Path) -> None:
    """Validate ``table`` against the ``reference`` kind (a :class:`GoldenError` naming the column)."""
    from zeus_bench.core.errors import ZeusBenchError
    from zeus_bench.store import validate

    try:
        validate(table, "reference", str(path))
    except ZeusBenchError as exc:
        raise GoldenError(str(exc)) from None
