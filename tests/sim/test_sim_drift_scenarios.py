"""Drift scenarios: the neutral gradual tilt of the whole convergence curve beside the optimum's step."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.helpers.sim_toy import toy_job
from zeus_bench.core.cost import Cost
from zeus_bench.core.errors import ConfigError
from zeus_bench.sim.scenarios import drift as drift_mod
from zeus_bench.sim.scenarios.drift import Drift, curve_tilt, oracle_cost_by_recurrence, scenario

# Every epoch costs 200 J (sim_toy): 32 is the optimum (3 epochs), 16 the runner-up (3.3), on the
# side away from larger batch sizes.
CURVE = {16: [3.3], 32: [3.0], 64: [4.0], 128: [4.5]}


def _final_factors(table: pd.DataFrame) -> dict[int, float]:
    last = table.sort_values("recurrence").groupby("batch_size").last()
    return {int(b): float(f) for b, f in last["epoch_factor"].items()}


def test_tilt_scales_every_batch_size_split_evenly_around_the_optimum() -> None:
    job = toy_job(CURVE, max_epochs=20)
    f = _final_factors(curve_tilt(job, Cost(0.5), at=10, factor=2.0, ramp=20))
    assert f == pytest.approx({16: 2.0, 32: 2**0.5, 64: 2**-0.5, 128: 0.5})  # clipped at x2 and /2
    # The optimum at the largest batch size: the tilt goes towards smaller ones.
    f = _final_factors(curve_tilt(toy_job({16: [5.0], 32: [4.0], 64: [2.0]}), Cost(0.5), 10, 2.0, 20))
    assert f == pytest.approx({16: 0.5, 32: 2**-0.5, 64: 2**0.5})


def test_the_step_moves_the_optimum_to_the_runner_up_and_the_tilt_by_the_curve() -> None:
    job = toy_job(CURVE, max_epochs=20)
    at, ramp, n = 10, 20, 40
    step = Drift(scenario(job, Cost(0.5), "step", at, 2.0, ramp), job)
    tilt = Drift(scenario(job, Cost(0.5), "tilt", at, 2.0, ramp), job)
    np.testing.assert_allclose(
        oracle_cost_by_recurrence(job, Cost(0.5), step, n)[[0, at - 1, n - 1]], [600, 660, 660]
    )
    cost = oracle_cost_by_recurrence(job, Cost(0.5), tilt, n)
    assert cost[0] == pytest.approx(600.0) and cost[-1] == pytest.approx(4.5 * 0.5 * 200)  # 128 wins
    steps = np.abs(np.diff(cost[at - 2 : at + ramp]))
    assert (steps > 0).sum() == ramp + 1 and steps.max() < 25.0  # gradual: a little every recurrence
    # The step's new optimum is the runner-up (16); the tilt's is not.
    assert step(n, 1) == 2.0 and step(n, 0) == 1.0
    assert tilt(at - 1, 3) == 1.0 and tilt(at + ramp, 3) == pytest.approx(0.5)


def test_unknown_scenario_is_refused() -> None:
    with pytest.raises(ConfigError, match="drift scenario must be one of step, morph, tilt"):
        scenario(toy_job(CURVE), Cost(0.5), "wave", 10, 2.0)


def test_command_writes_a_drift_table_and_refuses_bad_input(
    tiny_traces: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "tilt.csv"
    args = ["--traces", str(tiny_traces), "--gpu", "v100", "--scenario", "tilt", "--factor", "1.5"]
    assert drift_mod.main([*args, "--out", str(out)]) == 0
    table = drift_mod.read_drift(out)
    assert set(table["workload"]) == {"squad", "sentiment140", "cifar100"}
    assert len(table) == 2 * 7  # two points per batch size of the three workloads
    for bad, message in (
        (["--workloads", "imagenett"], "'imagenett' has no runs"),
        (["--factor", "-1"], "--factor must lie in"),
    ):
        target = tmp_path / "bad.csv"
        assert drift_mod.main([*args, *bad, "--out", str(target)]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and message in err[0]
        assert not target.exists()


@pytest.mark.parametrize("kind", ["step", "morph", "tilt"])
def test_a_drifts_table_is_its_calls(kind: str) -> None:
    # The table the study's walks and its drifted oracle read (drift_factors) holds the floats the
    # hook's calls give, ramps (interpolated factors) included; a plain callable is asked instead.
    from zeus_bench.sim.executor import SeedDrifts, drift_factors

    job = toy_job(CURVE, max_epochs=20)
    drift = Drift(scenario(job, Cost(0.5), kind, 10, 1.37, 20), job)
    n, n_bs = 45, len(job.batch_sizes)
    calls = np.array([[drift(r, b) for b in range(n_bs)] for r in range(1, n + 1)])
    assert np.array_equal(drift_factors(drift, n, n_bs), calls)
    assert len(np.unique(calls)) == 2 if kind == "step" else len(np.unique(calls)) > 3  # (ramps interpolate)
    plain = lambda r, b: drift(r, b)  # noqa: E731  (no table: asked once per recurrence and index)
    assert np.array_equal(drift_factors(plain, n, n_bs), calls)
    seeds = SeedDrifts.of([None, drift], [0, 1], n, n_bs)
    assert np.array_equal(seeds.factors[1, 1:], calls) and (seeds.factors[0] == 1.0).all()
