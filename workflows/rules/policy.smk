# The zeus-plus study (docs/policies.md): Zeus vs zeus-plus on every job (regenerated from the arena's
# fold-1 tables: its judged half, seeds and protocol), drift recovery and cross-GPU warm start
# (zeus-bench study); its figures (policy-regret, -cost, -drift) and the arena's (policy-arena) are
# drawn by the rules generated from the figure registry (figures.smk).


rule policy_study:
    priority: PRIORITY["policy_study"]
    input:
        traces=lambda wc: sorted({traces_of(g) for g in policy_study_gpus()}),
        code=POLICY_CODE,
        arena=f"{ARENA_DIR}/known/arena_jobs.parquet",
    output:
        [f"{POLICY_DIR}/{t}.csv" for t in POLICY_TABLES],
    params:
        traces=lambda wc: " ".join(f"--traces {g}={traces_of(g)}" for g in policy_study_gpus()),
        seeds=config["policy_study"]["seeds"],
        workloads=config["workloads"] if config["workloads"] == "all" else ",".join(config["workloads"]),
        out_dir=lambda wc, output: os.path.dirname(output[0]),
        arena=lambda wc, input: os.path.dirname(input.arena),
    conda:
        ENV
    log:
        "logs/policy/study.log",
    shell:
        "zeus-bench study --arena {params.arena} {params.traces} --seeds {params.seeds} "
        "--workloads {params.workloads} --out-dir {params.out_dir} --force 2>&1 | tee {log}"


# The policy arena (docs/policies.md, "The arena protocol"): every registered policy on every GPU,
# both cross-fitting folds (column fold), config arena.seeds; once with the true horizon, once unknown.
rule policy_arena:
    priority: PRIORITY["policy_study"]
    input:
        traces=lambda wc: sorted({traces_of(g) for g in policy_study_gpus()}),
        code=POLICY_CODE,
    output:
        jobs=f"{ARENA_DIR}/{{run}}/arena_jobs.parquet",
        summary=f"{ARENA_DIR}/{{run}}/arena_summary.parquet",
    wildcard_constraints:
        run="known|unknown",
    threads: config["arena"]["jobs"]
    params:
        traces=lambda wc: " ".join(f"--traces {g}={traces_of(g)}" for g in policy_study_gpus()),
        gpus=lambda wc: ",".join(policy_study_gpus()),
        seeds=config["arena"]["seeds"],
        out_dir=lambda wc, output: os.path.dirname(output.jobs),
        horizon=lambda wc: "unknown" if wc.run == "unknown" else "known",
    conda:
        ENV
    log:
        "logs/policy/arena-{run}.log",
    shell:
        # SOURCE_DATE_EPOCH: committed tables hold no creation time or commit (byte-identical reruns);
        # tee: the progress lines (a few seconds apart, with the time left) also on the console
        "SOURCE_DATE_EPOCH=0 zeus-bench arena {params.traces} --gpu {params.gpus} --seeds {params.seeds} --horizon {params.horizon} "
        "--fold both --jobs {threads} --out {params.out_dir} --force 2>&1 | tee {log}"
