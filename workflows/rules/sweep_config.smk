# Configuration and input functions of the sweep rules (workflows/rules/sweep.smk): the only
# sweep file that reads `config`.

import shlex
import shutil
import sys
from pathlib import Path

import yaml
from snakemake.exceptions import WorkflowError
from snakemake.utils import validate

from zeus_bench.cli.configcheck import (
    check_backends_start,
    check_schema,
    check_sweep_config,
    check_sweep_places,
    config_source,
    exit_on_error,
    skip_unused_iri_grammar,
)

skip_unused_iri_grammar()  # about 1 s of jsonschema's import in a venv with the test extras


def _repo_root():
    """The checkout's root (the folder holding config/), wherever the including Snakefile lives."""
    base = Path(workflow.basedir).resolve()
    return next((p for p in (base, *base.parents) if (p / "config" / "sweep.schema.json").is_file()), base)


def _sweep_config():
    """The `sweep` section (workflow config, else config/sweep.yaml), validated by its schema and
    checked for what the schema cannot know (zeus_bench.cli.configcheck): a mistake ends the run here,
    in one line naming the file and key, before anything is scheduled."""
    if "sweep" in config:
        data = {"sweep": config["sweep"]}
        source = config_source(workflow, "config")
    else:
        source = "config/sweep.yaml"
        with open(source) as fh:
            data = yaml.safe_load(fh)
    with exit_on_error():
        try:
            validate(data, schema="../../config/sweep.schema.json")
        except WorkflowError:
            check_schema(data, _repo_root() / "config" / "sweep.schema.json", source)
            raise
        check_sweep_config(data["sweep"], source)
        check_sweep_places(data["sweep"], source)
    return data["sweep"], source


SWEEP, SWEEP_SOURCE = _sweep_config()
SWEEP_DIR = SWEEP.get("out_dir", "results/sweep")
# The package's entry point, from the environment that runs Snakemake when it is not on PATH.
ZEUS_BENCH_CMD = SWEEP.get("command") or shutil.which("zeus-bench") or f"'{sys.executable}' -m zeus_bench.cli.main"


CONFIDENCE_KEYS = ("window_s", "min_windows", "rel_ci", "max_measure_s", "warmup_max_s", "steady_s")


def sweep_preflight():
    """Start each GPU kind's backend once, at load, before Snakemake prints its job table: a machine
    without the GPU, or a power limit outside its range, fails once, in one line (saying how to
    rehearse on the fake backend) instead of every cell failing in its log. Dry runs and cluster
    executors are left alone: their GPUs are on the compute nodes, not here."""
    if workflow.non_local_exec or workflow.output_settings.dryrun:
        return
    with exit_on_error():
        check_backends_start(SWEEP, SWEEP_SOURCE)


sweep_preflight()


def sweep_cells(gpu):
    """Shard files of every (workload, batch size) cell of one GPU kind."""
    return [
        f"{SWEEP_DIR}/{gpu}/{workload}/bs{bs}.parquet"
        for workload, batch_sizes in SWEEP["workloads"].items()
        for bs in batch_sizes
    ]


def sweep_targets():
    """Merged power trace of every GPU kind in the sweep config."""
    return [f"{SWEEP_DIR}/{gpu}/power-{gpu}.parquet" for gpu in SWEEP["gpus"]]


def sweep_cell_args(wildcards):
    """Command-line options of one cell, from its GPU kind's entry and the measuring settings."""
    gpu = SWEEP["gpus"][wildcards.gpu]
    limits = gpu.get("power_limits", "current")
    limits = limits if isinstance(limits, str) else ",".join(f"{float(p):g}" for p in limits)
    m = SWEEP.get("measure", {})
    args = [
        f"--backend {gpu.get('backend', 'nvml')}",
        f"--gpu-kind {wildcards.gpu}",
        f"--gpus {gpu.get('gpu_index', 0)}",
        f"--power-limits {limits}",
        "--observe" if gpu.get("observe", True) else "",
        f"--warmup-iters {m.get('warmup_iters', 5)} --warmup-s {m.get('warmup_s', 2)}",
        f"--measure-iters {m.get('measure_iters', 20)} --measure-s {m.get('measure_s', 10)}",
        # Confidence settings (zeus_bench.sweep.measure.MeasureSettings), passed when configured.
        *(f"--{k.replace('_', '-')} {m[k]}" for k in CONFIDENCE_KEYS if k in m),
        "--tiny" if SWEEP.get("tiny", False) else "",
    ]
    return " ".join(a for a in args if a)


def sweep_estimate():
    """The dry run's estimate: `zeus-bench sweep --dry-run`'s table (GPU-time and energy per cell,
    from the measuring settings; each point's power and step time from the GPU kind's merged trace
    when an earlier run left one, else from the checkout's committed trace of that GPU kind, else
    `unknown`) for every cell whose shard is still missing."""
    from types import SimpleNamespace

    from zeus_bench.cli.main import build_parser
    from zeus_bench.cli.sweep import estimate_text

    parser = build_parser()
    texts = []
    for gpu in SWEEP["gpus"]:
        trace = Path(SWEEP_DIR, gpu, f"power-{gpu}.parquet")
        for workload, batch_sizes in SWEEP["workloads"].items():
            todo = [b for b in batch_sizes if not Path(SWEEP_DIR, gpu, workload, f"bs{b}.parquet").exists()]
            if not todo:
                texts.append(f"{gpu}: {workload}: every cell already measured\n")
                continue
            argv = [
                *("sweep", "--workload", workload, "--batch-sizes", ",".join(map(str, todo))),
                *shlex.split(sweep_cell_args(SimpleNamespace(gpu=gpu))),
                *("--out", f"{gpu}.parquet"),
                *(("--estimate-trace", str(trace)) if trace.is_file() else ()),
            ]
            with exit_on_error():
                texts.append(f"{gpu}: {estimate_text(parser.parse_args(argv))}")
    return "".join(texts)
