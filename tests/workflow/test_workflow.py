"""The main workflow: config schema, lint, dry run, a reduced real run, reruns, and no traces."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import jsonschema
import pytest
import yaml
from workflow_helpers import OWN_DIR, REDUCED, REPO, make_workdir

FIGURES = [
    "potential",
    "pareto-v100",
    "power-profiles-v100",
    "policies-v100",
    "ablation-v100",
    "convergence-v100",
    "regret-v100",
    "eta-v100",
    "beta-v100",
]


def _schema() -> dict:
    return json.loads((REPO / "config" / "config.schema.json").read_text())


def _jobs(dry_run_output: str) -> dict[str, int]:
    """Job counts of a dry run's 'Job stats' table."""
    table = dry_run_output.split("Job stats:", 1)[1].split("total", 1)[0]
    return {m[1]: int(m[2]) for m in re.finditer(r"^(\w+)\s+(\d+)\s*$", table, re.M)}


def test_config_pins_all_four_published_gpus():
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    files = cfg["traces"]["zeus"]["files"]
    assert (
        files["summary_power_p100.csv"] == "158e9a6784b6e2d26710529b132cf173b227dc8688f4931c19a637bce2b7503b"
    )
    assert (
        files["summary_power_rtx6000.csv"]
        == "edccecc7f8b7a6102962b03f0f37767dd9cd2f03469ebccadc9805e82901bdc4"
    )
    for gpu in ("v100", "a40", "p100", "rtx6000"):
        assert re.fullmatch(r"[0-9a-f]{64}", files[f"summary_power_{gpu}.csv"]), gpu
    schema = json.loads((REPO / "config" / "config.schema.json").read_text())
    default = schema["properties"]["traces"]["properties"]["zeus"]["properties"]["files"]["default"]
    assert default == files


def test_config_is_valid_and_every_key_documented():
    schema = _schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), schema)

    def walk(node: dict, where: str) -> None:
        for key, sub in node.get("properties", {}).items():
            assert sub.get("description"), f"{where}{key}: no description"
            assert "default" in sub, f"{where}{key}: no default"
            walk(sub, f"{where}{key}.")
        if node.get("type") == "object":
            assert node.get("additionalProperties") is False or "propertyNames" in node, (
                f"{where}: unknown keys allowed"
            )

    walk(schema, "")


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        ({"bogus": 1}, "Additional properties"),
        ({"eta": 1.5}, "greater than the maximum"),
        ({"traces": {"zeus": {"files": {"summary_power_v100.csv": None}}}}, "summary_train.csv"),
        ({"policies": ["zeus", "magic"]}, "magic"),
        ({"seeds": "1-"}, "does not match"),
        ({"beta_sweep": {"values": [0]}}, "valid"),
    ],
)
def test_schema_refuses_bad_config(bad, match):
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for key, value in bad.items():
        if isinstance(value, dict) and isinstance(cfg.get(key), dict):
            cfg[key] = {**cfg[key], **value}
        else:
            cfg[key] = value
    with pytest.raises(jsonschema.ValidationError, match=match):
        jsonschema.validate(cfg, _schema())


def test_workflow_refuses_unknown_keys_and_workloads(tmp_path):
    wd = make_workdir(tmp_path, {"bogus": 1})
    out = wd.snakemake("-n", check=False)
    assert out.returncode == 2 and "unknown key bogus" in out.stdout + out.stderr
    wd = make_workdir(tmp_path / "w", {"workloads": ["cifar101"]})
    out = wd.snakemake("-n", check=False)
    assert out.returncode == 2 and "workloads: unknown workload 'cifar101'" in out.stdout + out.stderr


def test_a_typo_in_the_warm_switch_is_refused(tmp_path):
    wd = make_workdir(tmp_path, {}, {"ZEUS_BENCH_WARM": "fasle"})
    out = wd.snakemake("-n", check=False)
    said = out.stdout + out.stderr
    assert out.returncode == 2 and "$ZEUS_BENCH_WARM: expected 1 or 0" in said and "'fasle'" in said
    assert "Traceback" not in said
    wd = make_workdir(tmp_path / "off", {}, {"ZEUS_BENCH_WARM": "Off"})
    assert wd.snakemake("-n", check=False).returncode == 0


