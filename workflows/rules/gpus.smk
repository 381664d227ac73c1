# GPU discovery: the Zeus GPUs (known once the traces checkpoint has run), the project's own GPUs
# (committed traces, one folder per GPU under traces.own_dir), how many power limits each trace
# holds, the workloads of each GPU, and the wildcard constraints that route a GPU to its rules.

from zeus_bench.cli.configcheck import own_power_traces
from zeus_bench.core.errors import ConfigError


def zeus_manifest():
    """The fetch manifest (a checkpoint: evaluated once the traces were obtained or found missing)."""
    folder = checkpoints.zeus_traces.get().output.csv
    return json.loads(Path(folder, "MANIFEST.json").read_text())


def zeus_gpus():
    """GPU kinds with an obtained Zeus power trace, restricted to config gpus."""
    manifest = zeus_manifest()
    if manifest["status"] != "ok":
        return []
    have = manifest["gpus"]
    return have if config["gpus"] == "all" else [g for g in config["gpus"] if g in have]


def _own_gpus():
    """The project's own power traces by GPU kind: `<own_dir>/<gpu>/power-<gpu>.parquet` (committed
    files, no checkpoint), found by zeus_bench.cli.configcheck.own_power_traces."""
    with exit_on_error():
        return {gpu: str(path) for gpu, path in own_power_traces(OWN_DIR).items()}


_LIMIT_COUNTS = {}  # by trace path: figure_files() asks for them several times per run


def power_limit_count(path):
    """The number of distinct power limits in a power trace (reads its power_limit_w column only, once)."""
    if path not in _LIMIT_COUNTS:
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        with exit_on_error():
            try:
                column = pq.read_table(path, columns=["power_limit_w"])["power_limit_w"]
            except (OSError, KeyError, ValueError) as exc:
                raise ConfigError(f"{path}: not a power trace with a power_limit_w column ({exc})") from None
        _LIMIT_COUNTS[path] = pc.count_distinct(column).as_py()
    return _LIMIT_COUNTS[path]


OWN_GPUS = _own_gpus()
# Own GPU kinds whose trace holds one power limit, counted in the trace (known when this file is
# read: the traces are committed). Their per-GPU job draws no power-profiles figure; every other GPU's
# job (the Zeus GPUs, and an own GPU swept at several limits) does.
ONE_LIMIT_GPUS = [g for g, path in OWN_GPUS.items() if power_limit_count(path) == 1]
_ONE_LIMIT_ALTERNATIVES = "|".join(re.escape(g) for g in ONE_LIMIT_GPUS) or "(?!)"
ONE_LIMIT_GPU_RE = f"(?:{_ONE_LIMIT_ALTERNATIVES})"
SEVERAL_LIMITS_GPU_RE = f"(?!{ONE_LIMIT_GPU_RE}(?![a-z0-9_-]))[a-z0-9][a-z0-9_-]*"
OWN_TRACES = "data/traces/own"  # per GPU: the Zeus train trace + the project's power trace (git-ignored)


def own_gpus():
    """Own GPU kinds that can be evaluated: they need the Zeus train trace for epochs to the target."""
    if not OWN_GPUS or zeus_manifest()["status"] != "ok":
        return []
    return [g for g in OWN_GPUS if config["gpus"] == "all" or g in config["gpus"]]


def all_gpus():
    """Every GPU kind evaluated: Zeus power traces first, then the project's own."""
    return zeus_gpus() + own_gpus()


def power_trace_of(gpu):
    """The power trace of `gpu`: its own committed trace, else the imported Zeus one."""
    return OWN_GPUS[gpu] if gpu in OWN_GPUS else f"{ZEUS_DIR}/power-{gpu}.parquet"


def multi_limit_gpus():
    """GPU kinds evaluated whose power trace holds several power limits (counted in the trace):
    they get the power-profiles figure.

    The per-GPU rule of a GPU is chosen when this file is read (ONE_LIMIT_GPU_RE), before the
    Zeus traces are fetched: a Zeus GPU goes to the job that also draws the power profiles (every
    published trace holds several limits; one with a single limit would get a profile of one
    point, not listed among the targets)."""
    return [g for g in all_gpus() if power_limit_count(power_trace_of(g)) > 1]


def traces_of(gpu):
    """Folder of imported traces that holds `gpu`'s power trace and the train trace."""
    return f"{OWN_TRACES}/{gpu}" if gpu in OWN_GPUS else ZEUS_DIR


_WORKLOADS = {}  # by GPU: input and params functions ask for them many times per run


def workloads_of(gpu):
    """Workloads evaluated on `gpu`: registered ones present in its trace, restricted to config.

    Read once per GPU and run (for the Zeus GPUs once the checkpoint has its traces: before that,
    its `get()` raises and nothing is remembered)."""
    if gpu not in _WORKLOADS:
        _WORKLOADS[gpu] = _read_workloads(gpu)
    return _WORKLOADS[gpu]


def _read_workloads(gpu):
    from zeus_bench.traces.workloads import load_workloads

    if gpu in OWN_GPUS:
        from zeus_bench.store import read_table

        power = read_table(OWN_GPUS[gpu], "power")
        keys = set(zip(power["dataset"], power["network"], power["optimizer"]))
        present = [w.id for w in load_workloads().values() if (w.dataset, w.network, w.optimizer) in keys]
    else:
        from zeus_bench.traces.jobs import TraceSet

        present = TraceSet(checkpoints.zeus_traces.get().output.parquet).workload_ids(gpu)
    return present if config["workloads"] == "all" else [w for w in config["workloads"] if w in present]


def workloads_arg(gpu):
    """--workloads value of the simulator for `gpu`."""
    return "all" if config["workloads"] == "all" else ",".join(workloads_of(gpu))


def own_power_files():
    """The project's own committed power traces (one per own GPU kind), if present."""
    return sorted(OWN_GPUS.values())


def checkpoint_of(gpu):
    """Inputs of a rule whose params ask the traces checkpoint which workloads `gpu` has (the Zeus
    GPUs): Snakemake requires the checkpoint's outputs among the rule's inputs, or it refuses the
    rule when a target is asked for before the traces are fetched."""
    return [] if gpu in OWN_GPUS else [ZEUS_CSV_DIR, ZEUS_DIR]


def configs_of(gpu):
    """The configuration files of `gpu` (written by the configurations rule into one folder per GPU)."""
    return [f"results/configs/{gpu}/{w}.parquet" for w in workloads_of(gpu)]


