# Trace analysis without simulation: potential savings and every configuration's expected ETA/TTA.


rule potential:
    input:
        ZEUS_DIR,
    output:
        "results/potential/{gpu}.csv",
    params:
        eta=num(config["eta"]),
    conda:
        ENV
    log:
        "logs/potential/{gpu}.log",
    shell:
        "zeus-bench potential --traces {input} --gpu {wildcards.gpu} --eta {params.eta} "
        "--format csv --out {output} 2> {log}"


rule configurations:
    input:
        ZEUS_DIR,
    output:
        "results/configs/{gpu}/{workload}.parquet",
    params:
        eta=num(config["eta"]),
    conda:
        ENV
    log:
        "logs/configurations/{gpu}/{workload}.log",
    shell:
        "zeus-bench pareto --traces {input} --gpu {wildcards.gpu} --workload {wildcards.workload} "
        "--eta {params.eta} --all --out {output} 2> {log}"
