# Obtain the published Zeus traces (local copy or pinned, sha256-verified download) and import them
# to Parquet, in one checkpoint: the GPUs and workloads downstream depend on what was obtained.
# A failed download (offline, server error, checksum mismatch, timeout) stops the workflow with one
# line naming the file and URL. With `download: false` and no local copy the manifest records the
# traces as unavailable and the workflow draws only what the project's own committed traces allow,
# into a partial report (results/report-partial.md) that says what was skipped and how to get the rest.


checkpoint zeus_traces:
    input:
        code=TRACE_CODE,
    output:
        csv=directory(ZEUS_CSV_DIR),
        parquet=directory(ZEUS_DIR),
    params:
        args=fetch_args,
    conda:
        ENV
    log:
        "logs/zeus_traces.log",
    shell:
        "zeus-bench fetch-traces --out {output.csv} {params.args} "
        "--import-to {output.parquet} > {log} 2>&1"


rule own_traces:
    priority: PRIORITY["own_traces"]
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
