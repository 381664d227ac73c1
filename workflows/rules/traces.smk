# Obtain the published Zeus traces (local copy or pinned, sha256-verified download) and import them
# to Parquet, in one checkpoint: the GPUs and workloads downstream depend on what was obtained.
# Without them (offline, no local copy) the manifest says so and the workflow draws only what the
# project's own committed traces allow; the report says what was skipped and how to get the rest.


checkpoint zeus_traces:
    input:
        code=TRACE_CODE,
    output:
        csv=directory(ZEUS_CSV_DIR),
        parquet=directory(ZEUS_DIR),
    params:
        args=fetch_args(),
    conda:
        ENV
    log:
        "logs/zeus_traces.log",
    shell:
        "zeus-bench fetch-traces --out {output.csv} {params.args} --allow-missing "
        "--import-to {output.parquet} > {log} 2>&1"


rule own_traces:
    input:
        traces=ZEUS_DIR,
        power=lambda wc: OWN_GPUS[wc.gpu],
    output:
        directory(f"{OWN_TRACES}/{{gpu}}"),
    conda:
        ENV
    log:
        "logs/own_traces/{gpu}.log",
    shell:
        "(mkdir -p {output} && cp {input.traces}/train.parquet {input.power} {output}/) > {log} 2>&1"
