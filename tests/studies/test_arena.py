"""The arena: intervals and paired differences on known tables, cross-fitting, horizon, noise, CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from tests.helpers.sim_toy import toy_job
from tests.helpers.tiny_traces import write_tiny_traces
from zeus_bench.cli.main import main
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.policies import Decision, Policy, PolicyContext, get_policy
from zeus_bench.sim.replay import JobModel, replay
from zeus_bench.sim.rules import check_horizon, check_noise
from zeus_bench.store import METADATA_KEY, read_table, write_table
from zeus_bench.studies import arena_protocol as arena_mod
from zeus_bench.studies.arena_protocol import Protocol
from zeus_bench.studies.arena_stats import job_table
from zeus_bench.studies.crossfit import path_halves, split_job
from zeus_bench.traces.jobs import TraceSet

# --- cross-fitting -------------------------------------------------------------------------


def test_path_halves_partition_the_paths() -> None:
    for n in range(2, 12):
        h = path_halves(n)
        assert set(h["tune"]).isdisjoint(h["judge"])
        assert sorted([*h["tune"], *h["judge"]]) == list(range(n))
        assert len(h["tune"]) and len(h["judge"])


def _unique_job():  # type: ignore[no-untyped-def]
    # Every path a distinct target epoch, so a path is known by its value.
    return toy_job(
        targets={8: [np.nan, 9.5], 16: [4.01, 4.02, 4.03], 32: [5.01, 5.02, 5.03, 5.04], 64: [3.01]},
        max_epochs=12,
    )


def test_split_drops_single_path_batch_sizes_and_refuses_an_empty_b0(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zeus_bench.studies import crossfit

    monkeypatch.setattr(crossfit, "_SAID", set())
    caplog.set_level("INFO", logger="zeus_bench.studies.crossfit")
    job = _unique_job()
    tune, judge = split_job(job, "tune"), split_job(job, "judge")
    split_job(job, "judge", split=2)
    said = [r.getMessage() for r in caplog.records if "single training path" in r.getMessage()]
    assert len(said) == 1 and "[64]" in said[0]  # said once per job, not once per half and split
    assert 64 not in tune.batch_sizes and 64 not in judge.batch_sizes  # one path: in neither half
    for t, j in zip(tune.target_epochs, judge.target_epochs, strict=True):
        assert not set(t[~np.isnan(t)]) & set(j[~np.isnan(j)])
    with pytest.raises(ConfigError, match="empty split"):
        split_job(toy_job(targets={16: [4.0, 5.0], 32: [5.0]}), "judge")
    with pytest.raises(ConfigError, match="unknown half"):
        split_job(job, "both")


def test_no_run_is_both_tuned_and_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every path a replay samples while tuning is absent from every replay the arena judges."""
    from zeus_bench.studies import tuning

    job = _unique_job()
    seen: dict[str, set[float]] = {"tune": set(), "judge": set()}
    phase = {"now": "tune"}
    original = JobModel.__init__

    def spy(self, j, eta):  # type: ignore[no-untyped-def]
        original(self, j, eta)
        for paths in self.paths:
            seen[phase["now"]].update(p for p in paths if math.isfinite(p))

    monkeypatch.setattr(JobModel, "__init__", spy)
    tuning.tune_on({"toygpu": [job]}, "zeus-plus", {"margin": (0.2, 0.4)}, (1, 2), "known")
    phase["now"] = "judge"
    judged = [split_job(job, "judge")]
    totals = arena_mod.run_arena(judged, ["zeus-plus"], Protocol((1, 2)))
    job_table(judged, totals, Protocol((1, 2)))
    assert seen["tune"] and seen["judge"]
    assert seen["tune"].isdisjoint(seen["judge"])
    # The second fold tunes on the judge half: exactly the judged paths, none of the tune half.
    judged = set(seen["judge"])
    seen["judge"] = set()
    tuning.tune_on({"toygpu": [job]}, "zeus-plus", {"margin": (0.2, 0.4)}, (1, 2), "known", half="judge")
    assert seen["judge"] == judged


# --- horizon and noise ----------------------------------------------------------------------


