"""The analysis notebooks run on the results of the reduced real run: from their own folder and
from the repository root (they locate the checkout themselves), with and without ipywidgets
pickers; figures are drawn inline (PNG outputs); an unknown name is an error naming the choices.
In a fresh clone (the committed results only: no ``results/configs/`` nor ``results/sim/``) they
show the committed tables and figures, and one line says what is missing and what writes it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from workflow_helpers import REPO

from tests.helpers.optional import require

NOTEBOOKS = sorted((REPO / "analysis" / "notebooks").glob("*.ipynb"))


def test_two_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["pareto_analysis.ipynb", "policy_comparison.ipynb"]


def _run(
    path: Path,
    cwd: Path,
    results: Path,
    monkeypatch,
    widgets: bool = False,
    edit: tuple[str, str] | None = None,
):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("ZEUS_BENCH_RESULTS", str(results))
    monkeypatch.setenv("ZEUS_BENCH_WIDGETS", "1" if widgets else "0")
    monkeypatch.delenv("PYTHONPATH", raising=False)  # the notebook finds the checkout by itself
    monkeypatch.delenv("MPLBACKEND", raising=False)
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit notebooks without outputs"
    )
    if edit is not None:
        for cell in nb.cells:
            cell.source = cell.source.replace(*edit)
    NotebookClient(
        nb, timeout=180, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    ).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs)
    text += "".join(o.get("data", {}).get("text/plain", "") for o in outputs)
    images = sum("image/png" in o.get("data", {}) for o in outputs)
    return text, images


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
@pytest.mark.parametrize("where", ["own folder", "repository root"])
def test_notebook_runs_and_draws_inline(path, where, reduced_run, monkeypatch):
    cwd = path.parent if where == "own folder" else REPO
    text, images = _run(path, cwd, reduced_run.path / "results", monkeypatch)
    assert "Error" not in text and "<Figure size" not in text
    assert "pickers off" in text
    if path.stem == "pareto_analysis":
        assert "showing cifar100 on v100" in text
        assert images == 1
    else:
        assert (
            "policies: ['baseline', 'bs-only', 'grid-search', 'max-batch', 'oracle', 'pl-only', 'zeus']"
            in text
        )
        assert images == 2


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_with_pickers(path, reduced_run, monkeypatch):
    require("ipywidgets")
    text, _ = _run(path, path.parent, reduced_run.path / "results", monkeypatch, widgets=True)
    assert "pickers off" not in text and "Error" not in text


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_unknown_name_is_an_error_naming_the_choices(path, reduced_run, monkeypatch):
    from nbclient.exceptions import CellExecutionError

    with pytest.raises(CellExecutionError) as err:
        _run(
            path,
            path.parent,
            reduced_run.path / "results",
            monkeypatch,
            edit=('GPU = "v100"', 'GPU = "v1000"'),
        )
    assert "unknown GPU 'v1000'; choices: h200, v100" in str(err.value)


def test_outside_a_checkout_says_where_to_open_it(tmp_path, reduced_run, monkeypatch):
    from nbclient.exceptions import CellExecutionError

    monkeypatch.delenv("ZEUS_BENCH_ROOT", raising=False)
    with pytest.raises(CellExecutionError) as err:
        _run(NOTEBOOKS[0], tmp_path, reduced_run.path / "results", monkeypatch)
    assert "is not inside a zeus-bench checkout" in str(err.value)
    assert os.environ.get("ZEUS_BENCH_ROOT") is None


@pytest.fixture(scope="module")
def committed_results(tmp_path_factory) -> Path:
    """The results folder of a fresh clone: the files of ``results/`` that git tracks, nothing else."""
    tracked = subprocess.run(
        ["git", "ls-files", "results"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    out = tmp_path_factory.mktemp("fresh")
    for name in tracked:
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(REPO / name, out / name)
    assert not (out / "results" / "configs").exists() and not (out / "results" / "sim").exists()
    return out / "results"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_fresh_clone_shows_the_committed_results(path, committed_results, monkeypatch):
    text, images = _run(path, path.parent, committed_results, monkeypatch)
    assert "Error" not in text and "Traceback" not in text
    assert "derived from the Zeus traces, never committed; `make reproduce` writes it" in text
    if path.stem == "pareto_analysis":
        assert "available: {'a40': [" in text and "showing cifar100 on v100" in text
        assert "configs/v100/cifar100.parquet is not in this checkout" in text
        # The committed minimum-cost configuration of cifar100 on the V100: bs 128 at 100 W.
        assert re.search(r"min-cost +128 +100\.0 +28477\.9 +339\.2 +74\.7", text)
        assert images == 1  # figures/pareto-v100.png
    else:
        assert "GPUs: ['a40', 'h200', 'v100']" in text
        assert "sim/v100/main.parquet is not in this checkout" in text
        assert (
            "policies: ['baseline', 'bs-only', 'grid-search', 'max-batch', 'oracle', 'pl-only', 'zeus']"
            in text
        )
        assert images == 2  # figures/policies-v100.png and convergence-v100.png
