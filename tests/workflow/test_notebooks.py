"""The analysis notebooks run without error on the results of the reduced real run."""

from __future__ import annotations

import pytest
from workflow_helpers import REPO

NOTEBOOKS = sorted((REPO / "analysis" / "notebooks").glob("*.ipynb"))


def test_two_notebooks():
    assert [p.name for p in NOTEBOOKS] == ["pareto_analysis.ipynb", "policy_comparison.ipynb"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path, reduced_run, monkeypatch):
    import nbformat
    from nbclient import NotebookClient

    monkeypatch.setenv("ZEUS_BENCH_RESULTS", str(reduced_run.path / "results"))
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(path, as_version=4)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code"), (
        "commit notebooks without outputs"
    )
    NotebookClient(
        nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}
    ).execute()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "Error" not in text
    if path.stem == "pareto_analysis":
        assert "showing cifar100 on v100" in text  # librispeech is not in the reduced run
    else:
        assert (
            "policies: ['baseline', 'bs-only', 'grid-search', 'max-batch', 'oracle', 'pl-only', 'zeus']"
            in text
        )
