"""Edges of the cost model's defaults and checks (core/cost.py after the redesign)."""

from __future__ import annotations

import numpy as np
import pytest

from zeus_bench.core.cost import DEFAULT_BETA, DEFAULT_ETA, Cost, check_beta, check_eta


def test_defaults_are_the_papers() -> None:
    assert DEFAULT_ETA == 0.5 and DEFAULT_BETA == 2.0


@pytest.mark.parametrize("eta", [0.0, 1.0, 0.5, "0.25"])
def test_eta_bounds_are_inclusive(eta: float) -> None:
    assert check_eta(eta) == float(eta) and isinstance(check_eta(eta), float)


@pytest.mark.parametrize("beta", [1e-300, 1.0, 2.0, "3"])
def test_any_positive_beta_is_allowed(beta: float) -> None:
    assert check_beta(beta) == float(beta) and isinstance(check_beta(beta), float)


@pytest.mark.parametrize("eta", [0.0, 0.3, 1.0])
def test_epoch_cost_is_the_cost_of_one_epoch(eta: float) -> None:
    tpe, power, maxp = np.array([12.0, 7.5]), np.array([150.0, 210.0]), np.array([250.0, 300.0])
    np.testing.assert_allclose(
        Cost(eta).epoch_cost(tpe, power, maxp), Cost(eta).zeus_cost(power * tpe, tpe, maxp), rtol=1e-15
    )
    assert Cost(eta).epoch_cost(2.0, 100.0, 400.0) == pytest.approx(eta * 200.0 + (1 - eta) * 800.0)
