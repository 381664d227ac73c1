# zeus-bench main workflow: `make reproduce` (= `snakemake --cores N`) regenerates the paper's
# trace-driven results and this project's extensions as figures (results/figures/) and a report
# (results/report.md). Configuration: config/config.yaml (validated by config/config.schema.json).
# GPU sweeps are a separate workflow (workflows/rules/sweep.smk, config/sweep.yaml): they need a GPU.

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


# `snakemake --report report.html`: every figure with its caption, and the findings (results/report.md
# as a page with its figures, results/findings.html).
report: "workflows/report/workflow.rst"


include: "workflows/rules/common.smk"
include: "workflows/rules/gpus.smk"
include: "workflows/rules/targets.smk"
include: "workflows/rules/hooks.smk"
include: "workflows/rules/commands.smk"


wildcard_constraints:
    gpu=r"[a-z0-9][a-z0-9_-]*",
    workload=r"[A-Za-z0-9][A-Za-z0-9_.-]*",
    eta=r"[0-9.]+",
    beta=r"[0-9.]+|inf",


include: "workflows/rules/traces.smk"
include: "workflows/rules/potential.smk"
include: "workflows/rules/simulate.smk"
include: "workflows/rules/figures.smk"
include: "workflows/rules/alibaba.smk"
include: "workflows/rules/report.smk"
include: "workflows/rules/policy.smk"


# Under a cluster executor (profiles/slurm) only the simulations (simulate*, policy_study) become
# jobs. Fetching the traces needs the network, which compute nodes often lack; the other steps
# take seconds, less than one round of the executor's status polling. The figure rules generated
# from the registry (figure_<name>, figures.smk) are marked `localrule: True` where they are made.
localrules:
    zeus_traces,
    own_traces,
    configurations,
    figures_per_gpu,
    figures_per_gpu_profiles,
    report,
    report_html,
    results_readme,
    alibaba_trace,


onstart:
    start_warm_server()


onsuccess:
    warn_if_traces_missing()
    finish_run()


onerror:
    explain_failure()
    finish_run()


rule all:
    default_target: True
    input:
        # Listed apart: Snakemake knows them before the Zeus traces checkpoint has run, so their
        # steps run beside it instead of after it.
        early_targets(),
        all_targets,
