# GPU sweeps: one job per (GPU kind, workload, batch size) cell, each a protected Parquet shard,
# then one merge per GPU kind into results/sweep/<gpu>/power-<gpu>.parquet.
#
# Standalone:   snakemake -s workflows/sweep.smk --configfile config/sweep.yaml --profile profiles/local
# From a Snakefile: `include: "workflows/rules/sweep.smk"`; the settings are read from
# config["sweep"] when present, else from config/sweep.yaml (so the main config need not know them).
#
# Cells are protected(): GPU-hours never vanish in a careless rerun, and a rerun after an
# interruption measures only the cells whose shard is missing. Every cell needs `gpu=1`; how many
# run at once is the profile's business (profiles/local: one per GPU; profiles/slurm: one job each).

include: "sweep_config.smk"


rule sweep_cell:
    output:
        protected(f"{SWEEP_DIR}/{{gpu}}/{{workload}}/bs{{batch_size}}.parquet"),
    params:
        args=sweep_cell_args,
        cmd=ZEUS_BENCH_CMD,
    wildcard_constraints:
        batch_size=r"[0-9]+",
    resources:
        gpu=1,
    log:
        "logs/sweep_cell/{gpu}/{workload}/bs{batch_size}.log",
    conda:
        "../envs/zeus-bench.yaml"
    shell:
        "{params.cmd} sweep --workload {wildcards.workload} --batch-sizes {wildcards.batch_size} "
        "{params.args} --out {output} > {log} 2>&1"


rule sweep_merge:
    input:
        lambda wildcards: sweep_cells(wildcards.gpu),
    output:
        f"{SWEEP_DIR}/{{gpu}}/power-{{gpu}}.parquet",
    params:
        cmd=ZEUS_BENCH_CMD,
    localrule: True
    log:
        "logs/sweep_merge/{gpu}.log",
    conda:
        "../envs/zeus-bench.yaml"
    shell:
        "{params.cmd} sweep-merge {input} --out {output} > {log} 2>&1"


rule sweep_all:
    input:
        sweep_targets(),
    localrule: True
