# Trace analysis without simulation: potential savings and every configuration's expected ETA/TTA.


rule potential:
    input:
        traces=lambda wc: traces_of(wc.gpu),
        code=ANALYSIS_CODE,
    output:
        "results/potential/{gpu}.csv",
    params:
        eta=num(config["eta"]),
    conda:
        ENV
    log:
        "logs/potential/{gpu}.log",
    shell:
        "zeus-bench potential --traces {input.traces} --gpu {wildcards.gpu} --eta {params.eta} "
        "--format csv --out {output} 2> {log}"


rule configurations:
    input:
        traces=lambda wc: traces_of(wc.gpu),
        code=ANALYSIS_CODE,
    output:
        "results/configs/{gpu}/{workload}.parquet",
    params:
        eta=num(config["eta"]),
    conda:
        ENV
    log:
        "logs/configurations/{gpu}/{workload}.log",
    shell:
        "zeus-bench pareto --traces {input.traces} --gpu {wildcards.gpu} --workload {wildcards.workload} "
        "--eta {params.eta} --all --out {output} 2> {log}"
