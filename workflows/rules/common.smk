# Configuration, paths, input functions and target lists: the only file that reads `config`.

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
# cannot judge (GPU kinds, seed ranges, duplicates: zeus_bench.configcheck).
from zeus_bench.configcheck import check_main_config, check_schema, config_source, exit_on_error

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
shell.prefix(
    f"export PATH='{Path(sys.executable).parent}':\"$PATH\" "
    f"PYTHONPATH='{workflow.basedir}':\"$PYTHONPATH\"; "
)

ZEUS = config["traces"]["zeus"]
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
# longest step (the zeus-plus study) starts first; the GPUs' chains (simulations, then figures)
# run one GPU after the other, so that the first GPU's figures start while the others simulate;
# the small independent figures come last, longest first, so that both cores end together before
# the report.
PRIORITY = {
    "policy_study": 50,
    "report": 45,  # as soon as the summaries it reads exist, beside the last figures
    "own_traces": 40,  # a copy, the first step of its GPU's chain
    "figure_policy": 5,
    "figure_generations": 4,
    "figure_h200": 4,
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


def zeus_manifest():
    """The fetch manifest (a checkpoint: evaluated once the traces were obtained or found missing)."""
    folder = checkpoints.zeus_traces.get().output.csv
    return json.loads(Path(folder, "MANIFEST.json").read_text())


def zeus_gpus():
    """GPU kinds with an obtained Zeus power trace, restricted to config gpus."""
    manifest = zeus_manifest()
    if manifest["status"] != "ok":
        return []
    have = manifest["gpus"]
    return have if config["gpus"] == "all" else [g for g in config["gpus"] if g in have]


def _own_gpus():
    """The project's own power traces (e.g. the H200 sweeps) by GPU kind: committed files, no checkpoint."""
    return {p.stem.removeprefix("power-"): str(p) for p in sorted(Path(OWN_DIR).glob("power-*.parquet"))}


OWN_GPUS = _own_gpus()
# Wildcard constraints that tell the project's own GPU kinds (one power limit) from the others.
_OWN_ALTERNATIVES = "|".join(re.escape(g) for g in OWN_GPUS) or "(?!)"
OWN_GPU_RE = f"(?:{_OWN_ALTERNATIVES})"
NOT_OWN_GPU_RE = f"(?!{OWN_GPU_RE}(?![a-z0-9_-]))[a-z0-9][a-z0-9_-]*"
OWN_TRACES = "data/traces/own"  # per GPU: the Zeus train trace + the project's power trace (git-ignored)


def own_gpus():
    """Own GPU kinds that can be evaluated: they need the Zeus train trace for epochs to the target."""
    if not OWN_GPUS or zeus_manifest()["status"] != "ok":
        return []
    return [g for g in OWN_GPUS if config["gpus"] == "all" or g in config["gpus"]]


def all_gpus():
    """Every GPU kind evaluated: Zeus power traces first, then the project's own."""
    return zeus_gpus() + own_gpus()


def multi_limit_gpus():
    """GPU kinds whose traces hold several power limits (the project's own sweeps hold one)."""
    return zeus_gpus()


def traces_of(gpu):
    """Folder of imported traces that holds `gpu`'s power trace and the train trace."""
    return f"{OWN_TRACES}/{gpu}" if gpu in OWN_GPUS else ZEUS_DIR


_WORKLOADS = {}  # by GPU: input and params functions ask for them many times per run


def workloads_of(gpu):
    """Workloads evaluated on `gpu`: registered ones present in its trace, restricted to config.

    Read once per GPU and run (for the Zeus GPUs once the checkpoint has its traces: before that,
    its `get()` raises and nothing is remembered)."""
    if gpu not in _WORKLOADS:
        _WORKLOADS[gpu] = _read_workloads(gpu)
    return _WORKLOADS[gpu]


def _read_workloads(gpu):
    from zeus_bench.registry import load_workloads

    if gpu in OWN_GPUS:
        from zeus_bench.store import read_table

        power = read_table(OWN_GPUS[gpu], "power")
        keys = set(zip(power["dataset"], power["network"], power["optimizer"]))
        present = [w.id for w in load_workloads().values() if (w.dataset, w.network, w.optimizer) in keys]
    else:
        from zeus_bench.jobs import TraceSet

        present = TraceSet(checkpoints.zeus_traces.get().output.parquet).workload_ids(gpu)
    return present if config["workloads"] == "all" else [w for w in config["workloads"] if w in present]


def workloads_arg(gpu):
    """--workloads value of the simulator for `gpu`."""
    return "all" if config["workloads"] == "all" else ",".join(workloads_of(gpu))


def code(*patterns):
    """Source files of this checkout (absolute paths): rules list them as inputs so that a change to
    the code that computes a result reruns that result, and nothing else."""
    root = Path(workflow.basedir)
    return sorted(str(p) for pattern in patterns for p in root.glob(pattern) if p.is_file())


SCHEMA_CODE = code("zeus_bench/store.py", "zeus_bench/**/schema*.py", "analysis/readme.py")
TRACE_CODE = code("zeus_bench/traces/*.py", "zeus_bench/registry.py", "zeus_bench/data/workloads.yaml")
ANALYSIS_CODE = code("zeus_bench/jobs.py", "zeus_bench/potential.py", "zeus_bench/pareto.py", "zeus_bench/cost.py")
SIM_CODE = code("zeus_bench/sim/**/*.py", "zeus_bench/cli/sim.py", "zeus_bench/jobs.py", "zeus_bench/cost.py")
_ANALYSIS_BASE = ("analysis/__init__.py", "analysis/metrics.py", "analysis/style.py", "analysis/tables.py")
FIGURE_CODE = code(
    *_ANALYSIS_BASE, "analysis/figures.py", "analysis/plots.py", "analysis/h200.py", "analysis/generations.py"
)
# The per-GPU figure job also writes the simulations' summaries (zeus-bench summarize's code).
SUMMARY_CODE = code(
    "zeus_bench/sim/summarize.py", "zeus_bench/sim/metrics.py", "zeus_bench/sim/schema.py", "zeus_bench/cli/sim.py"
)
REPORT_CODE = code(*_ANALYSIS_BASE, "analysis/report.py", "analysis/findings.py", "analysis/policy_findings.py")
REPORT_CODE += code("analysis/arena_findings.py")


def sweep_outputs(knob):
    """The Parquet files of one GPU's eta or beta sweep, one per configured value."""
    return [f"results/sim/{{gpu}}/{knob}-{num(v)}.parquet" for v in config[f"{knob}_sweep"]["values"]]


def bandit_knob_args():
    """`zeus-bench simulate` options of the batch-size optimizer's knobs (config prior_mean,
    prior_precision, prune_rounds); none at the paper's values, so the command lines stay as before."""
    args = []
    for key, flag, default in (
        ("prior_mean", "--prior-mean", 0.0),
        ("prior_precision", "--prior-precision", 0.0),
        ("prune_rounds", "--prune-rounds", 2),
    ):
        value = config.get(key, default)
        if value != default:
            args.append(f"{flag}={value!r}")  # FLAG=VALUE: a negative mean is not taken for an option
    return args


def sweep_commands(knob):
    """Params function: one `zeus-bench simulate` command line per sweep value (shell-quoted), run
    by workflows/scripts/zeus_bench_many.py in one process, so the imports are paid once per GPU."""
    sweep = config[f"{knob}_sweep"]

    def commands(wildcards, input, output):
        lines = []
        for value, out in zip(sweep["values"], output):
            knobs = {"eta": num(config["eta"]), "beta": num(config["beta"]), knob: num(value)}
            args = [
                "simulate", "--traces", input.traces, "--gpu", wildcards.gpu,
                "--workloads", workloads_arg(wildcards.gpu), "--policies", ",".join(sweep["policies"]),
                "--seeds", sweep["seeds"], "--eta", knobs["eta"], "--beta", knobs["beta"],
                "--recurrences", str(config["recurrences"]), "--jobs", "1", "--out", out,
            ]
            if config["window"]:
                args += ["--window", str(config["window"])]
            args += bandit_knob_args()
            lines.append(shlex.join(args))
        return shlex.join(lines)

    return commands


def trace_analysis_commands(wildcards, input, output):
    """Params function of the configurations rule: `zeus-bench potential` for the GPU, then one
    `zeus-bench pareto --all` per workload (shell-quoted command lines, one process)."""
    common = ["--traces", input.traces, "--gpu", wildcards.gpu, "--eta", num(config["eta"])]
    lines = [shlex.join(["potential", *common, "--format", "csv", "--out", output.potential])]
    for workload, path in zip(workloads_of(wildcards.gpu), configs_of(wildcards.gpu), strict=True):
        lines.append(shlex.join(["pareto", *common, "--workload", workload, "--all", "--out", path]))
    return shlex.join(lines)


def own_power_files():
    """The project's own committed power traces (e.g. the H200 sweep), if present."""
    return sorted(str(p) for p in Path(OWN_DIR).glob("power-*.parquet"))


def fig(name):
    """Every format of one figure."""
    return [f"{FIG}/{name}.{ext}" for ext in FORMATS]


def report_fig(name, family, category, subcategory=None):
    """Every format of one figure, its PNG flagged for `snakemake --report` (caption
    workflows/report/<family>.rst; the PDF holds the same figure)."""
    caption = str(Path(workflow.basedir, "workflows", "report", f"{family}.rst"))
    flag = dict(caption=caption, category=category, subcategory=subcategory)
    return [report(f, **flag) if f.endswith(".png") else f for f in fig(name)]


def checkpoint_of(gpu):
    """Inputs of a rule whose params ask the traces checkpoint which workloads `gpu` has (the Zeus
    GPUs): Snakemake requires the checkpoint's outputs among the rule's inputs, or it refuses the
    rule when a target is asked for before the traces are fetched."""
    return [] if gpu in OWN_GPUS else [ZEUS_CSV_DIR, ZEUS_DIR]


def configs_of(gpu):
    """The configuration files of `gpu` (written by the configurations rule into one folder per GPU)."""
    return [f"results/configs/{gpu}/{w}.parquet" for w in workloads_of(gpu)]


def eta_sims(gpu):
    return [f"results/sim/{gpu}/eta-{num(e)}.parquet" for e in config["eta_sweep"]["values"]]


def beta_sims(gpu):
    return [f"results/sim/{gpu}/beta-{num(b)}.parquet" for b in config["beta_sweep"]["values"]]


PER_GPU_FIGURES = ("pareto", "policies", "ablation", "convergence", "regret", "eta", "beta")


def per_gpu_outputs(names, category):
    """Named outputs of a per-GPU analysis job: its figures (in the HTML report's `category`, one
    subcategory per GPU) and the summaries it writes."""
    return {
        "figures": [f for name in names for f in report_fig(f"{name}-{{gpu}}", name, category, "{gpu}")],
        # As `zeus-bench summarize` writes it (the same code, in this process).
        "summary": "results/summary/{gpu}.csv",
        # The sweeps' sim_summary tables (git-ignored), read by the report instead of summarising again.
        "eta_summary": "results/sim/{gpu}/summary-eta.parquet",
        "beta_summary": "results/sim/{gpu}/summary-beta.parquet",
    }


def figure_files():
    """Every figure file the available data allow."""
    gpus = all_gpus()
    files = []
    if gpus:
        files += fig("potential")
        for gpu in gpus:
            for name in PER_GPU_FIGURES:
                files += fig(f"{name}-{gpu}")
        for gpu in multi_limit_gpus():
            files += fig(f"power-profiles-{gpu}")
    if own_power_files():
        files += fig("h200")
        if zeus_gpus():
            files += fig("generations")
    if policy_study_gpus():
        for name in POLICY_FIGURES:
            files += fig(f"policy-{name}")
        files += fig("policy-arena")
    files += alibaba_figures()  # workflows/rules/alibaba.smk
    return files


POLICY_DIR = "results/policy"
POLICY_TABLES = ("comparison", "curves", "drift", "drift_curves", "warmstart", "warmstart_jobs")
POLICY_FIGURES = ("regret", "cost", "drift")
POLICY_CODE = code("zeus_bench/sim/**/*.py", "zeus_bench/jobs.py", "zeus_bench/cost.py")


def policy_study_gpus():
    """GPU kinds of the zeus-plus study (needs the Zeus traces: its drift runs on their GPUs)."""
    return all_gpus() if config["policy_study"]["enabled"] and zeus_gpus() else []


ARENA_DIR = f"{POLICY_DIR}/arena"


def arena_files(horizon=None):
    """The arena's tables (horizon known and unknown, or one run); none without the study's GPUs."""
    if not policy_study_gpus():
        return []
    horizons = ("known", "unknown") if horizon is None else (horizon,)
    return [f"{ARENA_DIR}/{h}/{t}.parquet" for h in horizons for t in ("arena_jobs", "arena_summary")]


def policy_study_files():
    """The study's tables (none when disabled or without the Zeus traces)."""
    return [f"{POLICY_DIR}/{t}.csv" for t in POLICY_TABLES] if policy_study_gpus() else []


def reference_files():
    """Committed reference numbers (original simulator's outputs, the paper's statements), if present."""
    folder = Path(workflow.basedir, "results", "reference")
    return [str(p) for p in (folder / "original_simulator.csv", folder / "paper.csv") if p.is_file()]


def report_inputs(wildcards):
    """Named inputs of the report: every table it describes (the figures it links are a param)."""
    gpus = all_gpus()
    return {
        "manifest": ZEUS_CSV_DIR,
        "potential": [f"results/potential/{g}.csv" for g in gpus],
        "configs": [f"results/configs/{g}" for g in gpus],
        "summary": [f"results/summary/{g}.csv" for g in gpus],
        "sim": [f"results/sim/{g}/main.parquet" for g in gpus],
        # The sweeps' summaries (written by the per-GPU figure jobs from the sweeps' runs).
        "eta": [f"results/sim/{g}/summary-eta.parquet" for g in gpus],
        "beta": [f"results/sim/{g}/summary-beta.parquet" for g in gpus],
        "own": own_power_files(),
        "reference": reference_files(),
        "policy": policy_study_files(),
        "arena": arena_files(),
        "alibaba": alibaba_summaries(),  # workflows/rules/alibaba.smk
        "alibaba_dir": alibaba_dirs(),
        "capriccio": capriccio_traces(),  # workflows/capriccio.smk writes it
    }


PARTIAL_REPORT = "results/report-partial.md"


def report_target():
    """results/report.md with the Zeus traces; without them a partial report beside it (never the
    committed one)."""
    return "results/report.md" if zeus_manifest()["status"] == "ok" else PARTIAL_REPORT


def warn_if_traces_missing():
    """After a run without the Zeus traces, say so on the console (the partial report says it too)."""
    from snakemake.logging import logger

    path = Path(ZEUS_CSV_DIR, "MANIFEST.json")
    if path.exists():
        manifest = json.loads(path.read_text())
        if manifest["status"] != "ok":
            logger.warning(
                f"Zeus traces unavailable, so only the project's own traces were drawn: {manifest['message']}. "
                f"The partial report is {PARTIAL_REPORT} (lists what was skipped); results/report.md is left as it was."
            )


_STARTED = __import__("time").time()


def explain_failure():
    """After a failed run, print the error line of each rule log written by this run (zeus-bench
    and the analysis scripts end their log with one `...error: ...` line), so that the reason is on
    the console and not only in logs/."""
    from snakemake.logging import logger

    for path in sorted(Path("logs").rglob("*.log")):
        if path.stat().st_mtime < _STARTED:
            continue
        errors = [line for line in path.read_text(errors="replace").splitlines() if "error:" in line]
        if errors:
            logger.error(f"{errors[-1]}  (log: {path})")


def early_targets():
    """Targets that need neither the Zeus traces nor anything made from them: the results README and,
    with the project's own committed power traces, their figure."""
    return ["results/README.md", *(fig("h200") if own_power_files() else []), *alibaba_dirs()]


def all_targets(wildcards):
    """Targets of the default target `all`: the report, every figure and table, and the results README."""
    gpus = all_gpus()
    return [
        report_target(),
        "results/README.md",
        *figure_files(),
        *[f"results/potential/{g}.csv" for g in gpus],
        *[f"results/summary/{g}.csv" for g in gpus],
    ]


def finish_run():
    """End the Snakemake process promptly once the run has ended (`onsuccess`/`onerror`).

    - Cancel Snakemake's pending scheduler timers: Snakemake 9's scheduler starts a
      `threading.Timer` (not a daemon) of its job-rate window (1 s) after each scheduling round
      to look again, and at exit Python waits for the last one, about a second of idle time
      added to every run.
    - Freeze the objects left (`gc.freeze`), so that the interpreter's final collections skip
      them (about 0.2 s for Snakemake's DAG); every output is written by then.
    """
    import gc
    import threading

    for thread in threading.enumerate():
        if isinstance(thread, threading.Timer):
            thread.cancel()
    gc.freeze()
