# Figures (PNG and PDF under results/figures/): `python -m analysis.figures KIND`, from results files.

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


rule figure_pareto:
    input:
        code=FIGURE_CODE,
        configs=lambda wc: configs_of(wc.gpu),
        potential="results/potential/{gpu}.csv",
        sim="results/sim/{gpu}/main.parquet",
    output:
        fig("pareto-{gpu}"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/pareto-{gpu}.log",
    shell:
        "python -m analysis.figures pareto --gpu {wildcards.gpu} --configs {input.configs} "
        "--potential {input.potential} --sim {input.sim} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"


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


rule figure_from_simulation:
    input:
        code=FIGURE_CODE,
        sim="results/sim/{gpu}/main.parquet",
    output:
        fig("{kind}-{gpu}"),
    wildcard_constraints:
        kind="policies|ablation|convergence|regret",
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/{kind}-{gpu}.log",
    shell:
        "python -m analysis.figures {wildcards.kind} --sim {input.sim} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"


rule figure_eta:
    input:
        code=FIGURE_CODE,
        sim=lambda wc: eta_sims(wc.gpu),
    output:
        fig("eta-{gpu}"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/eta-{gpu}.log",
    shell:
        "python -m analysis.figures eta --sim {input.sim} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"


rule figure_beta:
    input:
        code=FIGURE_CODE,
        sim=lambda wc: beta_sims(wc.gpu),
    output:
        fig("beta-{gpu}"),
    params:
        **FIG_PARAMS,
    conda:
        ENV
    log:
        "logs/figures/beta-{gpu}.log",
    shell:
        "python -m analysis.figures beta --sim {input.sim} "
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