class _Told(Policy):
    """Records what it is told of the recurrences (not registered)."""

    name = "told"
    seen: ClassVar[list[int | None]] = []

    def __init__(self, ctx: PolicyContext) -> None:
        super().__init__(ctx)
        _Told.seen.append(ctx.recurrences)

    def predict(self) -> Decision:
        return Decision(self.ctx.job.b0, 200.0)


def test_horizon_known_unknown_n() -> None:
    model = JobModel(toy_job(), Cost(0.5))
    _Told.seen.clear()
    for h in ("known", "unknown", 7):
        replay(model, _Told, 1, 2.0, 12, horizon=h)
    assert _Told.seen == [12, None, 7]
    assert check_horizon("25") == 25
    for bad in ("0", "-3", "soon", "2.5"):
        with pytest.raises(ConfigError, match="--horizon"):
            check_horizon(bad)


def test_noise_keeps_the_paths_and_is_seeded() -> None:
    job = toy_job(targets={8: [np.nan], 16: [4.0, 6.0], 32: [5.0, 7.0, 8.0], 64: [3.0]})
    model = JobModel(job, Cost(0.5))
    cls = get_policy("baseline")
    plain = replay(model, cls, 3, 2.0, 30)
    noisy = replay(model, cls, 3, 2.0, 30, noise=0.05)
    assert noisy == replay(model, cls, 3, 2.0, 30, noise=0.05)
    assert [r[4] for r in plain] == [r[4] for r in noisy]  # same epochs: same paths sampled
    ratio = np.array([n[6] / p[6] for p, n in zip(plain, noisy, strict=True)])
    assert 0.0 < ratio.std() < 0.1 and abs(ratio.mean() - 1.0) < 0.05
    assert plain == replay(model, cls, 3, 2.0, 30, noise=0.0)
    for bad in (-0.01, 0.11, float("nan"), "x"):
        with pytest.raises(ConfigError, match="--noise"):
            check_noise(bad)  # type: ignore[arg-type]


# --- the command end to end ----------------------------------------------------------------


def two_gpu_traces(folder: Path) -> Path:
    """Tiny traces in ``folder`` with a copy of the V100 power trace as an A40's."""

    write_tiny_traces(folder)
    power = pd.read_parquet(folder / "power-v100.parquet").assign(gpu="a40")
    write_table(power, folder / "power-a40.parquet", "power")
    return folder


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    return two_gpu_traces(tmp_path / "traces")


