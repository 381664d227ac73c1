# Configuration and constants: the config (validated here, the only file that reads it whole),
# paths, priorities, the code each result depends on, and the file names of the sweeps.
# GPU discovery is in gpus.smk, target lists in targets.smk, run hooks in hooks.smk.

import ast
import json
import os
import re
import shlex
import sys
from pathlib import Path

from snakemake.exceptions import IncompleteCheckpointException, WorkflowError
from snakemake.utils import validate


# Config mistakes end the run here, in one line naming the key (and the nearest valid names):
# the schema first (as jsonschema would, without its dump of the schema), then the values it
# cannot judge (GPU kinds, seed ranges, duplicates: zeus_bench.cli.configcheck).
from zeus_bench.cli.configcheck import (
    check_main_config,
    check_schema,
    config_source,
    exit_on_error,
    skip_unused_iri_grammar,
)

skip_unused_iri_grammar()  # about 1 s of jsonschema's import in a venv with the test extras

CONFIG_SOURCE = config_source(workflow, "config/config.yaml")
with exit_on_error():
    try:
        validate(config, schema="../../config/config.schema.json")
    except WorkflowError:
        check_schema(config, Path(workflow.basedir, "config", "config.schema.json"), CONFIG_SOURCE)
        raise
    check_main_config(config, CONFIG_SOURCE)

# Rules call the `zeus-bench` command and the Python of the environment that runs Snakemake,
# whether or not that environment is activated, and find the `analysis` package of this checkout
# (also when the workflow runs elsewhere with --directory).
# With the warm server up (ZB_WARM_SOCKET, started by the run's hooks: hooks.smk), `zeus-bench` and
# `python` are bash functions that send the step to it (workflows/scripts/warm.py, which runs a step
# it cannot run as a new process would as one); elsewhere (another shell, a cluster job) the commands
# are the plain ones.
WARM = str(Path(workflow.basedir, "workflows", "scripts", "warm.py"))
WARM_SOCKET_ENV = "ZB_WARM_SOCKET"  # (warm.py's SOCKET_ENV) set for the steps' shells by the hooks
WARM_PYTHONPATH = f"{workflow.basedir}:{os.environ.get('PYTHONPATH', '')}"  # as the prefix sets it
_WARM_FUNCTIONS = (
    f'if [ -n "${{BASH_VERSION:-}}" ] && [ -S "${{{WARM_SOCKET_ENV}:-}}" ]; then eval '
    f"'zeus-bench() {{ command python \"{WARM}\" run zeus-bench \"$@\"; }}; "
    f"python() {{ command python \"{WARM}\" run python \"$@\"; }}'; fi; "
)
shell.prefix(
    f"export PATH='{Path(sys.executable).parent}':\"$PATH\" "
    f"PYTHONPATH='{workflow.basedir}':\"$PYTHONPATH\"; "
    + _WARM_FUNCTIONS.replace("{", "{{").replace("}", "}}")  # (Snakemake formats the prefix)
)

ZEUS = config["traces"]["zeus"]
with exit_on_error():  # a local copy that is not there fails now, not inside the fetch job
    _local = ZEUS["local_dir"] or os.environ.get("ZEUS_TRACE_DIR")
    if _local and not Path(_local).expanduser().is_dir():
        from zeus_bench.core.errors import ConfigError

        key = "traces.zeus.local_dir" if ZEUS["local_dir"] else "$ZEUS_TRACE_DIR"
        raise ConfigError(f"{CONFIG_SOURCE}: {key}: {_local} is not a folder (the local copy of the Zeus traces)")
ZEUS_CSV_DIR = "data/traces/zeus-csv"  # obtained CSVs + MANIFEST.json (git-ignored)
ZEUS_DIR = "data/traces/zeus"  # imported Parquet (git-ignored: never commit the traces)
OWN_DIR = config["traces"]["own_dir"]
FORMATS = config["figures"]["formats"]
FIG = "results/figures"
# Software of every rule under `snakemake --use-conda` (`make reproduce` uses the .venv instead).
ENV = "../envs/zeus-bench.yaml"
# Runs several zeus-bench command lines in one process (the sweep rules).
RUN_MANY = str(Path(workflow.basedir, "workflows", "scripts", "zeus_bench_many.py"))


# Scheduling on a few cores (Snakemake starts the ready job of highest priority first). The
# longest step (the zeus-plus study, on policy_study.jobs cores) starts as soon as the arena's
# known-horizon table it checks against exists (that arena run first among the arena's); the GPUs' chains (simulations, then figures)
# run one GPU after the other, so that the first GPU's figures start while the others simulate;
# the small independent figures come last, longest first, so that both cores end together before
# the report.
PRIORITY = {
    "policy_study": 50,
    "report": 45,  # as soon as the summaries it reads exist, beside the last figures
    "own_traces": 40,  # a copy, the first step of its GPU's chain
    "figure_policy-arena": 5,
    "figure_policy-regret": 5,
    "figure_policy-cost": 5,
    "figure_policy-drift": 5,
    "figure_generations": 4,
    "figure_measured-gpus": 4,
    "figure_potential": 3,
}


def chain_priority(step):
    """Priority function for the steps of one GPU's chain: `step` 0 for its simulations, 1 for its figures.

    Between 10 and 10 + 2 x the number of GPUs: the GPU first in `all_gpus()` order highest, its
    figures above the next GPU's simulations (before the traces are fetched, when the GPUs are not
    known yet: 10 + step).
    """

    def priority(wildcards):
        try:
            gpus = all_gpus()
        except IncompleteCheckpointException:
            return 10 + step
        rank = gpus.index(wildcards.gpu) if wildcards.gpu in gpus else len(gpus)
        return 10 + 2 * (len(gpus) - rank) + step

    return priority


