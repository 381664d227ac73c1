"""A cost term written for the tests: each try's energy in kWh, priced per kWh (no place in time)."""

from __future__ import annotations

import numpy as np

from zeus_bench.core.cost import J_PER_KWH


class KwhTerm:
    """Each try's energy in kWh, priced at ``price`` joules of cost per kWh."""

    column = "kwh"
    unit = "kWh"
    description = "Energy of the try in kWh"
    in_time = False

    def __init__(self, price: float) -> None:
        self.price = price

    def amount(self, energy_j: np.ndarray, time_s: np.ndarray, when_s: np.ndarray) -> np.ndarray:
        return energy_j / J_PER_KWH

    def reach(self, when_s: np.ndarray, what: str) -> None:
        return None
