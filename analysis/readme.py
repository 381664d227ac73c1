"""``python -m analysis.readme --out results/README.md``: the column reference of every table.

Every table is a registered schema kind (:func:`zeus_bench.store.schemas`): the README is rendered
from the schemas alone, so the documentation cannot drift from the code that validates the tables.
This module only says where each kind lives in ``results/`` (:data:`SECTIONS`) and which committed
files are of which kind (:data:`COMMITTED`, checked by the tests); a kind registered but not placed
in a section is still rendered, under "Other tables".
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from zeus_bench.catalog import all_schemas as schemas
from zeus_bench.core.fsutil import atomic_write_text
from zeus_bench.store import TableSchema

#: The README's sections: title, a paragraph, and per kind where its tables live (in order).
SECTIONS: tuple[tuple[str, str, dict[str, str]], ...] = (
    (
        "Trace analysis",
        "What the traces promise before any policy runs, and the numbers zeus-bench is compared with.",
        {
            "potential": "`results/potential/<gpu>.csv` (committed)",
            "configurations": "`results/configs/<gpu>/<workload>.parquet` (`zeus-bench pareto --all`, git-ignored)",
            "reference": "`results/reference/original_simulator.csv`, `results/reference/paper.csv` (committed)",
        },
    ),
    (
        "Traces",
        "The imported Zeus traces and this project's own measurements.",
        {
            "train": "`data/traces/zeus/train.parquet` (imported, git-ignored); `results/capriccio/train.parquet` (the Capriccio runs, `workflows/capriccio.smk`)",
            "power": "`data/traces/zeus/power-<gpu>.parquet` (imported, git-ignored); `results/traces/<gpu>/power-<gpu>.parquet` (this project's sweeps, committed)",
            "power_timeline": "",
            "energy_measurement": "`zeus-bench measure --out FILE.parquet -- COMMAND` (a user's own)",
        },
    ),
    (
        "Simulations",
        "The replay's tries, their summaries, and the scenario tables a user passes to `zeus-bench simulate`.",
        {
            "runs": "`results/sim/<gpu>/main.parquet`, `eta-<eta>.parquet`, `beta-<beta>.parquet`, `alibaba.parquet` (git-ignored)",
            "sim_summary": "`results/summary/<gpu>.csv` (committed); the Alibaba replay's: `results/alibaba/<gpu>.csv`; the sweeps': `results/sim/<gpu>/summary-eta.parquet`, `summary-beta.parquet` (git-ignored)",
            "drift": "`zeus-bench simulate --drift FILE` (an input)",
        },
    ),
    (
        "The zeus-plus study: `results/policy/`",
        "Written by `zeus-bench study` (rule `policy_study`, seeds from `policy_study.seeds`; "
        "eta 0.5, beta 2), `python -m zeus_bench.studies.tuning` and `zeus-bench arena`. `comparison.csv` (and "
        "`curves.csv`) are regenerated from the arena (`--arena results/policy/arena/known`): its fold 1 (the "
        "judged half of the training paths), its seeds and protocol, every mean equal to `arena_jobs`'. Ratios, regret and the "
        "charge of a failed recurrence come from `zeus_bench.sim.metrics`, as in the `sim_summary` table.",
        {
            "policy_comparison": "`results/policy/comparison.csv` (committed)",
            "policy_curves": "`results/policy/curves.csv` (git-ignored)",
            "policy_drift": "`results/policy/drift.csv` (committed)",
            "policy_drift_curves": "`results/policy/drift_curves.csv` (git-ignored)",
            "policy_warmstart": "`results/policy/warmstart.csv` (committed)",
            "warmstart_jobs": "`results/policy/warmstart_jobs.csv` (committed; `zeus-bench study`, `zeus_bench.studies.warmjobs`)",
            "policy_tuning": "`results/policy/tuning-*.csv` (committed)",
            "policy_tuning_lowo": "`results/policy/lowo-*.csv` (committed)",
            "policy_coverage": "`results/policy/coverage.csv` (committed)",
            "policy_coverage_worlds": "`results/policy/coverage-worlds.csv` (committed)",
            "arena_jobs": "`results/policy/arena/{known,unknown,0.5x,2x}/arena_jobs.parquet` and `recurrences/<horizon>-n<N>/` (committed; `zeus-bench arena --horizon known|unknown|0.5x|2x --out DIR`)",
            "arena_summary": "`results/policy/arena/*/arena_summary.parquet` (committed)",
            "arena_profile": "`results/policy/arena/*/arena_profile.parquet` (committed)",
        },
    ),
    (
        "Validation against a measured run: `results/validation/<gpu>/`",
        "Written by `workflows/validate.smk` (issue 35): one recurring job (`teacher-student`) measured on a GPU "
        "through the sweep (`traces/train.parquet`, `traces/power-<gpu>.parquet`, kinds `train` and `power`; the "
        "raw shards under `measured/`), replayed by `zeus-bench simulate` (policy zeus, without and with `--noise`), "
        "and compared with the online optimizer's run of the same job on the same GPU (`zeus-bench validate "
        "compare`, `report.md`, figure `results/figures/validation.png`). Batch-size side only, at the GPU's "
        "current power limit (observe mode).",
        {
            "validation_online": "`results/validation/<gpu>/measured/online.parquet` and its repeats "
            "`online-seed<s>.parquet` (committed)",
            "validation_noise": "`results/validation/<gpu>/noise.parquet` (committed)",
            "validation_recurrences": "`results/validation/<gpu>/recurrences.parquet` (committed)",
            "validation_findings": "`results/validation/<gpu>/findings.parquet` (committed)",
        },
    ),
)

#: The committed tables of ``results/``: a glob (from the repository root) -> its kind.
COMMITTED: dict[str, str] = {
    "results/potential/*.csv": "potential",
    "results/reference/*.csv": "reference",
    "results/traces/*/power-*.parquet": "power",
    "results/summary/*.csv": "sim_summary",
    "results/policy/comparison.csv": "policy_comparison",
    "results/policy/drift.csv": "policy_drift",
    "results/policy/warmstart.csv": "policy_warmstart",
    "results/policy/warmstart_jobs.csv": "warmstart_jobs",
    "results/policy/tuning-*.csv": "policy_tuning",
    "results/policy/lowo-*.csv": "policy_tuning_lowo",
    "results/policy/coverage.csv": "policy_coverage",
    "results/policy/coverage-worlds.csv": "policy_coverage_worlds",
    "results/policy/arena/*/arena_jobs.parquet": "arena_jobs",
    "results/policy/arena/*/arena_summary.parquet": "arena_summary",
    "results/policy/arena/*/arena_profile.parquet": "arena_profile",
    "results/validation/*/measured/online.parquet": "validation_online",
    "results/validation/*/measured/online-seed*.parquet": "validation_online",
    "results/validation/*/logs/*/measured/online.parquet": "validation_online",
    "results/validation/*/logs/*/measured/power.parquet": "power",
    "results/validation/*/logs/*/measured/noise-r*.parquet": "power",
    "results/validation/*/noise.parquet": "validation_noise",
    "results/validation/*/recurrences.parquet": "validation_recurrences",
    "results/validation/*/findings.parquet": "validation_findings",
    "results/validation/*/traces/train.parquet": "train",
    "results/validation/*/traces/power-*.parquet": "power",
    "results/validation/*/measured/train/*.parquet": "train",
    "results/validation/*/measured/power.parquet": "power",
    "results/validation/*/measured/noise-r*.parquet": "power",
    "results/validation/*/logs/*/train-target-*/*.parquet": "train",
}


def _table(schema: TableSchema) -> str:
    lines = ["| Column | Description | Unit | Example |", "|---|---|---|---|"]
    for c in schema.columns:
        description = c.description + ("" if c.required else " (optional)")
        lines.append(f"| `{c.name}` | {description.replace('|', '/')} | {c.unit} | {c.example} |")
    return "\n".join(lines)


def _kind(schema: TableSchema, where: str) -> list[str]:
    """A kind's subsection: heading (kind, version, where), description and key, column table."""
    heading = f"### `{schema.kind}` table (schema version {schema.version})" + (f": {where}" if where else "")
    key = f" Key: {', '.join(schema.key)}." if schema.key else ""
    return ["", heading, "", schema.description + key, "", _table(schema)]


