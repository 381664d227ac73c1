# Target lists: every figure the available data allow (from the figure registry, analysis.figures),
# the outputs of the per-GPU figure job, the report's inputs and the default target `all`.

sys.path.insert(0, workflow.basedir)  # the analysis package of this checkout (its registry is light)
from analysis.figures import FIGURES, per_gpu_figures, single_figures


def fig(name):
    """Every format of one figure."""
    return [f"{FIG}/{name}.{ext}" for ext in FORMATS]


def report_fig(name, family, category, subcategory=None):
    """Every format of one figure, its PNG flagged for `snakemake --report` (caption
    workflows/report/<family>.rst where it exists; the PDF holds the same figure)."""
    caption = Path(workflow.basedir, "workflows", "report", f"{family}.rst")
    flag = dict(caption=str(caption) if caption.is_file() else None, category=category, subcategory=subcategory)
    return [report(f, **flag) if f.endswith(".png") else f for f in fig(name)]



#: The files of each input name of a figure drawn once (analysis.figures.INPUTS), as functions;
#: STATIC_INPUTS are known before the Zeus traces are fetched.
SINGLE_FIGURE_INPUTS = {
    "potential": lambda: [f"results/potential/{g}.csv" for g in all_gpus()],
    "power": own_power_files,
    "zeus": lambda: [f"{ZEUS_DIR}/power-{g}.parquet" for g in zeus_gpus()],
    "arena": lambda: arena_files("known"),
    "arena_unknown": lambda: arena_files("unknown"),
    "recurrences": lambda: arena_recurrence_files(),
    "study": lambda: policy_study_files(),
    "cluster": lambda: alibaba_summaries(),  # workflows/rules/alibaba_common.smk
    # The committed comparisons of workflows/validate.smk (issue 35), one per measured GPU.
    "validation": lambda: sorted(str(p) for p in Path("results/validation").glob("*/recurrences.parquet")),
}
STATIC_INPUTS = ("power", "validation")
for _spec in single_figures():
    if set(_spec.input_names) - set(SINGLE_FIGURE_INPUTS):
        raise WorkflowError(
            f"analysis.figures: figure {_spec.name!r} is drawn once but reads per-GPU input(s) "
            f"{sorted(set(_spec.input_names) - set(SINGLE_FIGURE_INPUTS))}: register it with per_gpu=True"
        )


def drawable(spec):
    """Whether a figure drawn once has files for each of its required inputs."""
    required = [i for i in spec.inputs if not i.endswith("?")]
    return all(SINGLE_FIGURE_INPUTS[name]() for name in required)


def per_gpu_outputs(several_limits, category):
    """Named outputs of a per-GPU analysis job: its figures (the registry's per-GPU figures, with
    those for several power limits when `several_limits`; in the HTML report's `category`, one
    subcategory per GPU) and the summaries it writes."""
    specs = per_gpu_figures(several_limits)
    return {
        "figures": [
            f for s in specs for f in report_fig(f"{s.stem}-{{gpu}}", s.caption_name, category, "{gpu}")
        ],
        # As `zeus-bench summarize` writes it (the same code, in this process).
        "summary": "results/summary/{gpu}.csv",
        # The sweeps' sim_summary tables (git-ignored), read by the report instead of summarising again.
        "eta_summary": "results/sim/{gpu}/summary-eta.parquet",
        "beta_summary": "results/sim/{gpu}/summary-beta.parquet",
    }


def figure_files():
    """Every figure file the available data allow."""
    gpus = all_gpus()
    several = set(multi_limit_gpus())
    files = []
    for spec in single_figures():
        if drawable(spec):
            files += fig(spec.stem)
    for gpu in gpus:
        for spec in per_gpu_figures(gpu in several):
            files += fig(f"{spec.stem}-{gpu}")
    return files


def policy_study_gpus():
    """GPU kinds of the zeus-plus study (needs the Zeus traces: its drift runs on their GPUs)."""
    return all_gpus() if config["policy_study"]["enabled"] and zeus_gpus() else []



ARENA_RUNS = ("known", "unknown", "0.5x", "2x")
ARENA_TABLES = ("arena_jobs", "arena_summary", "arena_profile")


def arena_outputs(*horizons):
    """The arena's tables of the runs told ``horizons`` (a rule's outputs: no checkpoint read)."""
    return [f"{ARENA_DIR}/{h}/{t}.parquet" for h in horizons for t in ARENA_TABLES]


def arena_files(horizon=None):
    """The arena's tables (every horizon's run, or one), as targets; none without the study's GPUs."""
    if not policy_study_gpus():
        return []
    return arena_outputs(*(ARENA_RUNS if horizon is None else (horizon,)))