def test_lint_is_clean():
    import subprocess

    from workflow_helpers import SNAKEMAKE

    out = subprocess.run([str(SNAKEMAKE), "--lint"], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert "Congratulations, your workflow is in a good condition!" in out.stdout + out.stderr


def test_dry_run_starts_with_the_traces(tmp_path, zeus_csv_dir):
    wd = make_workdir(tmp_path, {"traces": {"zeus": {"local_dir": str(zeus_csv_dir)}}})
    out = wd.snakemake("-n")
    # Everything made from the Zeus traces waits for them (a checkpoint); what needs neither them
    # nor anything made from them (the results README, the figure of the committed H200 traces)
    # is planned from the start (where not up to date), to run beside the checkpoint.
    jobs = _jobs(out.stdout)
    assert jobs["zeus_traces"] == 1 and jobs["all"] == 1
    assert set(jobs) - {"zeus_traces", "all"} <= {"results_readme", "figure_measured-gpus", "alibaba_trace"}
    assert jobs["results_readme"] == 1  # the workdir has no results/README.md yet
    assert "warm.py" not in out.stderr + out.stdout  # a dry run starts no warm server


@pytest.mark.parametrize("workloads", ["all", ["cifar100"]])
def test_a_per_gpu_target_before_the_traces_are_fetched(tmp_path, zeus_csv_dir, workloads):
    # Asked for directly in a fresh folder, a Zeus GPU's outputs wait for the traces checkpoint
    # (their rules ask it which workloads the GPU has) instead of failing to build the DAG.
    overrides = {"traces": {"zeus": {"local_dir": str(zeus_csv_dir)}}, "workloads": workloads}
    wd = make_workdir(tmp_path, overrides)
    out = wd.snakemake(
        "-n", "results/summary/v100.csv", "results/configs/v100", "results/sim/v100/main.parquet"
    )
    jobs = _jobs(out.stdout)
    assert jobs["zeus_traces"] == 1
    assert jobs["configurations"] == jobs["figures_per_gpu_profiles"] == jobs["simulate"] == 1


def test_the_report_by_name_before_the_traces_are_fetched(tmp_path, zeus_csv_dir):
    # Asked for by name, the report waits for the traces checkpoint: its named inputs are not known
    # yet, and its parameters and command ask for them with a default instead of failing the DAG
    # ("'InputFiles' object has no attribute 'policy'" before).
    wd = make_workdir(tmp_path, {"traces": {"zeus": {"local_dir": str(zeus_csv_dir)}}})
    out = wd.snakemake("-n", "--printshellcmds", "results/report.md")
    jobs = _jobs(out.stdout)
    assert jobs["zeus_traces"] == 1 and jobs["report"] == 1


def test_workflow_env_file_follows_pyproject():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    env = yaml.safe_load((REPO / "workflows" / "envs" / "zeus-bench.yaml").read_text())
    pip = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    # Snakemake and its plugins run the workflow; the rules need the rest.
    assert sorted(p for p in pip if not p.startswith("-e")) == sorted(
        d for d in deps if not d.startswith("snakemake")
    )


def test_reduced_run_outputs(reduced_run):
    root = reduced_run.path
    figures = [
        *FIGURES,
        *(f"{n}-h200" for n in ("pareto", "policies", "ablation", "convergence", "regret", "eta", "beta")),
        "measured-gpus",  # the measured GPUs' figure (named for the GPUs, not for the H200, since #38)
    ]
    for name in figures:
        assert (root / "results" / "figures" / f"{name}.png").stat().st_size > 10_000, name
    assert not (root / "results" / "figures" / "power-profiles-h200.png").exists()  # one power limit only
    assert not list((root / "results" / "figures").glob("*.pdf"))  # formats come from the config
    # One folder per GPU (a directory output: Snakemake keeps a hidden timestamp file in it)
    assert sorted(p.name for p in (root / "results" / "configs" / "v100").glob("*.parquet")) == [
        "cifar100.parquet",
        "sentiment140.parquet",
    ]
    assert sorted(p.name for p in (root / "results" / "sim" / "v100").iterdir()) == [
        "beta-2.parquet",
        "beta-inf.parquet",
        "eta-0.5.parquet",
        "eta-1.parquet",
        "main.parquet",
        "summary-beta.parquet",
        "summary-eta.parquet",
    ]
    report = (root / "results" / "report.md").read_text()
    for heading in (
        "## 1. Potential",
        "## 2. Energy vs. time",
        "## 3. Zeus against",
        "## 4. Knob ablation",
        "## 5. Convergence",
        "## 6. The energy/time trade-off",
        "## 7. Sensitivity to beta",
        "## 8. Power limit profiles",
        "## 9. Measured GPUs",
        "## What was skipped",
    ):
        assert heading in report
    for name in figures:
        assert f"(figures/{name}.png)" in report
    # V100 cifar100, 2 seeds: the original simulator's 71.6 % over 10 seeds; two seeds land within a few points.
    row = next(
        line
        for line in report.splitlines()
        if line.startswith("| V100 | cifar100 |") and line.count("|") == 9 and " / " in line
    )
    saving = float(row.split("|")[3].split("%")[0])
    assert 65 < saving < 78
    if (REPO / "results" / "reference" / "original_simulator.csv").is_file():
        assert "| 71.6 / 74.1 % |" in row
    assert (
        "*H200: batch size only, at 700 W; per-epoch cost measured on synthetic data; epochs from the Zeus train "
        "trace.*" in report
    )
    assert str(root) not in report and str(REPO) not in report  # byte-identical wherever it runs
    # The findings page of `snakemake --report`: the report with every figure it shows embedded.
    findings = (root / "results" / "findings.html").read_text()
    assert findings.count('src="data:image/png;base64,') == report.count("![") >= len(figures)
    assert "| H200 | cifar100 |" in report and "| H200 | sentiment140 |" in report
    summary = (root / "results" / "summary" / "v100.csv").read_text().splitlines()
    assert summary[0].startswith("gpu,workload,policy")
    assert len(summary) == 1 + 2 * 7  # 2 workloads x 7 policies
    readme = (root / "results" / "README.md").read_text()
    assert "## `runs` table" in readme


def test_summaries_are_those_zeus_bench_summarize_writes(reduced_run, tmp_path):
    """The per-GPU figure job writes the summaries; the CSV is byte-identical to the command's own."""
    import subprocess
    import sys

    import pandas as pd

    from zeus_bench.store import read_table

    root = reduced_run.path
    out = tmp_path / "v100.csv"
    zeus_bench = Path(sys.executable).parent / "zeus-bench"
    subprocess.run(
        [str(zeus_bench), "summarize", str(root / "results/sim/v100/main.parquet"), "--out", str(out)],
        check=True,
        capture_output=True,
        env=reduced_run.env,
    )
    assert out.read_bytes() == (root / "results" / "summary" / "v100.csv").read_bytes()
    # The eta sweep's summary: the sim_summary of its runs, one row per (workload, policy, eta).
    sweep = read_table(root / "results/sim/v100/summary-eta.parquet", "sim_summary")
    assert sorted(set(sweep["eta"])) == [0.5, 1.0]
    assert len(sweep) == 2 * 3 * 2  # 2 workloads x 3 policies (zeus, baseline, oracle) x 2 eta
    assert set(sweep["policy"]) == {"zeus", "baseline", "oracle"}
    assert not pd.isna(sweep.loc[sweep["policy"] == "zeus", "energy_savings_vs_baseline_cum_pct_mean"]).any()


def test_the_run_started_its_steps_on_the_warm_server(reduced_run):
    # workflows/scripts/warm.py (its own tests: test_warm.py); the outputs checked above came from it
    said = reduced_run.first_run.stderr
    counts = re.findall(r"warm\.py: (\d+) steps started warm, (\d+) sent back", said)
    assert len(counts) == 1, said[-2000:]
    warm, cold = map(int, counts[0])
    assert warm >= 10 and cold == 0  # every step of one thread, once the server listened
    assert "steps run as new processes" not in said


def test_second_run_does_nothing(reduced_run):
    out = reduced_run.snakemake("-n")
    assert "Nothing to be done" in out.stdout + out.stderr


def test_changing_eta_reruns_only_what_depends_on_it(reduced_run):
    out = reduced_run.snakemake("-n", "--config", "eta=0.3")
    jobs = _jobs(out.stdout)
    # v100 and h200; each GPU's beta sweep is one job (one process for every beta), and so are
    # its potential and configurations (one process for every workload)
    assert jobs["simulate"] == 2 and jobs["simulate_beta"] == 2 and jobs["configurations"] == 2
    assert jobs["report"] == 1
    # one drawing process per GPU, not one per figure: v100 (with its power profiles) and h200
    assert jobs["figures_per_gpu_profiles"] == 1 and jobs["figures_per_gpu"] == 1
    for untouched in (
        "zeus_traces",
        "own_traces",
        "simulate_eta",
        "figure_measured-gpus",
        "results_readme",
    ):
        assert untouched not in jobs


def test_changing_beta_reruns_the_eta_sweep_but_not_the_beta_sweep(reduced_run):
    # The eta sweep runs at the configured beta; the beta sweep sets its own betas.
    jobs = _jobs(reduced_run.snakemake("-n", "--config", "beta=3.0").stdout)
    assert jobs["simulate"] == 2 and jobs["simulate_eta"] == 2
    assert "simulate_beta" not in jobs and "zeus_traces" not in jobs


def test_changed_eta_run_then_nothing(reduced_run, tmp_path):
    import shutil

    from workflow_helpers import Workdir

    copy = tmp_path / "copy"
    shutil.copytree(reduced_run.path, copy, symlinks=True)
    wd = Workdir(copy, copy / "overrides.yaml", reduced_run.env)
    wd.snakemake("--config", "eta=0.3")
    assert "eta 0.3," in (copy / "results" / "report.md").read_text()
    assert "Nothing to be done" in wd.snakemake("-n", "--config", "eta=0.3").stdout


def test_without_the_zeus_traces_the_workflow_says_what_it_skipped(tmp_path):
    own = REPO / "results" / "traces"
    wd = make_workdir(
        tmp_path,
        {
            "traces": {"zeus": {"download": False}, "own_dir": str(own)},
            "figures": {"formats": ["png"], "dpi": 50},
        },
    )
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "report.md").write_text("the committed report\n")
    out = wd.snakemake()
    console = out.stdout + out.stderr
    assert "Zeus traces unavailable, so only the project's own traces were drawn" in console
    assert "The partial report is results/report-partial.md" in console
    assert (tmp_path / "results" / "report.md").read_text() == "the committed report\n"  # never a stub
    report = (tmp_path / "results" / "report-partial.md").read_text()
    if list(own.glob("*/power-*.parquet")):  # the project's own committed traces are still drawn
        assert (tmp_path / "results" / "figures" / "measured-gpus.png").exists()
        assert "![Measured GPUs](figures/measured-gpus.png)" in report
    assert "## What was skipped" in report
    assert "Every figure and number from the Zeus traces" in report
    assert "export ZEUS_TRACE_DIR=/path/to/trace" in report
    assert not (tmp_path / "results" / "potential").exists()
    manifest = json.loads((tmp_path / "data" / "traces" / "zeus-csv" / "MANIFEST.json").read_text())
    assert manifest["status"] == "unavailable"
    # Pointing at the traces afterwards reruns the fetch (its parameters changed).
    wd.env["ZEUS_TRACE_DIR"] = str(Path(REPO).parent / "shared" / "traces" / "zeus-nsdi23")
    if (Path(wd.env["ZEUS_TRACE_DIR"]) / "summary_train.csv").exists():
        assert "zeus_traces" in _jobs(wd.snakemake("-n").stdout)


