"""Several numbers of recurrences in one arena run: a blind policy replayed once, the longest, its shorter draws its first recurrences'.

A policy that reads no horizon replays its first N recurrences as a longer replay does (the
executor's rows of a recurrence do not depend on later ones): checked here for every built-in on
the published traces, and for the two readers when they are told nothing. ``parts_draws`` with
parts of several lengths equals each length's own walk; a reader declared blind gets the longer
run's draws, wrong ones (the declaration is what keeps them right). ``zeus-bench arena
--recurrences 30,12 --out DIR/n{recurrences}`` writes each length's tables as its own run would,
byte for byte.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.sim_toy import toy_job
from tests.sim.test_sim_blocks import NOISY
from tests.studies.test_arena import two_gpu_traces
from tests.studies.test_arena_horizons import builtins, refused_one_line, tables_differ
from zeus_bench.cli.main import main
from zeus_bench.core.cost import Cost
from zeus_bench.sim.policies import get_policy
from zeus_bench.sim.policies.zeus_plus import ZeusPlus
from zeus_bench.sim.replay import JobModel, replay_many
from zeus_bench.sim.rules import KNOWN, UNKNOWN
from zeus_bench.studies.arena_protocol import Draws, Protocol, parts_draws, walk_draws
from zeus_bench.studies.crossfit import split_job
from zeus_bench.traces.jobs import JobTrace


def test_a_blind_policys_first_recurrences_are_a_shorter_replays(zeus_traces: Path) -> None:
    from zeus_bench.traces.jobs import TraceSet

    ts = TraceSet(zeus_traces)
    differ = []
    for gpu, workload in (("v100", "cifar100"), ("a40", ts.workload_ids("a40")[1])):
        model = JobModel(split_job(ts.job(gpu, workload), "judge"), Cost(0.5))
        for name, cls in builtins().items():
            for horizon in (KNOWN, UNKNOWN) if not cls.reads_horizon() else (UNKNOWN,):
                long = replay_many(model, cls, list(range(1, 9)), 2.0, 150, horizon=horizon)
                for n in (12, 70):
                    short = replay_many(model, cls, list(range(1, 9)), 2.0, n, horizon=horizon)
                    keep = long.columns["recurrence"] <= n
                    same = np.array_equal(long.seed[keep], short.seed) and all(
                        long.columns[c][keep].tobytes() == v.tobytes() for c, v in short.columns.items()
                    )
                    if not same:
                        differ.append(f"{gpu} {workload} {name} {horizon} {n}")
    assert differ == []


def _draws_equal(a: list[Draws], b: list[Draws]) -> bool:
    return all(
        all(
            np.array_equal(getattr(x, f), getattr(y, f))
            for f in ("recorded", "failed", "replicates", "oracle")
        )
        for x, y in zip(a, b, strict=True)
    )


def _parts(job: JobTrace, told: tuple[tuple[object, int], ...]):  # type: ignore[no-untyped-def]
    classes = [get_policy(p) for p in ("zeus", "zeus-plus", "bo-ei", "pl-only", "baseline", "max-batch")]
    base = Protocol(tuple(range(1, 6)), replicates=2, replicate_seeds=2)
    parts, lengths = [], []
    for h, n in told:
        for split, fold in ((1, 1), (2, 1)):
            protocol = replace(base.for_fold(fold), split=split, horizon=h, recurrences=n)
            parts.append((split_job(job, protocol.half, split), classes, protocol))
            lengths.append(n)
    return parts, lengths


@pytest.mark.parametrize(
    "told",
    [
        ((KNOWN, 40), (KNOWN, 12), (UNKNOWN, 40), (UNKNOWN, 12)),
        ((UNKNOWN, 9), (KNOWN, 30), ("2x", 30), (KNOWN, 17)),
    ],
)
def test_parts_of_several_lengths_are_each_lengths_own_walk(told: tuple[tuple[object, int], ...]) -> None:
    parts, lengths = _parts(toy_job(NOISY), told)
    together = parts_draws(parts, lengths)
    for h, n in told:
        idx = [i for i, (_, _, p) in enumerate(parts) if p.horizon == h and p.recurrences == n]
        alone = walk_draws([parts[i] for i in idx], n)
        for i, own in zip(idx, alone, strict=True):
            assert _draws_equal(together[i], own), (h, n, i)


def test_a_reader_declared_blind_gets_the_longer_runs_draws(monkeypatch: pytest.MonkeyPatch) -> None:
    parts, lengths = _parts(toy_job(NOISY), ((KNOWN, 40), (KNOWN, 8)))
    short = [i for i, n in enumerate(lengths) if n == 8]
    right = walk_draws([parts[i] for i in short], 8)
    monkeypatch.setattr(ZeusPlus, "reads_horizon", classmethod(lambda cls: False))
    wrong = parts_draws(parts, lengths)
    k = 1  # zeus-plus, told 40 in the longer run: it probes on a budget it does not have in 8
    assert any(
        not np.array_equal(wrong[i][k].recorded, own[k].recorded) for i, own in zip(short, right, strict=True)
    )
    assert all(
        np.array_equal(wrong[i][0].recorded, own[0].recorded) for i, own in zip(short, right, strict=True)
    )


def test_lengths_and_parts_must_match() -> None:
    parts, lengths = _parts(toy_job(NOISY), ((KNOWN, 20),))
    with pytest.raises(ValueError, match="numbers of recurrences for"):
        parts_draws(parts, lengths[:1])


# --- the command ---------------------------------------------------------------------------


@pytest.fixture()
def tiny(tmp_path: Path) -> Path:
    return two_gpu_traces(tmp_path / "traces")


def test_arena_several_lengths_in_one_run_write_each_runs_tables(
    tiny: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")
    argv = ["arena", "--traces", str(tiny), "--gpu", "v100,a40", "--policies", "zeus,zeus-plus,bo-ei,pl-only"]
    argv += ["--seeds", "1-3", "--fold", "1"]
    both = str(tmp_path / "both" / "{horizon}-n{recurrences}")
    assert main([*argv, "--horizon", "known,unknown", "--recurrences", "30,12", "--out", both]) == 0
    for h in ("known", "unknown"):
        for n in ("30", "12"):
            alone = tmp_path / "alone" / f"{h}-n{n}"
            assert main([*argv, "--horizon", h, "--recurrences", n, "--out", str(alone)]) == 0
            assert tables_differ(tmp_path / "both" / f"{h}-n{n}", alone) == [], (h, n)


@pytest.mark.parametrize(
    ("lengths", "out", "message"),
    [
        ("30,12", "plain", "with several numbers of recurrences (30, 12) it must hold {recurrences}"),
        ("30,30", "x-{recurrences}", "a number given twice in '30,30'"),
        ("30,zero", "x-{recurrences}", "not an integer: 'zero'"),
        ("30,0", "x-{recurrences}", "--recurrences must be in [1, "),
        (",", "x-{recurrences}", "no number in ','"),
    ],
)
def test_arena_bad_lengths_one_line_exit_2(  # type: ignore[no-untyped-def]
    tiny: Path, tmp_path: Path, capsys, lengths: str, out: str, message: str
) -> None:
    refused_one_line(tiny, tmp_path, capsys, ["--recurrences", lengths], out, message)
