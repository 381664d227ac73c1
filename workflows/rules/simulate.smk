# Trace-driven simulation: every policy at the configured eta and beta, then sweeps of eta and beta.
# Their summaries (results/summary/<gpu>.csv) are written by the per-GPU figure job (figures.smk).


SIM_COMMON = (
    "zeus-bench simulate --traces {input.traces} --gpu {wildcards.gpu} --workloads {params.workloads} "
    "--policies {params.policies} --seeds {params.seeds} --eta {params.eta} --beta {params.beta} "
    "--recurrences {params.recurrences} {params.window} --jobs {threads} --out {output} 2> {log}"
)
SIM_PARAMS = {
    "workloads": lambda wc: workloads_arg(wc.gpu),
    "recurrences": config["recurrences"],
    # The window and the batch-size optimizer's knobs (none at the paper's values: the command
    # line stays the same).
    "window": shlex.join((["--window", str(config["window"])] if config["window"] else []) + bandit_knob_args()),
}


rule simulate:
    priority: chain_priority(0)  # see PRIORITY (common.smk)
    input:
        traces=lambda wc: traces_of(wc.gpu),
        checkpoint=lambda wc: checkpoint_of(wc.gpu),
        code=SIM_CODE,
    output:
        "results/sim/{gpu}/main.parquet",
    params:
        **SIM_PARAMS,
        policies=",".join(config["policies"]),
        seeds=config["seeds"],
        eta=num(config["eta"]),
        beta=num(config["beta"]),
    # One thread on this machine (the simulation takes about a second; a job of two threads would
    # wait for both cores while the scheduler fills them with others), two CPUs per cluster job
    # (a function: the executor is known when the jobs are made, not when this file is read).
    threads: lambda wildcards: 2 if workflow.non_local_exec else 1
    conda:
        ENV
    log:
        "logs/simulate/{gpu}/main.log",
    shell:
        SIM_COMMON


SWEEP_SHELL = "python {params.runner} {params.commands} 2> {log}"


rule simulate_eta:
    # Every eta of the sweep for one GPU, in one process.
    priority: chain_priority(0)
    input:
        traces=lambda wc: traces_of(wc.gpu),
        checkpoint=lambda wc: checkpoint_of(wc.gpu),
        code=SIM_CODE,
    output:
        sweep_outputs("eta"),
    params:
        commands=sweep_commands("eta"),
        runner=RUN_MANY,
        # The settings the commands use, as plain values: a change reruns the sweep.
        settings=lambda wc: f"eta {config['eta_sweep']} beta {num(config['beta'])} {workloads_arg(wc.gpu)}",
    conda:
        ENV
    log:
        "logs/simulate/{gpu}/eta-sweep.log",
    shell:
        SWEEP_SHELL


rule simulate_beta:
    # Every beta of the sweep for one GPU, in one process.
    priority: chain_priority(0)
    input:
        traces=lambda wc: traces_of(wc.gpu),
        checkpoint=lambda wc: checkpoint_of(wc.gpu),
        code=SIM_CODE,
    output:
        sweep_outputs("beta"),
    params:
        commands=sweep_commands("beta"),
        runner=RUN_MANY,
        # The settings the commands use, as plain values: a change reruns the sweep.
        settings=lambda wc: f"beta {config['beta_sweep']} eta {num(config['eta'])} {workloads_arg(wc.gpu)}",
    conda:
        ENV
    log:
        "logs/simulate/{gpu}/beta-sweep.log",
    shell:
        SWEEP_SHELL