def _own_trace(path: Path, gpu: str, limits_w: list[float]) -> None:
    """An own GPU's power trace: the committed H200 sweep's cifar100 rows, renamed, at each limit."""
    import pandas as pd

    from zeus_bench.store import read_table, write_table

    h200 = read_table(OWN_DIR / "h200" / "power-h200.parquet", "power")
    rows = h200[(h200["gpu"] == "h200") & (h200["dataset"] == "cifar100")]
    frames = [rows.assign(gpu=gpu, power_limit_w=w) for w in limits_w]
    path.mkdir(parents=True)
    write_table(pd.concat(frames, ignore_index=True), path / f"power-{gpu}.parquet", "power")


def test_an_own_gpu_with_several_limits_gets_the_power_profiles(tmp_path, zeus_csv_dir):
    # One folder per own GPU under traces.own_dir; "one power limit" is counted in each trace, not
    # taken from the folder: x8 (one limit) gets the per-GPU job without the power profiles, x9
    # (swept at two limits) the one that also draws them.
    own = tmp_path / "own"
    _own_trace(own / "x8", "x8", [250.0])
    _own_trace(own / "x9", "x9", [250.0, 200.0])
    overrides = {
        **REDUCED,
        "gpus": ["x8", "x9"],
        "workloads": ["cifar100"],
        "policy_study": {"enabled": False},
        "alibaba": {"enabled": False},  # its checkpoint would hold the targets back
        "traces": {"zeus": {"local_dir": str(zeus_csv_dir)}, "own_dir": str(own)},
    }
    wd = make_workdir(tmp_path / "wd", overrides)
    wd.snakemake("zeus_traces")  # the checkpoint, so that the dry run sees every GPU's targets
    # Without the profile's `quiet: rules`, so that each job and its command line are printed.
    out = wd.snakemake("-n", "--printshellcmds", "--workflow-profile", "none").stdout
    jobs = _jobs(out)
    assert jobs["figures_per_gpu"] == jobs["figures_per_gpu_profiles"] == 1, jobs
    per_gpu = {
        m[1]: "--power-profiles" in line
        for line in out.splitlines()
        if (m := re.search(r"analysis\.figures per-gpu --gpu (\w+) ", line))
    }
    assert per_gpu == {"x8": False, "x9": True}
    assert "results/figures/power-profiles-x9.png" in out
    assert "power-profiles-x8" not in out
    # The power-profiles figure of the one-limit GPU has no rule at all.
    assert wd.snakemake("-n", "results/figures/power-profiles-x8.png", check=False).returncode != 0
