# Configuration and input functions of the paper's evaluation stages: the Alibaba replay
# (workflows/rules/alibaba.smk) and the Capriccio runs the report reads (workflows/capriccio.smk).

ALIBABA = config["alibaba"]
ALIBABA_DIR = "data/traces/alibaba"  # the file, MANIFEST.json and arrivals.parquet (git-ignored)
ALIBABA_CODE = code("zeus_bench/traces/alibaba_fetch.py", "zeus_bench/sim/scenarios/alibaba_groups.py", "zeus_bench/cli/traces_alibaba.py")


def alibaba_args(wildcards=None):
    """Arguments of `zeus-bench traces fetch-alibaba` (where to take the file from), from the config."""
    args = [f"--blob-sha1 {ALIBABA['git_blob_sha1']}"]
    local = zeus_local_dir()
    if local:
        args.append(f"--local-dir '{local}'")
    elif ZEUS["download"]:
        args += [f"--url '{zeus_url()}'", f"--commit {ZEUS['commit']}", f"--timeout {ZEUS['timeout_s']:g}"]
    return " ".join(args)


def alibaba_manifest():
    """The Alibaba checkpoint's manifest (status ok or absent); None when the stage is disabled."""
    if not ALIBABA["enabled"]:
        return None
    folder = checkpoints.alibaba_trace.get().output[0]
    return json.loads(Path(folder, "MANIFEST.json").read_text())


def alibaba_gpus():
    """GPUs the Alibaba groups are replayed on: every Zeus GPU, when the file was obtained."""
    manifest = alibaba_manifest()
    return zeus_gpus() if manifest is not None and manifest["status"] == "ok" else []


def alibaba_summaries():
    """The replay's summaries (one per GPU), empty when the stage is skipped."""
    return [f"results/alibaba/{g}.csv" for g in alibaba_gpus()]


def alibaba_dirs():
    """The checkpoint's folder (the report reads its manifest), when the stage is enabled."""
    return [ALIBABA_DIR] if ALIBABA["enabled"] else []


def alibaba_report_args(wildcards, input):
    """Report arguments of the stage: its manifest (what was skipped) and summaries."""
    if not ALIBABA["enabled"]:
        return ""
    args = f"--alibaba-manifest {ALIBABA_DIR}/MANIFEST.json"
    return args + (f" --alibaba {' '.join(input.alibaba)}" if input.get("alibaba") else "")


CAPRICCIO_TRACE = "results/capriccio/capriccio.parquet"


def capriccio_traces():
    """The Capriccio drift experiment's runs (workflows/capriccio.smk), when they exist."""
    return [CAPRICCIO_TRACE] if Path(CAPRICCIO_TRACE).is_file() else []
