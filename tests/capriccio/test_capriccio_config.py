"""The Capriccio drift workflow's options: each key known and checked before anything is scheduled.

An unknown key, a value of the wrong type, a missing file or a default batch size outside the
batch sizes ends ``snakemake -s workflows/capriccio.smk`` in one line (exit 2), with no job
table and nothing written; ``observe`` reaches the training command. The options are walked
from the schema, so a key added to the workflow without a check is caught.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from zeus_bench.cli.configcheck import check_capriccio_config
from zeus_bench.core.errors import ConfigError

REPO = Path(__file__).resolve().parents[2]
SNAKEMAKE = Path(sys.executable).parent / "snakemake"
SMK = REPO / "workflows" / "capriccio.smk"
SCHEMA = REPO / "config" / "capriccio.schema.json"


def _dry_run(tmp: Path, *config: str) -> subprocess.CompletedProcess[str]:
    (tmp / "s140.csv").touch()
    cmd = [str(SNAKEMAKE), "-s", str(SMK), "--directory", str(tmp), "-n", "-p", "--cores", "1"]
    cmd += ["--config", "sentiment140=s140.csv", *config]
    return subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        ({"obsrve": "true"}, "unknown key obsrve; did you mean observe?"),
        ({"observe": "maybe"}, 'observe: "maybe" is not valid'),
        ({"size": 1.5}, "size: 1.5 is not valid"),
        ({"max_slices": 0}, "max_slices: 0 is not valid"),
        ({"backend": "nvlm"}, 'backend: "nvlm" is not valid'),
        ({"batch_sizes": "8,,16"}, "batch_sizes"),
        ({"vocab": "missing.txt"}, "vocab: no such file missing.txt"),
        ({"batch_sizes": "8,16,32", "default_batch_size": 12}, "default_batch_size: 12 is not one of"),
        ({"batch_sizes": "8,16,8"}, "batch_sizes: 8 is listed twice"),
        ({"eta": 1.5}, "eta: 1.5 is not valid"),
        ({"device": "gpu0"}, "device"),
    ],
)
def test_a_bad_option_is_refused_in_one_line(
    tmp_path: Path, config: dict[str, object], expected: str
) -> None:
    (tmp_path / "s.csv").touch()
    with pytest.raises(ConfigError, match=r"^capriccio --config: ") as exc:
        check_capriccio_config(
            {"sentiment140": str(tmp_path / "s.csv"), **config}, SCHEMA, "capriccio --config"
        )
    assert expected in str(exc.value) and "\n" not in str(exc.value)


def test_the_workflow_stops_before_its_job_table(tmp_path: Path) -> None:
    out = _dry_run(tmp_path, "obsrve=true")
    text = out.stdout + out.stderr
    errors = [line for line in text.splitlines() if line.startswith("error:")]
    assert out.returncode == 2 and len(errors) == 1, text[-2000:]
    assert "unknown key obsrve" in errors[0] and "Traceback" not in text and "Job stats" not in text
    assert sorted(p.name for p in tmp_path.iterdir() if p.name != ".snakemake") == ["s140.csv"]


def test_observe_reaches_the_training_command(tmp_path: Path) -> None:
    out = _dry_run(tmp_path, "observe=true")
    assert out.returncode == 0, out.stderr[-2000:]
    train = [line for line in out.stdout.splitlines() if "capriccio_train.py" in line]
    assert train and all("--observe" in line for line in train), train


def test_every_schema_key_is_described_and_an_unknown_one_refused(tmp_path: Path) -> None:
    schema = json.loads(SCHEMA.read_text())
    assert schema["additionalProperties"] is False
    assert all(spec.get("description") for spec in schema["properties"].values())
    (tmp_path / "s.csv").touch()
    config = {"sentiment140": str(tmp_path / "s.csv"), "observe": "true", "tiny": "False"}
    check_capriccio_config(config, SCHEMA, "capriccio --config")
    assert config["observe"] is True and config["tiny"] is False
    with pytest.raises(ConfigError, match="unknown key nope"):
        check_capriccio_config({**config, "nope": 1}, SCHEMA, "capriccio --config")


def test_every_key_the_workflow_reads_is_in_the_schema() -> None:
    """A key read by capriccio.smk (``config["k"]``, ``config.get("k")``, ``_opt(..., "k")``) has a schema entry."""
    import re

    text = SMK.read_text()
    read = set(re.findall(r"config(?:\.get\(|\[)\"(\w+)\"", text)) | set(
        re.findall(r"_opt\(\"[^\"]+\", \"(\w+)\"\)", text)
    )
    assert read and read <= set(json.loads(SCHEMA.read_text())["properties"]), read


def test_every_command_that_trains_on_a_gpu_can_observe() -> None:
    """Each subcommand that takes a GPU backend and trains (not ``gpu``/``gpud``, whose job is the
    limits, nor ``measure``, which only reads counters and never sets a limit:
    tests/device/test_measure_command.py checks it) offers ``--observe``, and so does the drift
    workflow's training script."""
    import argparse
    import importlib.util

    from zeus_bench.cli.main import build_parser

    trainers = []

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        dests = {a.dest for a in parser._actions}
        if "backend" in dests and words[0] not in ("gpu", "gpud", "measure"):
            trainers.append((" ".join(words), "observe" in dests))
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])

    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                walk(sub, [name])
    assert trainers and all(ok for _, ok in trainers), trainers
    spec = importlib.util.spec_from_file_location(
        "capriccio_train", REPO / "workflows/scripts/capriccio_train.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "observe" in {a.dest for a in module.build_parser()._actions}
