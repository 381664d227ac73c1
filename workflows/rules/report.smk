# The report (results/report.md: each figure, a reading of it and its key numbers) and the
# column reference of every committed table (results/README.md, generated from the schemas).


# The coverage study's settings (committed; python -m zeus_bench.studies.coverage): the arena section
# says how its intervals were sized when the file is there (a working copy without it: not stated).
COVERAGE = f"{POLICY_DIR}/coverage.csv"


rule report:
    priority: PRIORITY["report"]
    input:
        unpack(report_inputs),
        code=REPORT_CODE,
    output:
        # report.md with the Zeus traces; without them report-partial.md (git-ignored), so that a
        # run offline never replaces the committed report with a partial one.
        "results/{report}.md",
    wildcard_constraints:
        report="report|report-partial",
    params:
        gpus=config["gpus"] if config["gpus"] == "all" else ",".join(config["gpus"]),
        formats=",".join(FORMATS),
        configs=lambda wc: [p for g in all_gpus() for p in configs_of(g)],
        # The figures it links: their names only (it reads no figure), so it runs beside them;
        # the target `all` needs both.
        figures=lambda wc: figure_files(),
        # A named input whose list is empty (no study without the Zeus traces) is not in `input`:
        # ask for it by name, with a default, so that `snakemake results/report.md` builds its DAG.
        policy=lambda wc, input: (
            f"--policy-study {POLICY_DIR} --policy-seeds {config['policy_study']['seeds']}"
            if input.get("policy")
            else ""
        ),
        arena=lambda wc, input: f"--arena {ARENA_DIR}/known --arena-unknown {ARENA_DIR}/unknown --arena-tuning {POLICY_DIR}/tuning-known.csv {POLICY_DIR}/tuning-known-fold2.csv"
        + (f" --arena-coverage {COVERAGE}" if os.path.exists(COVERAGE) else "")
        if input.get("arena")
        else "",
        alibaba=alibaba_report_args,
        tables=report_table_args,
    conda:
        ENV
    log:
        "logs/{report}.log",
    shell:
        "python -m analysis.report --out {output} --configured-gpus {params.gpus} {params.tables} "
        "--configs {params.configs} --figures {params.figures} {params.policy} {params.arena} {params.alibaba} > {log} 2>&1"


# The findings as one HTML page with its figures embedded (git-ignored): `snakemake --report`
# shows an HTML result as a page, a Markdown one only as a download whose figure links break.
rule report_html:
    priority: PRIORITY["report"]
    input:
        md=lambda wc: report_target(),
        figures=lambda wc: [f for f in figure_files() if f.endswith(".png")],
        code=str(Path(workflow.basedir, "analysis", "report_html.py")),
    output:
        report(
            FINDINGS_HTML,
            caption=str(Path(workflow.basedir, "workflows", "report", "findings.rst")),
            category="Findings",
        ),
    conda:
        ENV
    log:
        "logs/report_html.log",
    shell:
        "python -m analysis.report_html --report {input.md} --out {output} > {log} 2>&1"


rule results_readme:
    input:
        SCHEMA_CODE,
    output:
        "results/README.md",
    conda:
        ENV
    log:
        "logs/results_readme.log",
    shell:
        "python -m analysis.readme --out {output} > {log} 2>&1"
