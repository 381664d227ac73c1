# The zeus-plus study (docs/policies.md): Zeus vs zeus-plus on every job, drift recovery and
# cross-GPU warm start (python -m zeus_bench.sim.study), and its three figures.


rule policy_study:
    input:
        traces=lambda wc: sorted({traces_of(g) for g in policy_study_gpus()}),
        code=POLICY_CODE,
    output:
        [f"{POLICY_DIR}/{t}.csv" for t in POLICY_TABLES],
    params:
        traces=lambda wc: " ".join(f"--traces {g}={traces_of(g)}" for g in policy_study_gpus()),
        seeds=config["policy_study"]["seeds"],
        workloads=config["workloads"] if config["workloads"] == "all" else ",".join(config["workloads"]),
        out_dir=lambda wc, output: os.path.dirname(output[0]),
    conda:
        ENV
    log:
        "logs/policy/study.log",
    shell:
        "python -m zeus_bench.sim.study {params.traces} --seeds {params.seeds} --workloads {params.workloads} "
        "--out-dir {params.out_dir} > {log} 2>&1"


rule figure_policy:
    input:
        code=code(*_ANALYSIS_BASE, "analysis/policy_plots.py", "analysis/plots.py"),
        tables=[f"{POLICY_DIR}/{t}.csv" for t in POLICY_TABLES],
    output:
        fig("policy-{kind}"),
    wildcard_constraints:
        kind="|".join(POLICY_FIGURES),
    params:
        **FIG_PARAMS,
        study=lambda wc, input: os.path.dirname(input.tables[0]),
    conda:
        ENV
    log:
        "logs/figures/policy-{kind}.log",
    shell:
        "python -m analysis.policy_plots {wildcards.kind} --study {params.study} "
        "--out {params.stem} --formats {params.formats} --dpi {params.dpi} > {log} 2>&1"
