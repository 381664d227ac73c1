# Params functions that build command lines from the config: the simulation sweeps' and the trace
# analysis' zeus-bench command lines (run several in one process by
# workflows/scripts/zeus_bench_many.py), the batch-size optimizer's options, and the inputs and
# options of the figure rules generated from the registry (figures.smk).


def bandit_knob_args():
    """`zeus-bench simulate` options of the batch-size optimizer's knobs (config prior_mean,
    prior_precision, prune_rounds); none at the paper's values, so the command lines stay as before."""
    args = []
    for key, flag, default in (
        ("prior_mean", "--prior-mean", 0.0),
        ("prior_precision", "--prior-precision", 0.0),
        ("prune_rounds", "--prune-rounds", 2),
    ):
        value = config.get(key, default)
        if value != default:
            args.append(f"{flag}={value!r}")  # FLAG=VALUE: a negative mean is not taken for an option
    return args


def sweep_commands(knob):
    """Params function: one `zeus-bench simulate` command line per sweep value (shell-quoted), run
    by workflows/scripts/zeus_bench_many.py in one process, so the imports are paid once per GPU."""
    sweep = config[f"{knob}_sweep"]

    def commands(wildcards, input, output):
        lines = []
        for value, out in zip(sweep["values"], output):
            knobs = {"eta": num(config["eta"]), "beta": num(config["beta"]), knob: num(value)}
            args = [
                "simulate", "--traces", input.traces, "--gpu", wildcards.gpu,
                "--workloads", workloads_arg(wildcards.gpu), "--policies", ",".join(sweep["policies"]),
                "--seeds", sweep["seeds"], "--eta", knobs["eta"], "--beta", knobs["beta"],
                "--recurrences", str(config["recurrences"]), "--jobs", "1", "--out", out,
            ]
            if config["window"]:
                args += ["--window", str(config["window"])]
            args += bandit_knob_args()
            lines.append(shlex.join(args))
        return shlex.join(lines)

    return commands


def trace_analysis_commands(wildcards, input, output):
    """Params function of the configurations rule: `zeus-bench potential` for the GPU, then one
    `zeus-bench pareto --all` per workload (shell-quoted command lines, one process)."""
    common = ["--traces", input.traces, "--gpu", wildcards.gpu, "--eta", num(config["eta"])]
    lines = [shlex.join(["potential", *common, "--format", "csv", "--out", output.potential])]
    for workload, path in zip(workloads_of(wildcards.gpu), configs_of(wildcards.gpu), strict=True):
        lines.append(shlex.join(["pareto", *common, "--workload", workload, "--all", "--out", path]))
    return shlex.join(lines)


def figure_rule_inputs(spec):
    """Named inputs of a figure drawn once (its generated figure_<name>), from its registered inputs."""
    return {name: (lambda wc, name=name: SINGLE_FIGURE_INPUTS[name]()) for name in spec.input_names}


def figure_options(spec):
    """Params function of a figure drawn once (figure_<name>), each input as `--<name> FILES`
    (analysis.figures.cli; `sim` and `sims` are `--sim`)."""

    def options(wildcards, input):
        parts = []
        for name in spec.input_names:
            files = input[name]
            files = [files] if isinstance(files, str) else list(files)
            if not files:  # an optional input without files (a required one keeps the figure out of the targets)
                continue
            parts.append(f"--{'sim' if name == 'sims' else name} {' '.join(shlex.quote(f) for f in files)}")
        return " ".join(parts)

    return options
