"""The study's figures through ``python -m analysis.figures``: each reads its own table of the study."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis.figures import figure
from analysis.figures.cli import main


def test_missing_table_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    study = tmp_path / "study"
    study.mkdir()
    pd.DataFrame({"gpu": ["v100"]}).to_csv(study / "comparison.csv", index=False)
    out = tmp_path / "figures"
    out.mkdir()
    code = main(
        ["policy-regret", "--study", str(study / "comparison.csv"), "--out", str(out / "policy-regret")]
    )
    assert code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "curves.csv" in err[0]
    assert list(out.iterdir()) == []


def test_each_figure_names_its_table(tmp_path: Path) -> None:
    from analysis.figures.studies import named

    tables = [tmp_path / f"{t}.csv" for t in ("comparison", "curves", "drift_curves")]
    assert named(tables, "curves.csv", "study") == tmp_path / "curves.csv"
    assert {n: figure(n).inputs for n in ("policy-regret", "policy-cost", "policy-drift")} == {
        "policy-regret": ("study",),
        "policy-cost": ("study",),
        "policy-drift": ("study",),
    }
    with pytest.raises(ValueError, match=r"no drift_curves\.csv"):
        named(tables[:2], "drift_curves.csv", "study")
