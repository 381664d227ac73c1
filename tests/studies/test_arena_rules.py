"""The arena's summary and findings on data that tell each rule from its slip (issue 36).

The confidence verdict at an interval that touches 0, the worst job of two with unequal regrets,
the rank within one fold (not over both folds' rows), the unsafe count at exactly the threshold,
the fold agreement's touching intervals and its split filter, and how ``--set`` and a fold's
constants combine. Totals are set by hand (as in ``test_arena_tables.py``).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.sim.replay import JobModel
from zeus_bench.studies import arena_stats as arena_mod
from zeus_bench.studies.arena_profile import fold_agreement
from zeus_bench.studies.arena_protocol import SAFE, Protocol, frozen_constants
from zeus_bench.studies.arena_stats import job_table, summary_table
from zeus_bench.studies.recurrences import references as job_refs


@pytest.mark.parametrize(
    ("lo", "hi", "verdict"),
    [
        (-2.0, -1.0, "better"),
        (1.0, 2.0, "worse"),
        (-1.0, 1.0, "tie"),
        (-1.0, 0.0, "tie"),  # an interval that reaches 0 is no evidence
        (0.0, 1.0, "tie"),
        (-1.0, -0.0, "tie"),
    ],
)
def test_the_verdict_needs_the_whole_interval_on_one_side_of_0(lo: float, hi: float, verdict: str) -> None:
    assert arena_mod._verdict(lo, hi) == verdict


def test_set_overrides_win_over_the_folds_and_keep_its_other_constants() -> None:
    mine = Protocol((1,), constants=frozen_constants({"zeus-plus": {"margin": 0.1}, "zeus": {"window": 5}}))
    fold2 = dict(mine.for_fold(2).constants)
    assert dict(fold2["zeus-plus"]) == {"margin": 0.1, "up_first": True, "epoch_evidence": True}
    assert dict(fold2["zeus"]) == {"window": 5}
    assert dict(dict(mine.for_fold(1).constants)["zeus-plus"]) == {"margin": 0.1}
    assert dict(dict(Protocol((1,)).for_fold(2).constants)["zeus-plus"])["margin"] == 0.4


def _two_jobs() -> list:  # type: ignore[type-arg]
    job = toy_job(targets={8: [np.nan], 16: [4.0], 32: [5.0], 64: [3.0]})
    other = dataclasses.replace(job, workload=dataclasses.replace(job.workload, id="toy2"))
    return [job, other]


def _tables(protocol: Protocol, gaps: dict[str, tuple[float, float]]) -> tuple[pd.DataFrame, dict]:  # type: ignore[type-arg]
    """job_table on two jobs: each policy's totals ``zeus x (1 + gap)`` per job, Zeus's spread over seeds."""
    jobs = _two_jobs()
    base = 16 * job_refs(JobModel(jobs[0], Cost(0.5))).baseline
    zeus = np.linspace(1.00, 1.04, len(protocol.seeds)) * base
    totals = {}
    for k, job in enumerate(jobs):
        for p, g in {"zeus": (0.0, 0.0), **gaps}.items():
            v = zeus * (1.0 + g[k])
            totals[(job.gpu, job.workload.id, p)] = (v, np.zeros_like(v))
    return job_table(jobs, totals, protocol)


def test_the_worst_job_is_the_one_of_highest_regret() -> None:
    # Policy a: 1 % below Zeus on the first job, 5 % above on the second: its worst is toy2.
    # Policy b: the other way round.
    df, parts = _tables(Protocol(tuple(range(1, 21))), {"a": (-0.01, 0.05), "b": (0.05, -0.01)})
    summary = summary_table(df, parts).set_index("policy")
    assert summary.loc["a", "worst_workload"] == "toy2" and summary.loc["b", "worst_workload"] == "toy"
    jobs = df.set_index(["policy", "workload"])["regret_pct_mean"]
    assert summary.loc["a", "worst_regret_pct_mean"] == pytest.approx(jobs[("a", "toy2")])
    assert jobs[("a", "toy2")] > jobs[("a", "toy")]


def test_the_rank_is_within_a_fold_and_the_unsafe_count_is_strictly_above_the_threshold() -> None:
    seeds = tuple(range(1, 21))
    one = _tables(Protocol(seeds).for_fold(1), {"a": (-0.01, -0.01), "b": (0.02, 0.02)})
    two = _tables(Protocol(seeds).for_fold(2), {"a": (0.03, 0.03), "b": (-0.02, -0.02)})
    df = pd.concat([one[0], two[0]], ignore_index=True)
    # Zeus's p95 on the first job exactly at the threshold: not over it.
    at = (df["policy"] == "zeus") & (df["workload"] == "toy") & (df["fold"] == 1)
    df.loc[at, "cost_ratio_vs_baseline_p95"] = SAFE
    df.loc[
        (df["policy"] == "zeus") & (df["workload"] == "toy2") & (df["fold"] == 1),
        "cost_ratio_vs_baseline_p95",
    ] = SAFE + 1e-9
    summary = summary_table(df, {**one[1], **two[1]}).set_index(["fold", "policy"])
    assert summary["rank"].to_dict() == {
        (1, "zeus"): 2, (1, "a"): 1, (1, "b"): 3,
        (2, "zeus"): 2, (2, "a"): 3, (2, "b"): 1,
    }  # fmt: skip
    assert summary.loc[(1, "zeus"), "jobs_p95_over_safe"] == 1


def _agreement_rows(rows: list[tuple[int, int, str, float, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"gpu": "g", "policy": p, "fold": f, "splits": s, "regret_ratio_vs_zeus_ci_lo": lo,
             "regret_ratio_vs_zeus_ci_hi": hi}
            for f, s, p, lo, hi in rows
        ]
    )  # fmt: skip


def test_fold_agreement_counts_touching_intervals_as_overlapping_and_reads_split_1_only() -> None:
    summary = _agreement_rows(
        [
            (1, 1, "touch", 0.8, 1.0), (2, 1, "touch", 1.0, 1.2),  # they share 1.0: not disjoint
            (1, 1, "apart", 0.8, 0.9), (2, 1, "apart", 0.91, 1.2),
            (1, 1, "below", 1.3, 1.4), (2, 1, "below", 1.0, 1.29),  # fold 2's interval under fold 1's
            (1, 1, "zeus", 1.0, 1.0), (2, 1, "zeus", 1.0, 1.0),
            (1, 1, "zeus-plus", 0.5, 0.6), (2, 1, "zeus-plus", 0.9, 1.0),  # tuned by fold: not a pair
            # Split 2's rows disagree everywhere; they are not split 1's folds.
            (1, 2, "touch", 5.0, 6.0), (2, 2, "touch", 0.0, 0.1), (1, 2, "other", 5.0, 6.0), (2, 2, "other", 0.0, 0.1),
        ]
    )  # fmt: skip
    agreement = fold_agreement(summary)
    assert sorted(agreement.pairs) == [("g", "apart"), ("g", "below"), ("g", "touch")]
    assert sorted(agreement.disjoint) == [("g", "apart"), ("g", "below")]
    assert agreement.share == pytest.approx(2 / 3)
