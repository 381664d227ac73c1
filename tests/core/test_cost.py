"""The cost function: values, vectorisation, and argument checks."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.cost_terms import KwhTerm
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


def test_the_cost_object_owns_its_defaults_and_maxpower() -> None:
    from zeus_bench.core.cost import DEFAULT_COST, DEFAULT_ETA, max_power_w

    assert Cost() == DEFAULT_COST == Cost(DEFAULT_ETA, ()) and DEFAULT_COST.eta == 0.5
    assert DEFAULT_COST.terms == () and DEFAULT_COST.priced == ()
    assert hash(Cost(0.5)) == hash(Cost(0.5))  # a cache key (the oracle's)
    # MAXPOWER: the largest limit of one GPU times the GPUs, per entry for an array.
    assert max_power_w(250.0, 4) == 1000.0
    np.testing.assert_array_equal(max_power_w(np.array([150.0, 250.0]), 2), [300.0, 500.0])


@pytest.mark.parametrize("price", [-1.0, float("inf"), float("nan")])
def test_a_term_price_must_be_finite_and_nonnegative(price: float) -> None:
    with pytest.raises(ConfigError, match="the price of kwh must be a finite number >= 0"):
        Cost(0.5, (KwhTerm(price),))


def test_a_term_is_added_only_when_priced_and_placed() -> None:
    from zeus_bench.core.cost import CostTerm

    assert isinstance(KwhTerm(1.0), CostTerm)
    energy, time, when = np.array([3.6e6, 7.2e6]), np.array([10.0, 20.0]), np.zeros(2)
    base = [0.5 * 3.6e6 + 0.5 * 250.0 * 10.0, 0.5 * 7.2e6 + 0.5 * 250.0 * 20.0]
    assert Cost(0.5, (KwhTerm(0.0),)).zeus_cost(energy, time, 250.0, when).tolist() == base  # unpriced
    priced = Cost(0.5, (KwhTerm(800.0),))
    assert priced.priced == priced.terms
    assert priced.zeus_cost(energy, time, 250.0).tolist() == base  # no place: the energy-time cost
    assert priced.zeus_cost(energy, time, 250.0, when).tolist() == [base[0] + 800.0, base[1] + 1600.0]
    assert priced.term_cost(energy, time, when).tolist() == [800.0, 1600.0]
    assert Cost(0.5).term_cost(energy, time, when).tolist() == [0.0, 0.0]
    with pytest.raises(ConfigError, match="name a column twice"):
        Cost(0.5, (KwhTerm(1.0), KwhTerm(2.0)))