def num(value):
    """A number as it appears in file names and on command lines: 0.5, 2, inf."""
    return "inf" if value == "inf" or float(value) == float("inf") else f"{float(value):g}"


def zeus_local_dir():
    """The local copy of the Zeus traces: config traces.zeus.local_dir, else $ZEUS_TRACE_DIR, else None."""
    path = ZEUS["local_dir"] or os.environ.get("ZEUS_TRACE_DIR") or None
    return str(Path(path).expanduser().resolve()) if path else None


def zeus_url():
    """The download URL template: $ZEUS_TRACE_URL (a template or a base URL) if set, else config url."""
    from zeus_bench.traces.fetch import url_template_from

    return url_template_from(ZEUS["url"])


def fetch_args(wildcards=None):
    """Arguments of `zeus-bench fetch-traces` taken from the config (a params function: the URL's
    {commit} and {file} must not be read as wildcards)."""
    args = [f"--file {name}={sha}" if sha else f"--file {name}" for name, sha in ZEUS["files"].items()]
    local = zeus_local_dir()
    if local:
        args.append(f"--local-dir '{local}'")
    elif ZEUS["download"]:
        args += [f"--url '{zeus_url()}'", f"--commit {ZEUS['commit']}", f"--timeout {ZEUS['timeout_s']:g}"]
    else:
        # Never download: the manifest records the traces as unavailable and says how to get them.
        args += [f"--commit {ZEUS['commit']}", "--allow-missing"]
    if ZEUS["allow_unverified"]:
        args.append("--allow-unverified")
    return " ".join(args)



def code(*patterns):
    """Source files of this checkout (absolute paths): rules list them as inputs so that a change to
    the code that computes a result reruns that result, and nothing else."""
    root = Path(workflow.basedir)
    return sorted(str(p) for pattern in patterns for p in root.glob(pattern) if p.is_file())


def imported_code(folder):
    """The Python files of `folder` (a package of analysis/) and every file of analysis/ they import,
    however indirectly (read from their import statements): a rule's code inputs derived from the
    package, so that a module the package starts to import reruns the rule without an edit here.
    (The zeus_bench modules they import are left out, as for the other analysis rules.)"""
    root = Path(workflow.basedir)
    todo = sorted(Path(root, folder).rglob("*.py"))
    seen = set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
            for name in (n for n in names if n.split(".")[0] == "analysis"):
                for candidate in (Path(root, *name.split(".")).with_suffix(".py"), Path(root, *name.split("."), "__init__.py")):
                    if candidate.is_file() and candidate not in seen:
                        todo.append(candidate)
    return sorted(str(p) for p in seen)


SCHEMA_CODE = code("zeus_bench/store/*.py", "zeus_bench/**/*schema*.py", "analysis/readme.py")
TRACE_CODE = code("zeus_bench/traces/*.py", "zeus_bench/traces/workloads.py", "zeus_bench/data/workloads.yaml")
ANALYSIS_CODE = code("zeus_bench/traces/jobs.py", "zeus_bench/traces/potential.py", "zeus_bench/traces/pareto.py", "zeus_bench/core/cost.py")
# The replay is sim/ plus the optimizers it runs (the bandit, its draws, the hill climb, the JIT choice).
REPLAY_CODE = ("zeus_bench/sim/**/*.py", "zeus_bench/optimizers/*.py", "zeus_bench/traces/jobs.py", "zeus_bench/core/cost.py")
SIM_CODE = code(*REPLAY_CODE, "zeus_bench/cli/sim.py", "zeus_bench/cli/sim_args.py")
_ANALYSIS_BASE = ("analysis/__init__.py", "analysis/metrics.py", "analysis/style.py", "analysis/tables.py")
PLOT_CODE = code("analysis/plots/*.py")
FIGURE_CODE = code(*_ANALYSIS_BASE, "analysis/figures/*.py") + PLOT_CODE
# The per-GPU figure job also writes the simulations' summaries (zeus-bench summarize's code).
SUMMARY_CODE = code(
    "zeus_bench/sim/summarize.py", "zeus_bench/sim/metrics.py", "zeus_bench/sim/schema.py", "zeus_bench/cli/sim.py"
)
REPORT_CODE = imported_code("analysis/report")


def sweep_outputs(knob):
    """The Parquet files of one GPU's eta or beta sweep, one per configured value."""
    return [f"results/sim/{{gpu}}/{knob}-{num(v)}.parquet" for v in config[f"{knob}_sweep"]["values"]]


def eta_sims(gpu):
    """The eta sweep's runs tables of `gpu`."""
    return [f"results/sim/{gpu}/eta-{num(e)}.parquet" for e in config["eta_sweep"]["values"]]


def beta_sims(gpu):
    """The beta sweep's runs tables of `gpu`."""
    return [f"results/sim/{gpu}/beta-{num(b)}.parquet" for b in config["beta_sweep"]["values"]]


POLICY_DIR = "results/policy"
POLICY_TABLES = ("comparison", "curves", "drift", "drift_curves", "warmstart", "warmstart_jobs")
POLICY_CODE = code(*REPLAY_CODE, "zeus_bench/cli/arena.py", "zeus_bench/cli/study.py")
ARENA_DIR = f"{POLICY_DIR}/arena"
PARTIAL_REPORT = "results/report-partial.md"

