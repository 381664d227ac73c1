"""Every command that writes a folder goes through :func:`zeus_bench.core.fsutil.output_dir`.

The parser is walked for output folders, so a new command that writes one is caught: it must be
declared with :func:`~zeus_bench.core.entry.add_output_dir_arg` and get a case below. Each case is
run into a folder holding a user's file (refused, nothing touched), with ``--force`` (the user's
file kept), into ``.``, and into a missing nested folder with the final rename failing (no parent
folder left behind).
"""

from __future__ import annotations

import argparse
import hashlib
import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.capriccio.sentiment140_helpers import write_sentiment140
from tests.studies.test_arena import two_gpu_traces
from tests.studies.test_validation import _measured, _sim
from tests.traces.test_zeus_import import write_traces
from zeus_bench.cli.main import build_parser, main
from zeus_bench.core import fsutil
from zeus_bench.core.entry import OUTPUT_FOLDER_MARK
from zeus_bench.core.errors import ConfigError
from zeus_bench.store import write_table
from zeus_bench.studies.validation import noise_table


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fetch_args(tmp: Path) -> list[str]:
    src = write_traces(tmp / "src")
    files = [f"{n}={_sha(src / n)}" for n in ("summary_train.csv", "summary_power_v100.csv")]
    return ["fetch-traces", "--local-dir", str(src), *(w for f in files for w in ("--file", f))]


def _arena_args(tmp: Path) -> list[str]:
    tiny = two_gpu_traces(tmp / "traces")
    return ["arena", "--traces", str(tiny), "--gpu", "v100", "--policies", "zeus", "--seeds", "1"]


def _study_args(tmp: Path) -> list[str]:
    tiny = two_gpu_traces(tmp / "traces")
    traces = ["--traces", f"v100={tiny}", "--traces", f"a40={tiny}"]
    return ["study", *traces, "--seeds", "1", "--warm-pairs", "v100:a40", "--drift-gpus", "v100"]


def _capriccio_args(tmp: Path) -> list[str]:
    write_sentiment140(tmp / "s140.csv", days=12)
    return ["capriccio", "--sentiment140", str(tmp / "s140.csv"), "--size", "40", "--max-slices", "2"]


def _alibaba_args(tmp: Path) -> list[str]:
    (tmp / "copy").mkdir(parents=True)  # a local copy without the file: recorded absent
    return ["traces", "fetch-alibaba", "--blob-sha1", "0" * 40, "--local-dir", str(tmp / "copy")]


def _validate_args(tmp: Path) -> list[str]:
    """``validate compare``'s four inputs: a measured run, two simulations (runs tables) and the noise."""
    tmp.mkdir(parents=True)
    costs = 100.0 * (1 + 0.01 * np.random.default_rng(0).standard_normal((8, 12)))
    extra = {"power_limit_w": 700.0, "epochs": 5.0, "reached": True, "profiled": False, "window": 0,
             "num_gpus": 1, "max_power_w": 700.0, "expected_time_s": 1.0}  # fmt: skip
    for name, table in (("sim", _sim(costs)), ("sim_noise", _sim(costs * 1.01))):
        table = table.assign(**extra, expected_energy_j=table["energy_j"], expected_cost=table["cost"])
        write_table(table, tmp / f"{name}.parquet", "runs")
    write_table(_measured([100.0] * 12), tmp / "measured.parquet", "validation_online")
    power = pd.DataFrame(
        {"batch_size": [64, 64], "time_per_epoch_s": [1.0, 1.1], "avg_power_w": [100.0, 100.0]}
    )
    write_table(noise_table(power, "h200", "teacher-student"), tmp / "noise.parquet", "validation_noise")
    return ["validate", "compare", "--measured", str(tmp / "measured.parquet"), "--sim", str(tmp / "sim.parquet"),
            "--sim-noise", str(tmp / "sim_noise.parquet"), "--noise", str(tmp / "noise.parquet")]  # fmt: skip


#: (subcommand words, output flag) -> the other arguments of a run that succeeds (inputs made in tmp).
CASES: dict[tuple[str, str], Callable[[Path], list[str]]] = {
    ("traces import-zeus", "--out"): lambda t: ["traces", "import-zeus", str(write_traces(t / "src"))],
    ("traces fetch-alibaba", "--out"): _alibaba_args,
    ("fetch-traces", "--out"): _fetch_args,
    ("fetch-traces", "--import-to"): lambda t: [*_fetch_args(t), "--out", str(t / "csv")],
    ("arena", "--out"): _arena_args,
    ("study", "--out-dir"): _study_args,
    ("capriccio", "--out"): _capriccio_args,
    ("validate compare", "--out-dir"): _validate_args,
}
#: Declared output folders whose four-way case is still to write (folder option -> reason); the lead
#: empties it. Listed ones must stay declared (checked below), so the list cannot hide a new folder.
PENDING_CASES: dict[tuple[str, str], str] = {}


def _output_folders() -> dict[tuple[str, str], argparse.ArgumentParser]:
    """Every declared output folder of the parser, and options that look like one but are not declared."""
    found: dict[tuple[str, str], argparse.ArgumentParser] = {}

    def walk(parser: argparse.ArgumentParser, words: list[str]) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, [*words, name])
                continue
            flag = next(iter(action.option_strings), "")
            looks = flag.startswith(("--out", "--import-to")) and (
                "DIR" in str(action.metavar) or "folder" in str(action.help).split("(")[0]
            )
            if getattr(action, OUTPUT_FOLDER_MARK, False) or looks:
                assert getattr(action, OUTPUT_FOLDER_MARK, False), (
                    f"{' '.join(words)} {flag} looks like an output folder: declare it with add_output_dir_arg"
                )
                found[(" ".join(words), flag)] = parser

    walk(build_parser(), [])
    return found