def render() -> str:
    """The text of ``results/README.md``."""
    parts = [
        "# Results: what each table holds",
        "",
        "Generated by `python -m analysis.readme` (the workflow's `results_readme` rule) from the table "
        "schemas of the installed zeus-bench; do not edit by hand. Every table is a schema kind, validated "
        "against it when written. Tables are long-form (one row per "
        "measurement or simulated try; identity columns, then parameters, then metrics), and units are "
        "in column names (`_w` W, `_j` J, `_s` s). Parquet tables carry their provenance (package "
        "version, git commit, source checksums) in the metadata key `zeus_bench`.",
        "",
        "Committed: `results/potential/`, `results/summary/`, `results/policy/` (but its curves), "
        "`results/figures/`, `results/report.md`, `results/reference/`, "
        "and this project's own measured traces under `results/traces/`. Never committed: the Zeus "
        "traces and anything converted from them row by row (`data/`, `results/configs/`, `results/sim/`).",
    ]
    registered = schemas()
    placed: set[str] = set()
    for title, paragraph, kinds in SECTIONS:
        parts += ["", f"## {title}", "", paragraph]
        for kind, where in kinds.items():
            if kind in registered:
                parts += _kind(registered[kind], where)
                placed.add(kind)
    others = sorted(set(registered) - placed)
    if others:
        parts += ["", "## Other tables", "", "Registered kinds not placed in a section above."]
        for kind in others:
            parts += _kind(registered[kind], "")
    return "\n".join(parts) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    """Write the README."""
    parser = argparse.ArgumentParser(prog="python -m analysis.readme", description=__doc__)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    atomic_write_text(args.out, render())
    return 0


if __name__ == "__main__":
    from zeus_bench.core.entry import exit_command

    exit_command(main())
