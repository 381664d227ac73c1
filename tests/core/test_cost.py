"""The cost function: values, vectorisation, and argument checks."""

from __future__ import annotations

import numpy as np
import pytest

from zeus_bench.core.cost import Cost, check_beta, check_eta
from zeus_bench.core.errors import ConfigError


def test_cost_values() -> None:
    # 1000 J over 10 s with MAXPOWER 250 W: 0.5*1000 + 0.5*250*10 = 1750 J
    assert Cost(0.5).zeus_cost(1000.0, 10.0, 250.0) == pytest.approx(1750.0)
    assert Cost(1.0).zeus_cost(1000.0, 10.0, 250.0) == pytest.approx(1000.0)
    assert Cost(0.0).zeus_cost(1000.0, 10.0, 250.0) == pytest.approx(2500.0)


def test_cost_vectorises() -> None:
    e = np.array([100.0, 200.0])
    t = np.array([1.0, 2.0])
    np.testing.assert_allclose(
        Cost(0.25).zeus_cost(e, t, 300.0), [0.25 * 100 + 0.75 * 300, 0.25 * 200 + 0.75 * 600]
    )


def test_epoch_cost_uses_average_power_not_limit() -> None:
    # 12 s at 150 W average under a 250 W max: (0.5*150 + 0.5*250) * 12
    assert Cost(0.5).epoch_cost(12.0, 150.0, 250.0) == pytest.approx(2400.0)


@pytest.mark.parametrize("eta", [-0.1, 1.5, float("nan")])
def test_eta_outside_range(eta: float) -> None:
    with pytest.raises(ConfigError, match="eta must lie in"):
        check_eta(eta)


@pytest.mark.parametrize("beta", [0.0, -2.0, float("nan")])
def test_beta_not_positive(beta: float) -> None:
    with pytest.raises(ConfigError, match="beta must be > 0"):
        check_beta(beta)


def test_beta_infinite_allowed() -> None:
    assert check_beta(float("inf")) == float("inf")
