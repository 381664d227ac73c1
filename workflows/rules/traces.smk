# Obtain the published Zeus traces (local copy or pinned, sha256-verified download) and import them.
# Without them (offline, no local copy) the manifest says so and the workflow draws only what the
# project's own committed traces allow; the report says what was skipped and how to get the rest.


checkpoint fetch_zeus_traces:
    output:
        directory(ZEUS_CSV_DIR),
    params:
        args=fetch_args(),
    conda:
        ENV
    log:
        "logs/fetch_zeus_traces.log",
    shell:
        "zeus-bench fetch-traces --out {output} {params.args} --allow-missing > {log} 2>&1"


checkpoint import_zeus_traces:
    input:
        csv=ZEUS_CSV_DIR,
        code=TRACE_CODE,
    output:
        directory(ZEUS_DIR),
    conda:
        ENV
    log:
        "logs/import_zeus_traces.log",
    shell:
        "zeus-bench traces import-zeus {input.csv} --out {output} > {log} 2>&1"
