"""Command line of ``python -m analysis.policy_plots``: one figure to --out, several to --out-dir."""

from __future__ import annotations

from pathlib import Path

import pytest

from analysis import policy_plots


def test_several_kinds_need_out_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        policy_plots.main(["regret", "cost", "--study", str(tmp_path), "--out", str(tmp_path / "x")])
    assert exc.value.code == 2
    assert "--out names one figure" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_missing_table_is_one_line_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "figures"
    out.mkdir()
    assert (
        policy_plots.main(["regret", "drift", "--study", str(tmp_path / "none"), "--out-dir", str(out)]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "curves.csv" in err[0]
    assert list(out.iterdir()) == []


def test_each_kind_names_its_table() -> None:
    assert {k: t for k, (t, _) in policy_plots.KINDS.items()} == {
        "regret": "curves",
        "cost": "comparison",
        "drift": "drift_curves",
    }
