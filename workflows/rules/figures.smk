# Figures (PNG and PDF under results/figures/), generated from the figure registry
# (analysis/figures/__init__.py): one rule `figure_<name>` per figure drawn once
# (`python -m analysis.figures <name>`), and one job per GPU for the per-GPU figures and the
# summaries they rest on (`python -m analysis.figures per-gpu`). A new figure needs no edit here.

FIG_PARAMS = {
    "stem": lambda wc, output: os.path.splitext(output[0])[0],
    "formats": ",".join(FORMATS),
    "dpi": config["figures"]["dpi"],
}


# The command of every figure drawn once (the shell of a rule made in a loop is read when its job
# runs, so what differs between the figures is in params, fixed when the rule is made).
FIGURE_SHELL = (
    "python -m analysis.figures {params.kind} {params.options} "
    "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"
)


for _spec in single_figures():

    rule:
        name:
            f"figure_{_spec.name}"
        localrule: True
        priority: PRIORITY.get(f"figure_{_spec.name}", 3)
        input:
            code=FIGURE_CODE,
            **figure_rule_inputs(_spec),
        output:
            report_fig(_spec.stem, _spec.caption_name, _spec.category),
        params:
            **FIG_PARAMS,
            kind=_spec.name,
            options=figure_options(_spec),
        conda:
            ENV
        log:
            f"logs/figures/{_spec.name}.log",
        shell:
            FIGURE_SHELL


PER_GPU_SHELL = (
    "python -m analysis.figures per-gpu --gpu {wildcards.gpu} --out-dir {params.out_dir} "
    "--configs {params.configs} --potential {input.potential} --sim {input.sim} "
    "--eta-sim {input.eta} --beta-sim {input.beta} --summary-out {output.summary} "
    "--eta-summary-out {output.eta_summary} --beta-summary-out {output.beta_summary} {params.profiles} "
    "--formats {params.formats} --dpi {params.dpi} > {log} 2>&1"
)


rule figures_per_gpu:
    # Everything drawn for one GPU in one process (pandas and matplotlib imported once, each input
    # read and each simulation summarised once): the main simulation's summary, the sweeps'
    # summaries and the registry's per-GPU figures. This rule serves the GPUs whose trace holds
    # one power limit (counted in each own trace: ONE_LIMIT_GPU_RE, gpus.smk);
    # figures_per_gpu_profiles below, the same with the figures for several limits
    # (power-profiles), serves the others: the Zeus GPUs and own GPUs swept at several limits.
    priority: chain_priority(1)
    input:
        code=FIGURE_CODE + SUMMARY_CODE,
        checkpoint=lambda wc: checkpoint_of(wc.gpu),
        configs="results/configs/{gpu}",
        potential="results/potential/{gpu}.csv",
        sim="results/sim/{gpu}/main.parquet",
        eta=lambda wc: eta_sims(wc.gpu),
        beta=lambda wc: beta_sims(wc.gpu),
    output:
        **per_gpu_outputs(False, "Measured GPUs"),
    wildcard_constraints:
        gpu=ONE_LIMIT_GPU_RE,
    params:
        configs=lambda wc: configs_of(wc.gpu),
        profiles="",
        formats=FIG_PARAMS["formats"],
        dpi=FIG_PARAMS["dpi"],
        out_dir=lambda wc, output: os.path.dirname(output.figures[0]),
    conda:
        ENV
    log:
        "logs/figures/per-gpu-{gpu}.log",
    shell:
        PER_GPU_SHELL


use rule figures_per_gpu as figures_per_gpu_profiles with:
    output:
        **per_gpu_outputs(True, "Traces"),
    wildcard_constraints:
        gpu=SEVERAL_LIMITS_GPU_RE,
    params:
        configs=lambda wc: configs_of(wc.gpu),
        profiles="--power-profiles",
        formats=FIG_PARAMS["formats"],
        dpi=FIG_PARAMS["dpi"],
        out_dir=lambda wc, output: os.path.dirname(output.figures[0]),
