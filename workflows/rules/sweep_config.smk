# Configuration and input functions of the sweep rules (workflows/rules/sweep.smk): the only
# sweep file that reads `config`.

import shutil
import sys

import yaml
from snakemake.utils import validate


def _sweep_config():
    """The `sweep` section (workflow config, else config/sweep.yaml), validated by its schema."""
    if "sweep" in config:
        data = {"sweep": config["sweep"]}
    else:
        with open("config/sweep.yaml") as fh:
            data = yaml.safe_load(fh)
    validate(data, schema="../../config/sweep.schema.json")
    return data["sweep"]


SWEEP = _sweep_config()
SWEEP_DIR = SWEEP.get("out_dir", "results/sweep")
# The package's entry point, from the environment that runs Snakemake when it is not on PATH.
ZEUS_BENCH_CMD = SWEEP.get("command") or shutil.which("zeus-bench") or f"'{sys.executable}' -m zeus_bench.cli.main"


CONFIDENCE_KEYS = ("window_s", "min_windows", "rel_ci", "max_measure_s", "warmup_max_s", "steady_s")


def _check_sweep_config():
    """What the schema cannot know: registered workload ids and backend names, limits vs observe."""
    from zeus_bench.device import BACKENDS
    from zeus_bench.registry import load_workloads

    known = load_workloads()
    unknown = sorted(set(SWEEP["workloads"]) - set(known))
    if unknown:
        raise ValueError(f"sweep config: unknown workload(s) {', '.join(unknown)}; known: {', '.join(known)}")
    for kind, gpu in SWEEP["gpus"].items():
        if gpu.get("backend", "nvml") not in BACKENDS:
            raise ValueError(
                f"sweep config: GPU kind {kind!r} has unknown backend {gpu['backend']!r}; known: {', '.join(BACKENDS)}"
            )
        if gpu.get("observe", True) and gpu.get("power_limits", "current") != "current":
            raise ValueError(f"sweep config: GPU kind {kind!r} is in observe mode and cannot set power_limits")


_check_sweep_config()


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
