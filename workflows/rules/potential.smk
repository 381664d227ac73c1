# Trace analysis without simulation, one process per GPU: the potential savings and every
# configuration's expected ETA/TTA of each of its workloads (`zeus-bench potential` and one
# `zeus-bench pareto --all` per workload, run by workflows/scripts/zeus_bench_many.py so that the
# imports and the traces are paid once per GPU).


rule configurations:
    priority: chain_priority(0)
    input:
        traces=lambda wc: traces_of(wc.gpu),
        checkpoint=lambda wc: checkpoint_of(wc.gpu),
        code=ANALYSIS_CODE,
    output:
        potential="results/potential/{gpu}.csv",
        # results/configs/<gpu>/<workload>.parquet, one per workload of workloads_of(gpu)
        configs=directory("results/configs/{gpu}"),
    params:
        commands=trace_analysis_commands,
        runner=RUN_MANY,
        # The settings the commands use, as plain values: a change reruns the analysis.
        settings=lambda wc: f"eta {num(config['eta'])} {workloads_arg(wc.gpu)}",
    conda:
        ENV
    log:
        "logs/configurations/{gpu}.log",
    shell:
        "mkdir -p {output.configs} && python {params.runner} {params.commands} 2> {log}"
