"""Several horizons in one arena run: a policy that reads no horizon is replayed once, its draws the same.

``Policy.reads_horizon`` says which built-ins read the number of recurrences they are told: each
that says False replays bit for bit the same under every horizon (checked here on the published
traces and toy jobs), the two that say True do not. ``parts_draws`` with parts told several
horizons equals each horizon's own walk; a reader declared blind gets wrong draws (the declaration
is what keeps them right). ``zeus-bench arena --horizon known,unknown --out DIR/{horizon}`` writes
each horizon's tables as its own run would, byte for byte.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from tests.sim.test_sim_blocks import NOISY
from tests.studies.test_arena import two_gpu_traces
from zeus_bench.cli.main import main
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import POLICIES, get_policy
from zeus_bench.sim.policies.base import Policy, defines_methods
from zeus_bench.sim.policies.zeus_plus import ZeusPlus
from zeus_bench.sim.replay import JobModel, replay_many
from zeus_bench.sim.rules import KNOWN, UNKNOWN
from zeus_bench.studies.arena_protocol import Draws, Protocol, parts_draws, walk_draws
from zeus_bench.studies.crossfit import split_job, variant
from zeus_bench.traces.jobs import JobTrace

READERS = {"zeus-plus", "sw-ts"}
"""The built-ins that read the horizon they are told."""


def builtins() -> dict[str, type[Policy]]:
    """The package's registered policies (other tests register their own in the same registry)."""
    return {name: cls for name, cls in POLICIES.items() if cls.__module__.startswith("zeus_bench.")}


def test_only_zeus_plus_and_sw_ts_read_the_horizon() -> None:
    assert len(builtins()) >= 14
    assert {name for name, cls in builtins().items() if cls.reads_horizon()} == READERS
    # constants only: as the policy; the anytime budget decides zeus-plus's; methods of one's own: reads
    assert variant("zeus-plus-safe", {"anytime": False}).reads_horizon()
    assert not variant("zeus-plus", {"anytime": True}).reads_horizon()
    assert not variant("zeus-plus-safe", {"margin": 0.3}).reads_horizon()

    class Mine(get_policy("zeus")):  # type: ignore[misc, valid-type]
        def predict(self):  # type: ignore[no-untyped-def]
            return super().predict()

    class Constant(get_policy("ucb1")):  # type: ignore[misc, valid-type]
        name = "mine"

    assert Mine.reads_horizon() and not Constant.reads_horizon()
    assert defines_methods(Mine, get_policy("zeus")) and not defines_methods(Constant, get_policy("ucb1"))
    assert Policy.reads_horizon()  # a user's policy: read unless it says otherwise


def _same(a, b) -> bool:  # type: ignore[no-untyped-def]
    return np.array_equal(a.seed, b.seed) and all(
        a.columns[c].dtype == v.dtype and a.columns[c].tobytes() == v.tobytes() for c, v in b.columns.items()
    )


def _differ_by_horizon(job: JobTrace, n: int, horizons: tuple[object, ...]) -> set[str]:
    """The registered policies whose rows differ between the first horizon and any other."""
    model = JobModel(job, Cost(0.5))
    seeds = list(range(1, 7))
    out = set()
    for name, cls in builtins().items():
        first = replay_many(model, cls, seeds, 2.0, n, horizon=horizons[0])
        if any(not _same(first, replay_many(model, cls, seeds, 2.0, n, horizon=h)) for h in horizons[1:]):
            out.add(name)
    return out


def test_published_traces_blind_policies_replay_the_same_under_every_horizon(zeus_traces: Path) -> None:
    from zeus_bench.sim.replay import default_recurrences
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    differ: set[str] = set()
    for gpu in ("v100", "a40"):
        for workload in ts.workload_ids(gpu)[:3]:
            job = split_job(ts.job(gpu, workload), "judge")
            differ |= _differ_by_horizon(job, default_recurrences(job), (KNOWN, UNKNOWN, "0.5x", 17))
    # every policy that says it is blind is; the readers do differ somewhere (the check can fail)
    assert differ == READERS


