"""The registry of cost terms: the modules ``zeus-bench simulate`` takes a term from.

A term module (:mod:`zeus_bench.sim.scenarios.carbon` is the pattern) offers one
:class:`~zeus_bench.core.cost.CostTerm` and has, as :class:`TermModule` says:

* ``NAME``: its key in the runs table's provenance;
* ``COLUMN``: its column of the runs table (a :class:`~zeus_bench.store.Column`, optional and
  nullable: a table written without the term lacks it);
* ``add_args(parser)``: its flags of ``zeus-bench simulate``;
* ``from_args(args)``: the term those flags ask for, or None (flags given apart: ConfigError);
* ``provenance(term, period_s)``: what the runs table records of it.

Its input table, if any, has its kind in its own ``*_schema`` module, imported by the term
module (so registered with the term). Adding a term to the package: its module (and schema), and
its name in :data:`TERM_MODULES`; the runs table takes its column from here
(:mod:`zeus_bench.sim.schema`), the command line its flags, the grid and the replay its amounts
and price through :class:`~zeus_bench.core.cost.Cost`. A term from outside the package:
:func:`register_term`.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from typing import Any, Protocol, cast

from zeus_bench.core.cost import CostTerm
from zeus_bench.sim.scenarios import carbon
from zeus_bench.store import Column, get_schema, register_schema


class TermModule(Protocol):
    """What a term module offers (module attributes and functions)."""

    NAME: str  # the term's key in the runs table's provenance
    COLUMN: Column  # the term's column of the runs table

    def add_args(self, p: argparse.ArgumentParser) -> None:
        """Add the term's flags to ``zeus-bench simulate``'s parser."""
        ...

    def from_args(self, args: argparse.Namespace) -> CostTerm | None:
        """The term the flags ask for, or None."""
        ...

    def provenance(self, term: CostTerm, period_s: float | None) -> dict[str, Any]:
        """What the runs table's provenance records of the term."""
        ...


#: The term modules, in the order of their columns and flags (:func:`register_term` appends).
TERM_MODULES: list[TermModule] = [cast("TermModule", carbon)]  # a module, as TermModule says


def term_columns() -> tuple[Column, ...]:
    """The runs table's columns of the package's terms (:data:`TERM_MODULES`)."""
    return tuple(m.COLUMN for m in TERM_MODULES)


def register_term(module: TermModule) -> None:
    """Offer a term from outside the package: its flags in ``zeus-bench simulate``, its column in the runs table.

    The runs table's schema (kind ``runs``, same version) gains the term's optional column.
    """
    if module not in TERM_MODULES:
        TERM_MODULES.append(module)
    runs = get_schema("runs")
    if module.COLUMN.name not in runs.names:
        register_schema(replace(runs, columns=(*runs.columns, module.COLUMN)))
