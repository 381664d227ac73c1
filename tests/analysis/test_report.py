"""The report: key numbers from the results files, the paper's numbers beside them, what was skipped."""

from __future__ import annotations

import json

from fake_results import make_sim

from analysis import report


def _write_inputs(tmp_path, potential, configs, manifest):
    sim = make_sim()
    sim.to_parquet(tmp_path / "sim.parquet")
    potential[potential["gpu"] == "v100"].to_csv(tmp_path / "pot.csv", index=False)
    configs.to_parquet(tmp_path / "configs.parquet")
    (tmp_path / "MANIFEST.json").write_text(json.dumps(manifest))
    return [
        "--out",
        str(tmp_path / "report.md"),
        "--manifest",
        str(tmp_path / "MANIFEST.json"),
        "--potential",
        str(tmp_path / "pot.csv"),
        "--sim",
        str(tmp_path / "sim.parquet"),
        "--configs",
        str(tmp_path / "configs.parquet"),
        "--figures",
        "results/figures/potential.png",
        "results/figures/policies-v100.png",
    ]


def test_report_numbers(tmp_path, potential, configs):
    manifest = {
        "status": "ok",
        "source": "local:/x",
        "gpus": ["v100"],
        "files": {"summary_train.csv": {"sha256": "a" * 64, "verified": True}},
        "skipped": {"summary_power_p100.csv": "absent from the local copy"},
    }
    assert report.main(_write_inputs(tmp_path, potential, configs, manifest)) == 0
    text = (tmp_path / "report.md").read_text()
    assert "`summary_train.csv` (sha256 verified)" in text
    assert "![potential savings](figures/potential.png)" in text
    assert "*(figure pareto-v100 not drawn)*" in text
    # Zeus: 25 % energy saving over all recurrences, 40 % over the last 10; the paper's V100 numbers beside.
    row = next(line for line in text.splitlines() if line.startswith("| V100 | cifar100 | 25.0 %"))
    assert "25.0 % / 40.0 %" in row and "71.6 / 74.1 %" in row
    assert "Savings against b0: V100 30.0 % (librispeech) to 40.0 % (cifar100)." in text
    assert "- Zeus trace `summary_power_p100.csv`: absent from the local copy." in text
    assert "H200 figure: no committed sweep traces" in text


def test_report_without_traces(tmp_path, potential, configs):
    manifest = {
        "status": "unavailable",
        "message": "cannot download ...; export ZEUS_TRACE_DIR=/path/to/trace",
        "gpus": [],
    }
    args = [
        "--out",
        str(tmp_path / "r.md"),
        "--manifest",
        str(tmp_path / "m.json"),
        "--configured-gpus",
        "v100,p100",
    ]
    (tmp_path / "m.json").write_text(json.dumps(manifest))
    assert report.main(args) == 0
    text = (tmp_path / "r.md").read_text()
    assert "## 1." not in text
    assert "Every figure and number from the Zeus traces" in text and "export ZEUS_TRACE_DIR" in text
    assert "GPU `p100` is named in the config but has no Zeus power trace." in text


def test_report_h200_section(tmp_path, power_h200):
    power_h200.to_parquet(tmp_path / "p.parquet")
    (tmp_path / "m.json").write_text(json.dumps({"status": "unavailable", "message": "m", "gpus": []}))
    assert (
        report.main(
            [
                "--out",
                str(tmp_path / "r.md"),
                "--manifest",
                str(tmp_path / "m.json"),
                "--own",
                str(tmp_path / "p.parquet"),
                "--figures",
                "results/figures/h200.png",
            ]
        )
        == 0
    )
    text = (tmp_path / "r.md").read_text()
    assert "current power limit only (700 W;" in text
    assert "| h200 | cifar100/shufflenetv2 | 4 (32-256) | 256 |" in text
    assert "at the largest batch size measured for 1 of 1 series" in text