def test_every_output_folder_is_declared_and_has_a_case() -> None:
    found = _output_folders()
    assert set(found) == set(CASES) | set(PENDING_CASES), (
        "add a case for each new command that writes a folder"
    )
    assert not set(CASES) & set(PENDING_CASES)
    for (words, _flag), parser in found.items():
        assert any("--force" in a.option_strings for a in parser._actions), words


def _listing(root: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))
    }


def _argv(case: tuple[str, str], tmp: Path, out: str) -> list[str]:
    return [*CASES[case](tmp), case[1], out]


@pytest.mark.parametrize("case", list(CASES), ids=[" ".join(c) for c in CASES])
def test_a_non_empty_folder_is_refused_and_force_keeps_the_users_files(
    case: tuple[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = CASES[case](tmp_path / "in")
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    (out / ".hidden").write_text("also mine")
    before = _listing(tmp_path)
    assert main([*argv, case[1], str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and case[1] in err and "not empty" in err and "--force" in err, err
    assert _listing(tmp_path) == before  # nothing written, nothing removed
    assert main([*argv, case[1], str(out), "--force"]) == 0
    assert (out / "notes.txt").read_text() == "mine" and (out / ".hidden").read_text() == "also mine"
    written = sorted(p.name for p in out.iterdir() if p.name not in {"notes.txt", ".hidden"})
    assert written and not [n for n in written if n.startswith(fsutil.STAGING_PREFIX)], written
    # A second forced run replaces its own files, still not the user's.
    assert main([*argv, case[1], str(out), "--force"]) == 0
    assert sorted(p.name for p in out.iterdir() if p.name not in {"notes.txt", ".hidden"}) == written
    assert (out / "notes.txt").read_text() == "mine"


@pytest.mark.parametrize("case", list(CASES), ids=[" ".join(c) for c in CASES])
def test_the_current_folder_works(
    case: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = CASES[case](tmp_path / "in")
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main([*argv, case[1], "."]) == 0
    names = [p.name for p in here.iterdir()]
    assert names and not [n for n in names if n.startswith(fsutil.STAGING_PREFIX)], names
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(fsutil.STAGING_PREFIX)] == []


@pytest.mark.parametrize("case", list(CASES), ids=[" ".join(c) for c in CASES])
def test_a_failed_commit_leaves_no_folder_behind(
    case: tuple[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = CASES[case](tmp_path / "in")
    before = _listing(tmp_path)
    real = os.rename

    def failing(src: str | Path, dst: str | Path) -> None:
        if Path(dst).name == "out":
            raise PermissionError(13, "Permission denied", str(dst))
        real(src, dst)

    monkeypatch.setattr(fsutil.os, "rename", failing)
    assert main([*argv, case[1], str(tmp_path / "a" / "b" / "out")]) == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert _listing(tmp_path) == before


def test_output_dir_with_owned_names_removes_only_its_stale_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    for name in ("slice-01", "slice-02", "slice-03"):
        (out / name).mkdir()
        (out / name / "train.csv").write_text(f"old {name}")
    (out / "slice-01" / "mine.txt").write_text("inside an owned folder")
    (out / "slice-notes").write_text("not owned")
    with pytest.raises(ConfigError, match=r"not empty \(4 entries: slice-01, slice-02, slice-03, \.\.\.\)"):
        fsutil.check_output_dir(out)
    with fsutil.output_dir(out, force=True, owned=lambda n: n[6:].isdigit()) as tmp:
        (tmp / "slice-01").mkdir()
        (tmp / "slice-01" / "train.csv").write_text("new")
        (tmp / "index.csv").write_text("index")
    assert sorted(p.name for p in out.iterdir()) == ["index.csv", "slice-01", "slice-notes"]
    assert [p.name for p in (out / "slice-01").iterdir()] == ["train.csv"]
    assert (out / "slice-01" / "train.csv").read_text() == "new"
    assert (out / "slice-notes").read_text() == "not owned"


def test_output_dir_refuses_a_file_and_an_unwritable_place(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    with pytest.raises(ConfigError, match=r"--out .*f: is a file"):
        fsutil.check_output_dir(tmp_path / "f", what="--out")
    with pytest.raises(ConfigError, match="is a file, not a folder"):
        fsutil.check_output_dir(tmp_path / "f" / "sub", what="--out")


def test_an_exception_in_the_block_leaves_an_existing_folder_as_it_was(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "a.csv").write_text("old")
    with pytest.raises(RuntimeError), fsutil.output_dir(out, force=True) as tmp:
        (tmp / "a.csv").write_text("new")
        raise RuntimeError("boom")
    assert [p.name for p in out.iterdir()] == ["a.csv"] and (out / "a.csv").read_text() == "old"


def test_atomic_path_removes_the_folders_it_created_on_failure(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError), fsutil.atomic_path(tmp_path / "x" / "y" / "f.txt") as tmp:
        tmp.write_text("half")
        raise RuntimeError("boom")
    assert list(tmp_path.iterdir()) == []
