# The paper's drift experiment, Capriccio (needs the Sentiment140 CSV and a GPU; the fake backend
# rehearses it on a CPU):
#   snakemake -s workflows/capriccio.smk --cores 1 --config sentiment140=/data/training.1600000.processed.noemoticon.csv vocab=/data/vocab.txt
# 1. `zeus-bench capriccio` cuts the tweets, sorted by time, into 38 overlapping slices of 500,000
#    (425,000 train / 75,000 validation) as the paper did;
# 2. the sentiment140 workload is trained slice after slice (one recurrence per slice) with the
#    online optimizer: pruning + Thompson sampling with a window of 10, batch sizes 8-128, b0 128,
#    target 0.84, 10 epochs, eta 0.5, beta 2, the JIT power-limit profiler on the GPU;
# 3. results/capriccio/ receives capriccio.parquet (one row per slice, read by the report) and
#    train.parquet (the runs as a train trace, read by `zeus-bench simulate`).
# Options (--config KEY=VALUE, described in config/capriccio.schema.json; an unknown key or a bad
# value ends the run in one line before anything is scheduled): sentiment140 (required), vocab,
# out (results/capriccio), size, max_slices, backend (nvml|fake), device, tiny (true: a shrunken
# BERT), observe (true: never write a power limit, on a GPU whose limits must not or cannot be
# changed), max_steps, and the paper's knobs batch_sizes, default_batch_size, target, max_epochs,
# eta, beta, window, profile_s.

import shlex
import sys
from pathlib import Path

from snakemake.utils import min_version

from zeus_bench.cli.configcheck import check_capriccio_config, exit_on_error

min_version("9.0")

with exit_on_error():
    if not config.get("sentiment140"):
        from zeus_bench.core.errors import ConfigError

        raise ConfigError(
            "capriccio: set the Sentiment140 CSV: --config sentiment140=/path/to/training.1600000.processed.noemoticon.csv"
        )
    check_capriccio_config(config, Path(workflow.basedir).parent / "config" / "capriccio.schema.json", "capriccio --config")
OUT = config.get("out", "results/capriccio")
SLICES = config.get("slices_dir", "data/capriccio/slices")
STATE = config.get("state_dir", "data/capriccio/state")
BIN = Path(sys.executable).parent
TRAIN = str(Path(workflow.basedir, "scripts", "capriccio_train.py"))


def _opt(flag, key):
    return f"{flag} {shlex.quote(str(config[key]))}" if key in config else ""


rule all:
    default_target: True
    input:
        f"{OUT}/capriccio.parquet",
        f"{OUT}/train.parquet",
    localrule: True


rule slices:
    input:
        config["sentiment140"],
    output:
        directory(SLICES),
    params:
        opts=" ".join(
            o
            for o in (_opt("--size", "size"), _opt("--vocab", "vocab"), _opt("--max-slices", "max_slices"))
            if o
        ),
    log:
        "logs/capriccio/slices.log",
    shell:
        "'{BIN}/zeus-bench' capriccio --sentiment140 {input} --out {output} {params.opts} > {log} 2>&1"


rule train:
    # One process trains every slice in order (the optimizer's state carries over between them).
    input:
        SLICES,
    output:
        runs=f"{OUT}/capriccio.parquet",
        trace=f"{OUT}/train.parquet",
    params:
        opts=" ".join(
            o
            for o in (
                _opt("--backend", "backend"),
                _opt("--device", "device"),
                "--tiny" if config.get("tiny") else "",
                "--observe" if config.get("observe") else "",
                _opt("--max-steps", "max_steps"),
                _opt("--max-slices", "max_slices"),
                _opt("--batch-sizes", "batch_sizes"),
                _opt("--default-batch-size", "default_batch_size"),
                _opt("--target", "target"),
                _opt("--max-epochs", "max_epochs"),
                _opt("--eta", "eta"),
                _opt("--beta", "beta"),
                _opt("--window", "window"),
                _opt("--profile-s", "profile_s"),
            )
            if o
        ),
        out=OUT,
        state=STATE,
    log:
        "logs/capriccio/train.log",
    shell:
        "'{BIN}/python' {TRAIN} --slices {input} --state-dir {params.state} --out {params.out} {params.opts} > {log} 2>&1"
