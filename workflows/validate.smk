# Does the simulator predict a measured run? (issue 35) One recurring job, measured and replayed:
#   snakemake -s workflows/validate.smk --configfile config/validate-h200.yaml --cores 2 --resources gpu=1
#   snakemake -s workflows/validate.smk --configfile config/validate-fake.yaml --cores 2 --resources gpu=1
# (--resources gpu=1: one GPU job at a time; the sweep locks the GPU against a second run).
# Stages: sweep (train trace per batch size and seed, power trace at the current limit, repeats of
# a few power points) -> traces -> simulate (policy zeus, many seeds, without and with --noise at
# the measured run-to-run level) -> online run (zeus_bench.online, N recurrences) -> compare
# (results/validation/<gpu>/: recurrences.parquet, findings.parquet, report.md, validation.png).
# Batch-size side only, at the GPU's current power limit (observe mode): no GPU setting is written.
# GPU measurements are protected(). On the lent H200 the GPU rules' commands ran through
# benchmarks/h200/validate_device.py (no Snakemake there) into the same paths.

import shlex
import shutil
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError
from snakemake.utils import min_version

from zeus_bench.cli.configcheck import check_schema, exit_on_error, skip_unused_iri_grammar

min_version("9.0")
skip_unused_iri_grammar()  # about 1 s of jsonschema's import in a venv with the test extras

if "validate" not in config:
    raise WorkflowError("validate: pass a config file: --configfile config/validate-h200.yaml (or validate-fake.yaml)")
with exit_on_error():  # a typo in the config is one line naming the key, exit status 2
    check_schema(config, Path(workflow.basedir).parent / "config" / "validate.schema.json", "validate config")
V = config["validate"]
GPU = V["gpu"]
W = V["workload"]
BATCH_SIZES = [int(b) for b in V["batch_sizes"]]
NOISE_BS = [int(b) for b in V["noise"]["batch_sizes"]]
REPEATS = range(1, int(V["noise"]["repeats"]) + 1)
# A rehearsal (fake GPU) writes to the git-ignored data/; a real GPU to the committed results/.
OUT = V.get("out_dir") or (f"data/validation/{GPU}" if V["backend"] == "fake" else f"results/validation/{GPU}")
MEASURED = f"{OUT}/measured"  # the GPU's raw measurements (shards, online run): protected
SIM = f"data/validation/{GPU}/sim"  # simulated runs: regenerated from the committed traces
CMD = shutil.which("zeus-bench") or f"'{sys.executable}' -m zeus_bench.cli.main"
REPO = Path(workflow.basedir).resolve().parent
# Python with the checkout importable (workloads/, analysis/ and the scripts), from any --directory.
PY = f"PYTHONPATH={shlex.quote(str(REPO))}:\"${{PYTHONPATH:-}}\" {shlex.quote(sys.executable)}"
ONLINE = shlex.quote(str(REPO / "workflows" / "scripts" / "validate_online.py"))
BATCH_SIZES_CSV = ",".join(map(str, BATCH_SIZES))
NOISE_BS_CSV = ",".join(map(str, NOISE_BS))
TINY = "--tiny" if V.get("tiny") else ""
WORKLOADS_FILE = f"--workloads-file {shlex.quote(V['workloads_file'])}" if V.get("workloads_file") else ""
N = int(V["online"]["recurrences"])
# The online run measured again with other optimizer seeds (the measured runs' own spread).
REPEAT_SEEDS = [int(s) for s in V["online"].get("repeat_seeds", [])]
SEEDS = f"1-{int(V['sim_seeds'])}"
COMMON = f"--backend {V['backend']} {TINY} {WORKLOADS_FILE}"
M = V["measure"]
SWEEP_ARGS = (
    f"--power-limits current --observe --gpu-kind {GPU} {COMMON} --warmup-s {M['warmup_s']} "
    f"--measure-s {M['measure_s']} --max-measure-s {M['max_measure_s']} --warmup-max-s {M['warmup_max_s']}"
)
SIM_ARGS = (
    f"--gpu {GPU} --workloads {W} --policies zeus --seeds {SEEDS} --eta {V['eta']} --beta {V['beta']} "
    f"--recurrences {N} {WORKLOADS_FILE}"
)


