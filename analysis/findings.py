"""The report's findings: pure functions from results tables to numbers and the sentence they support.

Every sentence of ``results/report.md`` that states a number or a direction comes from a
:class:`Finding`. A finding function takes small tables (summary rows, potential rows, ...) and
returns a :class:`Finding` whose ``sentence`` is built from its ``numbers``, so that a test can hand
it a table where the direction flips and check that the sentence flips too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Finding:
    """One computed statement of the report.

    Attributes:
        key: Stable identifier (``"<section>.<what>"``), used by tests and the renderer.
        sentence: The sentence the numbers support (Markdown, one or two sentences).
        numbers: The numbers the sentence states, by name, exactly as they were computed
            (percent values in percent, energies in J, times in s).
    """

    key: str
    sentence: str
    numbers: Mapping[str, float] = field(default_factory=dict)
