# The paper's cluster-scale replay: the recurring job groups of the Alibaba GPU cluster trace 2020
# (alibaba_groups.csv.xz of the Zeus repository, at the commit of the other traces), verified by
# its git blob SHA-1 and converted to an arrival table, then replayed on every Zeus GPU under
# Zeus, zeus-plus and both baselines (zeus-bench simulate --arrivals: energy and time of each job
# scaled by its runtime_ratio). The checkpoint records the file as absent when it cannot be had
# (a local copy without it, HTTP 404, downloads off): the stage is then skipped and the report
# says so in one line. A wrong checksum stops the workflow with one line and leaves nothing.

include: "alibaba_common.smk"


checkpoint alibaba_trace:
    input:
        code=ALIBABA_CODE,
    output:
        directory(ALIBABA_DIR),
    params:
        args=alibaba_args,
    conda:
        ENV
    log:
        "logs/alibaba/trace.log",
    shell:
        "zeus-bench traces fetch-alibaba --out {output} {params.args} "
        "--import-to {output}/arrivals.parquet > {log} 2>&1"


rule simulate_alibaba:
    # The job groups on one GPU: every policy, then the summary (the same code as zeus-bench summarize).
    priority: chain_priority(0)
    input:
        traces=ZEUS_DIR,
        checkpoint=[ZEUS_CSV_DIR],
        arrivals=ALIBABA_DIR,
        code=SIM_CODE + SUMMARY_CODE,
    output:
        runs="results/sim/{gpu}/alibaba.parquet",
        summary="results/alibaba/{gpu}.csv",
    params:
        workloads=lambda wc: workloads_arg(wc.gpu),
        policies=",".join(ALIBABA["policies"]),
        seeds=ALIBABA["seeds"],
        eta=num(config["eta"]),
        beta=num(config["beta"]),
    conda:
        ENV
    log:
        "logs/alibaba/{gpu}.log",
    shell:
        "(zeus-bench simulate --traces {input.traces} --gpu {wildcards.gpu} --workloads {params.workloads} "
        "--policies {params.policies} --seeds {params.seeds} --eta {params.eta} --beta {params.beta} "
        "--arrivals {input.arrivals}/arrivals.parquet --jobs 1 --out {output.runs} && "
        "zeus-bench summarize {output.runs} --out {output.summary}) 2> {log}"
