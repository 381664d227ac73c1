# GPU sweep workflow (needs GPUs, or the fake backend for a dry rehearsal):
#   snakemake -s workflows/sweep.smk --configfile config/sweep.yaml --profile profiles/local
#   snakemake -s workflows/sweep.smk --configfile config/sweep.yaml --profile profiles/slurm
# Targets: results/sweep/<gpu>/power-<gpu>.parquet for every GPU kind of config/sweep.yaml.

from snakemake.utils import min_version

min_version("9.0")


include: "rules/sweep.smk"


# `snakemake -n`: the cells to measure and what they will cost (as `zeus-bench sweep --dry-run`),
# printed before the job table, so that GPU-hours are weighed before they are spent.
if workflow.output_settings.dryrun:
    logger.info(sweep_estimate())


rule all:
    default_target: True
    input:
        sweep_targets(),
    localrule: True