rule all:
    default_target: True
    input:
        f"{OUT}/recurrences.parquet",
        f"{OUT}/findings.parquet",
        f"{OUT}/report.md",
        f"{OUT}/validation.png",
    localrule: True


rule validate_data:
    # The dataset's spec (the data are generated from it wherever it is read; nothing downloads).
    output:
        f"data/validation/{GPU}/data/teacher-student.json",
    log:
        f"logs/validate/{GPU}/data.log",
    shell:
        "{PY} -m workloads.teacher_student $(dirname {output}) {TINY} > {log} 2>&1"


rule validate_train_cell:
    # Epochs to the target for one batch size, `runs` seeds (0..runs-1): a train-trace shard.
    input:
        rules.validate_data.output,
    output:
        protected(f"{MEASURED}/train/bs{{bs}}.parquet"),
    wildcard_constraints:
        bs=r"[0-9]+",
    resources:
        gpu=1,
    log:
        f"logs/validate/{GPU}/train-bs{{bs}}.log",
    shell:
        "{CMD} sweep --workload {W} --train-to-target --data-root $(dirname {input}) --batch-sizes {wildcards.bs} "
        "--runs {V[runs]} --observe --torch-device {V[torch_device]} {COMMON} --out {output} > {log} 2>&1"


rule validate_power:
    # Time per epoch and average power of every batch size at the current limit (observe mode), one
    # sweep process (one GPU: nothing to gain from a process per cell).
    output:
        protected(f"{MEASURED}/power.parquet"),
    resources:
        gpu=1,
    log:
        f"logs/validate/{GPU}/power.log",
    shell:
        "{CMD} sweep --workload {W} --batch-sizes {BATCH_SIZES_CSV} {SWEEP_ARGS} --out {output} > {log} 2>&1"


rule validate_noise_repeat:
    # A few of the points measured again by a fresh process: the run-to-run noise.
    output:
        protected(f"{MEASURED}/noise-r{{k}}.parquet"),
    wildcard_constraints:
        k=r"[0-9]+",
    resources:
        gpu=1,
    log:
        f"logs/validate/{GPU}/noise-r{{k}}.log",
    shell:
        "{CMD} sweep --workload {W} --batch-sizes {NOISE_BS_CSV} {SWEEP_ARGS} --out {output} > {log} 2>&1"


rule validate_traces:
    # The measured traces as `zeus-bench simulate` reads them: train.parquet, power-<gpu>.parquet.
    input:
        train=expand(f"{MEASURED}/train/bs{{bs}}.parquet", bs=BATCH_SIZES),
        power=f"{MEASURED}/power.parquet",
    output:
        train=f"{OUT}/traces/train.parquet",
        power=f"{OUT}/traces/power-{GPU}.parquet",
    localrule: True
    log:
        f"logs/validate/{GPU}/traces.log",
    shell:
        "({CMD} sweep-merge {input.train} --out {output.train} && "
        "{CMD} sweep-merge {input.power} --out {output.power}) > {log} 2>&1"


rule validate_noise:
    input:
        power=f"{MEASURED}/power.parquet",
        repeats=expand(f"{MEASURED}/noise-r{{k}}.parquet", k=REPEATS),
    output:
        f"{OUT}/noise.parquet",
    localrule: True
    log:
        f"logs/validate/{GPU}/noise.log",
    shell:
        "{CMD} validate noise {input.power} {input.repeats} --workload {W} --out {output} > {log} 2>&1"


rule validate_simulate:
    input:
        rules.validate_traces.output,
    output:
        f"{SIM}/zeus.parquet",
    localrule: True
    log:
        f"logs/validate/{GPU}/simulate.log",
    shell:
        "{CMD} simulate --traces $(dirname {input[0]}) {SIM_ARGS} --out {output} > {log} 2>&1"