def arena_recurrence_outputs():
    """Every regret-against-recurrences run's tables (horizon known and unknown, each N of config
    arena.recurrences, ARENA_TABLES innermost): the arena_recurrences rule's outputs."""
    return [
        f"{ARENA_DIR}/recurrences/{h}-n{n}/{t}.parquet"
        for h in ("known", "unknown")
        for n in config["arena"]["recurrences"]
        for t in ARENA_TABLES
    ]


def arena_recurrence_files():
    """The regret-against-recurrences runs' tables, as targets (none without the study's GPUs)."""
    return arena_recurrence_outputs() if policy_study_gpus() else []


def policy_study_files():
    """The study's tables (none when disabled or without the Zeus traces)."""
    return [f"{POLICY_DIR}/{t}.csv" for t in POLICY_TABLES] if policy_study_gpus() else []


def reference_files():
    """Committed reference numbers (original simulator's outputs, the paper's statements), if present."""
    folder = Path(workflow.basedir, "results", "reference")
    return [str(p) for p in (folder / "original_simulator.csv", folder / "paper.csv") if p.is_file()]


def report_inputs(wildcards):
    """Named inputs of the report: every table it describes (the figures it links are a param)."""
    gpus = all_gpus()
    return {
        "manifest": ZEUS_CSV_DIR,
        "potential": [f"results/potential/{g}.csv" for g in gpus],
        "configs": [f"results/configs/{g}" for g in gpus],
        "summary": [f"results/summary/{g}.csv" for g in gpus],
        "sim": [f"results/sim/{g}/main.parquet" for g in gpus],
        # The sweeps' summaries (written by the per-GPU figure jobs from the sweeps' runs).
        "eta": [f"results/sim/{g}/summary-eta.parquet" for g in gpus],
        "beta": [f"results/sim/{g}/summary-beta.parquet" for g in gpus],
        "own": own_power_files(),
        "reference": reference_files(),
        "policy": policy_study_files(),
        "arena": arena_files(),
        "arena_recurrences": arena_recurrence_files(),
        "alibaba": alibaba_summaries(),  # workflows/rules/alibaba.smk
        "alibaba_dir": alibaba_dirs(),
        "capriccio": capriccio_traces(),  # workflows/capriccio.smk writes it
        # The committed validations against a measured run (workflows/validate.smk), one per GPU.
        "validation": sorted(str(p) for p in Path("results/validation").glob("*/findings.parquet")),
    }



#: The report's options that take its named inputs (rule report), in the order it is given them.
REPORT_TABLE_OPTIONS = (
    ("--potential", "potential"),
    ("--summary", "summary"),
    ("--sim", "sim"),
    ("--eta-sim", "eta"),
    ("--beta-sim", "beta"),
    ("--own", "own"),
    ("--reference", "reference"),
    ("--capriccio", "capriccio"),
    ("--validation", "validation"),
)


def report_table_args(wildcards, input):
    """The report's table options from its named inputs, each asked for by name with a default.

    Before the Zeus traces checkpoint has run (`snakemake -n results/report.md`) the inputs are not
    known yet and a name is missing from `input`: the command is then only printed, with none.
    """
    manifest = input.get("manifest")
    args = [f"--manifest {manifest}/MANIFEST.json"] if manifest else []
    for option, name in REPORT_TABLE_OPTIONS:
        files = input.get(name, [])
        args.append(" ".join([option, *([files] if isinstance(files, str) else files)]))
    return " ".join(args)


#: The findings page of `snakemake --report` (rule report_html; git-ignored).
FINDINGS_HTML = "results/findings.html"


def report_target():
    """results/report.md with the Zeus traces; without them a partial report beside it (never the
    committed one)."""
    return "results/report.md" if zeus_manifest()["status"] == "ok" else PARTIAL_REPORT



def early_targets():
    """Targets that need neither the Zeus traces nor anything made from them: the results README and
    the figures drawn once from committed files only (the own sweeps' figure)."""
    early = [s for s in single_figures() if set(s.input_names) <= set(STATIC_INPUTS) and drawable(s)]
    return ["results/README.md", *(f for s in early for f in fig(s.stem)), *alibaba_dirs()]


def all_targets(wildcards):
    """Targets of the default target `all`: the report, every figure and table, and the results README."""
    gpus = all_gpus()
    return [
        report_target(),
        FINDINGS_HTML,
        "results/README.md",
        *figure_files(),
        *[f"results/potential/{g}.csv" for g in gpus],
        *[f"results/summary/{g}.csv" for g in gpus],
    ]

