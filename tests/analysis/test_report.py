"""The report: computed findings that flip with the data, numbers traceable to the results files."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from fake_results import make_sim

from analysis import metrics, report
from zeus_bench.sim.summarize import summarize

ORIGINAL = """gpu,workload,eta,beta,seeds,baseline,metric,value_pct,source
v100,cifar100,0.5,2.0,1-10,b0,energy_savings_cum,71.6,original simulator (Zeus v0.3.0 code)
v100,cifar100,0.5,2.0,1-10,b0,energy_savings_last10,74.1,original simulator (Zeus v0.3.0 code)
"""
PAPER = """gpu,workload,eta,beta,seeds,baseline,metric,value_pct,source,statement
v100,all six (lowest),0.5,2.0,not stated,b0,least_energy_savings_min,23.8,paper,"least-energy range, low end"
all,all (highest),0.5,2.0,not stated,max-batch,energy_savings_max,75.8,paper,"abstract, high end"
v100,imagenet,0.5,2.0,not stated,b0,something_else,1.0,paper,"another statement"
"""
NUMBER = re.compile(r"(?<![\w.'])[-+]?\d+(?:\.\d+)?(?:e[+-]?\d+)?(?![\dA-Za-wyz_])")


def _forms(v: float) -> set[str]:
    out = {f"{v:.1f}", f"{v:+.1f}", f"{v:g}", f"{v:.2f}", f"{v:.2g}", f"{v:.3g}", f"{v:.0f}"}
    if float(v).is_integer():
        out.add(str(int(v)))
    return out


def _allowed(findings: list, extra: tuple[float, ...] = ()) -> set[str]:
    allowed: set[str] = set()
    for f in findings:
        for v in f.numbers.values():
            allowed |= _forms(float(v))
    for v in extra:
        allowed |= _forms(v)
    return allowed


def _unexplained(text: str, allowed: set[str]) -> list[str]:
    return [t for t in NUMBER.findall(text) if t not in allowed]


def _write_inputs(
    tmp_path: Path, potential: pd.DataFrame, configs: pd.DataFrame, manifest: dict
) -> list[str]:
    sim = make_sim()
    sim.to_parquet(tmp_path / "sim.parquet")
    potential[potential["gpu"] == "v100"].to_csv(tmp_path / "pot.csv", index=False)
    configs.to_parquet(tmp_path / "configs.parquet")
    (tmp_path / "MANIFEST.json").write_text(json.dumps(manifest))
    (tmp_path / "original.csv").write_text(ORIGINAL)
    (tmp_path / "paper.csv").write_text(PAPER)
    for e in (0.0, 0.5, 1.0):
        make_sim(eta=e, policies=["zeus", "baseline", "oracle"]).to_parquet(tmp_path / f"eta-{e}.parquet")
    for b in (1.5, 2.0, math.inf):
        make_sim(beta=b, policies=["zeus", "baseline"]).to_parquet(tmp_path / f"beta-{b}.parquet")
    return [
        "--out", str(tmp_path / "report.md"), "--manifest", str(tmp_path / "MANIFEST.json"),
        "--potential", str(tmp_path / "pot.csv"), "--sim", str(tmp_path / "sim.parquet"),
        "--configs", str(tmp_path / "configs.parquet"),
        "--eta-sim", *(str(tmp_path / f"eta-{e}.parquet") for e in (0.0, 0.5, 1.0)),
        "--beta-sim", *(str(tmp_path / f"beta-{b}.parquet") for b in (1.5, 2.0, math.inf)),
        "--reference", str(tmp_path / "original.csv"), str(tmp_path / "paper.csv"),
        "--figures", "results/figures/potential.png", "results/figures/policies-v100.png",
    ]  # fmt: skip


MANIFEST = {
    "status": "ok",
    "source": "local:/home/someone/zeus/trace",
    "gpus": ["v100"],
    "files": {"summary_train.csv": {"sha256": "a" * 64, "verified": True}},
    "skipped": {"summary_power_p100.csv": "absent from the local copy /home/someone/zeus/trace"},
}


def _render(tmp_path, potential, configs, power_h200=None) -> tuple[report.Report, str]:
    args = _write_inputs(tmp_path, potential, configs, MANIFEST)
    if power_h200 is not None:
        power_h200.to_parquet(tmp_path / "own.parquet")
        args += ["--own", str(tmp_path / "own.parquet")]
    rep = report.Report(report.build_parser().parse_args(args))
    return rep, rep.render()


def test_report_numbers(tmp_path, potential, configs):
    assert report.main(_write_inputs(tmp_path, potential, configs, MANIFEST)) == 0
    text = (tmp_path / "report.md").read_text()
    assert "`summary_train.csv` (sha256 verified)" in text
    assert "![potential savings](figures/potential.png)" in text
    assert "*(figure pareto-v100 not drawn)*" in text
    # Zeus: 25 % energy saving over all recurrences, 40 % over the last 10; the original simulator's beside.
    row = next(line for line in text.splitlines() if line.startswith("| V100 | cifar100 | 25.0 %"))
    assert "25.0 % / 40.0 %" in row and "71.6 / 74.1 %" in row
    assert "Savings against b0: V100 30.0 % (librispeech) to 40.0 % (cifar100)." in text
    assert "- Zeus trace `summary_power_p100.csv`: absent from the local copy …/trace." in text
    assert "Measured-GPU figure: no committed sweep traces" in text
    # The paper's statements beside the comparable zeus-bench number (potential V100: 30-40 %; Zeus vs max-batch).
    assert (
        "| least-energy range, low end | V100 | b0 | 23.8 % | 30.0 % | least-energy configuration vs b0, min over "
        "workloads |" in text
    )
    zeus_mb = summarize(make_sim()).set_index(["workload", "policy"])[
        "energy_savings_vs_max_batch_cum_pct_mean"
    ]
    assert (
        f"| abstract, high end | ALL | max-batch | 75.8 % | {zeus_mb.loc[('cifar100', 'zeus')]:.1f} % |"
        in text
    )
    assert "| another statement | V100 | b0 | 1.0 % | n/a | none comparable |" in text
    assert "| V100 | cifar100 | 0.5 / 2 / 1-10 | b0 | 71.6 % / 25.0 % | 74.1 % / 40.0 % |" in text


def test_no_absolute_path_in_the_report(tmp_path, potential, configs):
    _, text = _render(tmp_path, potential, configs)
    assert "/home/someone" not in text and str(tmp_path) not in text
    assert "Zeus traces from a local copy:" in text
    assert report.portable("see /a/b/c.csv, and https://x.org/y/z") == "see …/c.csv, and https://x.org/y/z"
    assert report.portable("export ZEUS_TRACE_DIR=/path/to/trace") == "export ZEUS_TRACE_DIR=/path/to/trace"


def test_every_number_of_the_prose_comes_from_a_finding(tmp_path, potential, configs, power_h200):
    rep, text = _render(tmp_path, potential, configs, power_h200)
    allowed = _allowed(rep.findings, report.STATIC_NUMBERS)
    prose = [
        line for line in text.splitlines() if line and not line.startswith(("|", "#", "![", "*(figure", "- "))
    ]
    assert len(prose) > 10
    for line in prose:
        assert not _unexplained(line, allowed), line
    for f in rep.findings:  # and each sentence only states its own numbers
        assert not _unexplained(f.sentence, _allowed([f])), f.key


def test_tables_show_the_summary_values(tmp_path, potential, configs):
    _, text = _render(tmp_path, potential, configs)
    s = summarize(make_sim()).set_index(["workload", "policy"])
    for w in ("cifar100", "librispeech"):
        z = s.loc[(w, "zeus")]
        row = next(
            ln
            for ln in text.splitlines()
            if ln.startswith(f"| V100 | {w} | ") and ln.count("|") == 9 and " / " in ln
        )
        assert f"{z['energy_savings_vs_baseline_cum_pct_mean']:.1f} % / " in row
        assert f"| {z['cost_ratio_vs_baseline_cum_mean']:.2f} |" in row
        regret = next(
            line for line in text.splitlines() if line.startswith(f"| V100 | {w} | ") and "e+" in line
        )
        assert f"| {z['regret_vs_oracle_cost_j_mean']:.3g} |" in regret


# -- finding functions on small tables where the sentence must flip ------------------------------
def _summary(rows: list[tuple[str, str, str, float]], col: str = "energy_savings_vs_baseline_cum_pct_mean"):
    return pd.DataFrame(
        [
            {"gpu": g, "workload": w, "policy": p, col: v, "time_savings_vs_baseline_cum_pct_mean": v / 2}
            for g, w, p, v in rows
        ]
    )


def test_zeus_vs_baseline_names_the_jobs_where_zeus_uses_more_energy():
    good = report.zeus_vs_baseline(
        _summary([("h200", "squad", "zeus", 10.0), ("h200", "imagenet", "zeus", 6.0)])
    )
    assert "less energy than the baseline on all 2 jobs" in good.sentence
    bad = report.zeus_vs_baseline(
        _summary([("h200", "squad", "zeus", -10.0), ("h200", "imagenet", "zeus", 30.0)])
    )
    assert "more energy than the baseline on 1 of 2 jobs (squad)" in bad.sentence
    assert bad.numbers["h200.energy"] == pytest.approx(10.0)


def test_little_to_gain_appears_only_when_it_holds():
    rows = [("v100", "squad", "oracle", 3.0), ("v100", "squad", "zeus", -2.0)]
    assert "squad (V100)" in report.little_to_gain(_summary(rows)).sentence
    rows[1] = ("v100", "squad", "zeus", 1.0)
    assert report.little_to_gain(_summary(rows)).sentence == ""


def test_ablation_counts_only_the_knobs_a_gpu_has():
    rows = [
        ("h200", "squad", "bs-only", 10.0),
        ("h200", "squad", "pl-only", 20.0),
        ("h200", "squad", "zeus", 10.0),
    ]
    assert report.ablation_both(_summary(rows)).numbers["jobs_within"] == 0
    assert report.ablation_both(_summary(rows), one_limit=["h200"]).numbers["jobs_within"] == 1


def _pot(gaps: dict[str, tuple[float, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "gpu": "v100",
                "workload": w,
                "min_energy_saving_pct": b0,
                "min_energy_saving_vs_maxbatch_pct": mb,
            }
            for w, (b0, mb) in gaps.items()
        ]
    )


def test_maxbatch_gap_names_the_job_from_the_data():
    f = report.maxbatch_gap(_pot({"movielens-1m": (60.0, 5.0), "squad": (20.0, 25.0)}))
    assert "(movielens-1m, V100" in f.sentence and "larger on 1" in f.sentence
    f = report.maxbatch_gap(_pot({"movielens-1m": (60.0, 59.0), "squad": (40.0, 2.0)}))
    assert "(squad, V100" in f.sentence and "larger on" not in f.sentence
    f = report.maxbatch_gap(_pot({"squad": (40.0, 40.0)}))
    assert "nowhere smaller" in f.sentence


def test_potential_ranges():
    f = report.potential_ranges(_pot({"a": (10.0, 0.0), "b": (50.0, 0.0)}))
    assert f.sentence == "Savings against b0: V100 10.0 % (a) to 50.0 % (b)."
    assert "its only job" in report.potential_ranges(_pot({"a": (10.0, 0.0)})).sentence


def _eta_rows(changes: dict[str, tuple[float, float]]) -> pd.DataFrame:
    rows = []
    for w, (de, dt) in changes.items():
        rows.append(
            {"gpu": "h200", "workload": w, "eta": 0.0, "energy_saving_pct": 10.0, "time_saving_pct": 10.0}
        )
        rows.append(
            {
                "gpu": "h200",
                "workload": w,
                "eta": 1.0,
                "energy_saving_pct": 10.0 + de,
                "time_saving_pct": 10.0 + dt,
            }
        )
    return pd.DataFrame(rows)


def test_eta_effect_says_when_both_get_worse():
    f = report.eta_effect(_eta_rows({"squad": (5.0, -5.0)}))
    assert "trades time for energy (energy saving up, time saving down) on 1 of 1 jobs" in f.sentence
    assert "both get worse" not in f.sentence
    f = report.eta_effect(_eta_rows({"squad": (-2.0, -20.0), "imagenet": (-1.0, -3.0)}))
    assert "on 0 of 2 jobs; both get worse on 2 (squad (H200), imagenet (H200))" in f.sentence
    assert "frontier" not in f.sentence


def test_beta_effect_flips_with_the_data():
    def rows(off: float, tight: float) -> pd.DataFrame:
        return pd.DataFrame(
            [
                {"gpu": "v100", "workload": "squad", "beta": b, "energy_saving_pct": v}
                for b, v in ((1.25, tight), (2.0, 20.0), (math.inf, off))
            ]
        )

    f = report.beta_effect(rows(off=-30.0, tight=20.0))
    assert "Beta off loses more than 1 point against beta 2 on 1 of 1 jobs" in f.sentence
    assert "Beta 1.25 never loses" in f.sentence
    f = report.beta_effect(rows(off=20.0, tight=-5.0))
    assert "Beta off never loses" in f.sentence and "Beta 1.25 loses" in f.sentence
    assert "squad on the V100 with beta 1.25 (-5.0 % energy saving)" in f.sentence


def test_regret_shape_does_not_claim_flattening_the_data_lack():
    def conv(per_rec: list[float]) -> pd.DataFrame:
        return pd.DataFrame(
            {"gpu": "v100", "workload": "squad", "policy": "zeus", "recurrence": range(1, len(per_rec) + 1),
             "regret_mean": np.cumsum(per_rec)}
        )  # fmt: skip

    assert report.regret_shape(conv([10.0] * 10 + [1.0] * 20)).numbers["jobs_slower"] == 1
    short = pd.concat([conv([10.0] * 10 + [1.0] * 20), conv([1.0] * 12).assign(workload="imagenet")])
    f = report.regret_shape(short)
    assert (
        f.numbers["short_jobs"] == 1 and "on 1 of 1 jobs (the 1 with at least 20 recurrences)." in f.sentence
    )
    f = report.regret_shape(conv([1.0] * 10 + [10.0] * 20))
    assert f.numbers["jobs_slower"] == 0 and "did not slow down on squad (V100)" in f.sentence


def test_grid_vs_zeus_regret():
    rows = [
        ("v100", "a", "zeus", 10.0),
        ("v100", "a", "grid-search", 30.0),
        ("v100", "b", "zeus", 10.0),
        ("v100", "b", "grid-search", 5.0),
    ]
    f = report.grid_vs_zeus_regret(_summary(rows, "regret_vs_oracle_cost_j_mean"))
    assert "exceeds Zeus's on 1 of 2 jobs (grid search / Zeus from 0.5 to 3.0)" in f.sentence


def test_failed_recurrences_finding():
    s = pd.DataFrame(
        [{"gpu": "v100", "workload": "squad", "policy": "grid-search", "failed_recurrences_mean": 2.0}]
    )
    assert "grid-search on squad (V100) 2 per seed" in report.failed_recurrences(s).sentence
    assert "Every recurrence" in report.failed_recurrences(s.assign(failed_recurrences_mean=0.0)).sentence


def test_own_batch_finding_flips(power_h200):
    assert report.own_batch_finding(metrics.per_sample(power_h200)).numbers["least_at_largest"] == 1
    worse = power_h200.assign(avg_power_w=power_h200["batch_size"] ** 2)  # energy per sample grows with bs
    f = report.own_batch_finding(metrics.per_sample(worse))
    assert "at the largest batch size measured on 0 of 1" in f.sentence


def test_gpu_caveats():
    f = report.gpu_caveats({"h200": [700.0], "v100": [100.0, 250.0]})
    assert f.sentence == (
        "*H200: batch size only, at 700 W; per-epoch cost measured on synthetic data; epochs from the Zeus train "
        "trace.*"
    )
    assert report.gpu_caveats({"v100": [100.0, 250.0]}).sentence == ""


def test_references_reader(tmp_path):
    (tmp_path / "o.csv").write_text(ORIGINAL)
    refs = report.read_references([tmp_path / "o.csv", tmp_path / "absent.csv"])
    assert list(refs.columns) == report.REFERENCE_COLUMNS and len(refs) == 2
    assert (
        report.summary_column("b0", "energy_savings_last10") == "energy_savings_vs_baseline_last10_pct_mean"
    )
    assert report.summary_column("max-batch", "time_savings_cum") == "time_savings_vs_max_batch_cum_pct_mean"
    assert report.summary_column("b0", "least_energy_savings") is None
    (tmp_path / "bad.csv").write_text("gpu,workload\nv100,squad\n")
    with pytest.raises(ValueError, match=r"bad\.csv: missing column"):
        report.read_references([tmp_path / "bad.csv"])
    s = pd.DataFrame(
        [{"gpu": "v100", "workload": "cifar100", "policy": "zeus", "eta": 0.5, "beta": 2.0,
          "energy_savings_vs_baseline_cum_pct_mean": 71.63, "energy_savings_vs_baseline_last10_pct_mean": 74.1}]
    )  # fmt: skip
    f = report.reference_agreement(s, refs)
    assert f.numbers["compared"] == 2 and f.numbers["max_diff_pt"] == pytest.approx(0.03)


def test_report_without_traces(tmp_path):
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
    assert report.main([*args, "--reference"]) == 0
    text = (tmp_path / "r.md").read_text()
    assert "## 1." not in text
    assert "Every figure and number from the Zeus traces" in text and "export ZEUS_TRACE_DIR" in text
    assert "GPU `p100` is named in the config but has no Zeus power trace." in text


def test_report_h200_section(tmp_path, power_h200):
    power_h200.to_parquet(tmp_path / "p.parquet")
    (tmp_path / "m.json").write_text(json.dumps({"status": "unavailable", "message": "m", "gpus": []}))
    args = [
        "--out",
        str(tmp_path / "r.md"),
        "--manifest",
        str(tmp_path / "m.json"),
        "--own",
        str(tmp_path / "p.parquet"),
    ]
    assert report.main([*args, "--figures", "results/figures/h200.png", "--reference"]) == 0
    text = (tmp_path / "r.md").read_text()
    assert "*H200: batch size only, at 700 W; per-epoch cost measured on synthetic data" in text
    assert "| h200 | cifar100/shufflenetv2 | 4 (32-256) | 256 |" in text
    assert "the least energy per sample is at the largest batch size measured on 1 of 1" in text
