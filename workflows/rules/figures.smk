# Figures (PNG and PDF under results/figures/): `python -m analysis.figures KIND`, from results files;
# the per-GPU figures (and the summaries they rest on) by one process per GPU
# (`python -m analysis.figures per-gpu`).

FIG_PARAMS = {
    "stem": lambda wc, output: os.path.splitext(output[0])[0],
    "formats": ",".join(FORMATS),
    "dpi": config["figures"]["dpi"],
}


rule figure_potential:
    priority: PRIORITY["figure_potential"]
    input:
        code=FIGURE_CODE,
        potential=lambda wc: expand("results/potential/{gpu}.csv", gpu=all_gpus()),
    output:
        report_fig("potential", "potential", "Traces"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/potential.log",
    shell:
        "python -m analysis.figures potential --potential {input.potential} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"


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
    # summaries and the figures pareto, policies, ablation, convergence, regret, eta and beta.
    # This rule serves the project's own GPUs (one power limit); figures_per_gpu_profiles below,
    # the same with the power-profiles figure, serves the GPUs of the Zeus traces.
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
        **per_gpu_outputs(PER_GPU_FIGURES, "Measured GPUs"),
    wildcard_constraints:
        gpu=OWN_GPU_RE,
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
        **per_gpu_outputs((*PER_GPU_FIGURES, "power-profiles"), "Traces"),
    wildcard_constraints:
        gpu=NOT_OWN_GPU_RE,
    params:
        configs=lambda wc: configs_of(wc.gpu),
        profiles="--power-profiles",
        formats=FIG_PARAMS["formats"],
        dpi=FIG_PARAMS["dpi"],
        out_dir=lambda wc, output: os.path.dirname(output.figures[0]),


rule figure_h200:
    priority: PRIORITY["figure_h200"]
    input:
        code=FIGURE_CODE,
        power=own_power_files(),
    output:
        report_fig("h200", "h200", "Measured GPUs"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/h200.log",
    shell:
        "python -m analysis.figures h200 --power {input.power} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"


rule figure_generations:
    priority: PRIORITY["figure_generations"]
    input:
        code=FIGURE_CODE,
        zeus=lambda wc: [f"{ZEUS_DIR}/power-{g}.parquet" for g in zeus_gpus()],
        power=own_power_files(),
    output:
        report_fig("generations", "generations", "Measured GPUs"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/generations.log",
    shell:
        "python -m analysis.figures generations --zeus {input.zeus} --power {input.power} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"