def test_arena_command_end_to_end(tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "arena"
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100,a40", "--policies", "zeus,zeus-plus,pl-only"]
    assert main([*argv, "--seeds", "1-5", "--fold", "both", "--out", str(out)]) == 0
    jobs = read_table(out / "arena_jobs.parquet", "arena_jobs")
    summary = read_table(out / "arena_summary.parquet", "arena_summary")
    assert len(jobs) == 3 * 2 * 3 * 3 and set(jobs["seeds"]) == {5}  # both folds, and the two pooled (fold 0)
    halves = {0: ("both",), 1: ("judge",), 2: ("tune",)}
    assert dict(jobs.groupby("fold")["half"].unique().map(tuple)) == halves
    assert sorted(summary["fold"]) == sorted([0, 1, 2] * 2 * 3)
    assert (jobs["regret_pct_ci_lo"] <= jobs["regret_pct_mean"] + 1e-12).all()
    assert (jobs["regret_pct_mean"] <= jobs["regret_pct_ci_hi"] + 1e-12).all()
    z = jobs[jobs["policy"] == "zeus"]
    assert (z["regret_diff_vs_zeus_pct_mean"] == 0).all() and set(z["vs_zeus"]) == {"same"}
    for fold in (1, 2):  # ranked within each (GPU, fold)
        v = summary[(summary["gpu"] == "v100") & (summary["fold"] == fold)]
        assert v["rank"].tolist() == v["regret_pct_mean"].rank(method="min").astype(int).tolist()
    assert (
        main([*argv, "--seeds", "1-5", "--horizon", "unknown", "--out", str(out), "--force"]) == 0
    )  # fold 1
    one = read_table(out / "arena_jobs.parquet", "arena_jobs")
    assert set(one["horizon"]) == {"unknown"} and set(one["fold"]) == {1} and len(one) == 2 * 3 * 3


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--policies", "zeus,nope"], "unknown policy 'nope'"),
        (["--gpu", "p100"], "p100"),
        (["--noise", "0.5"], "--noise"),
        (["--noise", "trace"], "confidence columns"),
        (["--horizon", "never"], "--horizon"),
    ],
)
def test_arena_bad_input_one_line_exit_2(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    out = tmp_path / "nothing"
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100", "--seeds", "1-2", "--out", str(out)]
    if extra[0] == "--gpu":
        argv[argv.index("--gpu") + 1] = extra[1]
        extra = []
    assert main([*argv, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_arena_empty_split_exit_2(tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    train = pd.read_parquet(tiny / "train.parquet")
    keep = ~((train["dataset"] == "squad") & (train["batch_size"] == 32) & (train["run"] == 1))

    write_table(train[keep], tiny / "train.parquet", "train")
    out = tmp_path / "none"
    argv = [
        "arena",
        "--traces",
        str(tiny),
        "--gpu",
        "v100",
        "--workloads",
        "squad",
        "--seeds",
        "1",
        "--out",
        str(out),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "empty split" in err and len(err.splitlines()) == 1 and not out.exists()


def test_simulate_takes_horizon_and_noise(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "runs.parquet"
    base = ["simulate", "--traces", str(tiny), "--gpu", "v100", "--policies", "zeus-plus", "--seeds", "1-2"]
    assert main([*base, "--horizon", "5", "--noise", "0.02", "--out", str(out)]) == 0
    assert len(read_table(out, "runs")) > 0
    assert main([*base, "--noise", "0.3", "--out", str(tmp_path / "x.parquet")]) == 2
    assert "--noise" in capsys.readouterr().err
    assert not (tmp_path / "x.parquet").exists()


def test_trace_noise_level_from_confidence_columns() -> None:
    from zeus_bench.sim.noise import resolve_noise, trace_noise_level

    power = pd.DataFrame(
        {"time_per_epoch_s": [10.0, 20.0, 30.0], "time_per_epoch_ci_s": [0.392, 0.784, 1.176],
         "avg_power_w": [100.0, 100.0, 100.0], "avg_power_ci_w": [0.98, 0.98, 0.98]}
    )  # fmt: skip
    assert trace_noise_level(power) == pytest.approx(0.0392 / 1.959963984540054)
    assert resolve_noise("trace", [power]) == pytest.approx(0.02, rel=1e-3)
    assert trace_noise_level(pd.DataFrame({"time_per_epoch_s": [1.0]})) is None
    assert isinstance(TraceSet, type)


def test_a_split_job_recurs_as_often_as_the_whole_job() -> None:
    job = _unique_job()  # 4 batch sizes x 2 limits; 64 has one path and is left out of both halves
    whole = arena_mod.ArenaJob(split_job(job, "judge"), arena_mod.default_recurrences(job))
    assert len(whole.job.batch_sizes) == 3 and whole.recurrences == 16
    totals = arena_mod.run_arena([whole], ["pl-only"], Protocol((1, 2)))
    df, _ = job_table([whole], totals, Protocol((1, 2)))
    assert set(df["recurrences"]) == {16}


# --- the two folds ------------------------------------------------------------------------


def test_each_fold_judges_the_half_its_constants_were_not_chosen_on() -> None:
    from zeus_bench.studies.crossfit import FOLD_CONSTANTS, FOLDS, judged_half

    assert {f: judged_half(f) for f in FOLDS} == {1: "judge", 2: "tune"}
    assert all(tuned != judged for tuned, judged in FOLDS.values())
    with pytest.raises(ConfigError, match="unknown fold 3"):
        judged_half(3)
    p1, p2 = Protocol((1,)).for_fold(1), Protocol((1,)).for_fold(2)
    assert (p1.half, p1.constants, p1.policy("zeus-plus")) == ("judge", (), get_policy("zeus-plus"))
    tuned = p2.policy("zeus-plus")
    assert p2.half == "tune" and tuned is not get_policy("zeus-plus")
    assert {k: getattr(tuned, k) for k in FOLD_CONSTANTS[2]["zeus-plus"]} == FOLD_CONSTANTS[2]["zeus-plus"]
    assert p2.policy("zeus") is get_policy("zeus")  # no override: the registered class


def test_fold_constants_are_the_picks_of_the_committed_tuning_tables() -> None:
    """Fold 1 = the registered defaults = the tune half's pick; fold 2 = the judge half's pick.

    The unknown horizon is no pick in either fold: the anytime budget with no loan and no
    lookahead, a rule (the committed ``tuning-unknown-safety`` tables predate it).
    """
    from zeus_bench.optimizers.hill_climb import ANYTIME_LOAN, ANYTIME_LOOKAHEAD
    from zeus_bench.studies.crossfit import FOLD_CONSTANTS

    root = Path(__file__).resolve().parents[2] / "results" / "policy"
    for fold, suffix in ((1, ""), (2, "-fold2")):
        cls = Protocol((1,)).for_fold(fold).policy("zeus-plus")
        for name, keys in (
            ("known", ("margin", "up_first")),
            ("known-evidence", ("margin", "up_first", "epoch_evidence")),
        ):
            table = pd.read_csv(root / f"tuning-{name}{suffix}.csv")
            pick = table[table["chosen"]].iloc[0]
            for key in keys:
                assert getattr(cls, key) == pick[key], (fold, name, key)
        assert (cls.horizon, cls.safety, cls.loan, cls.lookahead) == (0, 0.02, None, None), fold
        climber = cls(PolicyContext(toy_job(), Cost(0.5), 2.0, 0, np.random.default_rng(1), None)).climber
        assert (climber.horizon, climber.loan, climber.lookahead) == (0, ANYTIME_LOAN, ANYTIME_LOOKAHEAD)
    assert (ANYTIME_LOAN, ANYTIME_LOOKAHEAD) == (0.0, 0.0)
    assert FOLD_CONSTANTS[1] == {}


def test_fold_two_replays_the_tune_half_with_its_overrides(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fold 2 samples only tune-half paths, and its zeus-plus is the one with fold 2's constants."""
    from zeus_bench.studies.crossfit import FOLD_CONSTANTS, variant

    job = _unique_job()
    tune_paths = {p for t in split_job(job, "tune").target_epochs for p in t if math.isfinite(p)}
    seen: set[float] = set()
    original = JobModel.__init__

    def spy(self, j, eta):  # type: ignore[no-untyped-def]
        original(self, j, eta)
        for paths in self.paths:
            seen.update(p for p in paths if math.isfinite(p))

    monkeypatch.setattr(JobModel, "__init__", spy)
    p2 = Protocol((1, 2, 3)).for_fold(2)
    aj = arena_mod.ArenaJob(split_job(job, p2.half), arena_mod.default_recurrences(job))
    totals = arena_mod.run_arena([aj], ["zeus-plus"], p2)
    assert seen == tune_paths
    df, _ = job_table([aj], totals, p2)
    assert set(df["fold"]) == {2} and set(df["half"]) == {"tune"}
    model = JobModel(aj.job, Cost(p2.eta))
    direct = arena_mod.seed_costs(
        model, variant("zeus-plus", FOLD_CONSTANTS[2]["zeus-plus"]), p2, aj.recurrences
    )
    got = totals[(job.gpu, job.workload.id, "zeus-plus")].recorded
    assert got.tolist() == direct[0].sum(axis=1).tolist()


def test_arena_set_overrides_a_constant_in_every_fold(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = Protocol((1,), constants=(("zeus-plus", (("horizon", 7),)),)).for_fold(2)
    assert p.policy("zeus-plus").horizon == 7 and p.policy("zeus-plus").margin == 0.4  # fold 2's margin kept
    out = tmp_path / "arena"
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100", "--policies", "zeus-plus", "--seeds", "1-2"]
    assert main([*argv, "--horizon", "unknown", "--set", "zeus-plus.horizon=3", "--out", str(out)]) == 0
    with_set = read_table(out / "arena_jobs.parquet", "arena_jobs")
    assert (
        main([*argv, "--horizon", "3", "--out", str(out), "--force"]) == 0
    )  # told 3 = assuming 3 when unknown
    told = read_table(out / "arena_jobs.parquet", "arena_jobs")
    pd.testing.assert_series_equal(with_set["regret_pct_mean"], told["regret_pct_mean"])
    for bad, message in (("zeus-plus.nope=1", "no constant 'nope'"), ("horizon=1", "POLICY.CONSTANT=VALUE")):
        assert main([*argv, "--set", bad, "--out", str(tmp_path / "x")]) == 2
        err = capsys.readouterr().err.strip()
        assert message in err and len(err.splitlines()) == 1


def test_tuning_grid_unknown_horizon(tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--grid picks the grid; its constants are the table's columns; a constant outside it: exit 2."""
    from zeus_bench.studies import tuning

    out = tmp_path / "t.csv"
    base = ["--traces", f"v100={tiny}", "--seeds", "1", "--horizon", "unknown", "--out", str(out)]
    assert tuning.main([*base, "--grid", "unknown-horizon", "--constants", "safety"]) == 0
    table = pd.read_csv(out)
    assert (
        table["safety"].tolist() == list(tuning.UNKNOWN_HORIZON_GRID["safety"]) and table["chosen"].sum() == 1
    )
    assert "horizon" not in table.columns  # only the constants asked for vary
    assert tuning.main([*base, "--grid", "unknown-horizon", "--constants", "margin"]) == 2
    assert "'margin' is not in the grid" in capsys.readouterr().err


def test_version_4_tables_read_with_the_anytime_floor_missing(tiny: Path, tmp_path: Path) -> None:
    """A version-4 table (before the anytime floor) still reads: the floor's columns come back missing."""
    out = tmp_path / "arena"
    argv = f"arena --traces v100={tiny} --gpu v100 --policies zeus,zeus-plus --seeds 1-2 --out {out}".split()
    assert main(argv) == 0
    floor_columns = {
        "arena_jobs": ["anytime_floor_regret_pct"],
        "arena_summary": [
            "anytime_floor_regret_pct", "anytime_floor_ratio_vs_zeus",
            "anytime_floor_ratio_vs_zeus_ci_lo", "anytime_floor_ratio_vs_zeus_ci_hi",
        ],
    }  # fmt: skip
    for kind, columns in floor_columns.items():
        path = out / f"{kind}.parquet"
        assert read_table(path, kind)[columns].notna().all().all()
        rows = write_as_version(path, 4, columns)
        df = read_table(path, kind)
        assert df[columns].isna().all().all() and len(df) == rows


def write_as_version(path: Path, version: int, dropped: list[str]) -> int:
    """Rewrite a table as an older schema version without ``dropped`` columns; its rows."""
    pa_table = pq.read_table(path)
    meta = json.loads(pa_table.schema.metadata[METADATA_KEY])
    meta["schema_version"] = version
    old = pa_table.drop_columns(dropped).replace_schema_metadata({METADATA_KEY: json.dumps(meta).encode()})
    pq.write_table(old, path)
    return int(old.num_rows)


def test_tables_before_the_paired_ratios_are_refused(
    tiny: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A version-3 table (ratios over expected costs, no per-seed costs): one line naming it, exit 2."""
    from zeus_bench.core.errors import TraceFormatError

    out = tmp_path / "arena"
    argv = f"arena --traces v100={tiny} --gpu v100 --policies zeus,zeus-plus --seeds 1-2".split()
    assert main([*argv, "--out", str(out)]) == 0
    for kind in ("arena_jobs", "arena_summary"):
        path = out / f"{kind}.parquet"
        assert len(read_table(path, kind))  # version 4 reads
        pa_table = pq.read_table(path)
        meta = json.loads(pa_table.schema.metadata[METADATA_KEY])
        meta["schema_version"] = 3
        pq.write_table(pa_table.replace_schema_metadata({METADATA_KEY: json.dumps(meta).encode()}), path)
        with pytest.raises(
            TraceFormatError, match=f"{kind}.parquet: {kind} schema_version 3 is no longer read"
        ):
            read_table(path, kind)
    study = f"study --arena {out} --traces v100={tiny} --seeds 1 --out-dir {tmp_path / 's'}".split()
    assert main(study) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "arena_jobs.parquet" in err and "schema_version 3" in err
    assert "cannot be recovered" in err
