"""The registry of cost terms: a term plugs in through one module, and the carbon term is that shape.

A second term, defined here (a price of electricity per kWh, no place in time), is offered
through :func:`zeus_bench.sim.scenarios.terms.register_term` alone: ``zeus-bench simulate`` takes
its flag, the runs table its column, the replay its price, with no edit anywhere else.
"""

from __future__ import annotations

import argparse
import ast
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from tests.helpers.cost_terms import KwhTerm
from zeus_bench.cli.main import main
from zeus_bench.core.cost import CostTerm
from zeus_bench.core.entry import float_arg
from zeus_bench.sim.scenarios import terms
from zeus_bench.store import Column, get_schema, read_metadata, read_table, register_schema

PACKAGE = Path(__file__).resolve().parents[3] / "zeus_bench"


def _kwh_module() -> types.ModuleType:
    """A term module as :class:`~zeus_bench.sim.scenarios.terms.TermModule` asks, written in a test."""
    module = types.ModuleType("kwh_term")

    def add_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("--kwh-price", type=float_arg("--kwh-price", minimum=0.0), default=None)

    def from_args(args: argparse.Namespace) -> CostTerm | None:
        return None if args.kwh_price is None else KwhTerm(args.kwh_price)

    def provenance(term: CostTerm, period_s: float | None) -> dict[str, Any]:
        return {"price_j_per_kwh": term.price}

    module.NAME = "kwh"  # type: ignore[attr-defined]
    module.COLUMN = Column("kwh", "float", KwhTerm.description, "kWh", "0.2", nullable=True, required=False)  # type: ignore[attr-defined]
    module.add_args = add_args  # type: ignore[attr-defined]
    module.from_args = from_args  # type: ignore[attr-defined]
    module.provenance = provenance  # type: ignore[attr-defined]
    return module


@pytest.fixture
def kwh_term(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    """The kWh term registered for one test (the registry and the runs schema restored after)."""
    runs = get_schema("runs")
    monkeypatch.setattr(terms, "TERM_MODULES", list(terms.TERM_MODULES))
    module = _kwh_module()
    terms.register_term(module)
    try:
        yield module
    finally:
        register_schema(runs)


def test_a_second_term_plugs_in_through_the_registry(
    kwh_term: types.ModuleType, tiny_traces: Path, tmp_path: Path
) -> None:
    assert get_schema("runs").names[-2:] == ["co2_g", "kwh"]
    base = ["simulate", "--traces", str(tiny_traces), "--gpu", "v100", "--policies", "zeus,baseline"]
    base += ["--seeds", "1-2", "--recurrences", "6"]
    plain, recorded, paid = (tmp_path / f"{n}.parquet" for n in ("plain", "recorded", "paid"))
    assert main([*base, "--out", str(plain)]) == 0
    assert main([*base, "--kwh-price", "0", "--out", str(recorded)]) == 0
    assert main([*base, "--kwh-price", "3.6e6", "--out", str(paid)]) == 0  # a joule of cost per joule
    a, b, c = (read_table(p, "runs") for p in (plain, recorded, paid))
    assert a["kwh"].isna().all()  # the writer gives every table the registered columns
    # Recorded, not priced: the replay is the one before, value for value, plus the column.
    pd.testing.assert_frame_equal(a.drop(columns="kwh"), b.drop(columns="kwh"))
    ran = b[b["ran"]]
    assert ran["kwh"].to_numpy() == pytest.approx(ran["energy_j"].to_numpy() / 3.6e6, rel=1e-15)
    # Priced at 3.6e6 J per kWh, the term adds each try's energy to its cost once more.
    ran = c[c["ran"]]
    assert (ran["kwh"] > 0).all()
    by_hand = 0.5 * ran["energy_j"] + 0.5 * ran["max_power_w"] * ran["time_s"] + ran["energy_j"]
    assert ran["cost"].to_numpy() == pytest.approx(by_hand.to_numpy(), rel=1e-12)
    assert read_metadata(paid)["kwh"] == {"price_j_per_kwh": 3.6e6}
    assert read_metadata(recorded)["kwh"] == {"price_j_per_kwh": 0.0} and "kwh" not in read_metadata(plain)


def _imports(path: Path) -> set[str]:
    """The modules ``path`` imports (``from a import b`` gives ``a`` and ``a.b``)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def test_the_carbon_term_lives_in_its_module_its_schema_and_the_registry() -> None:
    """Only the registry imports the carbon term's module, and only that module its schema."""
    users = {
        str(p.relative_to(PACKAGE)): _imports(p)
        & {"zeus_bench.sim.scenarios.carbon", "zeus_bench.sim.scenarios.carbon_schema"}
        for p in PACKAGE.rglob("*.py")
    }
    assert {k: sorted(v) for k, v in users.items() if v} == {
        "sim/scenarios/terms.py": ["zeus_bench.sim.scenarios.carbon"],
        "sim/scenarios/carbon.py": ["zeus_bench.sim.scenarios.carbon_schema"],
    }
    # The replay's engine names no term: it asks the cost for them.
    for engine in (
        "sim/env.py",
        "sim/executor.py",
        "sim/model.py",
        "sim/grid.py",
        "cli/sim.py",
        "cli/sim_args.py",
    ):
        text = (PACKAGE / engine).read_text().lower()
        assert "carbon" not in text and "co2" not in text, engine


def test_the_online_optimizer_refuses_a_term_in_time_or_priced(tmp_path: Path) -> None:
    from zeus_bench.core.cost import Cost
    from zeus_bench.core.errors import ConfigError
    from zeus_bench.online.optimizer import BatchSizeOptimizer
    from zeus_bench.sim.scenarios.carbon import CarbonSeries, CarbonTerm

    series = CarbonSeries(np.array([0.0, 10.0]), np.array([300.0, 300.0]), "c.csv")
    state = tmp_path / "state.json"
    for term, column in ((CarbonTerm(series), "co2_g"), (KwhTerm(5.0), "kwh")):
        with pytest.raises(
            ConfigError, match=f"places no run in time and prices no cost term: give a Cost without {column}$"
        ):
            BatchSizeOptimizer(state, [8, 16], 8, cost=Cost(0.5, (term,)))
    assert BatchSizeOptimizer(state, [8, 16], 8, cost=Cost(0.5, (KwhTerm(0.0),))).job["eta"] == 0.5
