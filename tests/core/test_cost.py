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


def test_the_cost_object_owns_its_defaults_and_maxpower() -> None:
    from zeus_bench.core.cost import DEFAULT_COST, DEFAULT_ETA, max_power_w

    assert Cost() == DEFAULT_COST == Cost(DEFAULT_ETA, 0.0) and DEFAULT_COST.eta == 0.5
    assert not DEFAULT_COST.weighs_co2 and Cost(0.5, 1.0).weighs_co2
    assert hash(Cost(0.5)) == hash(Cost(0.5))  # a cache key (the oracle's)
    # MAXPOWER: the largest limit of one GPU times the GPUs, per entry for an array.
    assert max_power_w(250.0, 4) == 1000.0
    np.testing.assert_array_equal(max_power_w(np.array([150.0, 250.0]), 2), [300.0, 500.0])


@pytest.mark.parametrize("price", [-1.0, float("inf"), float("nan")])
def test_carbon_price_must_be_finite_and_nonnegative(price: float) -> None:
    with pytest.raises(ConfigError, match="carbon price"):
        Cost(0.5, price)


def test_emissions_term_is_added_only_when_priced() -> None:
    # 3.6e6 J (1 kWh) at 400 g/kWh: 400 g, priced at 2 J/g: 800 J on top of 0.5*3.6e6 + 0.5*250*10.
    from zeus_bench.core.cost import emissions_g

    co2 = emissions_g(3.6e6, 400.0)
    assert co2 == pytest.approx(400.0)
    assert Cost(0.5).zeus_cost(3.6e6, 10.0, 250.0, co2) == 0.5 * 3.6e6 + 0.5 * 250.0 * 10.0
    assert Cost(0.5, 2.0).zeus_cost(3.6e6, 10.0, 250.0, co2) == pytest.approx(1.8e6 + 1250.0 + 800.0)
    assert Cost(0.5, 2.0).co2_cost(np.array([1.0, 3.0])).tolist() == [2.0, 6.0]