def test_toy_job_blind_policies_replay_the_same() -> None:
    differ = _differ_by_horizon(toy_job(NOISY), 60, (KNOWN, UNKNOWN, "2x"))
    assert differ <= READERS


def _draws_equal(a: list[Draws], b: list[Draws]) -> bool:
    return all(
        all(
            np.array_equal(getattr(x, f), getattr(y, f))
            for f in ("recorded", "failed", "replicates", "oracle")
        )
        for x, y in zip(a, b, strict=True)
    )


def _parts(job: JobTrace, horizons: tuple[object, ...]):  # type: ignore[no-untyped-def]
    classes = [get_policy(p) for p in ("zeus", "zeus-plus", "sw-ts", "bo-ei", "baseline", "max-batch")]
    base = Protocol(tuple(range(1, 6)), replicates=2, replicate_seeds=2)
    parts = []
    for h in horizons:
        for split, fold in ((1, 1), (2, 1), (1, 2)):
            protocol = replace(base.for_fold(fold), split=split, horizon=h)
            parts.append((split_job(job, protocol.half, split), classes, protocol))
    return parts


@pytest.mark.parametrize("horizons", [(KNOWN, UNKNOWN), ("0.5x", "2x", KNOWN)])
def test_parts_under_several_horizons_in_one_walk_get_each_horizons_own_draws(
    horizons: tuple[object, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every horizon's parts in one walk (the readers told each horizon, a face per horizon told):
    # each part's draws those of its horizon's parts walked alone.
    import zeus_bench.studies.arena_protocol as ap

    job = toy_job(NOISY)
    parts = _parts(job, horizons)
    walked: list[list[object]] = []
    real = ap.walk_charged
    monkeypatch.setattr(
        ap, "walk_charged", lambda ps, n: walked.append([p.horizon for _, _, p in ps]) or real(ps, n)
    )
    together = parts_draws(parts, 40)
    assert walked == [[h for h in horizons for _ in range(3)]]  # one walk, every part
    monkeypatch.setattr(ap, "walk_charged", real)
    for h in horizons:
        idx = [i for i, (_, _, p) in enumerate(parts) if p.horizon == h]
        alone = walk_draws([parts[i] for i in idx], 40)
        for i, own in zip(idx, alone, strict=True):
            assert _draws_equal(together[i], own), (h, i)


def test_a_reader_declared_blind_gets_the_first_horizons_draws(
    zeus_traces: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from zeus_bench.traces.jobs import TraceSet

    job = TraceSet(zeus_traces).job("v100", "cifar100")
    parts = _parts(job, (KNOWN, 3))  # told 3 recurrences of 60: a budget for few probes
    unknown = [i for i, (_, _, p) in enumerate(parts) if p.horizon == 3]
    right = walk_draws([parts[i] for i in unknown], 60)
    monkeypatch.setattr(ZeusPlus, "reads_horizon", classmethod(lambda cls: False))
    wrong = parts_draws(parts, 60)
    k = 1  # zeus-plus
    assert any(
        not np.array_equal(wrong[i][k].recorded, own[k].recorded)
        for i, own in zip(unknown, right, strict=True)
    )
    assert all(
        np.array_equal(wrong[i][0].recorded, own[0].recorded) for i, own in zip(unknown, right, strict=True)
    )


@pytest.mark.parametrize(("horizon", "walks"), [(UNKNOWN, [40]), (KNOWN, [40, 25, 10]), (30, [40])])
def test_parts_told_the_same_at_shorter_lengths_reuse_the_longest_walk(
    horizon: object, walks: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Told nothing (or the same number) at 40, 25 and 10 recurrences: every class's draws are the
    # longest replay's first recurrences; told the length itself (known), the readers walk again.
    import zeus_bench.studies.arena_protocol as ap

    job = toy_job(NOISY)
    parts = [p for p in _parts(job, (horizon,)) if p[2].split == 1][:1] * 3
    lengths = [40, 25, 10]
    walked: list[int] = []
    real = ap.walk_charged
    monkeypatch.setattr(ap, "walk_charged", lambda ps, n: walked.append(n) or real(ps, n))
    together = parts_draws(parts, lengths)
    assert walked == walks
    for part, n, got in zip(parts, lengths, together, strict=True):
        assert _draws_equal(got, walk_draws([part], n)[0]), n


def test_a_part_of_no_replicate_trace_takes_the_recorded_draws_of_one_with_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A brief part (the recorded paths alone, another horizon: zeus-bench arena --brief-horizon)
    # after a part with replicate traces on the same split and fold: only its readers walk, every
    # class's draws those of its own walk (no replicates). A part with other replicates walks whole.
    import zeus_bench.studies.arena_protocol as ap

    job = toy_job(NOISY)
    full = _parts(job, (KNOWN,))[0]  # split 1, fold 1, 2 replicate traces on 2 seeds
    assert full[2].replicates == 2 and full[2].path_draw == "pick"
    brief = (full[0], full[1], replace(full[2], horizon="0.5x", replicates=0, replicate_seeds=1))
    other = (full[0], full[1], replace(full[2], horizon="2x", replicates=1, path_draw="t"))
    walked: list[list[tuple[object, tuple[str, ...]]]] = []
    real = ap.walk_charged

    def spy(ps, n):  # type: ignore[no-untyped-def]
        walked.append([(p.horizon, tuple(c.name for c in cs)) for _, cs, p in ps])
        return real(ps, n)

    monkeypatch.setattr(ap, "walk_charged", spy)
    together = parts_draws([full, brief, other], 40)
    names = tuple(c.name for c in full[1])
    assert walked == [[(KNOWN, names), ("0.5x", ("zeus-plus", "sw-ts")), ("2x", names)]]
    monkeypatch.setattr(ap, "walk_charged", real)
    for part, got in zip((full, brief, other), together, strict=True):
        assert _draws_equal(got, walk_draws([part], 40)[0]), part[2].horizon
    assert together[1][0].replicates.shape == (0, 1) and together[2][0].replicates.shape == (1, 2)


def test_parts_of_other_rules_are_refused() -> None:
    job = toy_job(NOISY)
    parts = _parts(job, (KNOWN, UNKNOWN))
    parts[-1] = (parts[-1][0], parts[-1][1], replace(parts[-1][2], beta=3.0))
    with pytest.raises(ValueError, match="share eta, beta and noise"):
        parts_draws(parts, 40)


def test_a_twin_needs_the_same_job_contents() -> None:
    job = toy_job(NOISY)
    a = split_job(job, "judge")
    b = split_job(job, "judge")
    assert a is not b and a.same_as(b)
    other = replace(b, target_epochs=tuple(t * 1.01 for t in b.target_epochs))
    assert not a.same_as(other)


# --- the command ---------------------------------------------------------------------------


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    return two_gpu_traces(tmp_path / "traces")


def test_arena_two_horizons_in_one_run_writes_each_runs_tables(
    tiny: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100,a40", "--policies", "zeus,zeus-plus,sw-ts,ucb1"]
    argv += ["--seeds", "1-4", "--fold", "both", "--splits", "2", "--replicates", "2"]
    assert main([*argv, "--horizon", "known,unknown", "--out", str(tmp_path / "both" / "{horizon}")]) == 0
    for h in ("known", "unknown"):
        assert main([*argv, "--horizon", h, "--out", str(tmp_path / "alone" / h)]) == 0
        assert tables_differ(tmp_path / "both" / h, tmp_path / "alone" / h) == [], h


def test_arena_brief_horizons_write_the_tables_of_their_own_fold_1_run(
    tiny: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    # --brief-horizon 0.5x beside a full run (both folds, two splits, replicate traces): the full
    # horizons' tables as without it, the brief one's as `--horizon 0.5x --fold 1` alone, byte for byte.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100,a40", "--policies", "zeus,zeus-plus,sw-ts,ucb1"]
    argv += ["--seeds", "1-4"]
    full = ["--fold", "both", "--splits", "2", "--replicates", "2", "--path-draw", "t", "--horizon", "known"]
    assert main([*argv, *full, "--brief-horizon", "0.5x", "--out", str(tmp_path / "with" / "{horizon}")]) == 0
    assert main([*argv, *full, "--out", str(tmp_path / "alone" / "known")]) == 0
    assert main([*argv, "--horizon", "0.5x", "--fold", "1", "--out", str(tmp_path / "alone" / "0.5x")]) == 0
    for h in ("known", "0.5x"):
        assert tables_differ(tmp_path / "with" / h, tmp_path / "alone" / h) == [], h
    # (the check can fail: the brief table is not the full protocol's)
    assert main([*argv, *full[:-1], "0.5x", "--out", str(tmp_path / "full" / "0.5x")]) == 0
    assert tables_differ(tmp_path / "with" / "0.5x", tmp_path / "full" / "0.5x") != []


def tables_differ(a: Path, b: Path) -> list[str]:
    """The arena tables whose files in folders ``a`` and ``b`` differ in a byte."""
    tables = ("arena_jobs", "arena_summary", "arena_profile")
    return [t for t in tables if (a / f"{t}.parquet").read_bytes() != (b / f"{t}.parquet").read_bytes()]


@pytest.mark.parametrize(
    ("horizon", "out", "message"),
    [
        ("known,unknown", "plain", "with several horizons (known, unknown) it must hold {horizon}"),
        ("known,known", "x-{horizon}", "--horizon known,known: a horizon given twice"),
        ("known,sometimes", "x-{horizon}", "sometimes"),
        (",", "x-{horizon}", "--horizon: no horizon in ','"),
    ],
)
def test_arena_bad_horizons_one_line_exit_2(  # type: ignore[no-untyped-def]
    tiny: Path, tmp_path: Path, capsys, horizon: str, out: str, message: str
) -> None:
    refused_one_line(tiny, tmp_path, capsys, ["--horizon", horizon], out, message)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            ["--horizon", "known,unknown", "--brief-horizon", "2x,unknown"],
            "--brief-horizon 2x,unknown: unknown also in",
        ),
        (["--brief-horizon", "sometimes"], "--brief-horizon must be known, unknown, a positive integer"),
        (["--brief-horizon", "0x"], "--brief-horizon <f>x needs a positive factor"),
        (["--brief-horizon", "2x,2x"], "--brief-horizon 2x,2x: a horizon given twice"),
    ],
)
def test_arena_bad_brief_horizons_one_line_exit_2(  # type: ignore[no-untyped-def]
    tiny: Path, tmp_path: Path, capsys, options: list[str], message: str
) -> None:
    refused_one_line(tiny, tmp_path, capsys, options, "x-{horizon}", message)
    refused_one_line(tiny, tmp_path, capsys, ["--brief-horizon", "2x"], "plain", "it must hold {horizon}")


def refused_one_line(  # type: ignore[no-untyped-def]
    traces: Path, tmp_path: Path, capsys, options: list[str], out: str, message: str
) -> None:
    """``zeus-bench arena OPTIONS --out tmp_path/out``: exit 2, one line holding ``message``, no folder made."""
    argv = ["arena", "--traces", str(traces), "--gpu", "v100", "--policies", "zeus", "--seeds", "1-2"]
    assert main([*argv, *options, "--out", str(tmp_path / out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and message in err, err
    assert not any(tmp_path.glob("x-*")) and not (tmp_path / "plain").exists()


def test_a_constant_read_under_one_of_the_horizons_is_accepted(tiny: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100", "--policies", "zeus-plus", "--seeds", "1-2"]
    argv += ["--set", "zeus-plus.horizon=30"]
    assert main([*argv, "--horizon", "known", "--out", str(tmp_path / "k")]) == 2
    assert "does not read horizon under --horizon known" in capsys.readouterr().err
    assert main([*argv, "--horizon", "known,unknown", "--out", str(tmp_path / "{horizon}")]) == 0
    assert (tmp_path / "known" / "arena_jobs.parquet").is_file()
    assert (tmp_path / "unknown" / "arena_jobs.parquet").is_file()
