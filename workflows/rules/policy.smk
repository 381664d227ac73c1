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
    threads: config["policy_study"]["jobs"]
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
        "--workloads {params.workloads} --jobs {threads} --out-dir {params.out_dir} --force 2>&1 | tee {log}"


# The policy arena (docs/policies.md, "The arena protocol"): every registered policy on every GPU,
# config arena.seeds. Horizon known and unknown: arena.splits splits, both folds (split 1's folds and
# every split pooled, column fold), arena.replicates replicate traces on split 1 (two-stage intervals:
# paths, then seeds); misspecified horizons (0.5x, 2x: half and twice the truth): split 1, fold 1,
# its recorded paths (--brief-horizon). All four in one run: a policy that reads no horizon
# (Policy.reads_horizon) is replayed once for all, its rows the same under each (12.4-12.6 s of CPU
# in one process against 11.3 + 3.4-3.5 s with the misspecified pair a run apart, same tables; 2026-12-05).
rule policy_arena:
    # First: the study, the longest step after it, waits for its known table.
    priority: PRIORITY["policy_study"] + 1
    input:
        traces=lambda wc: sorted({traces_of(g) for g in policy_study_gpus()}),
        code=POLICY_CODE,
    output:
        arena_outputs("known", "unknown", "0.5x", "2x"),
    threads: config["arena"]["jobs"]
    params:
        traces=lambda wc: " ".join(f"--traces {g}={traces_of(g)}" for g in policy_study_gpus()),
        gpus=lambda wc: ",".join(policy_study_gpus()),
        seeds=config["arena"]["seeds"],
        scope=(
            f"--fold both --splits {config['arena']['splits']} --replicates {config['arena']['replicates']} "
            f"--path-draw {config['arena']['path_draw']}"
        ),
        out=lambda wc: f"{ARENA_DIR}/{{horizon}}",
    conda:
        ENV
    log:
        "logs/policy/arena.log",
    shell:
        # SOURCE_DATE_EPOCH: committed tables hold no creation time or commit (byte-identical reruns);
        # tee: the progress lines (a few seconds apart, with the time left) and the answer also on the console
        "SOURCE_DATE_EPOCH=0 zeus-bench arena {params.traces} --gpu {params.gpus} --seeds {params.seeds} "
        "--horizon known,unknown {params.scope} --brief-horizon 0.5x,2x --jobs {threads} --out {params.out:q} "
        "--force 2>&1 | tee {log}"


# Regret against the number of recurrences (the same traces replayed 10 ... 200 times): zeus,
# zeus-plus, bo-ei and pl-only, split 1, fold 1, horizon known and unknown. Every run in one
# `zeus-bench arena --horizon known,unknown --recurrences 200,100,...`: a policy that reads no
# horizon is replayed once, under the first horizon and the longest run, its draws of a shorter
# run its first recurrences' (the rows of a recurrence do not depend on later ones); zeus-plus,
# told the number, is replayed per horizon and N.
rule arena_recurrences:
    priority: PRIORITY["policy_study"]
    input:
        traces=lambda wc: sorted({traces_of(g) for g in policy_study_gpus()}),
        code=POLICY_CODE,
    output:
        arena_recurrence_outputs(),
    threads: config["arena"]["jobs"]
    params:
        traces=lambda wc: " ".join(f"--traces {g}={traces_of(g)}" for g in policy_study_gpus()),
        gpus=lambda wc: ",".join(policy_study_gpus()),
        seeds=config["arena"]["seeds"],
        lengths=",".join(str(n) for n in sorted(config["arena"]["recurrences"], reverse=True)),
        policies=",".join(config["arena"]["recurrence_policies"]),
        out=lambda wc: f"{ARENA_DIR}/recurrences/{{horizon}}-n{{recurrences}}",
    conda:
        ENV
    log:
        "logs/policy/arena-recurrences.log",
    shell:
        # SOURCE_DATE_EPOCH: committed tables hold no creation time or commit (byte-identical reruns);
        # the answers (ten of them) to the log, the progress lines to the console
        "SOURCE_DATE_EPOCH=0 zeus-bench arena {params.traces} --gpu {params.gpus} --seeds {params.seeds} "
        "--horizon known,unknown --recurrences {params.lengths} --policies {params.policies} --fold 1 "
        "--jobs {threads} --out {params.out:q} --force 2>&1 >{log}"
