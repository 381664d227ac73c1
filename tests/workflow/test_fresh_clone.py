"""Byte-identical anywhere (issue 23): the workflow run in a fresh clone at another path changes no
committed output. Figures do not depend on the machine's floating point (analysis/stable_output.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from workflow_helpers import REPO, SNAKEMAKE

from analysis.stable_output import round_numbers_in, stable_pdf_numbers


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
@pytest.mark.timeout(3000)
def test_workflow_in_a_fresh_clone_leaves_git_status_clean(tmp_path, zeus_csv_dir):
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.fail("needs git and this checkout's history (CI runs on a clone)", pytrace=False)
    clone = tmp_path / "another" / "path" / "zeus-bench"
    subprocess.run(["git", "clone", "-q", "--no-hardlinks", str(REPO), str(clone)], check=True)
    env = {**os.environ, "ZEUS_TRACE_DIR": str(zeus_csv_dir)}
    out = subprocess.run(
        [str(SNAKEMAKE), "--cores", "2"], cwd=clone, env=env, capture_output=True, text=True, timeout=2700
    )
    assert out.returncode == 0, out.stderr[-3000:]
    assert _git("status", "--porcelain", cwd=clone) == "", _git("status", "--short", cwd=clone)


def test_pdf_numbers_are_rounded():
    assert round_numbers_in(b"12.3456789 -0.0001 l 7 m 0.125 w") == b"12.35 0 l 7 m 0.12 w"


def test_a_figure_moved_by_float_noise_writes_the_same_pdf(tmp_path):
    import contextlib

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def draw(noise: float, stable: bool) -> bytes:
        fig, ax = plt.subplots(figsize=(3, 2))
        ax.plot([0.1, 1.3, 2.7], [1.0, 0.5 + noise, 2.2], label="zeus")
        ax.set_position([0.125 + noise, 0.11, 0.775, 0.77])
        ax.legend(loc="upper left", bbox_to_anchor=(0.02 + noise, 0.98))
        path = tmp_path / f"f{noise}-{stable}.pdf"
        with stable_pdf_numbers() if stable else contextlib.nullcontext():
            fig.savefig(path, format="pdf", metadata={"CreationDate": None})
        plt.close(fig)
        return path.read_bytes()

    # Coordinates that move in their sixth decimal (another CPU's floating point) change nothing,
    assert draw(0.0, stable=True) == draw(3e-7, stable=True)
    # where matplotlib's own numbers would differ (what made the committed PDFs machine-dependent).
    assert draw(0.0, stable=False) != draw(3e-7, stable=False)
