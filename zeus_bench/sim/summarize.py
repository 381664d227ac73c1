"""Summarise a ``runs`` table: savings against two baselines, regret, convergence.

Per (gpu, workload, policy, eta, beta, window) and per seed:

* **Savings** of energy and of time against ``baseline`` and against ``max-batch``:
  ``100 x (1 - policy total / reference total)`` where the reference total is the reference
  policy's *expected* energy (time) per recurrence (mean over converging training paths, the
  paper's convention), summed over the same recurrences of the same seed; cumulative (all
  recurrences) and over the last 10 recurrences (of each group, for arrival tables).
* **Regret** against ``oracle``: the policy's summed cost minus the oracle's expected cost over
  the same recurrences (J).
* **Settling**: the first recurrence from which every try uses the policy's final (batch size,
  power limit).

Then mean and standard deviation (population) over seeds. A reference policy missing from the
table leaves its columns empty (with a warning).
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd

from zeus_bench.errors import ConfigError
from zeus_bench.sim.schema import SUMMARY

log = logging.getLogger(__name__)

GROUP = ["gpu", "workload", "policy", "eta", "beta", "window"]
SETTING = ["gpu", "workload", "eta", "beta", "window"]
LAST = 10
REFERENCES = {"baseline": "baseline", "max_batch": "max-batch"}


def _per_recurrence(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per (setting, policy, seed, group, recurrence): totals and the reference figures."""
    df = runs.copy()
    df["group"] = df["group"].astype("string").fillna("")
    keys = [*GROUP, "seed", "group", "recurrence"]
    df = df.sort_values([*keys, "attempt"], kind="stable")
    g = df.groupby(keys, sort=False, dropna=False)
    rec = g.agg(
        energy_j=("energy_j", "sum"),
        time_s=("time_s", "sum"),
        cost=("cost", "sum"),
        expected_energy_j=("expected_energy_j", "first"),
        expected_time_s=("expected_time_s", "first"),
        expected_cost=("expected_cost", "first"),
        batch_size=("batch_size", "last"),
        power_limit_w=("power_limit_w", "last"),
        bs_min=("batch_size", "min"),
        bs_max=("batch_size", "max"),
        pl_min=("power_limit_w", "min"),
        pl_max=("power_limit_w", "max"),
    ).reset_index()
    # A recurrence is "at" a configuration only if every one of its tries used it.
    rec["uniform"] = (rec["bs_min"] == rec["bs_max"]) & (rec["pl_min"] == rec["pl_max"])
    last_rec = rec.groupby([*GROUP, "seed", "group"])["recurrence"].transform("max")
    rec["last10"] = rec["recurrence"] > last_rec - LAST
    return rec


def _settle(rec: pd.DataFrame) -> pd.Series:
    """Per (policy setting, seed): first recurrence from which all tries use the final config.

    Averaged over groups for arrival tables. One more than the last recurrence means the policy
    had not settled (its last recurrence mixed configurations).
    """
    keys = [*GROUP, "seed", "group"]
    by = rec.groupby(keys, sort=False)
    final_bs = by["batch_size"].transform("last")
    final_pl = by["power_limit_w"].transform("last")
    at = rec["uniform"] & (rec["batch_size"] == final_bs) & (rec["power_limit_w"] == final_pl)
    first = by["recurrence"].transform("min")
    off = rec["recurrence"].where(~at, first - 1)
    settle = off.groupby([rec[k] for k in keys], sort=False).max() + 1
    return settle.groupby(level=list(range(len(GROUP) + 1))).mean()


def summarize(runs: pd.DataFrame) -> pd.DataFrame:
    """Summary table (``sim_summary`` schema) of a ``runs`` frame.

    Raises:
        ConfigError: the table has no rows.
    """
    if runs.empty:
        raise ConfigError("the runs table has no rows")
    rec = _per_recurrence(runs)
    seed_keys = [*GROUP, "seed"]
    per_seed = rec.groupby(seed_keys).agg(
        energy_j=("energy_j", "sum"),
        time_s=("time_s", "sum"),
        cost=("cost", "sum"),
        recurrences=("recurrence", "size"),
    )

    def reference(policy: str) -> pd.DataFrame | None:
        ref = rec[rec["policy"] == policy]
        if ref.empty:
            log.warning("no %r runs in the table: its comparison columns stay empty", policy)
            return None
        # Expected per recurrence, matched on (setting, seed, group, recurrence).
        return ref[
            [*SETTING, "seed", "group", "recurrence", "expected_energy_j", "expected_time_s", "expected_cost"]
        ]

    matched_keys = [*SETTING, "seed", "group", "recurrence"]
    for col, policy in REFERENCES.items():
        ref = reference(policy)
        for metric in ("energy", "time"):
            unit = "energy_j" if metric == "energy" else "time_s"
            for scope in ("cum", "last10"):
                name = f"{metric}_savings_vs_{col}_{scope}_pct"
                if ref is None:
                    per_seed[name] = np.nan
                    continue
                m = rec[[*matched_keys, "policy", "last10", unit]].merge(ref, on=matched_keys, how="left")
                if scope == "last10":
                    m = m[m["last10"]]
                sums = m.groupby(seed_keys).agg(own=(unit, "sum"), ref=(f"expected_{unit}", "sum"))
                per_seed[name] = 100.0 * (1.0 - sums["own"] / sums["ref"])
    oracle = reference("oracle")
    if oracle is None:
        per_seed["regret"] = np.nan
    else:
        m = rec[[*matched_keys, "policy", "cost"]].merge(oracle, on=matched_keys, how="left")
        sums = m.groupby(seed_keys).agg(own=("cost", "sum"), ref=("expected_cost", "sum"))
        per_seed["regret"] = sums["own"] - sums["ref"]
    per_seed["settle"] = _settle(rec)

    agg = per_seed.groupby(GROUP)
    out = pd.DataFrame(
        {
            "seeds": agg.size(),
            "recurrences": agg["recurrences"].max(),
            "energy_j_mean": agg["energy_j"].mean(),
            "time_s_mean": agg["time_s"].mean(),
        }
    )
    for col in per_seed.columns:
        if "_savings_vs_" in col:
            out[f"{col}_mean"] = agg[col].mean()
            out[f"{col}_std"] = agg[col].std(ddof=0)
    out["regret_vs_oracle_cost_j_mean"] = agg["regret"].mean()
    out["regret_vs_oracle_cost_j_std"] = agg["regret"].std(ddof=0)
    out["settle_recurrence_mean"] = agg["settle"].mean()
    out["settle_recurrence_std"] = agg["settle"].std(ddof=0)
    out = out.reset_index()
    return out[SUMMARY.names]