rule validate_simulate_noise:
    # The same replay with seeded noise on time and power at the measured run-to-run level.
    input:
        traces=rules.validate_traces.output,
        noise=rules.validate_noise.output,
    output:
        f"{SIM}/zeus-noise.parquet",
    localrule: True
    log:
        f"logs/validate/{GPU}/simulate-noise.log",
    shell:
        "{CMD} simulate --traces $(dirname {input.traces[0]}) {SIM_ARGS} "
        "--noise $({PY} -c \"import pandas as pd; print(pd.read_parquet('{input.noise}')['noise_level'].iloc[0])\") "
        "--out {output} > {log} 2>&1"


rule validate_online:
    # The online optimizer (zeus_bench.online, unchanged) runs the job N times on the GPU.
    input:
        rules.validate_data.output,
    output:
        protected(f"{MEASURED}/online.parquet"),
    params:
        state=f"data/validation/{GPU}/online-state",
    resources:
        gpu=1,
    log:
        f"logs/validate/{GPU}/online.log",
    shell:
        "{PY} {ONLINE} --workload {W} --data-root $(dirname {input}) "
        "--state-dir {params.state} --out {output} --gpu-kind {GPU} --recurrences {N} "
        "--batch-sizes {BATCH_SIZES_CSV} --eta {V[eta]} --beta {V[beta]} --observe --device {V[torch_device]} "
        "--profile-s {V[online][profile_s]} {COMMON} > {log} 2>&1"


rule validate_online_repeat:
    # The same online run again, the batch-size optimizer seeded otherwise (a fresh state).
    input:
        rules.validate_data.output,
    output:
        protected(f"{MEASURED}/online-seed{{seed}}.parquet"),
    wildcard_constraints:
        seed=r"[0-9]+",
    params:
        state=f"data/validation/{GPU}/online-state-seed{{seed}}",
    resources:
        gpu=1,
    log:
        f"logs/validate/{GPU}/online-seed{{seed}}.log",
    shell:
        "{PY} {ONLINE} --workload {W} --data-root $(dirname {input}) --seed {wildcards.seed} "
        "--state-dir {params.state} --out {output} --gpu-kind {GPU} --recurrences {N} "
        "--batch-sizes {BATCH_SIZES_CSV} --eta {V[eta]} --beta {V[beta]} --observe --device {V[torch_device]} "
        "--profile-s {V[online][profile_s]} {COMMON} > {log} 2>&1"


rule validate_compare:
    input:
        measured=rules.validate_online.output,
        repeats=expand(f"{MEASURED}/online-seed{{seed}}.parquet", seed=REPEAT_SEEDS),
        sim=rules.validate_simulate.output,
        sim_noise=rules.validate_simulate_noise.output,
        noise=rules.validate_noise.output,
        power=rules.validate_traces.output.power,
    output:
        f"{OUT}/recurrences.parquet",
        f"{OUT}/findings.parquet",
        f"{OUT}/report.md",
    params:
        repeats=lambda wildcards, input: f"--repeats {input.repeats}" if REPEAT_SEEDS else "",
    localrule: True
    log:
        f"logs/validate/{GPU}/compare.log",
    shell:
        "{CMD} validate compare --measured {input.measured} --sim {input.sim} --sim-noise {input.sim_noise} "
        "--noise {input.noise} --power {input.power} {params.repeats} --out-dir {OUT} --force > {log} 2>&1"


rule validate_figure:
    input:
        f"{OUT}/recurrences.parquet",
    output:
        f"{OUT}/validation.png",
        f"{OUT}/validation.pdf",
    localrule: True
    log:
        f"logs/validate/{GPU}/figure.log",
    shell:
        "{PY} -m analysis.figures validation --validation {input} --out {OUT}/validation > {log} 2>&1"
