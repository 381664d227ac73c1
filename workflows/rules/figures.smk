# Figures (PNG and PDF under results/figures/): `python -m analysis.figures KIND`, from results files;
# the per-GPU figures are drawn by one process per GPU (`python -m analysis.figures per-gpu`).

FIG_PARAMS = {
    "stem": lambda wc, output: os.path.splitext(output[0])[0],
    "formats": ",".join(FORMATS),
    "dpi": config["figures"]["dpi"],
}


rule figure_potential:
    input:
        code=FIGURE_CODE,
        potential=lambda wc: expand("results/potential/{gpu}.csv", gpu=all_gpus()),
    output:
        fig("potential"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/potential.log",
    shell:
        "python -m analysis.figures potential --potential {input.potential} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"


rule figures_per_gpu:
    # Every per-GPU figure in one process (pandas and matplotlib imported once per GPU, each input
    # read once): pareto, policies, ablation, convergence, regret, eta, beta.
    input:
        code=FIGURE_CODE,
        configs=lambda wc: configs_of(wc.gpu),
        potential="results/potential/{gpu}.csv",
        sim="results/sim/{gpu}/main.parquet",
        eta=lambda wc: eta_sims(wc.gpu),
        beta=lambda wc: beta_sims(wc.gpu),
    output:
        [f for name in PER_GPU_FIGURES for f in fig(f"{name}-{{gpu}}")],
    params:
        formats=FIG_PARAMS["formats"],
        dpi=FIG_PARAMS["dpi"],
        out_dir=lambda wc, output: os.path.dirname(output[0]),
    conda:
        ENV
    log:
        "logs/figures/per-gpu-{gpu}.log",
    shell:
        "python -m analysis.figures per-gpu --gpu {wildcards.gpu} --out-dir {params.out_dir} "
        "--configs {input.configs} --potential {input.potential} --sim {input.sim} "
        "--eta-sim {input.eta} --beta-sim {input.beta} "
        "--formats {params.formats} --dpi {params.dpi} > {log} 2>&1"


rule figure_power_profiles:
    input:
        code=FIGURE_CODE,
        configs=lambda wc: configs_of(wc.gpu),
        potential="results/potential/{gpu}.csv",
    output:
        fig("power-profiles-{gpu}"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/power-profiles-{gpu}.log",
    shell:
        "python -m analysis.figures power-profiles --gpu {wildcards.gpu} --configs {input.configs} "
        "--potential {input.potential} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"


rule figure_h200:
    input:
        code=FIGURE_CODE,
        power=own_power_files(),
    output:
        fig("h200"),
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
    input:
        code=FIGURE_CODE,
        zeus=lambda wc: [f"{ZEUS_DIR}/power-{g}.parquet" for g in zeus_gpus()],
        power=own_power_files(),
    output:
        fig("generations"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/generations.log",
    shell:
        "python -m analysis.figures generations --zeus {input.zeus} --power {input.power} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"
