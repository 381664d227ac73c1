"""``python -m analysis.readme --out results/README.md``: the column reference of every table.

The rows of Parquet tables come from their registered schemas (:func:`zeus_bench.store.schemas`)
so the documentation cannot drift from the code; the CSV tables written by ``zeus-bench
potential`` and ``zeus-bench pareto`` are described here, and a test checks that every column
they write is documented.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from zeus_bench.fsutil import atomic_write_text
from zeus_bench.store import schemas

# Where each registered kind lives in results/ (kinds not listed are documented without a path).
KIND_PATHS: dict[str, str] = {
    "train": "`data/traces/zeus/train.parquet` (imported, git-ignored); `results/capriccio/train.parquet` (the Capriccio runs, `workflows/capriccio.smk`)",
    "power": "`data/traces/zeus/power-<gpu>.parquet` (imported, git-ignored); `results/traces/<gpu>/power-<gpu>.parquet` (this project's sweeps, committed)",
    "runs": "`results/sim/<gpu>/main.parquet`, `eta-<eta>.parquet`, `beta-<beta>.parquet`, `alibaba.parquet` (git-ignored)",
    "sim_summary": "`results/summary/<gpu>.csv` (committed); the Alibaba replay's: `results/alibaba/<gpu>.csv`; the sweeps': `results/sim/<gpu>/summary-eta.parquet`, `summary-beta.parquet` (git-ignored)",
    "warmstart_jobs": "`results/policy/warmstart_jobs.csv` (committed; `zeus-bench study`, `zeus_bench.sim.warmjobs`)",
    "arena_jobs": "`results/policy/arena/{known,unknown}/arena_jobs.parquet` (committed; `zeus-bench arena --horizon known|unknown --fold both --out DIR`)",
    "arena_summary": "`results/policy/arena/{known,unknown}/arena_summary.parquet` (committed)",
}

_BASE = "b0 at the maximum power limit"
_MAXB = "the largest batch size whose runs all reach the target, at the maximum power limit"
# Column | Description | Unit | Example of the table `zeus-bench potential --format csv` writes.
POTENTIAL_DOC: dict[str, tuple[str, str, str]] = {
    "gpu": ("GPU kind of the power trace", "", "v100"),
    "workload": ("Workload id (registry)", "", "imagenet"),
    "eta": ("Energy weight of the cost used to pick the least-cost configuration", "", "0.5"),
    "b0": ("Default batch size, capped at the GPU's largest traced batch size", "samples", "256"),
    "max_power_w": ("Maximum power limit x GPUs (MAXPOWER of the cost)", "W", "250"),
    "baseline_eta_j": (f"Expected energy to accuracy of the baseline ({_BASE})", "J", "1.641e7"),
    "baseline_tta_s": ("Expected time to accuracy of the baseline", "s", "74520"),
    "min_energy_bs": (
        "Batch size of the least-energy configuration whose runs all converge",
        "samples",
        "360",
    ),
    "min_energy_pl_w": ("Power limit of that configuration", "W", "150"),
    "min_energy_eta_j": ("Its expected energy to accuracy", "J", "1.25e7"),
    "min_energy_tta_s": ("Its expected time to accuracy", "s", "86940"),
    "min_energy_saving_pct": (
        "Energy saved by it against the baseline: 100 x (1 - new / baseline)",
        "%",
        "23.85",
    ),
    "min_energy_time_saving_pct": ("Time saved by it against the baseline (negative: slower)", "%", "-16.67"),
    "min_cost_bs": ("Batch size of the least-cost configuration at `eta` (the oracle)", "samples", "360"),
    "min_cost_pl_w": ("Power limit of the least-cost configuration", "W", "175"),
    "min_cost_eta_j": ("Its expected energy to accuracy", "J", "1.323e7"),
    "min_cost_tta_s": ("Its expected time to accuracy", "s", "80110"),
    "min_cost_energy_saving_pct": ("Energy saved by it against the baseline", "%", "19.37"),
    "min_cost_time_saving_pct": ("Time saved by it against the baseline", "%", "-7.505"),
    "maxbatch_bs": (f"Batch size of the max-batch baseline ({_MAXB})", "samples", "360"),
    "maxbatch_eta_j": ("Expected energy to accuracy of the max-batch baseline", "J", "1.592e7"),
    "maxbatch_tta_s": ("Expected time to accuracy of the max-batch baseline", "s", "73210"),
    "min_energy_saving_vs_maxbatch_pct": (
        "Energy saved by the least-energy configuration against max-batch",
        "%",
        "21.51",
    ),
    "min_energy_time_saving_vs_maxbatch_pct": (
        "Time saved by the least-energy configuration against max-batch",
        "%",
        "-18.76",
    ),
    "min_cost_energy_saving_vs_maxbatch_pct": (
        "Energy saved by the least-cost configuration against max-batch",
        "%",
        "16.9",
    ),
    "min_cost_time_saving_vs_maxbatch_pct": (
        "Time saved by the least-cost configuration against max-batch",
        "%",
        "-9.432",
    ),
}

# Columns of `zeus-bench pareto --all` (results/configs/<gpu>/<workload>.parquet).
CONFIGS_DOC: dict[str, tuple[str, str, str]] = {
    "gpu": ("GPU kind", "", "v100"),
    "workload": ("Workload id", "", "librispeech"),
    "batch_size": ("Batch size", "samples", "48"),
    "power_limit_w": ("Power limit", "W", "150"),
    "time_per_epoch_s": ("Time of one epoch (mean over the trace's rows)", "s", "4860.3"),
    "avg_power_w": ("Average power while training", "W", "134.7"),
    "energy_per_epoch_j": ("Energy of one epoch: time per epoch x average power", "J", "654700"),
    "reach_fraction": ("Fraction of the training paths that reach the target within max epochs", "", "1.0"),
    "mean_epochs": ("Mean epochs to the target over the paths that reach it", "epochs", "9.4"),
    "feasible": ("True when every path reaches the target within max epochs", "", "True"),
    "eta_j": ("Expected energy to accuracy: mean epochs x energy per epoch", "J", "5.85e6"),
    "tta_s": ("Expected time to accuracy: mean epochs x time per epoch", "s", "45780"),
    "cost": ("Expected cost at the workflow's eta: eta x ETA + (1 - eta) x MAXPOWER x TTA", "J", "8.65e6"),
    "on_frontier": ("True when no feasible configuration is better in both ETA and TTA", "", "False"),
}


#: The zeus-plus study's committed tables (``zeus_bench.sim.study``, rule ``policy_study``).
POLICY_COMPARISON_DOC: dict[str, tuple[str, str, str]] = {
    "gpu": ("GPU kind", "", "v100"),
    "workload": ("Workload id", "", "imagenet"),
    "policy": ("Policy (zeus, zeus-plus)", "", "zeus-plus"),
    "seeds": ("Seeds replayed", "", "10"),
    "recurrences": ("Recurrences per seed", "", "108"),
    "cost_ratio_vs_baseline_cum_mean": (
        "Cumulative cost over the baseline's expected cumulative cost (b0 at the maximum limit), mean over seeds",
        "",
        "0.987",
    ),
    "cost_ratio_vs_baseline_cum_std": ("Its standard deviation over seeds (population)", "", "0.004"),
    "cost_ratio_vs_max_batch_cum_mean": ("The same against max-batch at the maximum limit", "", "1.011"),
    "cost_ratio_vs_max_batch_cum_std": ("Its standard deviation over seeds (population)", "", "0.004"),
    "regret_vs_oracle_cum_pct_mean": (
        "100 x (cumulative cost / the oracle's expected cumulative cost - 1), mean over seeds",
        "%",
        "4.01",
    ),
    "regret_vs_oracle_cum_pct_std": ("Its standard deviation over seeds (population)", "%", "0.5"),
    "failed_recurrences_mean": ("Recurrences that never reached the target, mean over seeds", "", "0"),
}
#: The cross-fitted tuning of zeus-plus (``python -m zeus_bench.sim.tuning``): one row per setting.
POLICY_TUNING_DOC: dict[str, tuple[str, str, str]] = {
    "margin, up_first, horizon, safety": (
        "The setting's constants (class attributes of zeus-plus)",
        "",
        "0.2",
    ),
    "<gpu>_regret_pct": ("Mean regret over the GPU's jobs on the tune half, mean over seeds", "%", "2.9"),
    "<gpu>_zeus_regret_pct": ("Zeus's, on the same seeds and paths", "%", "3.2"),
    "<gpu>_regret_ratio": ("Their ratio", "", "0.92"),
    "<gpu>_p95_max": (
        "Largest over the jobs of the 95th percentile over seeds of cost / baseline",
        "",
        "1.004",
    ),
    "<gpu>_jobs_unsafe": ("Jobs whose 95th percentile exceeds 1.02", "", "0"),
    "regret_ratio_mean": ("Mean over GPUs of the regret ratio", "", "0.78"),
    "p95_max": ("Largest 95th percentile over every job", "", "1.039"),
    "jobs_unsafe": ("Jobs above 1.02 over every GPU", "", "2"),
    "chosen": ("The pick (zeus_bench.sim.tuning.choose)", "", "True"),
}
POLICY_DRIFT_DOC: dict[str, tuple[str, str, str]] = {
    "gpu": ("GPU kind", "", "v100"),
    "workload": ("Workload id", "", "cifar100"),
    "scenario": (
        "step (the optimum's epochs change at once), morph (the same over 20 recurrences) or tilt (the whole "
        "convergence curve tilts over 20 recurrences, the neutral gradual drift: zeus_bench/sim/drift.py)",
        "",
        "step",
    ),
    "epoch_factor": (
        "Factor on the oracle batch size's epochs to the target after the change (tilt: per doubling of batch size)",
        "",
        "1.5",
    ),
    "policy": (
        "zeus, zeus-window10 (Zeus with a 10-observation window), zeus-plus or sw-ts",
        "",
        "zeus-plus",
    ),
    "change_at": ("Recurrence at which the change starts", "", "70"),
    "recurrences": ("Recurrences replayed", "", "140"),
    "recovery_recurrences": (
        "Recurrences after the change (after the end of a morph) until the mean cost over seeds, averaged "
        "over 5 recurrences, is within 5 % of the drifted oracle's; empty: not within the horizon",
        "",
        "14",
    ),
    "cost_after_change_vs_oracle": ("Mean cost after the change over the drifted oracle's", "", "1.058"),
}
POLICY_WARMSTART_DOC: dict[str, tuple[str, str, str]] = {
    "prior_gpu": ("GPU whose traces the warm start learned from", "", "v100"),
    "gpu": ("GPU replayed", "", "a40"),
    "workload": ("Workload id", "", "imagenet"),
    "recurrences": ("Recurrences replayed", "", "108"),
    "regret_first20_pct_cold": ("zeus-plus's regret over the first 20 recurrences, cold start", "%", "15.79"),
    "cost_last20_vs_oracle_cold": (
        "Its mean cost over the last 20 recurrences over the oracle's, cold",
        "",
        "0.998",
    ),
    "regret_first20_pct_warm": ("The same regret with the prior", "%", "5.98"),
    "cost_last20_vs_oracle_warm": ("The same steady-state cost with the prior", "", "0.998"),
}


def _table(rows: Sequence[tuple[str, str, str, str]]) -> str:
    lines = ["| Column | Description | Unit | Example |", "|---|---|---|---|"]
    lines += [f"| `{c}` | {d.replace('|', '/')} | {u} | {e} |" for c, d, u, e in rows]
    return "\n".join(lines)


def render() -> str:
    """The text of ``results/README.md``."""
    parts = [
        "# Results: what each table holds",
        "",
        "Generated by `python -m analysis.readme` (the workflow's `results_readme` rule) from the table "
        "schemas of the installed zeus-bench; do not edit by hand. Tables are long-form (one row per "
        "measurement or simulated try; identity columns, then parameters, then metrics), and units are "
        "in column names (`_w` W, `_j` J, `_s` s). Parquet tables carry their provenance (package "
        "version, git commit, source checksums) in the metadata key `zeus_bench`.",
        "",
        "Committed: `results/potential/`, `results/summary/`, `results/policy/` (but its curves), "
        "`results/figures/`, `results/report.md`, `results/reference/`, "
        "and this project's own measured traces under `results/traces/`. Never committed: the Zeus "
        "traces and anything converted from them row by row (`data/`, `results/configs/`, `results/sim/`).",
        "",
        "## Potential savings: `results/potential/<gpu>.csv`",
        "",
        "Written by `zeus-bench potential --format csv`: one row per workload; the best configuration "
        f"against two baselines: *baseline* = {_BASE}; *max-batch* = {_MAXB}.",
        "",
        _table([(c, *doc) for c, doc in POTENTIAL_DOC.items()]),
        "",
        "## Configurations: `results/configs/<gpu>/<workload>.parquet` (git-ignored)",
        "",
        "Written by `zeus-bench pareto --all`: every measured (batch size, power limit) of a job with "
        "its expected energy and time to accuracy; read by the Pareto figure and notebook.",
        "",
        _table([(c, *doc) for c, doc in CONFIGS_DOC.items()]),
        "",
        "## The zeus-plus study: `results/policy/`",
        "",
        "Written by `zeus-bench study` (rule `policy_study`, seeds from `policy_study.seeds`; "
        "eta 0.5, beta 2). `comparison.csv` (and `curves.csv`) are regenerated from the arena "
        "(`--arena results/policy/arena/known`): its fold 1 (the judged half of the training paths), "
        "its seeds and protocol, every mean equal to `arena_jobs`'. Ratios, regret and the charge of a failed recurrence come from "
        "`zeus_bench.sim.metrics`, as in the `sim_summary` table. The per-recurrence curves behind the "
        "policy figures (`curves.csv`, `drift_curves.csv`) are git-ignored.",
        "",
        "### `comparison.csv`: one row per (gpu, workload, policy)",
        "",
        _table([(c, *doc) for c, doc in POLICY_COMPARISON_DOC.items()]),
        "",
        "### `drift.csv`: one row per (gpu, workload, scenario, epoch factor, policy)",
        "",
        _table([(c, *doc) for c, doc in POLICY_DRIFT_DOC.items()]),
        "",
        "### `warmstart.csv`: one row per (prior GPU, GPU, workload)",
        "",
        _table([(c, *doc) for c, doc in POLICY_WARMSTART_DOC.items()]),
        "",
        "### `tuning-known.csv`, `tuning-unknown.csv`, `tuning-known-fold2.csv`, `tuning-unknown-safety.csv`: "
        "one row per setting of zeus-plus's constants",
        "",
        "Written by `python -m zeus_bench.sim.tuning` on the *tune* half of the training paths (cross-fitting, "
        "docs/policies.md), horizon known (margin, up_first) and unknown (horizon, margin, up_first); the arena "
        "reports the other half. `tuning-known-fold2.csv`: the same on the judge half (`--half judge`, fold 2's "
        "constants); `tuning-unknown-safety.csv`: `--grid unknown-horizon` (horizon 0 = the anytime budget, "
        "14, 20, 50 x safety 0, 0.01, 0.02), tune half.",
        "",
        _table([(c, *doc) for c, doc in POLICY_TUNING_DOC.items()]),
    ]
    for kind, schema in sorted(schemas().items()):
        where = KIND_PATHS.get(kind, "")
        parts += [
            "",
            f"## `{kind}` table (schema version {schema.version})" + (f": {where}" if where else ""),
            "",
            schema.description + (f" Key: {', '.join(schema.key)}." if schema.key else ""),
            "",
            _table(
                [
                    (c.name, c.description + ("" if c.required else " (optional)"), c.unit, c.example)
                    for c in schema.columns
                ]
            ),
        ]
    return "\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write the README."""
    parser = argparse.ArgumentParser(prog="python -m analysis.readme", description=__doc__)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    atomic_write_text(args.out, render())
    return 0


if __name__ == "__main__":
    from zeus_bench.cli.common import exit_command

    exit_command(main())
